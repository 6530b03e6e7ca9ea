"""The what-if lane: rules of playground runs (``/api/v1/simulations/`` runs are playground runs).

What-if work is any tenant's to start and can take minutes, so it never shares a worker with the
control loop: its task is routed to their own Celery queue (``fairportal.schedule.WHATIF_QUEUE``, its own worker in the
Procfile), each run has a soft and a hard time limit, a user has at most
``WHATIF_MAX_ACTIVE_PER_USER`` runs queued or running, runs that a lost
message, a killed worker or a hard time limit left ``queued``/``running`` are failed by the
reaper, and finished runs are pruned after ``WHATIF_RESULT_RETENTION``. What a user stores is
bounded too (``check_storage``: ``WHATIF_MAX_SCENARIOS_PER_USER``, ``WHATIF_MAX_RUNS_PER_USER``,
``WHATIF_MAX_STORED_BYTES_PER_USER``), and scenarios with no run left are pruned after
``WHATIF_SCENARIO_RETENTION`` whatever their source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import Func, Sum
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from playground.models import Outcome, Run, Scenario

REAPER_GRACE_SECONDS = 60  # a hard-killed run is failed this long after its hard limit


class WhatIfLimitReached(Exception):
    """The user already has as many what-if runs queued or running as allowed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(
            f"you already have {limit} what-if run{'s' if limit != 1 else ''} queued or running "
            f"(WHATIF_MAX_ACTIVE_PER_USER={limit}); wait for one to finish"
        )


class StorageQuotaExceeded(Exception):
    """The user already stores as many scenarios, runs or bytes as allowed."""

    def __init__(self, setting: str, limit: int, what: str) -> None:
        self.setting, self.limit = setting, limit
        super().__init__(
            f"you already store {what} ({setting}={limit}); delete old scenarios or runs, or wait for retention"
        )


ACTIVE = ("queued", "running")


def document_bytes(document: Any) -> int:
    """A JSON document's stored size, as compact JSON text."""
    return len(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


class OctetLength(Func):
    """A text's size in bytes: SQL's ``octet_length``; SQLite before 3.43 (Debian 12 ships 3.40,
    which the demo's default database uses) lacks it, so there it is the length of the text cast
    to a BLOB, the same count."""

    function = "octet_length"
    output_field = models.BigIntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="length(CAST(%(expressions)s AS BLOB))", **extra)


def _json_bytes(field: str) -> Func:
    size = OctetLength(Cast(field, models.TextField()))
    return Coalesce(Sum(size), 0, output_field=models.BigIntegerField())


def stored_bytes(user: Any) -> int:
    """What ``user`` stores: scenario documents, run comparisons and the results of their scenarios."""
    scenarios = Scenario.objects.filter(owner=user).aggregate(n=_json_bytes("document"))["n"]
    comparisons = Run.objects.filter(owner=user).aggregate(n=_json_bytes("comparison"))["n"]
    results = Outcome.objects.filter(scenario__owner=user).aggregate(n=_json_bytes("data"))["n"]
    return int(scenarios) + int(comparisons) + int(results)


def check_storage(user: Any, *, scenario_bytes: int = 0, runs: int = 0) -> None:
    """Call inside the transaction that stores a scenario (``scenario_bytes``: its document's
    size) or a run (``runs=1``): refuses it over the user's quotas (``StorageQuotaExceeded``). The
    user's row is locked for the rest of the transaction, as for ``claim_slot``."""
    user_pk = getattr(user, "pk", user)
    get_user_model().objects.select_for_update().only("pk").get(pk=user_pk)
    if scenario_bytes:
        limit = settings.WHATIF_MAX_SCENARIOS_PER_USER
        if Scenario.objects.filter(owner_id=user_pk).count() >= limit:
            raise StorageQuotaExceeded("WHATIF_MAX_SCENARIOS_PER_USER", limit, f"{limit} scenarios")
    if runs:
        limit = settings.WHATIF_MAX_RUNS_PER_USER
        if Run.objects.filter(owner_id=user_pk).count() + runs > limit:
            raise StorageQuotaExceeded("WHATIF_MAX_RUNS_PER_USER", limit, f"{limit} runs")
    limit = settings.WHATIF_MAX_STORED_BYTES_PER_USER
    if stored_bytes(user_pk) + scenario_bytes > limit:
        raise StorageQuotaExceeded("WHATIF_MAX_STORED_BYTES_PER_USER", limit, f"{limit:,} bytes or more")


def active_runs(user: Any) -> int:
    return Run.objects.filter(owner=user, status__in=ACTIVE).count()


def claim_slot(user: Any) -> None:
    """Call inside the transaction that creates a run: refuses a run over the user's cap.

    The user's row is locked for the rest of the transaction, so two requests of one user
    cannot both take the last slot.
    """
    limit = settings.WHATIF_MAX_ACTIVE_PER_USER
    get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)
    if active_runs(user) >= limit:
        raise WhatIfLimitReached(limit)


def timed_out_message() -> str:
    return (
        f"stopped: the run took longer than {settings.WHATIF_SOFT_TIME_LIMIT_SECONDS} s "
        "(WHATIF_SOFT_TIME_LIMIT); try a shorter horizon, a longer tick or fewer workloads"
    )


UNSENT_MESSAGE = "the task queue could not be reached, so the run never started; start it again"


def mark_unsent(run_id: Any) -> None:
    """A run whose message could not be published: failed, never left ``queued``."""
    Run.objects.filter(pk=run_id, status="queued").update(
        status="failed", error=UNSENT_MESSAGE, finished_at=timezone.now()
    )


@dataclass(frozen=True)
class Reaped:
    running: int  # failed: running past the hard limit (killed, lost worker, redelivered)
    queued: int  # failed: never picked up within WHATIF_QUEUED_TIMEOUT


def reap_stuck_runs(now: datetime | None = None) -> Reaped:
    """Fail runs that can no longer finish; conditional UPDATEs, so safe to run twice at once."""
    now = now or timezone.now()
    running_deadline = now - timedelta(seconds=settings.WHATIF_TIME_LIMIT_SECONDS + REAPER_GRACE_SECONDS)
    queued_deadline = now - timedelta(seconds=settings.WHATIF_QUEUED_TIMEOUT_SECONDS)
    running_error = (
        f"stopped: still running after the {settings.WHATIF_TIME_LIMIT_SECONDS} s hard limit "
        "(WHATIF_TIME_LIMIT) or its worker was lost"
    )
    queued_error = (
        f"no what-if worker took the run within {settings.WHATIF_QUEUED_TIMEOUT_SECONDS} s "
        "(WHATIF_QUEUED_TIMEOUT); start it again"
    )
    running = Run.objects.filter(status="running", started_at__lt=running_deadline).update(
        status="failed", error=running_error, finished_at=now
    )
    queued = Run.objects.filter(status="queued", created_at__lt=queued_deadline).update(
        status="failed", error=queued_error, finished_at=now
    )
    return Reaped(running=running, queued=queued)


def prune_finished_runs(now: datetime | None = None) -> int:
    """Delete finished runs older than ``WHATIF_RESULT_RETENTION`` (results included).

    Playground runs whose edits were applied are kept: their applications are the audit trail.
    Stored simulation outcomes no run refers to any more go with them, and so do the scenarios
    posted to ``/api/v1/simulations/`` (each belongs to its one run). Scenarios of any source
    with no run left are deleted ``WHATIF_SCENARIO_RETENTION`` after they were stored (a scenario
    of an applied run keeps that run, so it stays).
    """
    moment = now or timezone.now()
    cutoff = moment - timedelta(seconds=settings.WHATIF_RESULT_RETENTION_SECONDS)
    scenario_cutoff = moment - timedelta(seconds=settings.WHATIF_SCENARIO_RETENTION_SECONDS)
    with transaction.atomic():
        old = Run.objects.filter(status__in=("succeeded", "failed"), created_at__lt=cutoff, applications__isnull=True)
        deleted = old.delete()[1].get(Run._meta.label, 0)
        Scenario.objects.filter(source=Scenario.Source.API, runs__isnull=True).delete()
        Scenario.objects.filter(created_at__lt=scenario_cutoff, runs__isnull=True).delete()
        Outcome.objects.filter(created_at__lt=cutoff).exclude(
            models.Exists(
                Run.objects.filter(models.Q(baseline=models.OuterRef("pk")) | models.Q(edited=models.OuterRef("pk")))
            )
        ).delete()
    return deleted
