"""fairportal: fair-share control plane and policy playground."""

from fairportal.celery import app as celery_app

__all__ = ("celery_app",)
