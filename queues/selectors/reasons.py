"""Pending reasons as people read them: a title per machine-readable code, and a sentence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fairshare import types as engine
from fairshare.quantities import format_quantity, to_base_units

TITLES = {
    engine.INSUFFICIENT_QUOTA: "Not enough quota",
    engine.NAMESPACE_QUOTA_EXCEEDED: "Namespace quota reached",
    engine.BUDGET_EXHAUSTED: "Budget exhausted",
    engine.QUEUE_STOPPED: "Queue stopped",
    engine.BLOCKED_BY_STRICT_FIFO_HEAD: "Blocked behind the StrictFIFO head",
    engine.WAITING_FOR_FAIR_SHARE: "Waiting for its fair share",
    engine.PREEMPTED: "Preempted, waiting to run again",
    "": "Not evaluated yet",
}


def title(code: str) -> str:
    return TITLES.get(code or "", code)


def sentence(code: str, message: str) -> str:
    """The engine's message as a sentence ("Waiting: insufficient quota ... ."), or why there is none."""
    if not message:
        return "Waiting for the next admission pass to evaluate it." if not code else f"{title(code)}."
    text = message.strip()
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def shortages(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The stored shortages (``WorkloadReason.shortage_rows``: millis) as the API, the CLI and
    the pages show them: base-unit numbers with their Kubernetes notation (the notation the
    sentence quotes), ``missing`` (requested minus what is available), and ``never_fits`` (no
    flavor has quota for it, or the request exceeds the most the ClusterQueue could ever get:
    waiting will not help). Dominant first, as stored. Names only resources, flavors and the
    workload's own amounts: nothing a tenant may not read."""
    result = []
    for row in rows:
        resource = str(row.get("resource", ""))
        flavor = row.get("flavor")
        requested, available, ceiling = (int(row.get(key) or 0) for key in ("requested", "available", "ceiling"))
        free = max(available, 0)
        missing = requested - free
        item: dict[str, Any] = {"resource": resource, "flavor": flavor}
        for key, value in (("requested", requested), ("available", free), ("missing", missing), ("ceiling", ceiling)):
            item[key] = to_base_units(value)
            item[f"{key}_formatted"] = format_quantity(value, resource)
        item["never_fits"] = flavor is None or requested > ceiling
        result.append(item)
    return result
