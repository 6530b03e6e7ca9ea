"""The control loop's heartbeat: beat sends ``core.heartbeat`` to the control queue every
``HEARTBEAT_INTERVAL``; the worker that runs it stamps this row, and ``/readyz`` reads its age."""

from __future__ import annotations

from django.db import models


class Heartbeat(models.Model):
    name = models.CharField(max_length=40, primary_key=True)
    at = models.DateTimeField()
    hostname = models.CharField(max_length=200, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"
