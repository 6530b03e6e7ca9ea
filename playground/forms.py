"""Forms of the playground pages. Validation is the engine's (via the services); these only
carry the input and put the engine's field-named errors next to the right input."""

from __future__ import annotations

from typing import Any

from django import forms

from fairshare.types import ADMISSION_MODES
from playground import documents, history
from playground.editor import EditableField
from playground.live_export import MAX_DAYS
from playground.presets import PRESETS

SOURCES = (
    ("preset", "A preset"),
    ("live", "Today's cluster"),
    ("upload", "A scenario file"),
    ("history", "Slurm history / SWF trace"),
)


class StartForm(forms.Form):
    source = forms.ChoiceField(choices=SOURCES, widget=forms.HiddenInput)
    preset = forms.ChoiceField(choices=[(p.slug, p.title) for p in PRESETS], required=False)
    days = forms.FloatField(
        min_value=0,
        max_value=MAX_DAYS,
        initial=1,
        required=False,
        label="Days of history to replay",
        help_text="0 starts from now: pending and running work only",
    )
    lookahead = forms.CharField(initial="6h", required=False, max_length=20, label="Then simulate ahead for")
    file = forms.FileField(required=False, label="Scenario file (YAML or JSON)")
    text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}), label="…or paste it"
    )
    focus = forms.CharField(required=False, widget=forms.HiddenInput)
    history_file = forms.FileField(required=False, label="sacct --json or .swf file")
    history_format = forms.ChoiceField(
        choices=(("", "guess"), *((f, f) for f in history.FORMATS)), required=False, label="Format"
    )
    history_layout = forms.ChoiceField(
        choices=(("account", "namespace per account, LocalQueue per user"), ("user", "one LocalQueue per user")),
        required=False,
        label="Layout",
    )
    history_mode = forms.ChoiceField(choices=[(m, m) for m in ADMISSION_MODES], required=False, label="Admission mode")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        source = data.get("source")
        if source == "preset" and not data.get("preset"):
            self.add_error("preset", "choose a preset")
        if source == "history":
            upload = data.get("history_file")
            if upload is None:
                self.add_error("history_file", "choose a sacct --json or .swf file")
            elif upload.size > history.MAX_HISTORY_BYTES:
                self.add_error("history_file", f"is larger than {history.MAX_HISTORY_BYTES // (1024 * 1024)} MiB")
        if source == "upload":
            upload = data.get("file")
            if upload is not None and upload.size > documents.MAX_DOCUMENT_BYTES:
                self.add_error("file", f"is larger than {documents.MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
            elif upload is None and not (data.get("text") or "").strip():
                self.add_error("file", "choose a file or paste a scenario")
        return data

    def error_field_for(self, field: str) -> str:
        """The input an engine error about ``field`` belongs next to."""
        if field in ("preset", "days", "lookahead"):
            return field
        if self.cleaned_data.get("source") == "history":
            return "history_mode" if field == "mode" else "history_file"
        if self.cleaned_data.get("source") == "upload":
            return "text" if not self.cleaned_data.get("file") else "file"
        return "__all__" if field == "source" else "source"


class EditForm(forms.Form):
    """The policy editor (one input per ``EditableField``, named by index) and free edits."""

    title = forms.CharField(required=False, max_length=200, label="Name this try (optional)")
    extra = forms.CharField(
        required=False,
        label="More edits, one path=value per line",
        widget=forms.Textarea(
            attrs={
                "rows": 4,
                "spellcheck": "false",
                "placeholder": "clusterQueues.gpu-training.quotas.a100.nvidia.com/gpu.nominal=24",
            }
        ),
    )

    def __init__(
        self, *args: Any, editable: list[EditableField], prefill: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.editable = editable
        self.by_path: dict[str, str] = {}
        prefill = prefill or {}
        for index, spec in enumerate(editable):
            name = f"f{index}"
            self.by_path[spec.path] = name
            attrs = {"data-path": spec.path, "data-initial": spec.initial, "aria-label": f"{spec.owner} {spec.label}"}
            if spec.choices:
                field: forms.Field = forms.ChoiceField(
                    choices=spec.choices, required=False, widget=forms.Select(attrs=attrs)
                )
            else:
                field = forms.CharField(required=False, max_length=200, widget=forms.TextInput(attrs=attrs))
            field.initial = prefill.get(spec.path, spec.initial)
            self.fields[name] = field

    def bound(self, spec: EditableField) -> forms.BoundField:
        return self[self.by_path[spec.path]]

    def submitted(self) -> dict[str, str]:
        return {spec.path: self.cleaned_data.get(self.by_path[spec.path]) or "" for spec in self.editable}

    def extra_lines(self) -> list[str]:
        return documents.clean_edits((self.cleaned_data.get("extra") or "").splitlines())

    def add_edit_error(self, path: str, problem: str) -> None:
        """Put an edit's error next to its input, or under the free edits naming the edit."""
        name = self.by_path.get(path)
        if name is not None:
            self.add_error(name, problem)
        else:
            self.add_error("extra", f"{path}: {problem}" if path else problem)
