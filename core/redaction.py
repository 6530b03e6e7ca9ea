"""What stays hidden from a tenant inside the objects it may see (``core.access`` decides
which objects): staff-only fields of an object (where a budget's alerts go) and the names of
other tenants' queues and workloads in the reasons the control loop writes. Each is the one rule
every surface (API, pages, audit log) calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping
from types import MappingProxyType
from typing import Any

from django.db.models import QuerySet

from core.access import Access
from core.models import TenantMembership

# Fields only admins read, by object type (the model name, as PolicyChange.object_type has it):
# where a budget's alerts go may carry secrets (a webhook URL with a token) and people's addresses.
STAFF_ONLY_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {"budget": frozenset({"alert_emails", "webhook_url"})}
)


def redact_policy_state(access: Access, object_type: str, state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``state`` (an object's fields, or an audit row's before/after picture) without the fields
    of ``STAFF_ONLY_FIELDS`` unless the viewer is an admin. The API's budget answers, the API's
    audit trail and the audit log page all read through this."""
    if state is None:
        return None
    hidden = () if access.is_admin else STAFF_ONLY_FIELDS.get(object_type, frozenset())
    return {name: value for name, value in state.items() if name not in hidden}


# -- other tenants' names in reasons ---------------------------------------------------------------

OTHER_TENANT_QUEUE = "another tenant's queue"
OTHER_TENANT_WORKLOAD = "another tenant's workload"
OTHER_TENANT_NAMESPACE = "another tenant's namespace"

_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
_OBJECT_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,251}[A-Za-z0-9])?"
# What the control loop's sentences name (fairshare/admission/reasons.py): "LocalQueue ns/name",
# a workload "ns/name" (preempted by, StrictFIFO head) and "namespace ns". A dotted resource
# name such as nvidia.com/gpu never matches: a namespace is a DNS label, without dots.
_REFERENCE = re.compile(
    rf"(?<![\w./-])(?:(?P<queue>LocalQueue )?(?P<namespace>{_LABEL})/{_OBJECT_NAME}"
    rf"|(?P<word>[Nn]amespace )(?P<bare>{_LABEL}))(?![\w/-])"
)


def redact_names(text: str, hidden: Container[str]) -> str:
    """``text`` with every queue, workload and namespace of the ``hidden`` namespaces replaced by
    "another tenant's ..." (pure: the rule's core, tested without a database)."""

    def replace(match: re.Match[str]) -> str:
        if match.group("bare") is not None:
            return OTHER_TENANT_NAMESPACE if match.group("bare") in hidden else match.group(0)
        if match.group("namespace") not in hidden:
            return match.group(0)
        return OTHER_TENANT_QUEUE if match.group("queue") else OTHER_TENANT_WORKLOAD

    return _REFERENCE.sub(replace, text)


def _namespaces() -> QuerySet:
    """Every namespace: the model tenants are members of (named by the membership, not imported)."""
    return TenantMembership._meta.get_field("namespace").related_model._default_manager.all()


def reason_redactor(access: Access) -> Callable[[str], str]:
    """A function that keeps other tenants' names out of the control loop's sentences (pending
    reasons, eviction reasons, admission end messages) for this viewer.

    The reasons are written once for everyone ("preempted by team-robotics/train-021"); a tenant
    reading its own workload learns that another tenant's workload or queue was involved, not
    which. Admins and executors (who read every workload) see the sentence as written. The
    namespaces the viewer may not read are loaded on the first sentence that names any (one
    query per request at most, none when no sentence names another namespace).
    """
    if access.is_admin or access.is_executor:
        return lambda text: text or ""
    hidden: set[str] | None = None

    def redact(text: str) -> str:
        nonlocal hidden
        if not text or not _REFERENCE.search(text):
            return text or ""
        if hidden is None:
            hidden = set(_namespaces().exclude(id__in=access.namespace_ids).values_list("name", flat=True))
        return redact_names(text, hidden)

    return redact
