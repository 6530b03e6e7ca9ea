"""The readiness check that needs the control loop's app: are the clusters reachable?
(``/readyz`` wires it in through ``fairportal.urls``; the kernel's checks are ``core.health``.)"""

from __future__ import annotations

from queues.services.cluster import cluster_statuses


def cluster_check() -> str | None:
    """What the last syncs found (``queues.sync_cluster`` records failures with back-off, per
    cluster): None when every enabled cluster answers, else one clause per unreachable cluster.
    Only that cluster's admissions wait; the check fails so that an operator hears of it."""
    down = []
    for status in cluster_statuses():
        if status.reachable or not status.enabled:
            continue
        since = f" since {status.unreachable_since:%Y-%m-%d %H:%M:%S}Z" if status.unreachable_since else ""
        down.append(
            f"cluster {status.cluster} (backend {status.backend}) unreachable{since} ({status.failures} failed syncs)"
        )
    return "; ".join(down) or None
