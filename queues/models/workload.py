"""Workload: a unit of work (pod sets x requests) that waits in a LocalQueue until admitted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import models
from django.utils import timezone

from core.validators import validate_dns_label
from fairshare import types as engine
from fairshare.errors import ValidationError as EngineValidationError
from fairshare.quantities import parse_millis, validate_resource_name
from queues.models.choices import WorkloadState

if TYPE_CHECKING:
    from queues.models.reason import WorkloadReason

MAX_POD_SETS = 8
MAX_POD_COUNT = 100_000  # pods in one pod set: the API's and the submit form's bound


def normalise_pod_sets(raw: object, field: str = "pod_sets") -> list[dict[str, Any]]:
    """Validated pod sets with requests in millis; raises the engine's field-naming error.

    Accepts quantities in Kubernetes notation (``"2Gi"``) or as integer millis (stored form).
    """
    if not isinstance(raw, list) or not raw:
        raise EngineValidationError(field, "expected a non-empty list of pod sets")
    if len(raw) > MAX_POD_SETS:
        raise EngineValidationError(field, f"at most {MAX_POD_SETS} pod sets are allowed, got {len(raw)}")
    pod_sets: list[dict[str, Any]] = []
    names: set[str] = set()
    for index, item in enumerate(raw):
        where = f"{field}[{index}]"
        if not isinstance(item, Mapping):
            raise EngineValidationError(where, "expected a mapping with count and requests")
        name = item.get("name") or ("main" if index == 0 else f"set-{index}")
        if not isinstance(name, str) or name in names:
            raise EngineValidationError(f"{where}.name", f"must be a unique string, got {name!r}")
        names.add(name)
        count = item.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise EngineValidationError(f"{where}.count", f"must be a whole number of at least 1, got {count!r}")
        requests = item.get("requests")
        if not isinstance(requests, Mapping) or not requests:
            raise EngineValidationError(f"{where}.requests", "expected a non-empty mapping of resource to quantity")
        parsed: dict[str, int] = {}
        for resource, quantity in requests.items():
            validate_resource_name(resource, f"{where}.requests.{resource}")
            if isinstance(quantity, int) and not isinstance(quantity, bool):
                if quantity < 0:
                    raise EngineValidationError(f"{where}.requests.{resource}", "must not be negative")
                parsed[resource] = quantity
            else:
                parsed[resource] = parse_millis(quantity, f"{where}.requests.{resource}")
        pod_sets.append({"name": name, "count": count, "requests": parsed})
    return pod_sets


def total_requests(pod_sets: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Sum of ``count x requests`` over pod sets, in millis."""
    totals: dict[str, int] = {}
    for pod_set in pod_sets:
        for resource, amount in pod_set["requests"].items():
            totals[resource] = totals.get(resource, 0) + pod_set["count"] * amount
    return dict(sorted(totals.items()))


class WorkloadQuerySet(models.QuerySet["Workload"]):
    def with_reasons(self) -> WorkloadQuerySet:
        """Load each row's stored reason with it (``pending_reason_code``/``_message`` then cost
        no query): two outer joins, the reason row and, for a reason by reference, its queue's
        order row."""
        return self.select_related("reason", "reason__behind")

    def with_queue_position(self) -> WorkloadQuerySet:
        """Each row's ``queue_position``: its place in its ClusterQueue at the last pass, or None.

        Only pending workloads have one (a workload cancelled since that pass has none).
        """
        return self.annotate(
            queue_position=models.Case(
                models.When(state=WorkloadState.PENDING, then=models.F("pending_position__position")),
                default=None,
                output_field=models.PositiveIntegerField(null=True),
            )
        )


# ``Workload.queue_position_state``: where a pending workload's ``queue_position`` comes from.
POSITION_RANKED = "ranked"  # the last admission pass placed it (its ClusterQueue's PendingOrder)
POSITION_ESTIMATED = "estimated"  # submitted (or requeued) since that pass: see estimate_positions
POSITION_HELD = "held"  # an admission gate keeps it out of line (no position): its reason says why
# The reason codes admission gates give (``queues.admission.gates``; budgets' safe admission):
# a pending workload without a rank and with one of these is held, not waiting to be ranked.
GATE_CODES = frozenset({engine.BUDGET_INSUFFICIENT})


def attach_queue_positions(workloads: Iterable[Workload]) -> list[Workload]:
    """Set ``queue_position`` on already loaded workloads with one query (a page of a list), and
    estimate it for the pending ones no pass has ranked yet (one more query, only if any:
    ``fill_estimated_positions``).

    Cheaper than joining the order into a query that is also counted and paginated.
    """
    from queues.models.pending_order import PendingPosition

    rows = list(workloads)
    waiting = [w.pk for w in rows if w.state == WorkloadState.PENDING]
    found = (
        dict(PendingPosition.objects.filter(workload_id__in=waiting).values_list("workload_id", "position"))
        if waiting
        else {}
    )
    for workload in rows:
        workload.queue_position = found.get(workload.pk)
    return fill_estimated_positions(rows)


def fill_estimated_positions(workloads: Iterable[Workload]) -> list[Workload]:
    """Give every pending workload without a ranked ``queue_position`` (already set, e.g. by
    ``with_queue_position()``) its estimate, and every workload its ``queue_position_state``
    (one query, only when some pending workload has no rank)."""
    rows = list(workloads)
    unranked = [w for w in rows if w.state == WorkloadState.PENDING and w.__dict__.get("_queue_position") is None]
    held = {w.pk for w in unranked if w.pending_reason_code in GATE_CODES}
    estimates = estimate_positions([w for w in unranked if w.pk not in held]) if len(unranked) > len(held) else {}
    for workload in rows:
        if workload.state != WorkloadState.PENDING:
            workload.__dict__["_queue_position_state"] = None
        elif workload.pk in held:
            workload.__dict__["_queue_position_state"] = POSITION_HELD
        elif workload.pk in estimates:
            workload.queue_position = estimates[workload.pk]
            workload.__dict__["_queue_position_state"] = POSITION_ESTIMATED
        else:
            workload.__dict__["_queue_position_state"] = POSITION_RANKED
    return rows


def estimate_positions(workloads: Iterable[Workload]) -> dict[int, int]:
    """Where the next admission pass will most likely place pending workloads it has not ranked
    yet (just submitted, or requeued since), by id; one query whatever their number.

    A pass keeps each LocalQueue's workloads in that queue's own order (priority, then queue
    time, then name: ``fairshare.types.Workload.order``), so a new workload goes right after the
    last ranked workload of its LocalQueue that comes before it in that order (position + 1);
    if none does, at the place of the first one that comes after it; if its LocalQueue has no
    ranked workload, at the end of its ClusterQueue's order. Then every other unranked pending
    workload of its LocalQueue that comes before it moves it one further back. Exact when one
    LocalQueue feeds the ClusterQueue; with several, fair sharing may place it elsewhere, which
    is why the API says ``queue_position_state: "estimated"`` until the pass ranks it.
    """
    from queues.models.pending_order import PendingPosition

    ids = [w.pk for w in workloads if w.pk is not None]
    if not ids:
        return {}
    mine = {
        "cluster_queue_id": models.OuterRef("local_queue__cluster_queue_id"),
        "workload__local_queue_id": models.OuterRef("local_queue_id"),
        "workload__state": WorkloadState.PENDING,
    }
    ahead = _ahead_of_outer("workload__")
    last_ahead = PendingPosition.objects.filter(ahead, **mine).order_by("-position").values("position")[:1]
    first_behind = PendingPosition.objects.filter(~ahead, **mine).order_by("position").values("position")[:1]
    queue_end = (
        PendingPosition.objects.filter(cluster_queue_id=models.OuterRef("local_queue__cluster_queue_id"))
        .order_by("-position")
        .values("position")[:1]
    )
    unranked_ahead = (
        Workload.objects.filter(
            _ahead_of_outer(""),
            local_queue_id=models.OuterRef("local_queue_id"),
            state=WorkloadState.PENDING,
            pending_position__isnull=True,
        )
        .order_by()
        .values("local_queue_id")
        .annotate(n=models.Count("id"))
        .values("n")
    )
    rows = Workload.objects.filter(id__in=ids).values_list(
        "id",
        models.Subquery(last_ahead),
        models.Subquery(first_behind),
        models.Subquery(queue_end),
        models.Subquery(unranked_ahead),
    )
    estimates = {}
    for pk, after, before, end, others in rows:
        if after is not None:
            place = after + 1
        elif before is not None:
            place = before
        else:
            place = (end or 0) + 1
        estimates[pk] = place + (others or 0)
    return estimates


def _ahead_of_outer(prefix: str) -> models.Q:
    """Workloads (through ``prefix``) before the outer query's workload in LocalQueue order."""
    priority, queued_at, name = (models.OuterRef(field) for field in ("priority", "queued_at", "name"))
    return (
        models.Q(**{f"{prefix}priority__gt": priority})
        | models.Q(**{f"{prefix}priority": priority, f"{prefix}queued_at__lt": queued_at})
        | models.Q(**{f"{prefix}priority": priority, f"{prefix}queued_at": queued_at, f"{prefix}name__lt": name})
    )


class Workload(models.Model):
    # No single-column index on the three foreign keys: the composite indexes in Meta lead with
    # each of them, and every state change rewrites every index of the row (fewer is faster).
    namespace = models.ForeignKey(
        "queues.Namespace", on_delete=models.PROTECT, related_name="workloads", db_index=False
    )
    local_queue = models.ForeignKey(
        "queues.LocalQueue", on_delete=models.PROTECT, related_name="workloads", db_index=False
    )
    name = models.CharField(max_length=63, validators=[validate_dns_label])
    priority = models.IntegerField(default=0)
    priority_class = models.CharField(
        max_length=63,
        blank=True,
        help_text="The WorkloadPriorityClass its priority came from (empty: set by an admin or none)",
    )
    pod_sets = models.JSONField(blank=True, help_text="[{name, count, requests: {resource: millis}}]")
    state = models.CharField(max_length=12, choices=WorkloadState.choices, default=WorkloadState.PENDING)

    created_at = models.DateTimeField(default=timezone.now)
    queued_at = models.DateTimeField(default=timezone.now, help_text="Queue timestamp: FIFO order key")
    admitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="Reported by an external executor")
    finished_at = models.DateTimeField(null=True, blank=True)

    cluster_queue = models.ForeignKey(
        "queues.ClusterQueue",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="admitted_workloads",
        db_index=False,
        help_text="Where it is admitted (the LocalQueue's ClusterQueue at admission time)",
    )
    flavor_assignment = models.JSONField(default=dict, blank=True, help_text="{resource: flavor}")
    # No index: every state change rewrites every index of the row; lists filter it with state.
    cluster = models.ForeignKey(
        "queues.Cluster",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="workloads",
        db_index=False,
        help_text="The cluster it runs or last ran on (its flavors' cluster, set at admission)",
    )

    # Submitted with a command to a ClusterQueue whose flavors span several clusters: the job is
    # created on the cluster the admission pass chooses, once admitted (``SlurmBackend.start``).
    command = models.TextField(
        blank=True,
        help_text="The job's command when its cluster is chosen at admission (the job is created there once admitted)",
    )
    duration_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Declared run time; the simulated cluster finishes it after this long"
    )
    max_runtime_seconds = models.PositiveIntegerField(null=True, blank=True)
    wall_time_seconds = models.PositiveIntegerField(
        default=0, help_text="Of the current admission once it ended; while admitted, derived on read from admitted_at"
    )
    accumulated_past_execution_seconds = models.PositiveIntegerField(default=0, help_text="Of earlier admissions")
    eviction_count = models.PositiveIntegerField(default=0)
    last_evicted_at = models.DateTimeField(null=True, blank=True)
    last_eviction_reason = models.CharField(max_length=300, blank=True)

    objects = WorkloadQuerySet.as_manager()

    class Meta:
        ordering = ["-priority", "queued_at", "name"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="workload_unique_name_in_namespace"),
            models.CheckConstraint(condition=models.Q(state__in=WorkloadState.values), name="workload_state_valid"),
        ]
        indexes = [
            models.Index(fields=["state", "local_queue"], name="workload_state_lq"),
            models.Index(fields=["local_queue", "state", "queued_at"], name="workload_lq_state_queued"),
            models.Index(fields=["namespace", "state"], name="workload_ns_state"),
            models.Index(fields=["cluster_queue", "state"], name="workload_cq_state"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace_id and self.namespace.name}/{self.name}"

    @property
    def queue_position(self) -> int | None:
        """1-based place in its ClusterQueue's order (None unless pending): the last pass's, or,
        for a pending workload that pass has not seen, the estimate of where the next one puts
        it (``queue_position_state`` says which; ``estimate_positions``).

        Lists load it for every row (``attach_queue_positions``); a lone instance asks the
        database once (twice while it waits for its first pass).
        """
        if "_queue_position" not in self.__dict__:
            self.__dict__["_queue_position"] = (
                Workload.objects.with_queue_position()
                .filter(pk=self.pk)
                .values_list("queue_position", flat=True)  # type: ignore[misc]  # an annotation the plugin cannot see
                .first()
                if self.pk is not None
                else None
            )
        if "_queue_position_state" not in self.__dict__:
            fill_estimated_positions([self])
        return self.__dict__["_queue_position"]

    @queue_position.setter
    def queue_position(self, value: int | None) -> None:  # set by the with_queue_position() annotation
        self.__dict__["_queue_position"] = value

    @property
    def queue_position_state(self) -> str | None:
        """``ranked`` (by the last admission pass), ``estimated`` (not yet seen by a pass: where
        the next one will most likely put it), ``held`` (an admission gate keeps it out of line:
        no position), or None when it is not pending."""
        self.queue_position  # noqa: B018  # loads both
        return self.__dict__["_queue_position_state"]

    @property
    def pending_reason_code(self) -> str:
        """Why it waits, machine-readable ("" unless pending, or before the first pass)."""
        reason = self._stored_reason()
        return reason.code if reason is not None else ""

    @property
    def pending_reason_message(self) -> str:
        """Why it waits, the engine's sentence ("" unless pending), rendered from its stored
        reason (``queues.models.reason``): lists load both with ``with_reasons()``."""
        reason = self._stored_reason()
        return reason.text if reason is not None else ""

    @property
    def pending_reason_shortages(self) -> list[dict[str, Any]]:
        """The short resources its reason names, dominant first, as stored
        (``reason.shortage_rows``: millis; [] unless pending and waiting for quota)."""
        reason = self._stored_reason()
        return reason.shortage_rows if reason is not None else []

    @property
    def pending_reason_by_reference(self) -> bool:
        """Whether its reason is its queue's head's, quoted (``queues.models.reason``): the
        shortages are then the head's, not its own."""
        reason = self._stored_reason()
        return reason is not None and reason.behind_id is not None

    def _stored_reason(self) -> WorkloadReason | None:
        if self.state != WorkloadState.PENDING or self.pk is None:
            return None
        try:
            return self.reason
        except ObjectDoesNotExist:
            return None

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__.pop("_queue_position", None)
        self.__dict__.pop("_queue_position_state", None)
        super().refresh_from_db(*args, **kwargs)

    @property
    def requests(self) -> dict[str, int]:
        return total_requests(self.pod_sets or [])

    def current_wall_time_seconds(self, now: datetime | None = None) -> int:
        """Wall time of the current admission: ``now - admitted_at`` while it runs, fixed once it ends.

        Derived on read, so no task has to refresh every running row and nothing is lost when
        one runs late.
        """
        if self.state == WorkloadState.ADMITTED and self.admitted_at is not None:
            return max(0, int(((now or timezone.now()) - self.admitted_at).total_seconds()))
        return self.wall_time_seconds

    def total_wall_time_seconds(self, now: datetime | None = None) -> int:
        return self.current_wall_time_seconds(now) + self.accumulated_past_execution_seconds

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        try:
            self.pod_sets = normalise_pod_sets(self.pod_sets)
        except EngineValidationError as error:
            errors["pod_sets"] = str(error)
        if self.local_queue_id and self.namespace_id and self.local_queue.namespace_id != self.namespace_id:
            errors["local_queue"] = f"LocalQueue {self.local_queue.key} is not in namespace {self.namespace.name}"
        if self.pk is not None and "pod_sets" not in errors:
            stored = Workload.objects.filter(pk=self.pk).values_list("pod_sets", "local_queue_id").first()
            if stored and stored[0] != self.pod_sets:
                errors["pod_sets"] = "cannot change after submission; submit a new workload instead"
            if stored and stored[1] != self.local_queue_id:
                errors["local_queue"] = "cannot change after submission"
        if errors:
            raise ValidationError(errors)


class WorkloadResource(models.Model):
    """Total request of one resource of a workload, and its flavor once admitted.

    Kept as rows (derived from ``pod_sets`` at submission, never edited) so that admitted usage
    per queue, flavor and resource is one SQL aggregation on every database.
    """

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="resources")
    resource = models.CharField(max_length=253)
    amount = models.BigIntegerField()
    flavor = models.ForeignKey("queues.ResourceFlavor", null=True, blank=True, on_delete=models.PROTECT)

    class Meta:
        ordering = ["workload_id", "resource"]
        constraints = [
            models.UniqueConstraint(fields=["workload", "resource"], name="workload_resource_unique"),
            models.CheckConstraint(condition=models.Q(amount__gte=0), name="workload_resource_amount_gte_0"),
        ]

    def __str__(self) -> str:
        return f"{self.workload_id}:{self.resource}={self.amount}"
