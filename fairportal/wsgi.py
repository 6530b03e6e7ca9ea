"""WSGI entry point (gunicorn fairportal.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")
application = get_wsgi_application()
