"""The glossary: one definition per term the pages, the API docs and the CLI use.

Invariants:
- One source. The pages' hover help (``{% term %}`` in ``core.templatetags.glossary``) and the
  docs page ``docs/glossary.md`` (``render_markdown``; a test checks the file equals it) both read
  ``TERMS``, so a definition is changed here and nowhere else.
- Keys are stable slugs (``usage-score``); ``label`` is how pages name the term. Every key is
  lower-case ``[a-z0-9-]``; a template naming an unknown key fails loudly (``KeyError``), never
  renders an empty tooltip.
- Definitions are plain text (no HTML), one or two sentences, and name the unit when the term is
  a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    key: str
    label: str
    definition: str
    group: str


_GROUPS = ("Queues and quota", "Fair sharing", "Admission and waiting", "Budgets", "Charts and pages")

_RAW: tuple[tuple[str, str, str, str], ...] = (
    # (key, label, group, definition)
    (
        "cohort",
        "Cohort",
        "Queues and quota",
        "A group of ClusterQueues (and child cohorts) that lend each other unused quota. A cohort may hold "
        "quota of its own, shared by every ClusterQueue below it.",
    ),
    (
        "cluster-queue",
        "ClusterQueue",
        "Queues and quota",
        "A cluster-wide pool of quota per resource flavor, fed by LocalQueues; it admits workloads within "
        "its nominal quota and may borrow from its cohort.",
    ),
    (
        "namespace",
        "Namespace",
        "Queues and quota",
        "A tenant: the Kubernetes namespace its LocalQueues and workloads live in. Its weight sets its part "
        "of each ClusterQueue it uses.",
    ),
    (
        "local-queue",
        "LocalQueue",
        "Queues and quota",
        "A namespace's queue that submits into one ClusterQueue. Its weight sets its part of the namespace's "
        "entitlement there.",
    ),
    (
        "flavor",
        "Resource flavor",
        "Queues and quota",
        "A kind of capacity (for example a100 GPUs or spot CPUs), named by node labels; quota is given per "
        "flavor and resource.",
    ),
    (
        "nominal-quota",
        "Nominal quota",
        "Queues and quota",
        "The amount of a resource in a flavor a ClusterQueue (or cohort) owns: admitted without borrowing.",
    ),
    (
        "capacity",
        "Capacity",
        "Queues and quota",
        "The nominal quota of every ClusterQueue on a flavor plus the cohorts' own quota on it: all that can be "
        "admitted there. The overview and the flavor pages show the same figure.",
    ),
    (
        "borrowing-limit",
        "Borrowing limit",
        "Queues and quota",
        "The most a ClusterQueue may admit beyond its nominal quota, borrowed from its cohort. Empty: no limit "
        "(as much as the cohort has unused).",
    ),
    (
        "lending-limit",
        "Lending limit",
        "Queues and quota",
        "The most of its nominal quota a ClusterQueue lends to others in its cohort while it does not use it. "
        "Empty: it may lend all of its unused quota.",
    ),
    (
        "borrowed",
        "Borrowed",
        "Queues and quota",
        "Admitted beyond a ClusterQueue's own nominal quota in a flavor, lent by its cohort.",
    ),
    (
        "hard-quota",
        "Hard quota",
        "Queues and quota",
        "A namespace's ceiling per resource: its admitted requests never exceed it, whatever the ClusterQueues "
        "would allow.",
    ),
    (
        "weight",
        "Weight",
        "Fair sharing",
        "A queue's or namespace's relative claim: its part is its weight divided by the summed weights of "
        "its siblings. Weight 0 never goes ahead of a positive weight.",
    ),
    (
        "entitlement",
        "Entitlement",
        "Fair sharing",
        "The capacity a queue is due under the weights: a ClusterQueue's nominal quota, a namespace's weighted "
        "part of it, a LocalQueue's weighted part of its namespace's part.",
    ),
    (
        "share-of-entitlement",
        "Share of entitlement",
        "Fair sharing",
        "Admitted requests (or decayed usage) divided by the entitlement, for the resource where the ratio is "
        "largest. 1.0× is exactly the weighted part; above it the queue holds capacity others are due.",
    ),
    (
        "dominant-share",
        "Dominant share",
        "Fair sharing",
        "The largest, over resources, of a queue's use divided by the capacity it is measured against.",
    ),
    (
        "decayed-usage",
        "Decayed usage",
        "Fair sharing",
        "Resources consumed over time with older use counting less: each half-life halves it (KEP-4136). "
        "Shown in the resource's unit (CPU, GPU, Gi).",
    ),
    (
        "half-life",
        "Half-life",
        "Fair sharing",
        "How long until past usage counts half as much in the decayed usage.",
    ),
    (
        "usage-score",
        "Usage score",
        "Fair sharing",
        "Decayed usage summed over resources (each times its resource weight; CPU in cores, GPUs in "
        "devices) divided by the queue's weight, at the last sample. No unit of its own: compare scores "
        "within one ClusterQueue, where the lowest goes first in usage-based admission.",
    ),
    (
        "timeaware-history",
        "TimeAware history",
        "Fair sharing",
        "The TimeAware mode's windowed share of past usage per resource (0 to 1), which lowers a queue's "
        "priority the more it used recently.",
    ),
    (
        "jain-index",
        "Jain index",
        "Fair sharing",
        "A fairness measure between tenants, from 1/n (one tenant holds everything) to 1.0 (every tenant "
        "holds the same share per unit of weight).",
    ),
    (
        "starved",
        "Starved",
        "Fair sharing",
        "A tenant below its weighted entitlement with work still waiting.",
    ),
    (
        "reclaimable",
        "Reclaimable",
        "Fair sharing",
        "Quota a waiting ClusterQueue owns but others in the cohort borrow; with reclaimWithinCohort it is "
        "taken back by preemption, otherwise as the borrowed work finishes.",
    ),
    (
        "admission-mode",
        "Admission mode",
        "Admission and waiting",
        "How a scope (a cohort or ClusterQueue) orders pending work between queues: NoAdmissionFairSharing, "
        "UsageBasedAdmissionFairSharing, DominantResourceShare or TimeAware. A ClusterQueue that sets none "
        "uses its cohort's, else NoAdmissionFairSharing.",
    ),
    (
        "mode-none",
        "NoAdmissionFairSharing",
        "Admission and waiting",
        "No fair sharing between queues: priority, then queueing time. The default when neither the "
        "ClusterQueue nor its cohorts set a mode.",
    ),
    (
        "mode-usage",
        "UsageBasedAdmissionFairSharing",
        "Admission and waiting",
        "The queue with the lowest usage score goes first (Kueue's admission fair sharing, KEP-4136).",
    ),
    (
        "mode-drs",
        "DominantResourceShare",
        "Admission and waiting",
        "The queue with the lowest dominant share of what it is entitled to goes first.",
    ),
    (
        "mode-timeaware",
        "TimeAware",
        "Admission and waiting",
        "Fair share over time windows (KAI-style): queues that used more recently wait behind the others.",
    ),
    (
        "admitted",
        "Admitted",
        "Admission and waiting",
        "A workload holding quota: it runs now.",
    ),
    (
        "pending",
        "Pending",
        "Admission and waiting",
        "A workload waiting for admission; its reason says what is missing.",
    ),
    (
        "position",
        "Position",
        "Admission and waiting",
        "A pending workload's place in its ClusterQueue's admission order (1 goes next).",
    ),
    (
        "priority",
        "Priority",
        "Admission and waiting",
        "A workload's priority (from its priority class): higher goes first within a queue and may preempt.",
    ),
    (
        "queueing-strategy",
        "Queueing strategy",
        "Admission and waiting",
        "StrictFIFO: the head of the queue blocks the rest until it fits. BestEffortFIFO: work behind it that "
        "fits is admitted.",
    ),
    (
        "preemption",
        "Preemption",
        "Admission and waiting",
        "Evicting admitted work so that other work can be admitted: within a ClusterQueue by priority, or to "
        "reclaim lent quota within a cohort.",
    ),
    (
        "eviction",
        "Eviction",
        "Admission and waiting",
        "Admitted work stopped and sent back to pending (preempted, drained by a hold, or over its runtime).",
    ),
    (
        "stop-policy",
        "Stop policy",
        "Admission and waiting",
        "Set by an admin: None admits normally, Hold admits nothing new, HoldAndDrain also evicts what runs.",
    ),
    (
        "hold",
        "Hold",
        "Admission and waiting",
        "A queue that admits nothing new, set by an admin's stop policy or by an exhausted budget.",
    ),
    (
        "wait",
        "Wait before admission",
        "Admission and waiting",
        "From queueing (or the last eviction) to admission; p50 is the median, p95 the time 95% waited less than.",
    ),
    (
        "estimated-start",
        "Estimated start",
        "Admission and waiting",
        "When the simulator expects a pending workload to be admitted if nothing changes (no new work, "
        "declared durations).",
    ),
    (
        "budget",
        "Budget",
        "Budgets",
        "An allocation of hours per period (wall-time hours, or resource-hours such as GPU-hours) for a "
        "namespace, LocalQueue or ClusterQueue; when it is used up its action (Hold or HoldAndDrain) applies.",
    ),
    (
        "burn-rate",
        "Burn rate",
        "Budgets",
        "Budget hours used per hour of wall time, over the recent window.",
    ),
    (
        "forecast-exhaustion",
        "Forecast exhaustion",
        "Budgets",
        "When the remaining hours run out at the current burn rate.",
    ),
    (
        "alert-threshold",
        "Alert threshold",
        "Budgets",
        "A percentage of the allocation at which an alert event (and webhook) fires once per period.",
    ),
    (
        "renewal",
        "Renewal",
        "Budgets",
        "When a budget's period restarts and its use returns to zero (weekly, monthly, every N days or never).",
    ),
    (
        "safe-admission",
        "Safe admission",
        "Budgets",
        "Admit a workload only if its declared runtime fits in what remains of the budget.",
    ),
    (
        "budget-state",
        "Budget state",
        "Budgets",
        "One word per budget, the same on every page: ok, at risk (forecast to run out before the period "
        "ends), exhausted, held or error.",
    ),
    (
        "utilisation",
        "Utilisation",
        "Charts and pages",
        "Admitted requests divided by capacity, per resource.",
    ),
    (
        "policy-marker",
        "Policy marker",
        "Charts and pages",
        "The ✎ on a time chart: a change from the audit log (who changed which weight, quota or mode, and when).",
    ),
    (
        "surface",
        "Surface",
        "Charts and pages",
        "Where an audited change came from: the web UI, the REST API, the Django admin, the command line, the "
        "playground or the control loop.",
    ),
    (
        "live",
        "Live",
        "Charts and pages",
        "The page refreshes its tables and charts every few seconds; Pause stops it.",
    ),
    (
        "playground",
        "Playground",
        "Charts and pages",
        "Replays a workload under today's policy (baseline) and under edits, side by side, before any change is real.",
    ),
)

_KEY = re.compile(r"^[a-z0-9-]+$")

TERMS: dict[str, Term] = {}
for _key, _label, _group, _definition in _RAW:
    assert _KEY.match(_key), _key
    assert _group in _GROUPS, _group
    assert _key not in TERMS, _key
    TERMS[_key] = Term(_key, _label, _definition, _group)


def term(key: str) -> Term:
    """The term ``key``; ``KeyError`` for an unknown key (a template typo fails its render)."""
    return TERMS[key]


def mode_key(mode: str) -> str:
    """The glossary key of an admission mode's name ('' when it is not one)."""
    return {
        "NoAdmissionFairSharing": "mode-none",
        "UsageBasedAdmissionFairSharing": "mode-usage",
        "DominantResourceShare": "mode-drs",
        "TimeAware": "mode-timeaware",
    }.get(mode, "")


def grouped() -> list[tuple[str, list[Term]]]:
    """The terms by group, groups and terms in definition order."""
    return [(group, [item for item in TERMS.values() if item.group == group]) for group in _GROUPS]


def render_markdown() -> str:
    """``docs/glossary.md``: every term by group, in definition order."""
    lines = [
        "# Glossary",
        "",
        "Every term the pages use, with the definition their hover help shows (tab to a dotted term,",
        "or point at it). Generated from `core/glossary.py`; `python -m core.glossary > docs/glossary.md`",
        "rewrites this page, and a test checks it matches.",
        "",
    ]
    for group, items in grouped():
        lines += [f"## {group}", ""]
        for item in items:
            lines += [f"**{item.label}** (`{item.key}`): {item.definition}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
