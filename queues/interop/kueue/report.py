"""What an import did (or, in a dry run, would do): per object, per configuration, and problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from queues.interop.kueue.diff import FieldChange
from queues.interop.kueue.reader import Problem

CREATED = "created"
UPDATED = "updated"
UNCHANGED = "unchanged"
DERIVED = "derived"  # a MultiKueueConfig or AdmissionCheck fairportal writes itself: checked, not stored


@dataclass
class ObjectResult:
    index: int
    kind: str
    name: str
    action: str
    changes: list[FieldChange] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "document": self.index,
            "kind": self.kind,
            "name": self.name,
            "action": self.action,
            "changes": [change.as_dict() for change in self.changes],
            "unknownFields": self.unknown_fields,
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        head = f"{self.action:<9} {self.kind} {self.name}"
        out = [head]
        out += [f"    {change}" for change in self.changes if self.action == UPDATED]
        if self.unknown_fields:
            out.append(f"    kept (not modelled, exported again): {', '.join(self.unknown_fields)}")
        out += [f"    note: {note}" for note in self.notes]
        return out


@dataclass
class PolicyDifference:
    key: str
    running: Any
    imported: Any
    env: str  # the environment assignment that would make the running policy match

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "running": self.running, "imported": self.imported, "env": self.env}


@dataclass
class ConfigurationResult:
    index: int
    differences: list[PolicyDifference] = field(default_factory=list)
    matching: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "document": self.index,
            "differences": [difference.as_dict() for difference in self.differences],
            "matching": self.matching,
            "ignored": self.ignored,
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        out = [f"Configuration (document {self.index}): admissionFairSharing"]
        if not self.differences:
            out.append("    matches the running settings" if self.matching else "    no admissionFairSharing section")
        for difference in self.differences:
            out.append(f"    {difference.key}: running {difference.running!r}, file {difference.imported!r}")
        if self.differences:
            out.append("    settings come from the environment; to use the file's values set:")
            out += [f"      {difference.env}" for difference in self.differences]
        if self.ignored:
            out.append(f"    ignored (not fair-sharing policy): {', '.join(self.ignored)}")
        out += [f"    note: {note}" for note in self.notes]
        return out


@dataclass
class ImportReport:
    dry_run: bool
    objects: list[ObjectResult] = field(default_factory=list)
    configurations: list[ConfigurationResult] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: list[Any] = field(default_factory=list)  # specs.SkippedDocument, with skip_unsupported
    disruptions: list[Any] = field(default_factory=list)  # safety.Disruption: deletions, re-parenting
    refused: bool = False  # admitted work depends on a disruption and it was not confirmed

    @property
    def dependent_disruptions(self) -> list[Any]:
        return [disruption for disruption in self.disruptions if disruption.depended_on]

    @property
    def ok(self) -> bool:
        return not self.problems

    def count(self, action: str) -> int:
        return sum(1 for result in self.objects if result.action == action)

    def summary(self) -> str:
        counts = f"{self.count(CREATED)} created, {self.count(UPDATED)} updated, {self.count(UNCHANGED)} unchanged"
        if self.dry_run:
            return f"{counts} (dry run: nothing saved)"
        return f"{counts} (refused: nothing saved)" if self.refused else f"{counts} (applied)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "dryRun": self.dry_run,
            "applied": self.ok and not self.dry_run and not self.refused,
            "refused": self.refused,
            "summary": {
                "created": self.count(CREATED),
                "updated": self.count(UPDATED),
                "unchanged": self.count(UNCHANGED),
            },
            "objects": [result.as_dict() for result in self.objects],
            "configurations": [result.as_dict() for result in self.configurations],
            "skipped": [str(document) for document in self.skipped],
            "disruptions": [disruption.as_dict() for disruption in self.disruptions],
            "errors": [str(problem) for problem in self.problems],
        }

    def lines(self) -> list[str]:
        out: list[str] = []
        for result in self.objects:
            out += result.lines()
        for configuration in self.configurations:
            out += configuration.lines()
        if self.disruptions:
            depended = len(self.dependent_disruptions)
            out.append(
                f"deletions and re-parenting: {len(self.disruptions)} ({depended} with admitted work depending on them)"
            )
            out += [f"    {disruption}" for disruption in self.disruptions]
        if self.skipped:
            out.append(f"skipped {len(self.skipped)} document(s) of kinds fairportal does not model:")
            out += [f"    {document}" for document in self.skipped]
        out.append(self.summary())
        return out


class ImportFailed(Exception):
    """Bad input: nothing was saved. ``report.problems`` names every document and field."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        super().__init__("; ".join(str(problem) for problem in report.problems))


class ImportRefused(Exception):
    """The import would delete or re-parent something admitted work depends on, and that was not
    confirmed: nothing was saved. ``report`` is the full preview, ``report.dependent_disruptions``
    what needs the confirmation. Each surface names its own confirmation (API parameter, flag)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        super().__init__(f"{len(report.dependent_disruptions)} change(s) that admitted work depends on")
