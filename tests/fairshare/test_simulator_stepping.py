"""Event stepping (the default) gives exactly what the reference stepping gives.

The reference runs an admission pass after every change and computes every point of the series
from scratch; event stepping skips the passes that provably decide nothing and carries the
series forward (``fairshare/simulation/simulator.py``). Both must produce the same JSON, byte
for byte, on every scenario the tests and the playground ship, on the Kueue baseline (scaled
down) and on seeded traces, in each of the four admission modes.
"""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from fairshare.simulation.scenario import load_document, parse_scenario
from fairshare.simulation.simulator import REFERENCE, Simulation, _round6, simulate
from fairshare.simulation.traces import multi_user_trace
from fairshare.types import ADMISSION_MODES, NO_FAIR_SHARING, TIME_AWARE
from fairshare.usage.usage import sorted_windowed_integral, window_start, windowed_integral, windowed_usage

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "scenarios").glob("*.yaml")) + sorted((ROOT / "playground" / "presets").glob("*.yaml"))
BASELINE_SCALE = 0.02  # 300 of the Kueue baseline's 15,000 workloads: every rule it exercises, in a second


def with_mode(document: dict[str, Any], mode: str | None) -> dict[str, Any]:
    """The document with every ClusterQueue (and every cohort that has a scope) in ``mode``."""
    document = copy.deepcopy(document)
    if mode is None:
        return document
    for queue in document.get("clusterQueues", []):
        queue["admissionScope"] = {"admissionMode": mode}
    for cohort in document.get("cohorts", []):
        if cohort.get("admissionScope") is not None:
            cohort["admissionScope"] = {"admissionMode": mode}
    return document


def both(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Simulation, Simulation]:
    event = Simulation(parse_scenario(document))
    reference = Simulation(parse_scenario(document), stepping=REFERENCE)
    return event.run(), reference.run(), event, reference


def assert_identical(document: dict[str, Any]) -> tuple[Simulation, Simulation]:
    event_result, reference_result, event, reference = both(document)
    assert json.dumps(event_result) == json.dumps(reference_result)
    return event, reference


def scenario_document(path: Path) -> dict[str, Any]:
    document = load_document(str(path))
    if path.name == "kueue_baseline.yaml":
        for generator in document["generators"]:
            generator["count"] = max(1, math.ceil(generator["count"] * BASELINE_SCALE))
    return document


@pytest.mark.parametrize("mode", [None, *ADMISSION_MODES], ids=lambda m: m or "as-written")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_shipped_scenario_steps_to_the_same_result(path, mode):
    assert_identical(with_mode(scenario_document(path), mode))


@pytest.mark.parametrize("mode", ADMISSION_MODES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_multi_user_traces_step_to_the_same_result_with_fewer_passes(seed, mode):
    # Given half a day of a 10-user site at full load, one-minute tick, run to completion
    document = multi_user_trace(seed=seed, users=10, jobs=100, days=0.5, mode=mode)
    event, reference = assert_identical(document)
    # Then event stepping got there with fewer passes (it skips those that decide nothing)
    assert event.passes < reference.passes / 2


def feature_mix(seed: int, mode: str) -> dict[str, Any]:
    """A random small cluster with what changes passes: cohorts and borrowing, preemption or
    none, StrictFIFO or not, namespace quotas, held and drained budgets that renew, stop
    policies, a horizon cutting the run, odd ticks and sampling intervals."""
    rng = random.Random(seed)
    preempt = rng.random() < 0.4
    strict = rng.random() < 0.25
    queues = []
    for index in range(rng.randint(1, 3)):
        queue: dict[str, Any] = {
            "name": f"cq-{index}",
            "cohort": "org" if rng.random() < 0.7 else None,
            "queueingStrategy": "StrictFIFO" if strict and index == 0 else "BestEffortFIFO",
            "admissionScope": {"admissionMode": mode},
            "quotas": [
                {
                    "flavor": "default",
                    "resources": {"cpu": {"nominal": str(rng.choice((2, 4, 8)))}, "memory": {"nominal": "64Gi"}},
                }
            ],
        }
        if queue["cohort"] is None:
            del queue["cohort"]
        if preempt:
            queue["preemption"] = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
        if rng.random() < 0.1:
            queue["stopPolicy"] = rng.choice(("Hold", "HoldAndDrain"))
        queues.append(queue)
    namespaces = []
    for index in range(3):
        namespace: dict[str, Any] = {"name": f"team-{index}", "weight": rng.choice((1, 2))}
        if rng.random() < 0.3:
            namespace["quota"] = {"cpu": str(rng.choice((2, 3, 6)))}
            if rng.random() < 0.5:
                namespace["preemption"] = {"withinNamespace": "LowerPriority"}
        namespaces.append(namespace)
    locals_ = [
        {"name": f"team-{n}/q{i}", "clusterQueue": queues[(n + i) % len(queues)]["name"], "weight": rng.choice((1, 2))}
        for n in range(3)
        for i in range(2)
    ]
    workloads = []
    for number in range(rng.randint(20, 60)):
        entry: dict[str, Any] = {
            "name": f"w-{number:03d}",
            "localQueue": rng.choice(locals_)["name"],
            "submitAt": f"{rng.randrange(0, 4 * 3600)}s",
            "duration": f"{rng.randint(1, 3 * 3600)}s",
            "priority": rng.choice((0, 0, 10, 100)),
            "podSets": [{"count": 1, "requests": {"cpu": str(rng.choice((1, 1, 2, 4))), "memory": "1Gi"}}],
        }
        workloads.append(entry)
    budgets = []
    if rng.random() < 0.6:
        budgets.append(
            {
                "name": "hours",
                "localQueue": rng.choice(locals_)["name"],
                "kind": "WallTime",
                "allocatedHours": rng.choice((1, 3, 6)),
                "action": rng.choice(("Hold", "HoldAndDrain")),
                "renewal": "days",
                "renewalDays": 1,
            }
        )
    return {
        "name": f"mix-{seed}",
        "clock": {"horizon": f"{rng.choice((5, 12, 30))}h", "tick": rng.choice(("1m", "7m", "30m"))},
        "policy": {"usageHalfLifeTime": rng.choice(("10m", "1h")), "usageSamplingInterval": rng.choice(("1m", "5m"))},
        "resourceFlavors": [{"name": "default"}],
        "cohorts": [{"name": "org"}],
        "clusterQueues": queues,
        "namespaces": namespaces,
        "localQueues": locals_,
        "workloads": workloads,
        "budgets": budgets,
    }


@pytest.mark.parametrize("mode", ADMISSION_MODES)
@pytest.mark.parametrize("seed", range(6))
def test_random_feature_mixes_step_to_the_same_result(seed, mode):
    assert_identical(feature_mix(seed, mode))


def test_passes_are_skipped_only_where_they_cannot_decide_anything():
    # Given a trace without preemption: passes are skipped; with preemption on: none is
    document = multi_user_trace(seed=4, users=6, jobs=60, days=0.5, mode=TIME_AWARE)
    event, reference = assert_identical(document)
    assert event.skipped > 0
    assert event.passes + event.skipped == reference.passes
    document["clusterQueues"][0]["preemption"] = {"withinClusterQueue": "LowerPriority"}
    event, reference = assert_identical(document)
    assert event.skipped == 0 and event.passes == reference.passes


def test_the_trace_is_seeded_and_has_the_shape_asked_for():
    document = multi_user_trace(seed=9, users=40, jobs=3000, days=10, mode=NO_FAIR_SHARING)
    assert document == multi_user_trace(seed=9, users=40, jobs=3000, days=10, mode=NO_FAIR_SHARING)
    workloads = document["workloads"]
    assert len(workloads) == 3000 and len(document["localQueues"]) == 40
    cpus = [int(w["podSets"][0]["requests"]["cpu"]) for w in workloads]
    runtimes = [int(w["duration"].rstrip("s")) for w in workloads]
    submits = [int(w["submitAt"].rstrip("s")) for w in workloads]
    assert min(cpus) == 1 and max(cpus) == 128
    assert min(runtimes) < 60 and 12 * 3600 < max(runtimes) <= 17 * 3600
    assert max(submits) <= 10 * 86400 + 60
    per_user = sorted(sum(w["localQueue"] == q["name"] for w in workloads) for q in document["localQueues"])
    assert per_user[-1] > 10 * per_user[0]  # skewed: the busiest user submits far more than the quietest


def test_an_unknown_stepping_is_refused():
    scenario = parse_scenario(multi_user_trace(seed=1, users=2, jobs=2, days=0.01))
    with pytest.raises(ValueError, match="stepping"):
        simulate(scenario, stepping="tick-tock")


def segment_by_segment(samples, now, size, window_type, half_life):
    """``windowed_usage`` as it was written before sharing each bound's decay factor."""
    start = window_start(now, size, window_type)
    total = 0.0
    decay = half_life is not None and half_life > 0
    rate = math.log(2) / half_life if decay else 0.0
    for index, (t, amount) in enumerate(samples):
        end = samples[index + 1][0] if index + 1 < len(samples) else now
        lo, hi = max(t, start), min(end, now)
        if hi <= lo or amount == 0:
            continue
        if decay:
            total += amount * (math.exp(-rate * (now - hi)) - math.exp(-rate * (now - lo))) / rate
        else:
            total += amount * (hi - lo)
    return total


def test_windowed_usage_is_the_segment_by_segment_integral_to_the_last_bit():
    rng = random.Random(26)
    for _ in range(3000):
        times = [rng.choice((rng.uniform(0, 1000), float(rng.randint(0, 1000)))) for _ in range(rng.randint(0, 25))]
        if rng.random() < 0.8:
            times.sort()
        samples = [(t, rng.choice((0.0, 1000.0, rng.uniform(0, 5e5)))) for t in times]
        now = float(rng.randint(0, 1200))
        size = rng.choice((1, 100, 500, 2000))
        window_type = rng.choice(("sliding", "tumbling"))
        half_life = rng.choice((None, 0, 7.5, 60, 3600))
        expected = segment_by_segment(samples, now, size, window_type, half_life)
        assert repr(windowed_usage(samples, now, size, window_type, half_life)) == repr(expected)


def test_the_sorted_windowed_integral_is_the_segment_by_segment_integral_to_the_last_bit():
    # Given step series kept in time order (what the simulator reads its history from), some
    # with repeated times, samples before the window, at now and after now, and windows that
    # round past now
    rng = random.Random(27)
    for _ in range(3000):
        times = sorted(
            rng.choice((rng.uniform(0, 1000), float(rng.randint(0, 1000)))) for _ in range(rng.randint(0, 25))
        )
        if times and rng.random() < 0.2:
            times.insert(rng.randrange(len(times)), times[rng.randrange(len(times))])
            times.sort()
        amounts = [rng.choice((0.0, 1000.0, rng.uniform(0, 5e5))) for _ in times]
        now = rng.choice((float(rng.randint(0, 1200)), rng.uniform(0, 1200), *times[-1:]))
        size = rng.choice((1e-9, 1, 100, 500, 2000))
        window_type = rng.choice(("sliding", "tumbling"))
        half_life = rng.choice((None, 0, 7.5, 60, 3600))
        expected = segment_by_segment(list(zip(times, amounts, strict=True)), now, size, window_type, half_life)
        # Then the shortcut adds up the same terms to the same float, bit for bit
        assert repr(sorted_windowed_integral(times, amounts, now, size, window_type, half_life)) == repr(expected)
        assert repr(windowed_integral(times, amounts, now, size, window_type, half_life)) == repr(expected)


@pytest.mark.parametrize("mode", ADMISSION_MODES)
@pytest.mark.parametrize(("reset", "interval", "tick"), [("2m", "5m", "1m"), ("1h", "20m", "7m")])
def test_usage_series_written_between_samples_step_to_the_same_result(mode, reset, interval, tick):
    # Given a trace whose usage restarts from zero between samples (reset shorter than the
    # interval, so later ticks of an interval see it) or never does, ticks off the sample grid
    document = multi_user_trace(seed=11, users=8, jobs=150, days=1, mode=mode, tick=tick)
    document["policy"] = {"resetInactivityPeriod": reset, "usageSamplingInterval": interval, "usageHalfLifeTime": "30m"}
    # Then event stepping, which writes each queue's usage series when its state or allocation
    # changes, gives the reference's result, byte for byte
    assert_identical(document)


def test_round6_is_round_to_six_decimals_bit_for_bit():
    # Given values across magnitudes, exact decimals, and near-ties a few ulps either side
    rng = random.Random(6)
    values = [10 ** rng.uniform(-12, 12) * rng.random() for _ in range(20000)]
    for _ in range(3000):
        tie = (rng.randrange(10 ** rng.randint(1, 15)) + 0.5) / 1e6
        for step in range(-3, 4):
            value = tie
            for _ in range(abs(step)):
                value = math.nextafter(value, math.inf if step > 0 else -math.inf)
            values.append(value)
    values += [0.0, -0.0, 5e-324, 5e-7, 2.5e-6, -2.5e-6, 4503599627.370496, 4.6e9, 1e300, math.inf]
    # Then the shortcut rounds each exactly as round(value, 6)
    for value in values:
        assert repr(_round6(value)) == repr(round(value, 6)), value
