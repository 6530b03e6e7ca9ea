"""What-if lane fairness: how long bob's one run waits behind alice's three, before and after.

Run as ``python bench/whatif_fairness.py`` from the repository root. It uses its own PostgreSQL
database (``BENCH_DATABASE_URL``, default ``fp_bench_fairness``; created, migrated, its runs
emptied) and no broker: one in-process worker loop takes the four messages in the order they
were sent (alice's three, then bob's), as the single what-if worker does, with real
simulations of the same scenario (``BENCH_WORKLOADS`` generated workloads, default 3000).

* before: FIFO dispatch, each message runs "its" run (``runs.execute_run``), the old task;
* after: each message is a token, the worker claims the next run in fair order
  (``runs.execute_next``), the task now.

Both are measured in the same process on the same data; printed: bob's wait (created to
started) and one run's time.
"""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import common  # noqa: E402 - bench/common.py, beside this script

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_fairness")
WORKLOADS = int(os.environ.get("BENCH_WORKLOADS", "3000"))
os.environ.update(DATABASE_URL=DATABASE_URL, DEBUG="true")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")

common.ensure_database(DATABASE_URL)

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from playground.models import Outcome, Run, Scenario  # noqa: E402
from playground.services import runs  # noqa: E402
from tests.factories import simulation_run  # noqa: E402
from tests.queues.api.conftest import tiny_scenario  # noqa: E402


def scenario(tag: str) -> dict:
    generators = [
        {
            "name": f"gen-{tag}",
            "localQueue": "team-a/main",
            "count": WORKLOADS,
            "seed": 1,
            "interarrival": "20s",
            "duration": "10m",
            "podSets": [{"requests": {"cpu": "1"}}],
        }
    ]
    return tiny_scenario(name=f"bench-{tag}", clock={"horizon": "1d", "tick": "1m"}, generators=generators)


def measure(mode: str) -> tuple[float, float]:
    Run.objects.all().delete()
    Outcome.objects.all().delete()
    Scenario.objects.all().delete()
    users = get_user_model().objects
    alice = users.get_or_create(username="bench-alice")[0]
    bob = users.get_or_create(username="bench-bob")[0]
    # distinct documents (names), so no run reuses another's stored outcome
    messages = [str(simulation_run(alice, document=scenario(f"{mode}-alice-{i}")).pk) for i in range(3)]
    bobs = simulation_run(bob, document=scenario(f"{mode}-bob"))
    messages.append(str(bobs.pk))
    for message in messages:  # the single what-if worker, messages first in, first out
        if mode == "fifo":
            runs.execute_run(message)
        else:
            runs.execute_next()
    bobs.refresh_from_db()
    assert bobs.status == Run.Status.SUCCEEDED, bobs.error
    durations = [
        (run.finished_at - run.started_at).total_seconds()
        for run in Run.objects.all()
        if run.started_at and run.finished_at
    ]
    return (bobs.started_at - bobs.created_at).total_seconds(), sum(durations) / len(durations)


def main() -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    fifo_wait, fifo_run = measure("fifo")
    fair_wait, fair_run = measure("fair")
    Run.objects.all().delete()
    Scenario.objects.all().delete()
    print("bob's wait behind alice's 3 queued runs (one what-if worker), same process:")
    print(f"  before (FIFO dispatch):   {fifo_wait:6.2f} s   (one run ~{fifo_run:.2f} s)")
    print(f"  after  (fair claim):      {fair_wait:6.2f} s   (one run ~{fair_run:.2f} s)")
    print(f"  total bench time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
