"""Estimated-start benchmark: what one replay of today's cluster costs (``playground.services.estimate``).

Run as ``python bench/estimate.py`` from the repository root. It uses its own PostgreSQL database
(``fp_bench_estimate``; ``BENCH_DATABASE_URL`` to change it), loads the demo (``seed_demo
--history 6h``, kept between runs; ``--refill`` starts over), and times, best of ``--rounds``:

* the baseline: the live export alone (the database read every live playground run pays);
* one replay (export, simulation on the engine, starts per workload) at 6 h and 24 h ahead,
  with the demo's active workloads and with ``--scale`` times as many pending ones;
* the workload page's estimate fragment through Django's test client, cold (replays) and warm
  (cached for everyone).

Figures are printed as ratios against the baseline measured in the same run: machines here are
noisy. The estimate is fetched after the page is drawn and only reads, so this is the wait of
the first viewer after the cache expires, never a delay of admission. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from datetime import timedelta

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import common  # noqa: E402 - bench/common.py, beside this script

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_estimate")
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "bench-only-secret")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")  # nothing here sends tasks anywhere
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")


def best(rounds: int, work: Callable[[], object]) -> float:
    """Best wall time of ``rounds`` runs, in seconds."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--refill", action="store_true", help="drop and reload the benchmark database")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=int, default=4, help="pending workloads multiplied by this for the larger run")
    options = parser.parse_args()
    common.ensure_database(DATABASE_URL, refill=options.refill)

    import django

    django.setup()
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client
    from django.utils import timezone

    from playground.live_export import LiveOptions, export_live_state
    from playground.services import estimate
    from queues import services
    from queues.models import LocalQueue, Workload, WorkloadState

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    call_command("seed_demo", if_empty=True, history="6h", verbosity=0)
    rows: list[tuple[str, str, str, str, str]] = []

    def measure(label: str) -> None:
        active = Workload.objects.filter(state__in=(WorkloadState.PENDING, WorkloadState.ADMITTED)).count()
        baseline = best(
            options.rounds,
            lambda: export_live_state(now=timezone.now(), options=LiveOptions(days=0, lookahead_seconds=86400)),
        )
        rows.append((f"{label}: live export alone (baseline)", f"{active}", f"{baseline * 1000:.0f}", "1.0x", ""))
        for hours in (6, 24):
            estimate.HORIZON = timedelta(hours=hours)
            seconds = best(options.rounds, estimate.replay_now)
            rows.append(
                (
                    f"{label}: replay {hours} h ahead",
                    f"{active}",
                    f"{seconds * 1000:.0f}",
                    f"{seconds / baseline:.0f}x",
                    "",
                )
            )
        estimate.HORIZON = timedelta(hours=24)

    measure("demo")

    pending = Workload.objects.filter(state=WorkloadState.PENDING).select_related("local_queue")
    target = pending.order_by("id").first()
    client = Client()
    assert client.login(username="admin", password="admin")
    url = f"/namespaces/{target.namespace.name}/workloads/{target.name}/estimate/"

    def cold() -> None:
        cache.clear()
        assert client.get(url).status_code == 200

    def warm() -> None:
        assert client.get(url).status_code == 200

    sign_in = best(options.rounds * 3, lambda: Client().get("/accounts/login/"))
    rows.append(("baseline: sign-in page", "", f"{sign_in * 1000:.1f}", "1.0x", ""))
    cold_s, warm_s = best(options.rounds, cold), best(options.rounds * 3, warm)
    rows.append(("estimate fragment, cold (replays)", "", f"{cold_s * 1000:.0f}", f"{cold_s / sign_in:.0f}x", ""))
    rows.append(("estimate fragment, warm (cached)", "", f"{warm_s * 1000:.1f}", f"{warm_s / sign_in:.1f}x", ""))

    # Larger: the same pending work submitted again (scale - 1) times, then measured the same way.
    copies = list(pending.values_list("local_queue_id", "name", "pod_sets", "priority", "duration_seconds"))
    queues = {lq.id: lq for lq in LocalQueue.objects.all()}
    marker = "bench-copy"
    if not Workload.objects.filter(name__startswith=marker).exists():
        for copy in range(1, options.scale):
            for lq_id, name, pod_sets, priority, duration in copies:
                services.submit_workload(
                    local_queue=queues[lq_id],
                    name=f"{marker}-{copy}-{name}"[:63],
                    pod_sets=pod_sets,
                    priority=priority,
                    duration_seconds=duration,
                )
    measure(f"x{options.scale} pending")

    print(f"{'measure':46} {'active':>7} {'ms':>8} {'ratio':>7}")
    for label, active, ms, ratio, _ in rows:
        print(f"{label:46} {active:>7} {ms:>8} {ratio:>7}")


if __name__ == "__main__":
    main()
