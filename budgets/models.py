"""Time budgets: wall-time hours or resource-hours per LocalQueue, Namespace or ClusterQueue.

``Budget`` is the policy; ``BudgetCharge`` the append-only ledger derived from admission
intervals; ``BudgetState`` what the last accounting run found (used, burn rate, exhaustion);
``BudgetEvent`` what happened (thresholds, exhaustion, holds, renewals) and its alert delivery.

A budget with a ``webhook_url`` owns a signed-webhook endpoint (``core.WebhookEndpoint``, scope
``budget``: its secret signs the budget's events); ``save`` keeps it in step with the URL.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from budgets import periods
from core import outbound, webhooks
from core.access import Access, visibility
from core.models import WebhookEndpoint
from core.models.webhooks import ALL_BUDGET_EVENTS, BUDGET_ENDPOINT_PREFIX
from core.validators import validate_dns_label, validate_resource_name
from fairshare.simulation.calendar import MAX_RENEWAL_DAYS, MAX_YEAR, MIN_YEAR
from queues.models import LocalQueue
from queues.models.hold import exactly_one_target, target_field, targets_set


def default_thresholds() -> list[int]:
    return [80, 100]


# Fields that define what a budget measures. Once charges exist they are fixed: the ledger was
# built under them, and changing them would silently mix two measures in one period.
MEASURE_FIELDS = ("local_queue", "namespace", "cluster_queue", "kind", "resource", "flavor", "anchor")


class Budget(models.Model):
    class Kind(models.TextChoices):
        WALL_TIME = "WallTime", "Wall-time hours"
        RESOURCE_HOURS = "ResourceHours", "Resource-hours"

    class Action(models.TextChoices):
        HOLD = "Hold", "Hold"
        HOLD_AND_DRAIN = "HoldAndDrain", "HoldAndDrain"

    class Renewal(models.TextChoices):
        NONE = "none", "Never"
        WEEKLY = "weekly", "Weekly"
        MONTHLY = "monthly", "Monthly"
        DAYS = "days", "Every N days"

    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    local_queue = target_field("local_queue", related_name="budgets")
    namespace = target_field("namespace", related_name="budgets")
    cluster_queue = target_field("cluster_queue", related_name="budgets")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.WALL_TIME)
    resource = models.CharField(
        max_length=253,
        blank=True,
        validators=[validate_resource_name],
        help_text="ResourceHours only, e.g. nvidia.com/gpu",
    )
    flavor = models.ForeignKey(
        "queues.ResourceFlavor",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        help_text="ResourceHours only; empty = any",
    )
    allocated_hours = models.DecimalField(
        max_digits=14, decimal_places=3, help_text="Hours of wall time, or resource-hours in base units (GPU-hours)"
    )
    renewal = models.CharField(max_length=10, choices=Renewal.choices, default=Renewal.NONE)
    renewal_days = models.PositiveIntegerField(null=True, blank=True, help_text="Period length when renewal is 'days'")
    anchor = models.DateTimeField(default=timezone.now, help_text="Start of the first period")
    action = models.CharField(max_length=20, choices=Action.choices, default=Action.HOLD)
    alert_thresholds = models.JSONField(default=default_thresholds, blank=True, help_text="Percentages, e.g. [80, 100]")
    safe_admission = models.BooleanField(
        default=False, help_text="Admit a workload with a maximum runtime only if its projected charge fits"
    )
    alert_emails = models.CharField(max_length=500, blank=True, help_text="Comma-separated addresses")
    webhook_url = models.URLField(blank=True)
    webhook_endpoint = models.OneToOneField(
        WebhookEndpoint,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="budget",
        help_text="Signs this budget's webhooks (its secret); follows webhook_url",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            exactly_one_target("budget_exactly_one_target"),
            models.CheckConstraint(condition=models.Q(allocated_hours__gte=0), name="budget_allocated_gte_0"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        update_fields = kwargs.get("update_fields")
        with transaction.atomic():
            super().save(*args, **kwargs)
            if update_fields is None or {"webhook_url", "name"} & set(update_fields):
                self.sync_webhook_endpoint()

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        with transaction.atomic():
            endpoint_id = self.webhook_endpoint_id
            result = super().delete(*args, **kwargs)
            if endpoint_id is not None:
                WebhookEndpoint.objects.filter(pk=endpoint_id, scope=WebhookEndpoint.Scope.BUDGET).delete()
            return result

    @property
    def target(self) -> Any:
        return self.local_queue or self.namespace or self.cluster_queue

    @property
    def target_label(self) -> str:
        if self.local_queue is not None:
            return f"LocalQueue {self.local_queue.key}"
        if self.namespace is not None:
            return f"Namespace {self.namespace.name}"
        if self.cluster_queue is not None:
            return f"ClusterQueue {self.cluster_queue.name}"
        return "no target"

    @property
    def target_ref(self) -> tuple[str, int]:
        """``(kind, id)`` of the target, kind as in QueueHold/AdmissionRecord field names."""
        for field in ("local_queue", "namespace", "cluster_queue"):
            pk = getattr(self, f"{field}_id")
            if pk:
                return field, pk
        raise ValueError(f"budget {self.name} has no target")

    @property
    def unit_label(self) -> str:
        """What the allocation counts, for messages: ``hours``, ``GPU-hours``, ``cpu-hours (a100)``."""
        if self.kind == self.Kind.WALL_TIME:
            return "hours"
        short = {"nvidia.com/gpu": "GPU", "amd.com/gpu": "GPU", "cpu": "CPU"}.get(self.resource, self.resource)
        label = f"{short}-hours"
        if self.flavor is not None:
            label += f" ({self.flavor.name})"
        return label

    def renewal_rule(self) -> periods.Renewal:
        """The period rule in the configured time zone (month and week boundaries are local)."""
        return periods.Renewal(
            kind=self.renewal, anchor=self.anchor, days=self.renewal_days, tz=timezone.get_default_timezone()
        )

    def email_recipients(self) -> list[str]:
        return [address.strip() for address in (self.alert_emails or "").split(",") if address.strip()]

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        if len(targets_set(self)) != 1:
            errors["local_queue"] = "choose exactly one target: a LocalQueue, a Namespace or a ClusterQueue"
        if self.allocated_hours is not None and self.allocated_hours < Decimal(0):
            errors["allocated_hours"] = "must not be negative"
        if self.kind == self.Kind.RESOURCE_HOURS and not self.resource:
            errors["resource"] = "required for a ResourceHours budget (e.g. nvidia.com/gpu)"
        if self.kind == self.Kind.WALL_TIME and (self.resource or self.flavor_id):
            errors["resource"] = "a WallTime budget counts hours, not a resource; leave resource and flavor empty"
        if self.renewal == self.Renewal.DAYS and not self.renewal_days:
            errors["renewal_days"] = "required when renewal is every N days (a whole number of at least 1)"
        elif self.renewal_days is not None and not 1 <= self.renewal_days <= MAX_RENEWAL_DAYS:
            errors["renewal_days"] = f"must be a whole number of days from 1 to {MAX_RENEWAL_DAYS}"
        if self.anchor is not None and not MIN_YEAR <= self.anchor.year <= MAX_YEAR:
            errors["anchor"] = f"must be a date between the years {MIN_YEAR} and {MAX_YEAR}"
        for address in self.email_recipients():
            try:
                validate_email(address)
            except ValidationError:
                errors["alert_emails"] = f"{address!r} is not a valid e-mail address (separate addresses with commas)"
                break
        if self.pk is not None and "local_queue" not in errors:
            changed = self._changed_measure_fields()
            if changed and self.charges.exists():
                errors[changed[0]] = (
                    f"cannot change {', '.join(changed)} once the budget has charges (the ledger was built "
                    "under them); create a new budget instead"
                )
        if self.webhook_url:
            try:
                outbound.check_url(self.webhook_url)
            except outbound.OutboundError as error:
                errors["webhook_url"] = str(error)
        thresholds = self.alert_thresholds
        if not isinstance(thresholds, list) or any(
            isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 1000 for t in thresholds
        ):
            errors["alert_thresholds"] = "expected a list of percentages between 0 and 1000, e.g. [80, 100]"
        if errors:
            raise ValidationError(errors)

    def sync_webhook_endpoint(self) -> WebhookEndpoint | None:
        """This budget's own endpoint, in step with ``webhook_url``: created with a new secret for
        the first URL (an admin reads it by rotating: docs/webhooks.md), its URL and name kept
        current, disabled (the secret kept) while there is no URL. At most three queries."""
        endpoint = (
            WebhookEndpoint.objects.filter(pk=self.webhook_endpoint_id).first() if self.webhook_endpoint_id else None
        )
        name = f"{BUDGET_ENDPOINT_PREFIX}{self.pk} {self.name}"[:100]
        if endpoint is None:
            if not self.webhook_url:
                return None
            endpoint = WebhookEndpoint.objects.create(
                name=name,
                url=self.webhook_url,
                events=[ALL_BUDGET_EVENTS],
                scope=WebhookEndpoint.Scope.BUDGET,
                secret=webhooks.new_secret(),
            )
            Budget.objects.filter(pk=self.pk).update(webhook_endpoint=endpoint)
            self.webhook_endpoint = endpoint
            return endpoint
        wanted = {"url": self.webhook_url or endpoint.url, "name": name, "enabled": bool(self.webhook_url)}
        changed = [field for field, value in wanted.items() if getattr(endpoint, field) != value]
        for field in changed:
            setattr(endpoint, field, wanted[field])
        if changed:
            endpoint.save(update_fields=changed)
        return endpoint if self.webhook_url else None

    def _changed_measure_fields(self) -> list[str]:
        """Measure fields whose value differs from the stored row."""
        attnames = {name: self._meta.get_field(name).attname for name in MEASURE_FIELDS}  # type: ignore[union-attr]  # concrete fields, never relations
        stored = Budget.objects.filter(pk=self.pk).values(*attnames.values()).first()
        if stored is None:
            return []
        return [name for name, attname in attnames.items() if stored[attname] != getattr(self, attname)]


class BudgetCharge(models.Model):
    """One line of the append-only ledger: a budget charged for part of an admission interval.

    Each accounting run appends, per admission interval under the budget, the stretch not yet
    charged (``[charged_from, charged_to)``, cut at period boundaries), so the charges of one
    interval tile it exactly: nothing is charged twice, nothing is rounded. When an interval
    turns out to have ended before the time already charged (a finish reported late with its
    real, earlier end), a ``correction`` line credits the difference back, as a ledger does;
    no line is ever updated or deleted.

    ``quantity`` is what is charged per second in millis: 1000 for WallTime (one workload,
    whatever it requests) or the requested amount of the resource for ResourceHours.
    ``unit_seconds`` = quantity / 1000 x seconds, exact (negative for corrections): seconds of
    wall time, or resource-seconds in base units (GPU-seconds). Hours are unit_seconds / 3600.
    """

    class Kind(models.TextChoices):
        CHARGE = "charge", "Charge"
        CORRECTION = "correction", "Correction"

    budget = models.ForeignKey(Budget, on_delete=models.CASCADE, related_name="charges")
    workload = models.ForeignKey("queues.Workload", on_delete=models.CASCADE, related_name="budget_charges")
    admission_record = models.ForeignKey(
        "queues.AdmissionRecord", on_delete=models.CASCADE, related_name="budget_charges"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.CHARGE)
    period_start = models.DateTimeField(help_text="Start of the budget period this line belongs to")
    charged_from = models.DateTimeField()
    charged_to = models.DateTimeField()
    quantity = models.BigIntegerField(help_text="Millis charged per second (1000 = one workload or one unit)")
    unit_seconds = models.DecimalField(max_digits=32, decimal_places=9, help_text="quantity x seconds, in base units")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["charged_from", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(charged_to__gt=models.F("charged_from")), name="budget_charge_positive_length"
            ),
            models.CheckConstraint(condition=models.Q(quantity__gt=0), name="budget_charge_quantity_gt_0"),
            models.CheckConstraint(
                condition=(
                    models.Q(kind="charge", unit_seconds__gt=0) | models.Q(kind="correction", unit_seconds__lt=0)
                ),
                name="budget_charge_sign_matches_kind",
            ),
            # The database's own guard against double charging: two runs that both read the same
            # charged-up-to point would both start a line there, and one of them fails.
            models.UniqueConstraint(
                fields=["budget", "admission_record", "kind", "charged_from"], name="budget_charge_once_per_start"
            ),
        ]
        indexes = [
            models.Index(fields=["budget", "period_start"], name="budget_charge_period"),
            models.Index(fields=["budget", "charged_to"], name="budget_charge_to"),
            models.Index(fields=["budget", "admission_record"], name="budget_charge_record"),
        ]

    def __str__(self) -> str:
        return f"{self.budget_id}:{self.workload_id} {self.charged_from:%Y-%m-%d %H:%M:%S}+{self.unit_seconds}"

    @property
    def hours(self) -> Decimal:
        return self.unit_seconds / 3600


class BudgetState(models.Model):
    """What the last accounting run found; status reads start here (one row per budget).

    ``used_unit_seconds`` and ``burn_rate`` are as of ``as_of``; percent, remaining and the
    forecast are computed on read against the budget's *current* allocation, so raising it
    shows at once.
    """

    budget = models.OneToOneField(Budget, on_delete=models.CASCADE, primary_key=True, related_name="state")
    as_of = models.DateTimeField(null=True, blank=True, help_text="Time the ledger is complete up to")
    period_start = models.DateTimeField(null=True, blank=True)
    period_end = models.DateTimeField(null=True, blank=True)
    used_unit_seconds = models.DecimalField(max_digits=32, decimal_places=9, default=Decimal(0))
    burn_rate = models.DecimalField(
        max_digits=32, decimal_places=9, default=Decimal(0), help_text="Units charged per second over the recent window"
    )
    exhausted_at = models.DateTimeField(
        null=True, blank=True, help_text="When usage reached the allocation this period"
    )
    allocated_hours = models.DecimalField(
        max_digits=14, decimal_places=3, null=True, blank=True, help_text="The allocation the last run measured against"
    )
    error = models.CharField(
        max_length=300,
        blank=True,
        help_text="Why the last accounting run failed (the budget then shows 'error'); empty when it worked",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"state of {self.budget_id} as of {self.as_of}"


class BudgetEvent(models.Model):
    """Something that happened to a budget, shown in the UI and API, and its alert delivery.

    Threshold crossings, exhaustion and renewal happen at most once per period (database
    constraints); holds can be placed and lifted several times (an allocation raised, then used
    up again). E-mail goes out for threshold crossings; the webhook receives every event.
    """

    class Kind(models.TextChoices):
        THRESHOLD = "ThresholdCrossed", "Threshold crossed"
        EXHAUSTED = "Exhausted", "Exhausted"
        HOLD_PLACED = "HoldPlaced", "Hold placed"
        HOLD_LIFTED = "HoldLifted", "Hold lifted"
        RENEWED = "Renewed", "Renewed"
        ACCOUNTING_FAILED = "AccountingFailed", "Accounting failed"

    class Delivery(models.TextChoices):
        NONE = "", "Not requested"
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    budget = models.ForeignKey(Budget, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    at = models.DateTimeField(db_index=True)
    period_start = models.DateTimeField()
    threshold = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    used_hours = models.DecimalField(max_digits=24, decimal_places=6)
    allocated_hours = models.DecimalField(max_digits=14, decimal_places=3)
    message = models.CharField(max_length=500)

    email_sent_at = models.DateTimeField(null=True, blank=True)
    webhook_status = models.CharField(max_length=10, choices=Delivery.choices, blank=True, default=Delivery.NONE)
    webhook_attempts = models.PositiveIntegerField(default=0)
    webhook_delivered_at = models.DateTimeField(null=True, blank=True)
    webhook_last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["budget", "period_start", "threshold"],
                condition=models.Q(kind="ThresholdCrossed"),
                name="budget_event_threshold_once_per_period",
            ),
            models.UniqueConstraint(
                fields=["budget", "period_start", "kind"],
                condition=models.Q(kind__in=["Exhausted", "Renewed"]),
                name="budget_event_once_per_period",
            ),
            models.CheckConstraint(
                condition=models.Q(kind="ThresholdCrossed", threshold__isnull=False)
                | ~models.Q(kind="ThresholdCrossed"),
                name="budget_event_threshold_given",
            ),
        ]
        indexes = [models.Index(fields=["budget", "at"], name="budget_event_budget_at")]

    def __str__(self) -> str:
        return f"{self.budget_id} {self.kind} {self.at:%Y-%m-%d %H:%M}"


# -- who sees which budget (``core.access``) ---------------------------------------------------


def holding_work_of(access: Access) -> Q:
    """Budgets that can hold a tenant's work: on its namespaces, its LocalQueues, or the
    ClusterQueues its LocalQueues feed (a ClusterQueue budget holds every tenant in it)."""
    ids = access.namespace_ids
    feeding = LocalQueue.objects.filter(namespace_id__in=ids).values("cluster_queue_id")
    return Q(namespace_id__in=ids) | Q(local_queue__namespace_id__in=ids) | Q(cluster_queue_id__in=feeding)


visibility(Budget, rule=holding_work_of, audited=True)
visibility(BudgetEvent, rule=lambda access: Q(budget__in=Budget.objects.filter(holding_work_of(access))))
