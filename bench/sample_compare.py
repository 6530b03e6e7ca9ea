"""The usage sample alone, on a copy of the control-loop seed: timed, and what it stored dumped.

Run as ``python bench/sample_compare.py --dump FILE`` from a checkout (its own code is measured),
with ``BENCH_DATABASE_URL`` / ``BENCH_SEED_DATABASE`` naming the work database and the seed of
``bench/control_loop.py`` (which fills the seed when it is missing). It copies the seed, takes a
plain ``UPDATE`` of the LocalQueue rows as the baseline, then three samples at moments fixed by
the seed (10 minutes after its last admission, then 60 s and 120 s later: the first decays
nothing, the next ones decay every row, the steady state), and after each writes every status
row, every LocalQueue's TimeAware history and every series row to ``FILE`` (pickle). With
``--row-by-row-first``, a row-by-row sample at the first moment, rolled back, goes first (as in
``bench/control_loop.py``, whose sample row is measured after it) and is compared with the first.

``python bench/sample_compare.py --compare A B`` says whether two dumps are identical (e.g. the
code on ``main`` and a branch, each from its own copy of the same seed): the check that a faster
sample stores the same values. Wall time, this process's CPU time and the PostgreSQL backend's
CPU time (user + system, from ``/proc``) are printed per step. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from datetime import timedelta
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import control_loop  # noqa: E402  (sets the database and broker settings from the environment)

STEPS = (0, 60, 120)  # seconds after the first sample's moment


def _backend_cpu() -> float | None:
    """CPU seconds (user + system) of this connection's PostgreSQL backend, if /proc shows it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(call: Any) -> tuple[float, float, float | None]:
    """Wall seconds, this process's CPU seconds, the backend's CPU seconds of ``call``."""
    backend = _backend_cpu()
    started, cpu = time.perf_counter(), time.process_time()
    call()
    wall, own = time.perf_counter() - started, time.process_time() - cpu
    after = _backend_cpu()
    return wall, own, (after - backend) if backend is not None and after is not None else None


def _stored() -> dict[str, list[tuple[Any, ...]]]:
    """Every status row, the LocalQueues' history shares and the series, JSON as text."""
    from django.db import connection

    out = {}
    with connection.cursor() as cursor:
        for table in ("queues_localqueue", "queues_namespace", "queues_clusterqueue", "queues_cohort"):
            extra = ", historical_share::text" if table == "queues_localqueue" else ""
            cursor.execute(
                f"SELECT id, consumed_resources::text, entry_penalty::text, usage_last_update, weighted_share{extra} "
                f"FROM {table} ORDER BY id"
            )
            out[table] = cursor.fetchall()
        cursor.execute(
            "SELECT kind, object_id, sampled_at, resolution, allocated::text, consumed::text, capacity::text, "
            "weighted_share, admitted_count, pending_count FROM queues_usagesample ORDER BY kind, object_id, sampled_at"
        )
        out["series"] = cursor.fetchall()
    return out


def _row(label: str, figures: tuple[float, float, float | None]) -> None:
    wall, own, backend = figures
    backend_text = "n/a" if backend is None else f"{backend * 1000:,.0f} ms"
    print(
        f"  {label:44} wall {wall * 1000:7,.0f} ms   Python CPU {own * 1000:5,.0f} ms   PostgreSQL CPU {backend_text}"
    )


def run(dump: str | None, row_by_row_first: bool) -> None:
    import django

    django.setup()
    from django.db import connection

    from queues.services import usage

    control_loop.prepare_seed(False)
    control_loop.fresh_copy()
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(admitted_at) FROM queues_workload")
        first = cursor.fetchone()[0] + timedelta(minutes=10)
    print(f"code {ROOT}, database {control_loop._work_name()} (seed {control_loop.SEED_DATABASE})")
    _row(
        "baseline: plain UPDATE of the 10,000 LQ rows",
        _measure(lambda: control_loop._sql("UPDATE queues_localqueue SET consumed_resources = consumed_resources")),
    )
    if row_by_row_first:  # as bench/control_loop.py does before its sample row
        from django.db import transaction

        with transaction.atomic():
            figures = _measure(lambda: usage.sample_usage(now=first, set_based=False))
            reference = _stored()
            transaction.set_rollback(True)
        _row("row-by-row sample at +0 s (rolled back)", figures)
    states = []
    for step in STEPS:
        moment = first + timedelta(seconds=step)
        results: list[Any] = []
        figures = _measure(lambda moment=moment, results=results: results.append(usage.sample_usage(now=moment)))
        _row(f"sample at +{step} s ({results[0].rows:,} series rows)", figures)
        states.append(_stored())
        if row_by_row_first and step == 0:
            print(f"  the row-by-row sample stored {'the same' if states[0] == reference else 'OTHER VALUES'}")
    if dump:
        with open(dump, "wb") as out:
            pickle.dump(states, out)


def compare(first: str, second: str) -> int:
    with open(first, "rb") as one, open(second, "rb") as other:
        a, b = pickle.load(one), pickle.load(other)
    same = True
    for index, (left, right) in enumerate(zip(a, b, strict=True)):
        for key in left:
            if left[key] != right[key]:
                same = False
                differing = sum(1 for x, y in zip(left[key], right[key]) if x != y)
                print(
                    f"sample {index + 1}: {key} differs ({len(left[key])} / {len(right[key])} rows, {differing} differ)"
                )
            else:
                print(f"sample {index + 1}: {key} identical ({len(left[key]):,} rows)")
    print("IDENTICAL" if same else "DIFFERENT")
    return 0 if same else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", help="write what each sample stored to this file")
    parser.add_argument(
        "--row-by-row-first", action="store_true", help="first a rolled-back row-by-row sample, as the bench does"
    )
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two dumps and exit")
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    run(args.dump, args.row_by_row_first)


if __name__ == "__main__":
    main()
