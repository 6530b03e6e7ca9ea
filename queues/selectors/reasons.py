"""Pending reasons as people read them: a title per machine-readable code, and a sentence."""

from __future__ import annotations

from fairshare import types as engine

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
