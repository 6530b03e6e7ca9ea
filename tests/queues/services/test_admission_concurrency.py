"""Four admission passes at once over four units, a hundred rounds, on PostgreSQL.

Each round four threads (each with its own database connection) are released together, each
running one pass: three on three different units and the fourth on the same unit as the first,
so passes collide on one unit and, through the namespaces that span all units, across units. Between rounds some work finishes and more is
submitted, so every round has something to admit. After every round: no workload admitted
twice, one open admission interval per admitted workload, no ClusterQueue over its quota and
no namespace over its hard quota.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import AdmissionRecord, Workload, WorkloadResource, WorkloadState
from queues.services import transitions
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

UNITS = 4
THREADS = 4
ROUNDS = 100
CQ_CPU = 6
NAMESPACE_CPU = 7  # less than the 4 x 6 the ClusterQueues could give one namespace


@pytest.fixture(autouse=True)
def no_broker(monkeypatch) -> None:
    """Submissions ask for a pass after commit; this test runs the passes itself, so the request
    is dropped here instead of published to a broker other test runs may share."""
    from queues import tasks

    monkeypatch.setattr(tasks.admission_pass, "delay", lambda unit, **_: None)


def admitted_cpu_by(field: str) -> dict[int, int]:
    rows = WorkloadResource.objects.filter(workload__state=WorkloadState.ADMITTED, resource="cpu").values_list(
        f"workload__{field}", "amount"
    )
    totals: Counter[int] = Counter()
    for key, amount in rows:
        totals[key] += amount
    return dict(totals)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks and real concurrency need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_given_four_passes_at_once_on_four_units_a_hundred_times_then_no_double_admission_and_no_overrun():
    rng = random.Random(12)
    queues = [make_cluster_queue(f"cq-{u}", cpu=str(CQ_CPU)) for u in range(UNITS)]
    local_queues = [
        make_local_queue(f"team-{n}", f"q{u}", queues[u], ns_quota=str(NAMESPACE_CPU))
        for u in range(UNITS)
        for n in range(UNITS)
    ]
    units = [snapshot.unit_for_cluster_queue(cq.id).key for cq in queues]
    assert len(set(units)) == UNITS
    serial = 0
    claimed_total = 0
    for round_ in range(ROUNDS):
        for _ in range(rng.randint(3, 8)):
            serial += 1
            submit(rng.choice(local_queues), f"job-{serial}", cpu=str(rng.choice([1, 1, 2, 3])))
        barrier = threading.Barrier(THREADS)
        errors: list[BaseException] = []
        results: list[admission.PassResult] = []
        lock = threading.Lock()

        keys = [units[(round_ + t) % UNITS] for t in range(THREADS - 1)] + [units[round_ % UNITS]]

        def run(key: str) -> None:
            try:
                barrier.wait(timeout=30)  # noqa: B023 - the threads are joined within this round
                result = admission.run_admission_pass(key)
                with lock:  # noqa: B023
                    results.append(result)  # noqa: B023
            except BaseException as error:  # noqa: BLE001 - asserted below
                errors.append(error)  # noqa: B023
            finally:
                connections.close_all()

        threads = [threading.Thread(target=run, args=(key,)) for key in keys]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)

        assert errors == [], f"round {round_}"
        admitted = [key for result in results for key in result.admitted]
        assert len(admitted) == len(set(admitted)), f"round {round_}: a workload admitted by two passes"
        claimed_total += len(admitted)
        assert AdmissionRecord.objects.count() == claimed_total, f"round {round_}"
        open_records = Counter(
            AdmissionRecord.objects.filter(ended_at__isnull=True).values_list("workload_id", flat=True)
        )
        running = set(Workload.objects.filter(state=WorkloadState.ADMITTED).values_list("id", flat=True))
        assert set(open_records) == running and set(open_records.values()) <= {1}, f"round {round_}"
        by_queue = admitted_cpu_by("cluster_queue_id")
        assert all(total <= CQ_CPU * 1000 for total in by_queue.values()), f"round {round_}: {by_queue}"
        by_namespace = admitted_cpu_by("namespace_id")
        assert all(total <= NAMESPACE_CPU * 1000 for total in by_namespace.values()), f"round {round_}: {by_namespace}"

        # Some work ends, freeing room for the next round.
        ending = [pk for pk in sorted(running) if rng.random() < 0.4]
        transitions.finish_many([transitions.Finish(pk, timezone.now() + timedelta(seconds=1)) for pk in ending])

    assert claimed_total > ROUNDS  # the rounds did admit work, not just find nothing to do
