"""Kueue's ``admissionFairSharing`` against the running fair-sharing settings.

fairportal reads its policy from the environment at start-up (``core.fairsharing_config``),
so an import cannot change it. Instead it reports, key by key, where the file differs from the
running settings and the exact variable to set, rather than dropping the values silently.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from core.fairsharing_config import ENV_KEYS
from fairshare.policy import FairSharingPolicy
from queues.interop.kueue.report import ConfigurationResult, PolicyDifference
from queues.interop.kueue.specs import ConfigurationSpec

ENV_VARIABLE = {key: variable for variable, key in ENV_KEYS.items()}


def env_value(key: str, mapping: dict[str, Any]) -> str:
    """The value as the environment variable for ``key`` spells it."""
    value = mapping[key]
    if key == "resourceWeights":
        return ",".join(f"{resource}={weight:g}" for resource, weight in sorted(value.items()))
    if key == "usageWindow":
        return json.dumps(value, sort_keys=True)
    return str(value)


def implicit_weights_note(running: FairSharingPolicy) -> str:
    """What a Configuration without ``resourceWeights`` means, and how fairportal differs."""
    weights = ",".join(f"{r}={w:g}" for r, w in sorted(running.resource_weights.items())) or "none (every resource 1)"
    return (
        "admissionFairSharing has no resourceWeights: Kueue then weighs every resource 1, so memory counted in "
        "bytes dominates every usage score; fairportal's default weighs memory and ephemeral-storage 1e-9 "
        f"(1 GiB about one CPU core; running RESOURCE_WEIGHTS: {weights}). To score exactly as this Kueue "
        "installation does, set RESOURCE_WEIGHTS={}"
    )


def compare_configuration(spec: ConfigurationSpec, running: FairSharingPolicy | None = None) -> ConfigurationResult:
    """Keys of the file's section that differ from ``running`` (default: ``settings.FAIR_SHARING``)."""
    running = running or settings.FAIR_SHARING
    imported = running.updated(spec.policy, field_prefix="admissionFairSharing")  # validated by the parser
    before, after = running.to_mapping(), imported.to_mapping()
    result = ConfigurationResult(index=spec.index, ignored=list(spec.ignored))
    if spec.implicit_weights:
        result.notes.append(implicit_weights_note(running))
    for key in spec.policy:
        if before[key] == after[key]:
            result.matching.append(key)
        else:
            result.differences.append(
                PolicyDifference(
                    key=key,
                    running=before[key],
                    imported=after[key],
                    env=f"{ENV_VARIABLE[key]}={env_value(key, after)}",
                )
            )
    return result
