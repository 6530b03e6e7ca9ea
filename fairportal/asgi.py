"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from fairportal.process import freeze_loaded_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")
application = get_asgi_application()
freeze_loaded_objects()  # start-up's objects live as long as the process: no collection rescans them
