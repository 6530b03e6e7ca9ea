"""The fair-share domain's flat lists as tables: workloads, resource flavors, the audit log.

Each table renders the rows its selector built (``queues.selectors``: visibility, filters,
order and paging are theirs, see ``core.tables``); a column's name is also its ``?sort=`` name,
and every sortable column has an order in its selector (``ORDERINGS`` / ``*_SORTS``).
"""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.tables import ListTable
from core.timefmt import when

NUM = {"th": {"class": "num"}, "td": {"class": "num"}}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


class WorkloadTable(ListTable):
    """Rows: ``queues.selectors.workloads.WorkloadRow``. ``compact`` (a queue's page): no queue
    column, the reason on one line with a link to the workload's page."""

    key = "workloads"
    required = ("name",)

    name = tables.Column(verbose_name="Workload", orderable=True)
    namespace = tables.Column(visible=False)
    queue = tables.Column(accessor="local_queue", verbose_name="Queue", orderable=True)
    cluster_queue = tables.Column(visible=False, verbose_name="ClusterQueue")
    cluster = tables.Column(verbose_name="Cluster", empty_values=())
    state = tables.Column(orderable=True, initial_sort_descending=True)
    priority = tables.Column(orderable=True, initial_sort_descending=True, attrs=NUM)
    requests = tables.Column(empty_values=())
    position = tables.Column(orderable=True, attrs=NUM)
    reason = tables.TemplateColumn(
        template_name="queues/workloads/_reason_cell.html",
        verbose_name="Why it waits · who is ahead",
        extra_context=lambda table: {"compact": table.compact},
        attrs={"td": {"class": "reason"}},
    )
    reason_code = tables.Column(visible=False, verbose_name="Reason code")
    queued = tables.Column(accessor="queued_at", orderable=True, initial_sort_descending=True)
    admitted_at = tables.Column(visible=False, verbose_name="Admitted at")
    finished_at = tables.Column(visible=False, verbose_name="Finished at")

    class Meta(ListTable.Meta):
        attrs = {"class": "grid workloads"}
        empty_text = "No workloads match."
        sequence = (
            "name",
            "namespace",
            "queue",
            "cluster_queue",
            "cluster",
            "state",
            "priority",
            "requests",
            "position",
            "reason",
            "reason_code",
            "queued",
            "admitted_at",
            "finished_at",
        )

    def __init__(self, rows: Any, *, compact: bool = False, **kwargs: Any) -> None:
        self.compact = compact
        super().__init__(rows, exclude=("queue",) if compact else (), **kwargs)

    def render_name(self, record: Any) -> str:
        return format_html(
            '<a href="{}">{}</a><div class="muted">{}</div>',
            reverse("queues:workload", args=[record.namespace, record.name]),
            record.name,
            record.namespace,
        )

    def render_queue(self, record: Any) -> str:
        return format_html(
            '<a href="{}">{}</a><div class="muted">→ {}</div>',
            reverse("queues:local-queue", args=[record.namespace, record.local_queue]),
            record.local_queue,
            record.cluster_queue,
        )

    def render_cluster(self, record: Any) -> str:
        if not record.cluster:
            return format_html('<span class="muted">{}</span>', "—")
        return format_html('<a href="{}">{}</a>', reverse("queues:cluster", args=[record.cluster]), record.cluster)

    def value_cluster(self, record: Any) -> str:
        return record.cluster

    def value_queue(self, record: Any) -> str:
        return f"{record.namespace}/{record.local_queue}"

    def value_name(self, record: Any) -> str:
        return record.name

    def value_state(self, record: Any) -> str:
        return record.state

    def value_position(self, record: Any) -> int | None:
        return record.position

    def render_state(self, record: Any) -> str:
        evicted = format_html('<div class="muted">evicted {}×</div>', record.evictions) if record.evictions else ""
        return format_html('<span class="badge {}">{}</span>{}', record.state, record.state, evicted)

    def render_requests(self, record: Any) -> str:
        return format_html(
            '<div class="stack">{}</div>', format_html_join("", "<span>{}</span>", ((a,) for a in record.requests))
        )

    def value_requests(self, record: Any) -> str:
        return ", ".join(record.requests)

    def render_position(self, record: Any) -> str:
        return format_html(
            '<span class="position">#{}</span><div class="muted">in {}</div>', record.position, record.cluster_queue
        )

    def value_reason(self, record: Any) -> str:
        return record.reason

    def render_queued(self, record: Any) -> str:
        return format_html(
            '<span title="{}">{}</span>', when(record.queued_at, seconds=True), naturaltime(record.queued_at)
        )

    def value_queued(self, record: Any) -> str | None:
        return _iso(record.queued_at)

    def value_admitted_at(self, record: Any) -> str | None:
        return _iso(record.admitted_at)

    def value_finished_at(self, record: Any) -> str | None:
        return _iso(record.finished_at)


class FlavorTable(ListTable):
    """Rows: ``queues.selectors.flavors.FlavorSummary``, one per flavor, its resources stacked."""

    key = "flavors"
    required = ("flavor",)

    flavor = tables.TemplateColumn(
        template_name="queues/flavors/_flavor_cell.html", accessor="flavor__name", orderable=True
    )
    cluster = tables.Column(accessor="flavor__cluster__name", verbose_name="Cluster")
    node_labels = tables.TemplateColumn(
        template_name="queues/flavors/_labels_cell.html", accessor="flavor__node_labels", empty_values=()
    )
    resource = tables.TemplateColumn(
        template_code='{% for cell in record.totals %}<div>{{ cell.label }}</div>{% empty %}<span class="muted">no quota on this flavor yet</span>{% endfor %}',
        accessor="resources",
        empty_values=(),
    )
    capacity = tables.TemplateColumn(template_name="queues/flavors/_capacity_cell.html", empty_values=(), attrs=NUM)
    admitted = tables.TemplateColumn(
        template_code='{% load dashboard %}{% for cell in record.totals %}<div>{{ cell|amount_text:"admitted" }}</div>{% endfor %}',
        empty_values=(),
        attrs=NUM,
    )
    borrowed = tables.TemplateColumn(
        template_code='{% load dashboard %}{% for cell in record.totals %}<div>{{ cell|amount_text:"borrowed" }}</div>{% endfor %}',
        empty_values=(),
        attrs=NUM,
    )
    use = tables.TemplateColumn(
        template_code='{% load dashboard %}{% for cell in record.totals %}<div>{% share_bar cell.share "of capacity" plain=True show_resource=False %}</div>{% endfor %}',
        empty_values=(),
    )
    running = tables.Column(verbose_name="Running workloads", orderable=True, attrs=NUM)

    class Meta(ListTable.Meta):
        attrs = {"class": "grid", "id": "flavors"}
        empty_text = "No resource flavors yet."

    def render_cluster(self, value: str) -> str:
        return format_html('<a href="{}">{}</a>', reverse("queues:cluster", args=[value]), value)

    def value_cluster(self, value: str) -> str:
        return value

    def value_node_labels(self, record: Any) -> str:
        return ", ".join(f"{k}={v}" for k, v in (record.flavor.node_labels or {}).items())

    def _per_resource(self, record: Any, field: str) -> str:
        return "; ".join(f"{cell.resource}: {cell.text(field)}" for cell in record.totals)

    def value_resource(self, record: Any) -> str:
        return "; ".join(cell.resource for cell in record.totals)

    def value_capacity(self, record: Any) -> str:
        return "; ".join(
            f"{cell.resource}: {cell.text('capacity')}" + (f" ({cell.capacity_parts})" if cell.cohort_owned else "")
            for cell in record.totals
        )

    def value_admitted(self, record: Any) -> str:
        return self._per_resource(record, "admitted")

    def value_borrowed(self, record: Any) -> str:
        return self._per_resource(record, "borrowed")

    def value_use(self, record: Any) -> str:
        return "; ".join(
            f"{cell.resource}: {cell.share.ratio * 100:.0f}%" for cell in record.totals if cell.share.ratio is not None
        )


class AuditTable(ListTable):
    """Rows: ``queues.selectors.audit_log.ChangeRow`` (fields already redacted for the viewer)."""

    key = "audit"
    required = ("when",)

    when = tables.Column(accessor="change__at", orderable=True, initial_sort_descending=True)
    who = tables.Column(accessor="change__actor_name", orderable=True, default="system")
    surface = tables.Column(accessor="change__surface", orderable=True)
    object = tables.TemplateColumn(
        template_name="queues/audit/_object_cell.html", accessor="change__object_repr", orderable=True
    )
    action = tables.Column(accessor="change__action", visible=False)
    change = tables.TemplateColumn(
        template_name="queues/audit/_change_cell.html", attrs={"td": {"class": "diff"}}, empty_values=()
    )

    class Meta(ListTable.Meta):
        attrs = {"class": "grid audit"}
        empty_text = "No changes recorded."

    def render_when(self, record: Any) -> str:
        return format_html(
            '<span title="{}">{}</span>', record.change.at.isoformat(), when(record.change.at, seconds=True)
        )

    def value_when(self, record: Any) -> str:
        return record.change.at.isoformat()

    def value_who(self, record: Any) -> str:
        return record.change.actor_name or "system"

    def render_surface(self, record: Any) -> str:
        return format_html(
            '<span class="badge {}">{}</span>',
            "mode" if record.change.surface == "ui" else "",
            record.change.get_surface_display(),
        )

    def value_surface(self, record: Any) -> str:
        return record.change.surface

    def value_object(self, record: Any) -> str:
        return f"{record.change.object_type} {record.change.object_repr}"

    def value_change(self, record: Any) -> str:
        if record.change.action == "create":
            return "; ".join(f"{f.name}: {f.after}" for f in record.fields)
        return "; ".join(f"{f.name}: {f.before} → {f.after}" for f in record.fields)
