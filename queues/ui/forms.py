"""Policy forms of the web UI. They validate with the models' ``full_clean()`` (ModelForm's own
step), the same rules the API and the admin apply; the API's ``queues.services.policy`` validates
again under a row lock, writes, and records the audit row.

Quantities are typed in Kubernetes notation (``500m``, ``2Gi``, ``4``) through
``QuantityFormField``; a bad one is an error on that field.

Every edit form carries the version of the object it was opened at (``VersionedModelForm``,
``core.versions``): the view refuses a save when the object changed since. The add forms
(``*AddForm``) are the edit forms with the fields an object is created with (its name, its
place in the tree); ``queues.ui.views.edit`` shows them.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.forms.models import BaseInlineFormSet, inlineformset_factory

from queues.access import EDITOR_LOCAL_QUEUE_FIELDS
from queues.models import (
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
    WorkloadPriorityClass,
    default_cluster,
)

MAX_LABEL_LINES = 64  # the model allows 32 labels; more lines than this is not worth parsing


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
    """Admins: the ClusterQueue it feeds (fixed once it holds workloads: the model's rule), the
    weight against the namespace's other LocalQueues, the stop policy, the note."""

    class Meta:
        model = LocalQueue
        fields = ["cluster_queue", "weight", "stop_policy", "description"]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}


class LocalQueueTenantForm(VersionedModelForm):
    """Tenant editors: stop or resume their own queue, and describe it; weights stay with admins."""

    class Meta:
        model = LocalQueue
        fields = sorted(EDITOR_LOCAL_QUEUE_FIELDS, reverse=True)  # the API's rule: stop_policy, description


class PriorityClassNamesField(forms.MultipleChoiceField):
    """A namespace's allowed WorkloadPriorityClass names, ticked from the classes that exist (the
    model's ``clean()`` refuses a name that no longer does)."""

    widget = forms.CheckboxSelectMultiple

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=self.class_names, required=False, **kwargs)

    def validate(self, value: Any) -> None:
        unknown = [name for name in value if not self.valid_value(name)]
        if unknown:
            shown = ", ".join(repr(str(name)[:63]) for name in unknown[:5])
            raise forms.ValidationError(f"no WorkloadPriorityClass named {shown}", code="invalid_choice")
        super().validate(value)

    @staticmethod
    def class_names() -> list[tuple[str, str]]:
        return [
            (name, f"{name} ({value})")
            for name, value in WorkloadPriorityClass.objects.order_by("-value", "name").values_list("name", "value")
        ]


class NamespaceForm(PlainWeightMixin, VersionedModelForm):
    allowed_priority_classes = PriorityClassNamesField(
        help_text="The classes its tenants may submit with (the default is always allowed)"
    )

    class Meta:
        model = Namespace
        fields = [
            "weight",
            "preemption_within_namespace",
            "allowed_priority_classes",
            "default_priority_class",
            "description",
        ]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}


class ClusterQueueForm(PlainWeightMixin, VersionedModelForm):
    class Meta:
        model = ClusterQueue
        fields = ["cohort", *ClusterQueue.POLICY_FIELDS]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}


class CohortForm(PlainWeightMixin, VersionedModelForm):
    class Meta:
        model = Cohort
        fields = ["parent", "weight", "admission_mode", "description"]
        widgets = {"weight": forms.NumberInput(attrs={"step": "0.1", "min": "0"})}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["parent"].queryset = Cohort.objects.exclude(pk=self.instance.pk).order_by("name")  # type: ignore[attr-defined]  # a ModelChoiceField


class CohortAddForm(CohortForm):
    class Meta(CohortForm.Meta):
        fields = ["name", "parent", "weight", "admission_mode", "description"]


class ClusterQueueAddForm(ClusterQueueForm):
    class Meta(ClusterQueueForm.Meta):
        fields = ["name", "cohort", *ClusterQueue.POLICY_FIELDS]


class NamespaceAddForm(NamespaceForm):
    class Meta(NamespaceForm.Meta):
        fields = ["name", *NamespaceForm.Meta.fields]


class LocalQueueAddForm(LocalQueueForm):
    """Admins place a new LocalQueue: its namespace, name and ClusterQueue, then its weight."""

    class Meta(LocalQueueForm.Meta):
        fields = ["namespace", "name", "cluster_queue", "weight", "stop_policy", "description"]


class NodeLabelsField(forms.CharField):
    """A flavor's node labels as ``key=value`` lines in the form, a mapping in the model (whose
    ``clean()`` checks names and values: ``core.validators.node_label_errors``)."""

    widget = forms.Textarea(attrs={"rows": 3, "placeholder": "cloud.google.com/gke-accelerator=nvidia-a100"})

    def prepare_value(self, value: object) -> object:
        if isinstance(value, dict):
            return "\n".join(f"{key}={label}" for key, label in value.items())
        return value

    def to_python(self, value: object) -> dict[str, str]:  # type: ignore[override]  # a mapping for the model's JSON field
        text = super().to_python(value) or ""
        lines = [line.strip() for line in str(text).splitlines() if line.strip()]
        if len(lines) > MAX_LABEL_LINES:
            raise forms.ValidationError(f"at most {MAX_LABEL_LINES} lines, got {len(lines)}")
        labels: dict[str, str] = {}
        for number, line in enumerate(lines, start=1):
            key, equals, label = line.partition("=")
            if not equals or not key.strip():
                raise forms.ValidationError(f"line {number}: write each label as name=value")
            if key.strip() in labels:
                raise forms.ValidationError(f"line {number}: {key.strip()[:63]} is given twice")
            labels[key.strip()] = label.strip()
        return labels

    def has_changed(self, initial: object, data: object) -> bool:
        try:
            return self.to_python(data) != (initial or {})
        except forms.ValidationError:
            return True


class ResourceFlavorForm(VersionedModelForm):
    """Admins: a flavor's note and node labels (its name is its identity in every quota row)."""

    node_labels = NodeLabelsField(
        required=False, max_length=4096, help_text="One name=value per line; kept for the Kueue export"
    )
    cluster = forms.ModelChoiceField(
        queryset=Cluster.objects.order_by("name"),
        required=False,
        help_text="The cluster whose capacity this flavor is (empty: the default cluster, or the current one)",
    )

    class Meta:
        model = ResourceFlavor
        fields = ["description", "cluster", "node_labels"]

    def clean_cluster(self) -> Cluster:
        chosen = self.cleaned_data.get("cluster")
        if chosen is not None:
            return chosen
        return self.instance.cluster if self.instance.pk else default_cluster()


class ResourceFlavorAddForm(ResourceFlavorForm):
    class Meta(ResourceFlavorForm.Meta):
        fields = ["name", "description", "cluster", "node_labels"]


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


class ClusterForm(VersionedModelForm):
    """Admins: a cluster's backend, connection and maps. The token's reference (``rest_secret``,
    ``env:NAME`` or ``file:/path``) is never shown back: the field starts empty, and empty keeps
    the stored reference (tick "clear" to remove it)."""

    rest_secret = forms.CharField(
        required=False,
        max_length=410,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        label="REST token reference",
        help_text="rest: where the JWT is, env:VARIABLE or file:/path (never the token); empty keeps the current one",
    )
    clear_rest_secret = forms.BooleanField(required=False, label="Clear the token reference")

    class Meta:
        model = Cluster
        fields = [
            "description",
            "backend",
            "enabled",
            "slurm_transport",
            "slurm_bin_dir",
            "slurm_conf",
            "rest_url",
            "rest_secret",
            "rest_user",
            "flavor_partitions",
            "account_queues",
        ]

    def clean_rest_secret(self) -> str:
        typed = self.cleaned_data.get("rest_secret") or ""
        if self.data.get(self.add_prefix("clear_rest_secret")):
            return ""
        return typed or (self.instance.rest_secret if self.instance.pk else "")


class ClusterAddForm(ClusterForm):
    class Meta(ClusterForm.Meta):
        fields = ["name", *ClusterForm.Meta.fields]


class DefaultClusterForm(VersionedModelForm):
    """The default cluster takes its backend, connection and maps from the settings."""

    class Meta:
        model = Cluster
        fields = ["description", "enabled"]
