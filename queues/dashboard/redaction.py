"""Keep other tenants' names out of what a tenant reads.

The control loop writes reasons for everyone ("LocalQueue team-nlp/training was ahead ..."); a
tenant reading its own workload's reason must not learn which other tenants compete with it,
only that another tenant's queue is ahead and by how much.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from queues.dashboard.access import Viewer

OTHER_TENANT = "another tenant's queue"


def redactor(viewer: Viewer, namespaces: Iterable[tuple[int, str]]):
    """A function that replaces ``ns`` and ``ns/name`` of namespaces the viewer may not read."""
    if viewer.is_admin:
        return lambda text: text
    hidden = sorted((name for ns_id, name in namespaces if not viewer.can_read_namespace(ns_id)), key=len, reverse=True)
    if not hidden:
        return lambda text: text
    pattern = re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(name) for name in hidden) + r")(?:/[\w.-]+)?(?![\w.-])")
    return lambda text: pattern.sub(OTHER_TENANT, text or "")
