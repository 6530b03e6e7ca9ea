"""Read the fair-sharing configuration from the environment and validate it at start-up.

Each knob has an environment variable (``USAGE_HALF_LIFE_TIME=1h``); a YAML/JSON file named by
``FAIR_SHARING_CONFIG`` may hold the camelCase mapping, and variables override the file. A bad
value stops the process with one line naming the variable and the problem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from fairshare import safe_yaml
from fairshare.errors import ValidationError
from fairshare.policy import FairSharingPolicy

# environment variable -> camelCase key of the policy mapping
ENV_KEYS: dict[str, str] = {
    "USAGE_HALF_LIFE_TIME": "usageHalfLifeTime",
    "USAGE_SAMPLING_INTERVAL": "usageSamplingInterval",
    "RESOURCE_WEIGHTS": "resourceWeights",
    "RESET_INACTIVITY_PERIOD": "resetInactivityPeriod",
    "K_VALUE": "kValue",
    "USAGE_WINDOW": "usageWindow",
    "COHORT_DOMINANT_SHARE": "cohortDominantShare",
    "IN_PASS_ACCOUNTING": "inPassAccounting",
}


# Deployment defaults that differ from the engine's (where every unlisted resource weighs 1):
# amounts are milli-units, so without this one GiB of memory would outweigh a billion cores.
# With 1e-9, 1 GiB weighs about as much as one CPU core or one GPU.
DEFAULT_ENVIRONMENT = {"RESOURCE_WEIGHTS": "memory=1e-9,ephemeral-storage=1e-9"}


class FairSharingConfigError(Exception):
    """The configuration cannot be used; the message is one line naming the setting."""


def _parse_resource_weights(text: str) -> Any:
    """``{"cpu": 1}`` as JSON, or the shorter ``cpu=1,nvidia.com/gpu=10``."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    weights: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"expected resource=weight pairs separated by commas, got {item!r}")
        weights[name.strip()] = value.strip()
    return weights


def _parse_window(text: str) -> Any:
    """``{"size": "7d", "type": "tumbling"}`` as JSON, or ``7d`` / ``7d,tumbling``."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    size, _, window_type = text.partition(",")
    window: dict[str, str] = {"size": size.strip()}
    if window_type.strip():
        window["type"] = window_type.strip()
    return window


def load_policy(environ: Mapping[str, str]) -> FairSharingPolicy:
    """The validated policy for ``environ``; raises FairSharingConfigError naming the culprit."""
    base: Mapping[str, Any] = {}
    path = environ.get("FAIR_SHARING_CONFIG", "").strip()
    if path:
        try:
            base = safe_yaml.load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as error:
            raise FairSharingConfigError(f"FAIR_SHARING_CONFIG={path}: cannot be read: {error}") from None
        try:
            policy = FairSharingPolicy.from_mapping(base, field_prefix="")
        except ValidationError as error:
            raise FairSharingConfigError(f"FAIR_SHARING_CONFIG={path}: {error}") from None
    else:
        policy = FairSharingPolicy()
    for variable, key in ENV_KEYS.items():
        raw = environ.get(variable)
        if raw is None and key not in base:
            raw = DEFAULT_ENVIRONMENT.get(variable)
        if raw is None or raw.strip() == "":
            continue
        try:
            if key == "resourceWeights":
                value: Any = _parse_resource_weights(raw)
            elif key == "usageWindow":
                value = _parse_window(raw)
            else:
                value = raw.strip()
            policy = policy.updated({key: value}, field_prefix="")
        except (ValueError, ValidationError) as error:
            message = error.message if isinstance(error, ValidationError) else str(error)
            raise FairSharingConfigError(f"{variable} ({key}) = {raw!r}: {message}") from None
    return policy
