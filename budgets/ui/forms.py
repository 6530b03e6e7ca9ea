"""The budget edit form (admins): how much a budget allows, when it renews, what happens, who is told."""

from __future__ import annotations

from typing import Any

from django import forms

from budgets.models import Budget
from queues.models import LocalQueue
from queues.ui.forms import VersionedModelForm


class PercentListField(forms.CharField):
    """``80, 100`` in the form, ``[80, 100]`` in the model (whose ``clean()`` checks the range)."""

    def prepare_value(self, value: object) -> object:
        if isinstance(value, list):
            return ", ".join(format(v, "g") if isinstance(v, float) else str(v) for v in value)
        return value

    def to_python(self, value: object) -> list[int | float]:  # type: ignore[override]  # a list for the model's list field
        text = super().to_python(value)
        if not text:
            return []
        numbers: list[int | float] = []
        for part in str(text).replace(";", ",").split(","):
            part = part.strip().rstrip("%").strip()
            if not part:
                continue
            try:
                number = float(part)
            except ValueError:
                raise forms.ValidationError(f"{part!r} is not a percentage: write them like 80, 100") from None
            numbers.append(int(number) if number.is_integer() else number)
        return numbers


class BudgetForm(VersionedModelForm):
    """Admins: how much a budget allows, when it renews, what happens at the end, who is told."""

    alert_thresholds = PercentListField(required=False, help_text="Percent of the allocation, e.g. 80, 100")
    webhook_url = forms.URLField(required=False, assume_scheme="https", max_length=200)

    class Meta:
        model = Budget
        fields = [
            "allocated_hours",
            "renewal",
            "renewal_days",
            "action",
            "alert_thresholds",
            "safe_admission",
            "alert_emails",
            "webhook_url",
        ]


class BudgetAddForm(BudgetForm):
    """Admins: a new budget, with what it measures (target, kind, resource, flavor, first period
    start); those stay fixed once it has charges (``Budget.clean``)."""

    class Meta(BudgetForm.Meta):
        fields = [
            "name",
            "local_queue",
            "namespace",
            "cluster_queue",
            "kind",
            "resource",
            "flavor",
            "anchor",
            *BudgetForm.Meta.fields,
        ]
        help_texts = {"local_queue": "Exactly one target: a LocalQueue, a namespace or a ClusterQueue"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["local_queue"].queryset = LocalQueue.objects.select_related("namespace").order_by(  # type: ignore[attr-defined]  # a ModelChoiceField
            "namespace__name", "name"
        )
