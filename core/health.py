"""``/healthz`` (the process answers) and ``/readyz`` (it can do its work).

``/healthz`` touches nothing: 200 while the web process serves requests (a container's or
systemd's liveness probe). ``/readyz`` runs every readiness check and answers 200 when all pass,
503 naming what is down otherwise, as JSON with check names and short reasons only (no tenant
data, no URLs or passwords). The kernel's checks are the database, the broker and the control
loop's heartbeat (``core.tasks.heartbeat``, sent by beat to the control queue); checks that
need an app above the kernel (the cluster backend: ``queues.health``) are passed in by the
URLconf (``readyz_view(extra_checks)``), so the kernel imports no app.

Access follows ``/metrics``: with ``READYZ_TOKEN`` (default: ``METRICS_TOKEN``) set, a request
needs ``Authorization: Bearer <token>``; without one, ``/readyz`` is open only when the server
is bound to loopback (``BIND_ADDRESS``).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Mapping
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core.models import Heartbeat
from core.tasks import CONTROL

logger = logging.getLogger(__name__)

# A check returns None when fine, else a short reason; an exception counts as down too.
Check = Callable[[], str | None]


def database_check() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return None


def broker_check() -> str | None:
    """One connection to the broker, given ``READYZ_BROKER_TIMEOUT`` seconds."""
    timeout = int(getattr(settings, "READYZ_BROKER_TIMEOUT_SECONDS", 2))
    with current_app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, interval_max=0, timeout=timeout)
        broker.default_channel  # noqa: B018 - Redis connects lazily: opening a channel talks to it
    return None


def heartbeat_check() -> str | None:
    limit = int(getattr(settings, "READYZ_HEARTBEAT_MAX_AGE_SECONDS", 60))
    row = Heartbeat.objects.filter(name=CONTROL).first()
    if row is None:
        return "no heartbeat yet: are beat and a control worker (queue celery) running?"
    age = timezone.now() - row.at
    if age > timedelta(seconds=limit):
        return (
            f"last heartbeat {int(age.total_seconds())}s ago (limit {limit}s): are beat and a control worker running?"
        )
    return None


KERNEL_CHECKS: dict[str, Check] = {
    "database": database_check,
    "broker": broker_check,
    "control_worker": heartbeat_check,
}


def run_checks(checks: Mapping[str, Check]) -> dict[str, str]:
    """Each check's result: ``ok`` or why it is down (exceptions named by class, not message:
    a driver's message may carry a host name or a URL)."""
    results: dict[str, str] = {}
    for name, check in checks.items():
        try:
            reason = check()
        except Exception as error:  # noqa: BLE001 - any failure means not ready
            logger.warning("readiness check %s failed: %s", name, error)
            reason = f"unreachable ({type(error).__name__})"
        results[name] = "ok" if reason is None else reason
    return results


def _token() -> str:
    return str(getattr(settings, "READYZ_TOKEN", "") or "")


def authorised(request: HttpRequest) -> bool:
    token = _token()
    if not token:
        return bool(settings.BIND_IS_LOOPBACK)
    header = request.headers.get("Authorization", "")
    return header.startswith("Bearer ") and hmac.compare_digest(header[len("Bearer ") :].encode(), token.encode())


@never_cache
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})


def readyz_view(extra_checks: Mapping[str, Check] | None = None) -> Callable[[HttpRequest], HttpResponse]:
    checks = {**KERNEL_CHECKS, **(extra_checks or {})}

    @never_cache
    @require_GET
    def readyz(request: HttpRequest) -> HttpResponse:
        if not authorised(request):
            why = "" if _token() else "; without READYZ_TOKEN or METRICS_TOKEN /readyz is open only on loopback"
            response = JsonResponse({"detail": f"a bearer token is required (READYZ_TOKEN){why}"}, status=401)
            response["WWW-Authenticate"] = 'Bearer realm="readyz"'
            return response
        results = run_checks(checks)
        down = [name for name, result in results.items() if result != "ok"]
        body = {"status": "not ready" if down else "ready", "checks": results, "down": down}
        return JsonResponse(body, status=503 if down else 200)

    return readyz
