"""Policy forms of the web UI. They validate with the models' ``full_clean()`` (ModelForm's own
step), the same rules the API and the admin apply; the API's ``queues.services.policy`` validates
again under a row lock, writes, and records the audit row.

Quantities are typed in Kubernetes notation (``500m``, ``2Gi``, ``4``) through
``QuantityFormField``; a bad one is an error on that field.

Every edit form carries the version of the object it was opened at (``VersionedModelForm``,
``core.versions``): the view refuses a save when the object changed since.
"""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.forms.models import BaseInlineFormSet, inlineformset_factory

from queues.access import EDITOR_LOCAL_QUEUE_FIELDS
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, CohortQuota, LocalQueue, Namespace, NamespaceQuota


class VersionField(forms.CharField):
    """The version (``core.versions.version_of``) of the object the form was opened at, in a
    hidden input. It is compared by the view under the row lock, not validated here, and is never
    a change of its own (``has_changed``)."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs: object) -> None:
        super().__init__(required=False, max_length=64, **kwargs)  # type: ignore[arg-type]

    def has_changed(self, initial: object, data: object) -> bool:
        return False


class VersionedModelForm(forms.ModelForm):
    """An edit form with the ``version`` it was opened at; the view passes
    ``initial={"version": ...}`` when it shows the form."""

    version = VersionField()


class PlainWeightMixin:
    """Show a stored weight as people typed it ("2", "0.5"), not as the column stores it ("2.0000")."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        weight = getattr(self.instance, "weight", None)  # type: ignore[attr-defined]
        if "weight" in self.fields and isinstance(weight, Decimal):  # type: ignore[attr-defined]
            self.initial["weight"] = format(weight.normalize(), "f")  # type: ignore[attr-defined]


class LocalQueueForm(PlainWeightMixin, VersionedModelForm):
    """Admins: the weight against the namespace's other LocalQueues, the stop policy, the note."""

    class Meta:
        model = LocalQueue
        fields = ["weight", "stop_policy", "description"]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}


class LocalQueueTenantForm(VersionedModelForm):
    """Tenant editors: stop or resume their own queue, and describe it; weights stay with admins."""

    class Meta:
        model = LocalQueue
        fields = sorted(EDITOR_LOCAL_QUEUE_FIELDS, reverse=True)  # the API's rule: stop_policy, description


class NamespaceForm(PlainWeightMixin, VersionedModelForm):
    class Meta:
        model = Namespace
        fields = ["weight", "preemption_within_namespace", "description"]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}


class ClusterQueueForm(PlainWeightMixin, VersionedModelForm):
    class Meta:
        model = ClusterQueue
        fields = list(ClusterQueue.POLICY_FIELDS)
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}


class CohortForm(PlainWeightMixin, VersionedModelForm):
    class Meta:
        model = Cohort
        fields = ["parent", "weight", "admission_mode", "description"]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["parent"].queryset = Cohort.objects.exclude(pk=self.instance.pk).order_by("name")  # type: ignore[attr-defined]  # a ModelChoiceField


class QuotaFormSet(BaseInlineFormSet):
    """Quota rows; empty extra rows are ignored, rows ticked "delete" are dropped."""

    def kept_forms(self) -> list[forms.ModelForm]:
        """The rows to store, as their forms (each ``instance`` carries the cleaned values)."""
        kept = []
        for form in self.forms:
            if not form.has_changed() and form.instance.pk is None:
                continue
            if self.can_delete and self._should_delete_form(form):  # type: ignore[attr-defined]  # BaseFormSet API the stubs leave out
                continue
            kept.append(form)
        return kept


ClusterQueueQuotaFormSet = inlineformset_factory(
    ClusterQueue,
    ClusterQueueQuota,
    formset=QuotaFormSet,
    extra=1,
    can_delete=True,
    fields=["flavor", "resource", "nominal", "borrowing_limit", "lending_limit", "flavor_order"],
)
CohortQuotaFormSet = inlineformset_factory(
    Cohort,
    CohortQuota,
    formset=QuotaFormSet,
    extra=1,
    can_delete=True,
    fields=["flavor", "resource", "nominal", "borrowing_limit", "lending_limit"],
)
NamespaceQuotaFormSet = inlineformset_factory(
    Namespace,
    NamespaceQuota,
    formset=QuotaFormSet,
    extra=1,
    can_delete=True,
    fields=["resource", "hard"],
)
