"""Budgets: wall-time hours or resource-hours on one LocalQueue, Namespace or ClusterQueue."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from budgets.models import Budget
from budgets.selectors import budget_status
from core.api.fields import NameField
from core.api.permissions import request_access
from core.redaction import redact_policy_state
from fairshare.simulation.calendar import MAX_RENEWAL_DAYS
from queues.api.fields import LocalQueueKeyField
from queues.api.serializers.base import PolicySerializer
from queues.models import ClusterQueue, Namespace, ResourceFlavor

# What the schema promises of ``alert_emails``: comma-separated addresses of a plain shape (a dot-atom
# local part, a host name with a letter TLD), each of which Django's ``validate_email`` in
# ``Budget.clean`` accepts. The model accepts a few more exotic forms; the schema only promises
# what is certainly accepted, so a client (or a fuzzer) that follows it never gets a 400.
_ADDRESS = r"[A-Za-z0-9_%+-]+(\.[A-Za-z0-9_%+-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
ALERT_EMAILS_PATTERN = rf"^ *{_ADDRESS} *(, *{_ADDRESS} *)*$"  # blank: the schema's other branch


@extend_schema_field({"type": "string", "maxLength": 500, "pattern": ALERT_EMAILS_PATTERN})
class AlertEmailsField(serializers.CharField):
    """Comma-separated e-mail addresses; ``Budget.clean`` validates each one."""


# What the schema promises of ``webhook_url``: http(s), a host and no ``user:password@``
# (``Budget.clean`` refuses the rest). Where the host resolves to is checked at save and at send
# (``core.outbound``): that is DNS, which no schema can state.
WEBHOOK_URL_PATTERN = r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s@]*)?$"


@extend_schema_field({"type": "string", "format": "uri", "maxLength": 200, "pattern": WEBHOOK_URL_PATTERN})
class WebhookUrlField(serializers.URLField):
    """An http(s) URL without credentials; where it resolves is checked by ``Budget.clean``."""


class PercentField(serializers.FloatField):
    """A percentage; whole numbers stay integers (80, not 80.0) as the model's default has them."""

    def to_internal_value(self, data: object) -> float | int:
        number = super().to_internal_value(data)  # type: ignore[arg-type]  # DRF takes any input here
        return int(number) if number.is_integer() else number

    def to_representation(self, value: float) -> float | int:  # type: ignore[override]  # the stubs say str; FloatField returns a float
        return value if isinstance(value, int) else float(super().to_representation(value))


class BudgetStatusSerializer(serializers.Serializer):
    """The current period as of the last accounting run (``budgets.selectors.budget_status``)."""

    unit = serializers.CharField()
    measured = serializers.BooleanField()
    as_of = serializers.DateTimeField(allow_null=True)
    period_start = serializers.DateTimeField(allow_null=True)
    period_end = serializers.DateTimeField(allow_null=True)
    used_hours = serializers.DecimalField(max_digits=24, decimal_places=6, coerce_to_string=False)
    remaining_hours = serializers.DecimalField(max_digits=24, decimal_places=6, coerce_to_string=False)
    percent = serializers.FloatField()
    exhausted = serializers.BooleanField()
    exhausted_at = serializers.DateTimeField(allow_null=True)
    burn_rate_per_hour = serializers.DecimalField(max_digits=24, decimal_places=6, coerce_to_string=False)
    forecast_exhausted_at = serializers.DateTimeField(allow_null=True)
    exhausts_before_reset = serializers.BooleanField(allow_null=True)
    held = serializers.BooleanField()
    state = serializers.ChoiceField(
        choices=["error", "held", "exhausted", "at_risk", "ok"],
        read_only=True,
        help_text="The one state every page shows (budgets.status.classify)",
    )
    state_reason = serializers.CharField(read_only=True)


class BudgetSerializer(PolicySerializer[Budget]):
    """Set exactly one target: ``local_queue`` (``namespace/name``), ``namespace`` or
    ``cluster_queue``. Usage, burn-down and events come with the budget accounting issue."""

    local_queue = LocalQueueKeyField(required=False, allow_null=True, help_text="namespace/name")
    namespace = NameField(queryset=Namespace.objects.all(), required=False, allow_null=True)
    cluster_queue = NameField(queryset=ClusterQueue.objects.all(), required=False, allow_null=True)
    flavor = NameField(queryset=ResourceFlavor.objects.all(), required=False, allow_null=True)
    target = serializers.CharField(source="target_label", read_only=True, help_text="e.g. LocalQueue team-a/main")
    status = serializers.SerializerMethodField()
    webhook_url = WebhookUrlField(max_length=200, required=False, allow_blank=True)
    alert_emails = AlertEmailsField(
        max_length=500, required=False, allow_blank=True, help_text="Comma-separated addresses"
    )
    alert_thresholds = serializers.ListField(
        child=PercentField(min_value=0, max_value=1000),
        max_length=10,
        required=False,
        help_text="Percentages, e.g. [80, 100]",
    )

    @extend_schema_field(BudgetStatusSerializer)
    def get_status(self, budget: Budget) -> dict:
        held = getattr(budget, "held", None)
        return BudgetStatusSerializer(budget_status(budget, held=held)).data

    def to_representation(self, instance: Budget) -> dict:
        """Alert destinations are an admin's business: tenants see the budget, not where alerts go."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is None:
            return data
        return redact_policy_state(request_access(request), "budget", data) or {}

    class Meta:
        model = Budget
        extra_kwargs = {  # the model's rules, for the schema
            "allocated_hours": {"min_value": 0},
            "renewal_days": {
                "min_value": 1,
                "max_value": MAX_RENEWAL_DAYS,
                "error_messages": {
                    "min_value": f"must be a whole number of days from 1 to {MAX_RENEWAL_DAYS}",
                    "max_value": f"must be a whole number of days from 1 to {MAX_RENEWAL_DAYS}",
                },
            },
        }
        fields = [
            "id",
            "name",
            "target",
            "local_queue",
            "namespace",
            "cluster_queue",
            "kind",
            "resource",
            "flavor",
            "allocated_hours",
            "renewal",
            "renewal_days",
            "anchor",
            "action",
            "alert_thresholds",
            "safe_admission",
            "alert_emails",
            "webhook_url",
            "created_at",
            "status",
        ]
