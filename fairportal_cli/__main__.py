"""``python -m fairportal_cli``: the same as ``bin/fairportal``."""

import sys

try:
    import requests  # noqa: F401  # the one dependency: a clear line when it is missing
except ImportError:
    sys.stderr.write("fairportal: the Python package requests is missing: pip install requests (or run make install)\n")
    sys.exit(2)

from fairportal_cli.main import main

sys.exit(main())
