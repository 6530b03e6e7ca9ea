"""The four admission modes on an imported history: mean wait of light vs heavy users,
utilisation, Jain index (``docs/history-replay.md``).

    python bench/history_modes.py [TRACE.swf|sacct.json] [--layout user|account] [--capacity cpu=512]
        [--load 0.97] [--widen 4]

Without a file it replays ``playground.history.synthetic_swf()`` (43 users, 3,200 jobs, 10
days, offered load ``--load``), one pool, one LocalQueue per user. Light users are those whose requested
CPU-hours are below the median; heavy ones the top quarter. ``--widen N`` makes every job N
times wider and N times shorter (the same work, fewer jobs at once: more users idle with a
backlog when room frees, the regime where the modes part).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate
from fairshare.types import ADMISSION_MODES
from playground import history


def classes(document: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(light, heavy) LocalQueues by requested CPU-seconds: below the median, top quarter."""
    demand: dict[str, float] = {}
    for w in document["workloads"]:
        cpus = float(w["podSets"][0]["requests"]["cpu"])
        demand[w["localQueue"]] = demand.get(w["localQueue"], 0.0) + cpus * float(w["duration"].rstrip("s"))
    ordered = sorted(demand, key=lambda k: (demand[k], k))
    n = len(ordered)
    return set(ordered[: n // 2]), set(ordered[n - max(1, n // 4) :])


def summarise(document: dict[str, Any], result: dict[str, Any], light: set[str], heavy: set[str]) -> dict[str, float]:
    waits: dict[str, list[float]] = {"light": [], "heavy": [], "all": []}
    for w in result["workloads"].values():
        if w["waitSeconds"] is None:
            continue
        waits["all"].append(w["waitSeconds"])
        if w["localQueue"] in light:
            waits["light"].append(w["waitSeconds"])
        elif w["localQueue"] in heavy:
            waits["heavy"].append(w["waitSeconds"])
    mean = {k: sum(v) / len(v) if v else 0.0 for k, v in waits.items()}
    return {
        "light_wait_h": mean["light"] / 3600,
        "heavy_wait_h": mean["heavy"] / 3600,
        "all_wait_h": mean["all"] / 3600,
        "utilisation": result["summary"]["utilization"].get("cpu", 0.0),
        "jain": result["summary"]["jainIndex"],
        "end_days": result["summary"]["endSeconds"] / 86400,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?")
    parser.add_argument("--format", choices=history.FORMATS)
    parser.add_argument("--layout", choices=history.LAYOUTS, default="user")
    parser.add_argument("--capacity", action="append", default=[])
    parser.add_argument("--modes", default=",".join(ADMISSION_MODES))
    parser.add_argument("--load", type=float, default=0.97, help="offered load of the synthetic trace")
    parser.add_argument("--widen", type=int, default=1, help="jobs N times wider and N times shorter")
    args = parser.parse_args(argv)
    content = Path(args.file).read_bytes() if args.file else history.synthetic_swf(load=args.load).encode()
    fmt = args.format or history.guess_format(content)
    parsed = history.read_history(content, fmt)
    if args.widen > 1:
        limit = parsed.max_procs or max(j.cpus for j in parsed.jobs) * args.widen
        parsed = dataclasses.replace(
            parsed,
            jobs=tuple(
                dataclasses.replace(j, cpus=min(limit, j.cpus * args.widen), runtime=max(1, j.runtime // args.widen))
                for j in parsed.jobs
            ),
        )
    capacity = history.parse_capacity(args.capacity) if args.capacity else None
    print(
        "| mode | light users' mean wait (h) | heavy users' mean wait (h) | all (h) | CPU utilisation | Jain index | makespan (days) | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        document = history.to_scenario(parsed, layout=args.layout, mode=mode, capacity=capacity)
        light, heavy = classes(document)
        started = time.perf_counter()
        result = simulate(parse_scenario(document))
        took = time.perf_counter() - started
        s = summarise(document, result, light, heavy)
        print(
            f"| {mode} | {s['light_wait_h']:.2f} | {s['heavy_wait_h']:.2f} | {s['all_wait_h']:.2f} | "
            f"{s['utilisation']:.3f} | {s['jain']:.3f} | {s['end_days']:.2f} | {took:.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
