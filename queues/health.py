"""The readiness check that needs the control loop's app: is the cluster backend reachable?
(``/readyz`` wires it in through ``fairportal.urls``; the kernel's checks are ``core.health``.)"""

from __future__ import annotations

from queues.services.cluster import backend_status


def cluster_check() -> str | None:
    """What the last sync found (``queues.sync_cluster`` records failures with back-off)."""
    status = backend_status()
    if status.reachable:
        return None
    since = f" since {status.unreachable_since:%Y-%m-%d %H:%M:%S}Z" if status.unreachable_since else ""
    return f"cluster backend {status.backend} unreachable{since} ({status.failures} failed syncs)"
