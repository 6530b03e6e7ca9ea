"""Amounts as people read them on a dashboard: rounded, in cores, Gi and GPUs.

Byte amounts use the Kubernetes binary suffixes (``Mi``, ``Gi``, ``Ti``) that forms, files, the
API and the engine's pending reasons use, so one page never says "384Gi" and "384 GiB" at once.

Forms and files use exact Kubernetes notation (``core.formatting.format_for_humans``); tables and
charts need approximate numbers in a readable unit instead (a decayed usage of ``12345.6``
millicores is "12.3 CPU", not ``12346m``). Pure functions, no database.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal

MILLIS = 1000.0
GIB = float(2**30)
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")
_SHORT_NAMES = {
    "cpu": "CPU",
    "memory": "mem",
    "nvidia.com/gpu": "GPU",
    "amd.com/gpu": "GPU",
    "ephemeral-storage": "disk",
}
# Accelerators first, then CPU, then memory: the order people scan a GPU cluster's numbers in.
_ORDER = {"nvidia.com/gpu": 0, "amd.com/gpu": 0, "cpu": 1, "memory": 2}


def is_bytes(resource: str) -> bool:
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


def short_name(resource: str) -> str:
    """``nvidia.com/gpu`` -> ``GPU``; unknown resources keep the part after the last slash."""
    return _SHORT_NAMES.get(resource, resource.rsplit("/", 1)[-1])


def unit_label(resource: str) -> str:
    """The unit charts use for ``resource`` (axis titles)."""
    return "Gi" if is_bytes(resource) else short_name(resource)


def to_display(millis: float | int | None, resource: str) -> float:
    """Millis as a float in the chart unit: cores, Gi (bytes resources), GPUs."""
    if millis is None:
        return 0.0
    value = float(millis) / MILLIS
    return value / GIB if is_bytes(resource) else value


def resource_order(resources: Iterable[str]) -> list[str]:
    """Resources in reading order: accelerators, CPU, memory, then the rest by name."""
    return sorted(set(resources), key=lambda r: (_ORDER.get(r, 3), r))


def _number(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    if magnitude >= 0.01:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return "<0.01"


def amount(millis: float | int | None, resource: str) -> str:
    """``12.3 CPU``, ``1.5 Ti``, ``4 GPU``: one rounded amount with its unit."""
    if millis is None:
        return "—"
    if is_bytes(resource):
        gib = to_display(millis, resource)
        if abs(gib) >= 1024:
            return f"{_number(gib / 1024)} Ti"
        if 0 < abs(gib) < 1:
            return f"{_number(gib * 1024)} Mi"
        return f"{_number(gib)} Gi"
    return f"{_number(to_display(millis, resource))} {short_name(resource)}"


def amounts(millis_by_resource: Mapping[str, float | int] | None, *, skip_zero: bool = True) -> list[str]:
    """Every resource of a mapping as ``amount`` strings, in reading order."""
    data = millis_by_resource or {}
    return [amount(data[r], r) for r in resource_order(data) if not (skip_zero and not data[r])]


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``; None when the denominator is 0 (no entitlement, no capacity)."""
    if denominator <= 0 or math.isnan(denominator):
        return None
    return numerator / denominator


def percent(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value * 100:.{digits}f}%"


# --- one human format for durations and hours -----------------------------------------------------

_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))


def duration(seconds: float | int | None) -> str:
    """``45 s``, ``12 min``, ``4 h 20 min``, ``2 d 5 h``: the two largest units, rounded, so a
    reader sees how long at a glance (never ``15600 s`` nor ``1d5h22m15s``). None: an em dash."""
    if seconds is None:
        return "—"
    value = float(seconds)
    if math.isnan(value):
        return "—"
    sign = "−" if value < 0 else ""
    remaining = round(abs(value))
    if remaining < 60:
        return f"{sign}{remaining} s"
    parts: list[str] = []
    for unit, size in _UNITS:
        if remaining >= size and len(parts) < 2:
            count = remaining // size
            remaining -= count * size
            parts.append(f"{count} {unit}")
            if unit in ("min", "s"):
                break
        elif parts:
            break  # the next unit is zero: "2 d" not "2 d 0 h"
    return sign + " ".join(parts)


def signed_duration(seconds: float | int | None) -> str:
    """``+20 min`` later, ``−1 h`` earlier, ``0 s``."""
    if seconds is None:
        return "—"
    return ("+" if float(seconds) > 0 else "") + duration(seconds)


def number(value: Decimal | float | None, places: int = 2) -> str:
    """``2,003.5``, ``0.17``, ``2,000``: at most ``places`` decimals, no trailing zeros, thousands
    separated (never ``40.000``)."""
    if value is None:
        return "—"
    text = f"{float(value):,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
