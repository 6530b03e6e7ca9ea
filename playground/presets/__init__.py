"""Built-in scenarios, one per seed story, each with the edit that tells the story.

The YAML files beside this module, in this package, are ordinary scenario files (the engine's
loader reads them); this catalogue adds what a person choosing one needs: a title, the seed it comes from,
the story in two sentences, and the suggested edits the playground pre-fills.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairshare.simulation.scenario import load_document

PRESET_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Preset:
    slug: str
    title: str
    seed: str
    story: str
    suggested_edits: tuple[str, ...]
    filename: str

    def document(self) -> dict[str, Any]:
        """A fresh copy of the scenario document (callers may edit it)."""
        return load_document(PRESET_DIR / self.filename)


PRESETS: tuple[Preset, ...] = (
    Preset(
        slug="kep4136-entry-penalty",
        title="Entry penalty (Kueue KEP-4136)",
        seed="000 Kueue KEP-4136, admission fair sharing",
        story="Two tenants with equal decayed usage, room for two of four jobs. The entry penalty makes the "
        "first pass admit one job per tenant; weight tenant-a 4x and it takes both slots.",
        suggested_edits=("localQueues.tenant-a/main.weight=4",),
        filename="kep4136_entry_penalty.yaml",
    ),
    Preset(
        slug="volcano-16cpu",
        title="Namespace fair share on 16 CPU (Volcano)",
        seed="003 Volcano namespace fair share",
        story="Volcano's worked tables: with every weight 1 the queues split 8/8 (namespaces 4, 4 | 6, 2). "
        "The suggested weights are those of the second table: 4/12 (3, 1 | 10, 2).",
        suggested_edits=(
            "clusterQueues.q2.weight=3",
            "namespaces.ns1.weight=3",
            "namespaces.ns3.weight=2",
            "namespaces.ns4.weight=6",
        ),
        filename="volcano_16cpu.yaml",
    ),
    Preset(
        slug="kai-two-queues",
        title="Time-aware alternation on 16 GPUs (KAI)",
        seed="002 KAI-Scheduler time-aware fairness",
        story="Two queues each want the whole 16-GPU cluster. With kValue 1 the one that used less recently "
        "gets the larger fair share and reclaims it, so they take turns; with kValue 0 the first keeps it.",
        suggested_edits=("policy.kValue=0",),
        filename="kai_two_queues.yaml",
    ),
    Preset(
        slug="kep28-budget",
        title="Wall-time budget exhaustion (Kueue KEP-28)",
        seed="004 Kueue KEP-28, wall-time budgets",
        story="team-a's 12 wall-time hours run out part-way through the day and its queue is held; "
        "raise the budget to 20 hours and it runs out about four hours later.",
        suggested_edits=("budgets.team-a-hours.allocatedHours=20",),
        filename="kep28_budget.yaml",
    ),
    Preset(
        slug="dominant-share",
        title="Dominant resource share (KEP-752, DRF)",
        seed="001 Kueue KEP-752, LocalQueue weights",
        story="9 CPU and 18 GiB shared by a memory-heavy and a CPU-heavy user: dominant shares split the "
        "first hour 3 tasks to 2. Double user-a's weight and it becomes 4 to 1.",
        suggested_edits=("localQueues.user-a/tasks.weight=2",),
        filename="dominant_share.yaml",
    ),
    Preset(
        slug="bursty-tenant",
        title="A bursty tenant on 16 CPU (Kueue AFS accounting)",
        seed="000 Kueue KEP-4136, admission fair sharing",
        story="One tenant submits 400 one-hour jobs at once, three submit steadily; with Kueue's entry "
        "penalty each pass hands the whole queue to one side and it flips every hour. Count each "
        "admission at its full request for the rest of the pass (FullUsage) and every tenant keeps 4 CPU.",
        suggested_edits=("policy.inPassAccounting=FullUsage",),
        filename="bursty_tenant.yaml",
    ),
)

_BY_SLUG = {preset.slug: preset for preset in PRESETS}


def get_preset(slug: str) -> Preset | None:
    return _BY_SLUG.get(slug)
