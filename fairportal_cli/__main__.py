"""``python -m fairportal_cli``: the same as ``bin/fairportal``."""

import sys

from fairportal_cli.main import main

sys.exit(main())
