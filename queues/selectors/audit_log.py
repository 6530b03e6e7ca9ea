"""The audit log: PolicyChange rows the viewer may read, with what changed in each.

Admins read every row. Tenants read the rows about their namespaces, their LocalQueues and the
budgets that can hold their work; cluster-wide policy changes (cohorts, ClusterQueues) are the
admins' business and stay out of a tenant's log. Which rows, and which fields of a row, are
``core.access``'s rules, the same as the API's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import QueryDict

from core.access import Access
from core.models import PolicyChange
from core.models.audit import Surface
from core.redaction import redact_policy_state
from core.tables import sort_alias
from core.timefmt import when
from queues.filtersets import PolicyChangeFilterSet
from queues.ui.charts import Marker

PAGE_SIZE = 50
# ``?sort=`` of the audit table's columns: (ascending, descending), ties by id.
AUDIT_SORTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "when": (("at", "id"), ("-at", "-id")),
    "who": (("actor_name", "-at", "-id"), ("-actor_name", "-at", "-id")),
    "surface": (("surface", "-at", "-id"), ("-surface", "-at", "-id")),
    "object": (("object_type", "object_repr", "-at", "-id"), ("-object_type", "-object_repr", "-at", "-id")),
}
DEFAULT_SORT = "-when"


def visible_changes(viewer: Access) -> QuerySet[PolicyChange]:
    """The rows the viewer may read: the API's rule (``Access.visible_to``)."""
    return viewer.visible_to(PolicyChange)


@dataclass
class FieldChange:
    name: str
    before: str
    after: str


@dataclass
class ChangeRow:
    change: PolicyChange
    fields: list[FieldChange]

    @property
    def link(self) -> tuple[str, list[str]] | None:
        """URL name and arguments of the changed object's page (its name is in ``object_repr``)."""
        kind, label = self.change.object_type, self.change.object_repr
        if kind == "localqueue" and "/" in label:
            return "queues:local-queue", label.split("/", 1)
        if kind in ("namespace", "clusterqueue", "cohort"):
            return {"namespace": "queues:namespace", "clusterqueue": "queues:cluster-queue", "cohort": "queues:cohort"}[
                kind
            ], [label]
        return None


def _text(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, list):
        return "; ".join(_text(item) for item in value) or "none"
    if isinstance(value, dict):
        quota = " ".join(f"{k}={v}" for k, v in value.items() if v not in (None, "") and k not in ("flavor_order",))
        return quota
    return str(value)


def change_rows(viewer: Access, changes: list[PolicyChange]) -> list[ChangeRow]:
    rows = []
    for change in changes:
        before = redact_policy_state(viewer, change.object_type, change.before) or {}
        after = redact_policy_state(viewer, change.object_type, change.after) or {}
        names = (
            PolicyChange.fields_changed(before, after)
            if change.action == PolicyChange.Action.UPDATE
            else sorted(set(before) | set(after))
        )
        fields = [FieldChange(name, _text(before.get(name)), _text(after.get(name))) for name in names]
        rows.append(ChangeRow(change, fields))
    return rows


@dataclass
class AuditPage:
    page: Page
    rows: list[ChangeRow]
    filterset: PolicyChangeFilterSet
    sort: str = DEFAULT_SORT


def _sorted_changes(viewer: Access, params: QueryDict) -> tuple[PolicyChangeFilterSet, QuerySet[PolicyChange], str]:
    """The visible changes ``params`` filter, ordered as ``?sort=`` asks (the newest first by default)."""
    filterset = PolicyChangeFilterSet(params, queryset=visible_changes(viewer))
    rows = filterset.qs if filterset.is_valid() else PolicyChange.objects.none()
    sort = sort_alias(params.get("sort"), AUDIT_SORTS, DEFAULT_SORT)
    ascending, descending = AUDIT_SORTS[sort.removeprefix("-")]
    return filterset, rows.order_by(*(descending if sort.startswith("-") else ascending)), sort


def audit_page(viewer: Access, params: QueryDict) -> AuditPage:
    filterset, rows, sort = _sorted_changes(viewer, params)
    page = Paginator(rows, PAGE_SIZE).get_page(params.get("page", 1))
    return AuditPage(page=page, rows=change_rows(viewer, list(page.object_list)), filterset=filterset, sort=sort)


def audit_export(viewer: Access, params: QueryDict, *, limit: int) -> tuple[list[ChangeRow], int, str]:
    """The first ``limit`` rows of the filtered log in the page's order, and how many match."""
    _filterset, rows, sort = _sorted_changes(viewer, params)
    changes = list(rows[:limit])
    total = rows.count() if len(changes) == limit else len(changes)
    return change_rows(viewer, changes), total, sort


MAX_MARKERS = 40


def change_markers(
    viewer: Access, start: datetime, *, object_type: str | None = None, object_id: int | None = None
) -> list[Marker]:
    """Policy changes since ``start`` the viewer may read, as chart markers (one query, newest
    ``MAX_MARKERS``): the object's own when given, otherwise every visible one. The control
    loop's own rows (budget holds) are left out: they mark enforcement, not policy."""
    rows = visible_changes(viewer).filter(at__gte=start).exclude(surface=Surface.SYSTEM)
    if object_type is not None:
        rows = rows.filter(object_type=object_type, object_id=str(object_id))
    markers = []
    for row in change_rows(viewer, list(rows.order_by("-at", "-id")[:MAX_MARKERS])):
        change = row.change
        what = "; ".join(f"{f.name} {f.before} → {f.after}" for f in row.fields[:3]) or change.get_action_display()
        who = change.actor_name or change.surface
        markers.append(Marker(change.at, f"{change.object_repr}: {what} ({who}, {when(change.at)})"))
    return markers
