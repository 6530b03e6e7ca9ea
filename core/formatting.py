"""Quantities as people read them: Kubernetes notation, through the engine's quantity functions."""

from __future__ import annotations

from fairshare.quantities import format_quantity


def format_for_humans(millis: int | None, resource: str = "") -> str:
    """Kubernetes notation; byte-sized amounts of an unnamed resource get binary suffixes."""
    if millis is None:
        return ""
    if not resource and millis >= 2**20 * 1000 and (millis // 1000) % 2**20 == 0 and millis % 1000 == 0:
        return format_quantity(millis, "memory")
    return format_quantity(millis, resource)
