"""The kernel's one task: the control worker's heartbeat (``/readyz`` reads it)."""

from __future__ import annotations

import socket

from celery import shared_task
from django.utils import timezone

from core.models import Heartbeat

CONTROL = "control"


@shared_task(name="core.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Stamp the control heartbeat: beat sends this to the control queue, so a fresh stamp
    means beat ticks, the broker carries messages and a control worker takes them."""
    Heartbeat.objects.update_or_create(
        name=CONTROL, defaults={"at": timezone.now(), "hostname": socket.gethostname()[:200]}
    )
