"""The admission pass on PostgreSQL: decisions written in one transaction, safely under races."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from queues.admission import apply as decisions
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import (
    AdmissionRecord,
    LocalQueue,
    Namespace,
    PendingOrder,
    QueueHold,
    Workload,
    WorkloadReason,
    WorkloadState,
)
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit


def unit_key(cq) -> str:
    return snapshot.unit_for_cluster_queue(cq.id).key


def admitted_cpu(cq) -> int:
    return sum(w.requests["cpu"] for w in Workload.objects.filter(cluster_queue=cq, state=WorkloadState.ADMITTED))


@pytest.mark.django_db
def test_given_pending_work_when_pass_runs_then_it_fills_quota_and_explains_the_rest():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    for index in range(6):
        submit(lq, f"job-{index}")

    result = admission.run_admission_pass(unit_key(cq))

    assert len(result.admitted) == 4
    assert admitted_cpu(cq) == 4000
    waiting = Workload.objects.with_queue_position().filter(state=WorkloadState.PENDING).order_by("queue_position")
    assert [w.queue_position for w in waiting] == [1, 2]
    assert {w.pending_reason_code for w in waiting} == {"InsufficientQuota"}
    assert "cpu" in waiting[0].pending_reason_message
    assert AdmissionRecord.objects.filter(ended_at__isnull=True).count() == 4


@pytest.mark.django_db
def test_given_admissions_when_pass_runs_then_entry_penalty_lands_on_every_level():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "job-1", cpu="2")

    admission.run_admission_pass(unit_key(cq))

    lq.refresh_from_db()
    cq.refresh_from_db()
    namespace = Namespace.objects.get(name="team-a")
    # alpha_s = 1 - 0.5 ** (5m / 1h) with the default policy
    expected = (1 - 0.5 ** (300 / 3600)) * 2000
    for row in (lq, cq, namespace):
        assert row.entry_penalty["cpu"] == pytest.approx(expected)


@pytest.mark.django_db
def test_given_two_equal_queues_when_burst_submitted_then_penalty_alternates_admissions():
    """KEP-4136's entry penalty through the database: one from each queue, not two from the first."""
    cq = make_cluster_queue(cpu="2")
    first = make_local_queue("team-a", "main", cq)
    second = make_local_queue("team-b", "main", cq)
    submit(first, "a-1")
    submit(first, "a-2")
    submit(second, "b-1")
    submit(second, "b-2")

    admission.run_admission_pass(unit_key(cq))

    admitted = Workload.objects.filter(state=WorkloadState.ADMITTED)
    assert sorted(w.local_queue.namespace.name for w in admitted) == ["team-a", "team-b"]


@pytest.mark.django_db
def test_given_a_completed_pass_when_run_again_then_nothing_more_is_admitted():
    cq = make_cluster_queue(cpu="2")
    lq = make_local_queue("team-a", "main", cq)
    for index in range(4):
        submit(lq, f"job-{index}")
    admission.run_admission_pass(unit_key(cq))

    again = admission.run_admission_pass(unit_key(cq))

    assert again.admitted == []
    assert Workload.objects.filter(state=WorkloadState.ADMITTED).count() == 2


@pytest.mark.django_db
def test_given_weight_changed_when_next_pass_runs_then_new_weight_decides():
    cq = make_cluster_queue(cpu="1")
    heavy = make_local_queue("team-a", "main", cq)
    light = make_local_queue("team-b", "main", cq)
    for lq in (heavy, light):
        lq.consumed_resources = {"cpu": 1000.0}
        lq.usage_last_update = timezone.now()
        lq.save()
    submit(heavy, "a-1")
    submit(light, "b-1")
    LocalQueue.objects.filter(pk=light.pk).update(weight=4)  # b's score drops to a quarter

    admission.run_admission_pass(unit_key(cq))

    assert Workload.objects.get(state=WorkloadState.ADMITTED).name == "b-1"


@pytest.mark.django_db
def test_given_budget_hold_when_pass_runs_then_queue_waits_with_budget_reason():
    cq = make_cluster_queue(cpu="8")
    lq = make_local_queue("team-a", "main", cq)
    QueueHold.objects.create(local_queue=lq, message="budget gpu-hours used 101h of 100h", source="budget:1")
    submit(lq, "job-1")

    admission.run_admission_pass(unit_key(cq))

    workload = Workload.objects.get()
    assert workload.state == WorkloadState.PENDING
    assert workload.pending_reason_code == "BudgetExhausted"
    assert "101h of 100h" in workload.pending_reason_message


@pytest.mark.django_db
def test_given_draining_hold_when_pass_runs_then_running_work_is_evicted_and_time_kept():
    cq = make_cluster_queue(cpu="8")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "job-1")
    start = timezone.now() - timedelta(minutes=10)
    admission.run_admission_pass(unit_key(cq), now=start)
    QueueHold.objects.create(local_queue=lq, message="exhausted", drain=True, source="budget:1")

    admission.run_admission_pass(unit_key(cq), now=start + timedelta(minutes=10))

    workload = Workload.objects.get()
    assert workload.state == WorkloadState.PENDING
    assert workload.eviction_count == 1
    assert workload.accumulated_past_execution_seconds == 600
    assert workload.pending_reason_code == "BudgetExhausted"  # at once, not at the next pass
    record = AdmissionRecord.objects.get()
    assert (record.end_reason, record.seconds()) == ("Evicted", 600)


@pytest.mark.django_db
def test_given_namespace_quota_shared_across_units_then_usage_elsewhere_counts():
    cq_one = make_cluster_queue("one", cpu="8")
    cq_two = make_cluster_queue("two", cpu="8")
    lq_one = make_local_queue("team-a", "one", cq_one, ns_quota="3")
    lq_two = make_local_queue("team-a", "two", cq_two)
    submit(lq_one, "a", cpu="2")
    admission.run_admission_pass(unit_key(cq_one))
    submit(lq_two, "b", cpu="2")

    admission.run_admission_pass(unit_key(cq_two))

    waiting = Workload.objects.get(name="b")
    assert waiting.state == WorkloadState.PENDING
    assert waiting.pending_reason_code == "NamespaceQuotaExceeded"


@pytest.mark.django_db
def test_given_failure_half_way_when_pass_runs_then_database_is_as_before(monkeypatch):
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    for index in range(6):
        submit(lq, f"job-{index}")
    before = list(Workload.objects.order_by("id").values())
    written: list[str] = []
    real_write_reasons = decisions.write_reasons

    def reasons_then_fail(*args, **kwargs):
        written.append("reasons")
        real_write_reasons(*args, **kwargs)
        raise RuntimeError("worker lost half-way")  # after admissions, penalties and reasons were written

    monkeypatch.setattr(decisions, "write_reasons", reasons_then_fail)

    with pytest.raises(RuntimeError):
        admission.run_admission_pass(unit_key(cq))

    assert written == ["reasons"]
    assert list(Workload.objects.order_by("id").values()) == before
    assert not WorkloadReason.objects.exists()  # the reasons written before the failure are gone too
    assert not AdmissionRecord.objects.exists()
    assert not PendingOrder.objects.exists()
    lq.refresh_from_db()
    assert lq.entry_penalty == {}


@pytest.mark.django_db
def test_given_many_workloads_then_snapshot_queries_do_not_grow(django_assert_num_queries):
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "first")
    unit = snapshot.unit_for_cluster_queue(cq.id)
    from django.db import connection as conn
    from django.test.utils import CaptureQueriesContext

    snapshot.clear_caches()  # both reads start cold: what an earlier pass read is not reused
    with CaptureQueriesContext(conn) as small:
        snapshot.build_snapshot(unit, admission.settings.FAIR_SHARING)
    for index in range(150):
        submit(lq, f"job-{index}")
    snapshot.clear_caches()
    with django_assert_num_queries(len(small.captured_queries)):
        loaded = snapshot.build_snapshot(unit, admission.settings.FAIR_SHARING)
    assert len(loaded.snapshot.workloads) == 151


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks and real concurrency need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_given_two_passes_at_the_same_moment_then_no_double_admission_and_no_quota_overrun():
    cq = make_cluster_queue(cpu="5")
    lq = make_local_queue("team-a", "main", cq)
    for index in range(12):
        submit(lq, f"job-{index}")
    key = unit_key(cq)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []
    results: list[admission.PassResult] = []

    def run() -> None:
        try:
            barrier.wait()
            results.append(admission.run_admission_pass(key))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    # Serialised by the unit lock: the second pass planned on the first one's outcome, so it
    # neither admitted anything nor lost a claim race.
    assert sorted(len(result.admitted) for result in results) == [0, 5]
    assert [result.skipped for result in results] == [[], []]
    assert admitted_cpu(cq) == 5000
    assert AdmissionRecord.objects.count() == 5
    assert AdmissionRecord.objects.values("workload").distinct().count() == 5


@pytest.mark.django_db
def test_given_admissions_when_pass_runs_then_prometheus_instruments_count_them():
    from queues import metrics

    cq = make_cluster_queue("metered", cpu="2")
    lq = make_local_queue("team-m", "main", cq)
    submit(lq, "m-1")
    submit(lq, "m-2")
    counter = metrics.ADMISSIONS.labels(cluster_queue="metered", admission_mode="UsageBasedAdmissionFairSharing")
    before = counter._value.get()

    admission.run_admission_pass(unit_key(cq))

    assert counter._value.get() - before == 2
    samples = metrics.CONTROL_LOOP_REGISTRY.get_sample_value(
        "fairportal_admission_pass_duration_seconds_count", {"scope": unit_key(cq)}
    )
    assert samples >= 1


@pytest.mark.django_db
def test_given_nothing_changed_when_pass_runs_again_then_no_reason_is_rewritten_and_order_is_one_row(monkeypatch):
    cq = make_cluster_queue(cpu="2")
    first = make_local_queue("team-a", "main", cq)
    second = make_local_queue("team-b", "main", cq)
    for index in range(4):
        submit(first, f"a-{index}")
        submit(second, f"b-{index}")
    admission.run_admission_pass(unit_key(cq))  # admits two; its reasons describe the pass as it went
    admission.run_admission_pass(unit_key(cq))  # explains the wait against the final state
    written: list[int] = []
    real = decisions.write_reasons

    def counting(loaded, reasons):
        written.append(len(reasons))
        return real(loaded, reasons)

    monkeypatch.setattr(decisions, "write_reasons", counting)

    admission.run_admission_pass(unit_key(cq))

    assert sum(written) == 0  # positions are not stored on the rows, so nothing to rewrite
    order = PendingOrder.objects.get(cluster_queue=cq)
    waiting = Workload.objects.with_queue_position().filter(state=WorkloadState.PENDING).order_by("queue_position")
    assert [w.id for w in waiting] == order.workload_ids
    assert [w.queue_position for w in waiting] == list(range(1, 7))
