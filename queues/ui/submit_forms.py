"""The tenant's action forms: submit a workload to a LocalQueue, cancel one.

The submit form is built per LocalQueue from ``queues.selectors.submission.SubmitOptions``: one
quantity field per resource its ClusterQueue has quota for (Kubernetes notation, the unit and
the limits beside it), the priority classes the viewer may name, and a command only when the
clusters of its ClusterQueue run commands (Slurm). It checks shapes and bounds only; the rules are the
API's and are applied by the same services (``resolve_priority``, ``submit_checked``), whose
errors the view puts back on the field they name. Every input is bounded before it is parsed,
and no error repeats more than a field's bounded input.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from core.validators import validate_dns_label
from fairshare.durations import parse_duration
from fairshare.errors import ValidationError as EngineValidationError
from fairshare.quantities import MAX_MILLIS, parse_millis
from queues.models.workload import MAX_POD_COUNT
from queues.selectors.submission import ResourceLimit, SubmitOptions

INT32_MAX = 2**31 - 1  # the API's bound on priorities and durations
MAX_QUANTITY_TEXT = 40
MAX_COMMAND = 4096  # the API's
MAX_CANCEL_MESSAGE = 300  # the API's (LifecycleReportSerializer)
_KEY_SHAPE = re.compile(r"^[\x21-\x7e]{1,255}$")  # the API's Idempotency-Key


class DurationInput(forms.CharField):
    """``90m``, ``2h``, ``1h30m`` or a number of seconds; cleans to whole seconds (None when empty)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, max_length=32, **kwargs)
        self.widget.attrs.setdefault("placeholder", "e.g. 45m, 2h, 1h30m")

    def clean(self, value: Any) -> int | None:  # seconds, not text
        text = super().clean(value)
        if not text:
            return None
        try:
            seconds = parse_duration(text, "")
        except EngineValidationError as error:
            raise ValidationError(error.message, code="invalid") from None
        if seconds > INT32_MAX:
            raise ValidationError(f"at most {INT32_MAX} seconds (about 68 years)", code="max_value")
        return seconds


class QuantityInput(forms.CharField):
    """A per-pod amount of one resource in Kubernetes notation; cleans to millis (None when empty)."""

    def __init__(self, limit: ResourceLimit, **kwargs: Any) -> None:
        super().__init__(required=False, max_length=MAX_QUANTITY_TEXT, **kwargs)
        self.limit = limit
        self.widget.attrs.update({"placeholder": "e.g. 2" if not limit.unit.startswith("bytes") else "e.g. 16Gi"})

    def clean(self, value: Any) -> int | None:  # millis, not text
        text = super().clean(value)
        if not text:
            return None
        try:
            millis = parse_millis(text.strip(), "")
        except EngineValidationError as error:
            raise ValidationError(error.message, code="invalid") from None
        return millis


def resource_field_name(index: int) -> str:
    """Form field names by position: resource names hold ``/`` and ``.``, awkward in ids."""
    return f"resource_{index}"


def new_submission_key() -> str:
    return uuid.uuid4().hex


class WorkloadSubmitForm(forms.Form):
    """One pod set (``count`` pods, each requesting the amounts given) into one LocalQueue.

    The API takes up to eight pod sets; a form for one covers what people submit by hand."""

    name = forms.CharField(max_length=63, help_text="Unique in the namespace: lower-case letters, digits and '-'")
    count = forms.IntegerField(
        label="Pods", min_value=1, max_value=MAX_POD_COUNT, initial=1, help_text="Each pod requests the amounts below"
    )
    # A list to pick from, checked by the API's ``resolve_priority`` (the same rule and message),
    # not by the form: a name that is not granted is refused there, naming this field.
    priority_class = forms.CharField(
        label="Priority class",
        required=False,
        max_length=63,
        widget=forms.Select,
        help_text="The classes granted to this namespace, with their priority (higher goes first)",
    )
    duration = DurationInput(
        label="Expected run time",
        help_text="How long it runs once admitted; the estimated start of the work behind it uses this",
    )
    max_runtime = DurationInput(label="Maximum run time", help_text="Stopped after this long; empty: no limit")
    submission_key = forms.CharField(widget=forms.HiddenInput, max_length=255)

    def __init__(self, *args: Any, options: SubmitOptions, is_admin: bool, runs_commands: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.options = options
        self.resource_fields: list[tuple[str, ResourceLimit]] = []
        for index, limit in enumerate(options.resources):
            name = resource_field_name(index)
            self.fields[name] = QuantityInput(limit, label=f"{limit.resource} per pod", help_text=limit.unit)
            self.resource_fields.append((name, limit))
        default = options.default_class
        blank = f"default: {default.name} ({default.value})" if default is not None else "none (0)"
        self.fields["priority_class"].widget.choices = [("", blank)] + [
            (choice.name, f"{choice.name} ({choice.value})") for choice in options.priority_classes
        ]
        if is_admin:
            self.fields["priority"] = forms.IntegerField(
                required=False,
                min_value=-INT32_MAX - 1,
                max_value=INT32_MAX,
                help_text="Admins only: a raw priority instead of a class",
            )
        if runs_commands:
            self.fields["command"] = forms.CharField(
                required=False,
                max_length=MAX_COMMAND,
                widget=forms.Textarea(attrs={"rows": 3}),
                help_text="The shell command the Slurm job runs (a held sbatch --wrap job, released when admitted)",
            )
        self.order_fields(
            ["name", "count", *[n for n, _ in self.resource_fields], "priority_class", "priority", "duration"]
        )

    def resource_rows(self) -> list[tuple[forms.BoundField, ResourceLimit]]:
        """Each resource's bound field with its limits (the form's table of requests)."""
        return [(self[name], limit) for name, limit in self.resource_fields]

    def general_fields(self) -> list[forms.BoundField]:
        """The visible fields that are not a resource's (shown above the table of requests)."""
        resources = {name for name, _ in self.resource_fields}
        return [field for field in self.visible_fields() if field.name not in resources]

    def field_of_resource(self, resource: str) -> str | None:
        return next((name for name, limit in self.resource_fields if limit.resource == resource), None)

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        validate_dns_label(name)  # after max_length, so an error never repeats more than 63 characters
        return name

    def clean_submission_key(self) -> str:
        key: str = self.cleaned_data["submission_key"]
        if not _KEY_SHAPE.match(key):
            raise ValidationError("reload the page: this form's key is damaged")
        return key

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        requests = {
            limit.resource: cleaned[name]
            for name, limit in self.resource_fields
            if cleaned.get(name) is not None and name not in self.errors
        }
        if not requests and not any(name in self.errors for name, _ in self.resource_fields):
            first = self.resource_fields[0][0] if self.resource_fields else None
            self.add_error(first, "request at least one resource")
        count = cleaned.get("count")
        if isinstance(count, int):
            for resource, amount in requests.items():
                if count * amount > MAX_MILLIS:  # the API's bound on a pod set's total
                    self.add_error(self.field_of_resource(resource), f"{count} pods of this much is too large in total")
        cleaned["requests"] = requests
        return cleaned

    def pod_sets(self) -> list[dict[str, Any]]:
        """The API's ``pod_sets`` for the cleaned form: one set named ``main``."""
        return [{"name": "main", "count": self.cleaned_data["count"], "requests": self.cleaned_data["requests"]}]

    def fingerprint_body(self) -> dict[str, Any]:
        """What the submission key stands for (the same key with another body is refused)."""
        data = {name: self.cleaned_data.get(name) for name in self.fields if name != "submission_key"}
        data["local_queue"] = self.options.local_queue.key
        return data


class CancelForm(forms.Form):
    """Why it is cancelled (optional, kept with the admission interval like the API's message)."""

    message = forms.CharField(
        label="Reason (optional)",
        required=False,
        max_length=MAX_CANCEL_MESSAGE,
        widget=forms.TextInput(attrs={"placeholder": "e.g. wrong input data"}),
    )
