"""A seeded multi-user trace as a scenario document, the shape of a site's job history.

``multi_user_trace`` writes what a replay of a real cluster's history looks like to the
simulator (``docs/history-replay.md``): one pool of CPUs shared by many users, each user a
namespace with one LocalQueue; user activity is Zipf-like (user ``n`` submits in proportion to
``1/n``: a few users submit most jobs, most users few); each user has a typical job width (1 to
16 CPUs, jobs up to 8 times that, at most 128); runtimes are log-uniform from 5 seconds to 17
hours; submissions come in bursts of up to 8 jobs within a minute, spread over ``days``. The
pool is sized so that the offered load is ``load`` (rounded up to 64 CPUs). The benchmark
(``bench/engine.py``) and the simulator's equivalence tests use it; the same seed gives the
same document.
"""

from __future__ import annotations

import math
import random
from typing import Any

from fairshare.types import NO_FAIR_SHARING

MAX_CPUS = 128
SHORTEST_SECONDS = 5
LONGEST_SECONDS = 17 * 3600


def multi_user_trace(
    *,
    seed: int = 26,
    users: int = 40,
    jobs: int = 3000,
    days: float = 10,
    load: float = 0.97,
    mode: str = NO_FAIR_SHARING,
    tick: str = "1m",
) -> dict[str, Any]:
    """The scenario document of ``jobs`` jobs of ``users`` users over ``days`` (run to completion)."""
    span = max(1, int(days * 86400))
    rows = trace_rows(random.Random(seed), users=users, jobs=jobs, span=span)
    capacity = pool_size(rows, load=load, span=span)
    width = len(str(users))
    queue = {user: f"user-{user:0{width}d}/jobs" for user in range(1, users + 1)}
    return {
        "name": f"trace-{seed}",
        "description": f"{len(rows):,} jobs of {users} users over {days:g} days, offered load {load:g} (seed {seed})",
        "clock": {"tick": tick},
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [
            {
                "name": "pool",
                "queueingStrategy": "BestEffortFIFO",
                "admissionScope": {"admissionMode": mode},
                "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": str(capacity)}}}],
            }
        ],
        "namespaces": [{"name": queue[user].split("/")[0]} for user in range(1, users + 1)],
        "localQueues": [{"name": queue[user], "clusterQueue": "pool"} for user in range(1, users + 1)],
        "workloads": [
            {
                "name": f"job-{number:05d}",
                "localQueue": queue[user],
                "submitAt": f"{submit}s",
                "duration": f"{runtime}s",
                "podSets": [{"count": 1, "requests": {"cpu": str(cpus)}}],
            }
            for number, (submit, runtime, cpus, user) in enumerate(rows, start=1)
        ],
    }


def trace_rows(rng: random.Random, *, users: int, jobs: int, span: int) -> list[tuple[int, int, int, int]]:
    """The jobs of the module's trace as ``(submit second, runtime seconds, CPUs, user)``, sorted:
    Zipf-like users, a typical width per user, log-uniform runtimes, bursts of up to 8 within a
    minute over ``span`` seconds (``playground.history.synthetic_swf`` writes the same jobs as SWF)."""
    weights = [1 / rank for rank in range(1, users + 1)]
    total = sum(weights)
    counts = [max(1, int(jobs * w / total)) for w in weights]
    counts[0] += max(0, jobs - sum(counts))
    rows: list[tuple[int, int, int, int]] = []
    for user, count in enumerate(counts, start=1):
        low = rng.randint(0, 4)
        made = 0
        while made < count:
            burst = min(count - made, rng.randint(1, 8))
            at = rng.randrange(span)
            for _ in range(burst):
                cpus = min(MAX_CPUS, 2 ** rng.randint(low, low + 3))
                runtime = int(math.exp(rng.uniform(math.log(SHORTEST_SECONDS), math.log(LONGEST_SECONDS))))
                rows.append((at + rng.randint(0, 60), runtime, cpus, user))
                made += 1
    rows.sort()
    return rows


def pool_size(rows: list[tuple[int, int, int, int]], *, load: float, span: int) -> int:
    """CPUs for an offered load of ``load`` over ``span`` seconds, rounded up to 64 (at least 128)."""
    work = sum(runtime * cpus for _, runtime, cpus, _ in rows)
    return max(MAX_CPUS, 64 * math.ceil(work / (load * span) / 64))
