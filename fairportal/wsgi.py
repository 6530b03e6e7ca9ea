"""WSGI entry point (gunicorn fairportal.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

from fairportal.process import freeze_loaded_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")
application = get_wsgi_application()
freeze_loaded_objects()  # start-up's objects live as long as the process: no collection rescans them
