"""The Celery application; the beat schedule comes from the fair-sharing configuration."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")

app = Celery("fairportal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
