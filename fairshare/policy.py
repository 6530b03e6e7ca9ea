"""The global fair-sharing configuration (Kueue's ``admissionFairSharing`` plus KAI's knobs).

Shared by the settings (validated at start-up), scenario files and the playground, so a bad
value gets the same one-line message everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from fairshare.durations import format_duration, parse_duration
from fairshare.errors import ValidationError
from fairshare.numbers import parse_number
from fairshare.quantities import validate_resource_name

WINDOW_TYPES = ("sliding", "tumbling")
# cohortDominantShare: how DominantResourceShare ranks ClusterQueues and cohorts among siblings.
BORROWING_SHARE = "Borrowing"  # Kueue's fair sharing: borrowed above quota / lendable, candidate included
ALLOCATION_SHARE = "Allocation"  # allocated / capacity of the scope (KEP-752, Volcano)
COHORT_DOMINANT_SHARES = (BORROWING_SHARE, ALLOCATION_SHARE)
# inPassAccounting: what an admission adds to its queues' scores for the rest of the same pass.
ENTRY_PENALTY = "EntryPenalty"  # Kueue: alpha_s x requests (the stored entry penalty)
FULL_USAGE = "FullUsage"  # the full requests: one pass spreads capacity across queues
IN_PASS_ACCOUNTINGS = (ENTRY_PENALTY, FULL_USAGE)
POLICY_FIELDS = (
    "usageHalfLifeTime",
    "usageSamplingInterval",
    "resourceWeights",
    "resetInactivityPeriod",
    "kValue",
    "usageWindow",
    "cohortDominantShare",
    "inPassAccounting",
)


@dataclass(frozen=True)
class UsageWindow:
    """KAI's historical usage window: how far back TimeAware looks, and how it moves."""

    size_seconds: int = 7 * 86400
    type: str = "sliding"


@dataclass(frozen=True)
class FairSharingPolicy:
    """Validated fair-sharing knobs; durations in whole seconds."""

    usage_half_life_seconds: int = 3600
    usage_sampling_interval_seconds: int = 300
    resource_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    reset_inactivity_seconds: int = 0  # 0: never reset
    k_value: float = 1.0
    usage_window: UsageWindow = field(default_factory=UsageWindow)
    cohort_dominant_share: str = BORROWING_SHARE
    in_pass_accounting: str = ENTRY_PENALTY

    def resource_weight(self, resource: str) -> float:
        """Weight of ``resource`` in scores; unlisted resources weigh 1."""
        return self.resource_weights.get(resource, 1.0)

    @property
    def sampling_alpha(self) -> float:
        """``alpha_s``: the decay factor of one sampling interval, used for the entry penalty."""
        return 1.0 - 0.5 ** (self.usage_sampling_interval_seconds / self.usage_half_life_seconds)

    def to_mapping(self) -> dict[str, Any]:
        """The camelCase form used by scenario files and the API."""
        return {
            "usageHalfLifeTime": format_duration(self.usage_half_life_seconds),
            "usageSamplingInterval": format_duration(self.usage_sampling_interval_seconds),
            "resourceWeights": dict(self.resource_weights),
            "resetInactivityPeriod": format_duration(self.reset_inactivity_seconds),
            "kValue": self.k_value,
            "usageWindow": {"size": format_duration(self.usage_window.size_seconds), "type": self.usage_window.type},
            "cohortDominantShare": self.cohort_dominant_share,
            "inPassAccounting": self.in_pass_accounting,
        }

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None, field_prefix: str = "policy") -> FairSharingPolicy:
        """Build from the camelCase mapping; unset keys keep their defaults."""
        return cls().updated(data or {}, field_prefix)

    def updated(self, data: Mapping[str, Any], field_prefix: str = "policy") -> FairSharingPolicy:
        """A copy with the keys of ``data`` applied and validated."""
        if not isinstance(data, Mapping):
            raise ValidationError(field_prefix, f"expected a mapping, got {type(data).__name__}")

        def name(key: str) -> str:
            return f"{field_prefix}.{key}" if field_prefix else key

        unknown = sorted(set(data) - set(POLICY_FIELDS))
        if unknown:
            raise ValidationError(name(unknown[0]), f"unknown field (known: {', '.join(POLICY_FIELDS)})")
        changes: dict[str, Any] = {}
        if "usageHalfLifeTime" in data:
            seconds = parse_duration(data["usageHalfLifeTime"], name("usageHalfLifeTime"))
            if seconds <= 0:
                raise ValidationError(
                    name("usageHalfLifeTime"),
                    "must be greater than 0s (a half-life of 0 would erase all usage at every sample)",
                )
            changes["usage_half_life_seconds"] = seconds
        if "usageSamplingInterval" in data:
            seconds = parse_duration(data["usageSamplingInterval"], name("usageSamplingInterval"))
            if seconds <= 0:
                raise ValidationError(name("usageSamplingInterval"), "must be greater than 0s")
            changes["usage_sampling_interval_seconds"] = seconds
        if "resourceWeights" in data:
            changes["resource_weights"] = MappingProxyType(
                parse_resource_weights(data["resourceWeights"], name("resourceWeights"))
            )
        if "resetInactivityPeriod" in data:
            changes["reset_inactivity_seconds"] = parse_duration(
                data["resetInactivityPeriod"], name("resetInactivityPeriod")
            )
        if "kValue" in data:
            changes["k_value"] = _non_negative_number(data["kValue"], name("kValue"))
        if "usageWindow" in data:
            changes["usage_window"] = _parse_window(data["usageWindow"], name("usageWindow"), self.usage_window)
        for key, attribute, choices in (
            ("cohortDominantShare", "cohort_dominant_share", COHORT_DOMINANT_SHARES),
            ("inPassAccounting", "in_pass_accounting", IN_PASS_ACCOUNTINGS),
        ):
            if key in data:
                if data[key] not in choices:
                    raise ValidationError(name(key), f"must be one of {', '.join(choices)}, got {data[key]!r}")
                changes[attribute] = str(data[key])
        return replace(self, **changes)


def parse_resource_weights(data: object, field_name: str = "resourceWeights") -> dict[str, float]:
    """``{resource: weight}`` with non-negative finite weights."""
    if not isinstance(data, Mapping):
        raise ValidationError(field_name, f"expected a mapping of resource names to weights, got {type(data).__name__}")
    weights: dict[str, float] = {}
    for resource, weight in data.items():
        validate_resource_name(resource, f"{field_name}.{resource}")
        weights[resource] = _non_negative_number(weight, f"{field_name}.{resource}")
    return weights


def _non_negative_number(value: object, field_name: str) -> float:
    number = parse_number(value, field_name)
    if number < 0:
        raise ValidationError(field_name, f"must not be negative, got {value!r}")
    return number


def _parse_window(data: object, field_name: str, current: UsageWindow) -> UsageWindow:
    if not isinstance(data, Mapping):
        raise ValidationError(field_name, "expected a mapping such as {size: 7d, type: sliding}")
    unknown = sorted(set(data) - {"size", "type"})
    if unknown:
        raise ValidationError(f"{field_name}.{unknown[0]}", "unknown field (known: size, type)")
    size = current.size_seconds
    if "size" in data:
        size = parse_duration(data["size"], f"{field_name}.size")
        if size <= 0:
            raise ValidationError(f"{field_name}.size", "must be greater than 0s")
    window_type = data.get("type", current.type)
    if window_type not in WINDOW_TYPES:
        raise ValidationError(f"{field_name}.type", f"must be one of {', '.join(WINDOW_TYPES)}, got {window_type!r}")
    return UsageWindow(size_seconds=size, type=str(window_type))
