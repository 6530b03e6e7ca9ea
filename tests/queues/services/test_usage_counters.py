"""Admitted-usage and workload counters: kept exact by every transition, checked and repaired;
the usage sample that reads them stores what the row-by-row sample stores, to the JSON text."""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
from collections.abc import Callable
from contextlib import nullcontext
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections, transaction
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairshare.policy import FairSharingPolicy
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import (
    AdmittedUsage,
    Cohort,
    LocalQueue,
    ResourceFlavor,
    UsageSample,
    Workload,
    WorkloadCount,
    WorkloadCountChange,
    WorkloadState,
)
from queues.services import lifecycle, transitions, usage, usage_counters
from queues.services.errors import InvalidTransition
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
POLICY = FairSharingPolicy.from_mapping(
    {"usageHalfLifeTime": "1h", "resetInactivityPeriod": "1d", "resourceWeights": {"cpu": 1.5, "memory": 0.25}}
)
_names = itertools.count()


def joined() -> dict[tuple[int, int | None, str], tuple[int, int]]:
    """The join the counters replace: admitted workloads' resource rows, grouped."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w.local_queue_id, w.cluster_queue_id, r.resource, SUM(r.amount), COUNT(*) "
            "FROM queues_workload w JOIN queues_workloadresource r ON r.workload_id = w.id "
            "WHERE w.state = 'Admitted' GROUP BY 1, 2, 3"
        )
        return {(lq, cq, resource): (int(amount), n) for lq, cq, resource, amount, n in cursor.fetchall()}


def real_counts() -> dict[int, tuple[int, int]]:
    """The count the workload counters replace: admitted and pending workloads per LocalQueue."""
    totals: dict[int, list[int]] = {}
    for lq, state in Workload.objects.filter(state__in=("Admitted", "Pending")).values_list("local_queue_id", "state"):
        totals.setdefault(lq, [0, 0])[0 if state == "Admitted" else 1] += 1
    return {lq: (admitted, pending) for lq, (admitted, pending) in totals.items()}


def stored_counts() -> dict[int, tuple[int, int]]:
    """What the counters say: the folded counts plus the changes appended since."""
    with connection.cursor() as cursor:
        cursor.execute(usage_counters.COUNTS_SQL.format(where=""))
        return {lq: (int(admitted), int(pending)) for lq, admitted, pending in cursor.fetchall()}


def counted() -> dict[tuple[int, int | None, str], tuple[int, int]]:
    return {
        (row.local_queue_id, row.cluster_queue_id, row.resource): (row.amount, row.workloads)
        for row in AdmittedUsage.objects.all()
        if row.workloads
    }


def two_queues():
    tag = next(_names)
    cq = make_cluster_queue(f"cq-{tag}", cpu="1000")
    return [make_local_queue(f"team-{tag}", name, cq) for name in ("a", "b")], cq


def submit_mixed(lq: LocalQueue, name: str, cpu: int, memory: int | None) -> Workload:
    from queues import services

    requests = {"cpu": f"{cpu}m", **({"memory": f"{memory}Mi"} if memory is not None else {})}
    return services.submit_workload(
        local_queue=lq, name=name, pod_sets=[{"count": 2, "requests": requests}], duration_seconds=600
    )


OPERATIONS = ("submit", "admit", "evict", "finish", "fail", "cancel", "cancel_pending")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(OPERATIONS),
            st.integers(0, 7),
            st.integers(1, 4000),
            st.one_of(st.none(), st.integers(1, 64)),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_given_random_transitions_through_the_services_then_counters_equal_the_join(steps):
    queues, cq = two_queues()
    flavors = dict(ResourceFlavor.objects.values_list("name", "id"))
    made: list[Workload] = []
    now = timezone.now() - HOUR
    for index, (operation, pick, cpu, memory) in enumerate(steps):
        now += timedelta(seconds=30)
        if operation == "submit" or not made:
            made.append(submit_mixed(queues[pick % 2], f"w-{index}", cpu, memory))
            continue
        workload = made[pick % len(made)]
        if operation == "admit":
            assignment = dict.fromkeys(workload.requests, "default")
            transitions.admit_many(
                [transitions.Admit(workload.pk, cq.id, assignment)], now=now, started=True, flavor_ids=flavors
            )
        elif operation == "evict":
            transitions.evict_many([transitions.Evict(workload.pk, "preempted")], now=now)
        elif operation == "finish":
            transitions.finish_many([transitions.Finish(workload.pk, now)])
        elif operation == "fail":
            with pytest.raises(InvalidTransition) if not _admitted(workload) else nullcontext():
                lifecycle.fail_workload(workload.pk, now=now, message="exit 1")
        else:
            with pytest.raises(InvalidTransition) if _ended(workload) else nullcontext():
                lifecycle.cancel_workload(workload.pk, now=now)
        assert counted() == joined()
        assert stored_counts() == real_counts(), operation
    assert usage_counters.check() == []


def _admitted(workload: Workload) -> bool:
    return Workload.objects.filter(pk=workload.pk, state=WorkloadState.ADMITTED).exists()


def _ended(workload: Workload) -> bool:
    return Workload.objects.filter(pk=workload.pk).exclude(state__in=("Pending", "Admitted")).exists()


def test_given_a_batch_then_each_transition_moves_the_counters_by_its_workloads():
    (lq_a, lq_b), cq = two_queues()
    workloads = [submit_mixed(lq_a, f"a-{i}", 500, 10) for i in range(3)] + [submit_mixed(lq_b, "b-0", 250, None)]
    flavors = dict(ResourceFlavor.objects.values_list("name", "id"))
    now = timezone.now() - HOUR

    transitions.admit_many(
        [transitions.Admit(w.pk, cq.id, dict.fromkeys(w.requests, "default")) for w in workloads],
        now=now,
        started=True,
        flavor_ids=flavors,
    )
    mib = 2**20 * 1000
    assert counted() == {
        (lq_a.id, cq.id, "cpu"): (3000, 3),
        (lq_a.id, cq.id, "memory"): (60 * mib, 3),
        (lq_b.id, cq.id, "cpu"): (500, 1),
    }
    assert stored_counts() == {lq_a.id: (3, 0), lq_b.id: (1, 0)}

    transitions.evict_many([transitions.Evict(workloads[0].pk, "preempted")], now=now + HOUR)
    transitions.finish_many([transitions.Finish(workloads[3].pk, now + HOUR)])
    lifecycle.cancel_workload(workloads[1].pk, now=now + HOUR)

    assert counted() == {(lq_a.id, cq.id, "cpu"): (1000, 1), (lq_a.id, cq.id, "memory"): (20 * mib, 1)}
    assert AdmittedUsage.objects.filter(local_queue=lq_b, resource="cpu").get().workloads == 0  # kept at 0
    assert stored_counts() == {lq_a.id: (1, 1)}  # one still admitted, the evicted one pending again


def test_given_the_admission_pass_admits_and_preempts_then_counters_follow():
    cq = make_cluster_queue(f"cq-{next(_names)}", cpu="4")
    lq = make_local_queue(f"team-{next(_names)}", "main", cq)
    for index in range(6):
        submit(lq, f"job-{index}", cpu="1")

    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, policy=POLICY)

    assert counted() == joined() == {(lq.id, cq.id, "cpu"): (4000, 4)}
    assert stored_counts() == real_counts() == {lq.id: (4, 2)}


def test_given_a_drifted_counter_then_the_command_reports_it_and_repair_rewrites_it():
    (lq_a, _lq_b), cq = two_queues()
    workload = submit_mixed(lq_a, "run", 750, None)
    transitions.admit_many(
        [transitions.Admit(workload.pk, cq.id, {"cpu": "default"})],
        now=timezone.now(),
        started=True,
        flavor_ids=dict(ResourceFlavor.objects.values_list("name", "id")),
    )
    AdmittedUsage.objects.filter(local_queue=lq_a).update(amount=1)
    AdmittedUsage.objects.create(local_queue=lq_a, cluster_queue=cq, resource="gpu", amount=5, workloads=1)

    with pytest.raises(CommandError, match="2 counters differ"):
        call_command("check_usage_counters")
    assert [(d.resource, d.expected, d.stored) for d in usage_counters.check()] == [
        ("cpu", (1500, 1), (1, 1)),
        ("gpu", (0, 0), (5, 1)),
    ]

    call_command("check_usage_counters", "--repair")

    assert usage_counters.check() == []
    assert counted() == {(lq_a.id, cq.id, "cpu"): (1500, 1)}


def test_given_an_admin_sets_a_state_by_hand_then_the_queue_is_recounted(admin_user):
    (lq_a, _lq_b), cq = two_queues()
    workload = submit_mixed(lq_a, "by-hand", 300, None)
    workload.state = WorkloadState.ADMITTED
    workload.cluster_queue = cq
    request = RequestFactory().post("/admin/")
    request.user = admin_user
    model_admin = admin.site._registry[Workload]

    model_admin.save_model(request, workload, None, True)
    assert counted() == joined() == {(lq_a.id, cq.id, "cpu"): (600, 1)}
    assert stored_counts() == real_counts() == {lq_a.id: (1, 0)}

    model_admin.delete_queryset(request, Workload.objects.filter(pk=workload.pk))
    assert counted() == joined() == {}
    assert stored_counts() == real_counts() == {}


def test_given_an_admin_moves_a_workload_to_another_queue_then_both_queues_are_recounted(admin_user):
    (lq_a, lq_b), _cq = two_queues()
    workload = submit_mixed(lq_a, "moved", 300, None)
    workload.local_queue = lq_b
    request = RequestFactory().post("/admin/")
    request.user = admin_user

    admin.site._registry[Workload].save_model(request, workload, None, True)

    assert stored_counts() == real_counts() == {lq_b.id: (0, 1)}


def test_given_drifted_workload_counts_then_the_command_reports_them_and_repair_rewrites_them():
    (lq_a, lq_b), cq = two_queues()
    workloads = [submit_mixed(lq_a, f"run-{i}", 100, None) for i in range(3)]
    transitions.admit_many(
        [transitions.Admit(workloads[0].pk, cq.id, {"cpu": "default"})],
        now=timezone.now(),
        started=True,
        flavor_ids=dict(ResourceFlavor.objects.values_list("name", "id")),
    )
    usage_counters.fold()
    WorkloadCount.objects.filter(local_queue=lq_a).update(pending=7)
    WorkloadCountChange.objects.create(local_queue=lq_b, admitted=1, pending=0)

    out = StringIO()
    with pytest.raises(CommandError, match="2 counters differ"):
        call_command("check_usage_counters", stdout=out)
    assert f"LocalQueue {lq_a.id}: rows say 1 admitted and 2 pending, counter says 1 and 7" in out.getvalue()
    assert usage_counters.check() == [
        usage_counters.CountDifference(lq_a.id, (1, 2), (1, 7)),
        usage_counters.CountDifference(lq_b.id, (0, 0), (1, 0)),
    ]

    call_command("check_usage_counters", "--repair", stdout=StringIO())

    assert usage_counters.check() == []
    assert stored_counts() == {lq_a.id: (1, 2)}
    assert not WorkloadCountChange.objects.exists()


def test_given_changes_then_a_fold_adds_them_onto_the_counts_and_deletes_them():
    (lq_a, lq_b), cq = two_queues()
    workloads = [submit_mixed(lq, f"w-{i}", 100, None) for i, lq in enumerate((lq_a, lq_a, lq_b))]
    usage_counters.fold()
    transitions.admit_many(
        [transitions.Admit(workloads[0].pk, cq.id, {"cpu": "default"})],
        now=timezone.now(),
        started=True,
        flavor_ids=dict(ResourceFlavor.objects.values_list("name", "id")),
    )
    lifecycle.cancel_workload(workloads[2].pk)
    assert WorkloadCountChange.objects.count() == 2  # one row per LocalQueue and change

    usage_counters.fold()

    assert not WorkloadCountChange.objects.exists()
    assert {row.local_queue_id: (row.admitted, row.pending) for row in WorkloadCount.objects.all()} == {
        lq_a.id: (1, 1),
        lq_b.id: (0, 0),
    }
    assert stored_counts() == real_counts() == {lq_a.id: (1, 1)}


def test_given_a_recount_of_one_queue_then_only_its_counts_are_rewritten():
    (lq_a, lq_b), _cq = two_queues()
    submit_mixed(lq_a, "a", 100, None)
    submit_mixed(lq_b, "b", 100, None)
    usage_counters.fold()
    WorkloadCount.objects.update(pending=5)

    usage_counters.recount([lq_a.id])

    assert stored_counts() == {lq_a.id: (0, 1), lq_b.id: (0, 5)}


def test_given_the_migration_then_the_workload_counts_are_filled_from_the_rows():
    """0022's backfill: what a count over the workloads says, for every LocalQueue."""
    from importlib import import_module

    (lq_a, lq_b), cq = two_queues()
    workloads = [submit_mixed(lq, f"w-{i}", 100, None) for i, lq in enumerate((lq_a, lq_a, lq_b, lq_b))]
    transitions.admit_many(
        [transitions.Admit(workloads[i].pk, cq.id, {"cpu": "default"}) for i in (0, 2)],
        now=timezone.now(),
        started=True,
        flavor_ids=dict(ResourceFlavor.objects.values_list("name", "id")),
    )
    lifecycle.cancel_workload(workloads[3].pk)
    expected = real_counts()
    WorkloadCount.objects.all().delete()
    WorkloadCountChange.objects.all().delete()

    with connection.cursor() as cursor:
        cursor.execute(import_module("queues.migrations.0022_workload_counts").BACKFILL)

    assert stored_counts() == expected == {lq_a.id: (1, 1), lq_b.id: (1, 0)}


# --- the sample: set-based (PostgreSQL) and row by row store the same --------------------------


def _stored() -> dict[str, list[tuple]]:
    """Every status row and series row as the database holds it (JSON as text: 2000.0 is not 2000)."""
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
            "SELECT kind, object_id, sampled_at, allocated::text, consumed::text, capacity::text, weighted_share, "
            "admitted_count, pending_count FROM queues_usagesample ORDER BY kind, object_id, sampled_at"
        )
        out["series"] = cursor.fetchall()
    return out


def _varied_cluster():
    """Queues in a cohort with running and pending work, odd weights, a queue of weight 0, a
    queue never sampled with usage set by hand, one with large integral usage."""
    org = Cohort.objects.create(name=f"org-{next(_names)}")
    cq = make_cluster_queue(f"cq-{next(_names)}", cpu="64", cohort=org)
    lqs = [
        make_local_queue(f"team-{next(_names)}", f"q{i}", cq, weight=w) for i, w in enumerate(("1", "3", "0", "0.7"))
    ]
    for index, lq in enumerate(lqs):
        for job in range(index + 1):
            submit_mixed(lq, f"job-{job}", 1000 + 333 * job, 7 if job % 2 else None)
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, policy=POLICY)
    LocalQueue.objects.filter(pk=lqs[3].pk).update(consumed_resources={"cpu": 1234, "memory": 0.1})
    LocalQueue.objects.filter(pk=lqs[0].pk).update(weight=Decimal("2.5"))
    return lqs


@pytest.mark.parametrize(
    "gaps",
    [
        (timedelta(0), HOUR, 2 * HOUR + timedelta(seconds=7)),
        (timedelta(minutes=5), timedelta(days=2), timedelta(days=2, minutes=5)),  # a reset after a silence
    ],
)
def test_given_the_same_state_then_the_set_based_sample_stores_what_the_row_by_row_one_does(gaps):
    _varied_cluster()
    t0 = timezone.now() - timedelta(days=3)
    results = {}
    for set_based in (True, False):
        with transaction.atomic():
            for gap in gaps:
                usage.sample_usage(now=t0 + gap, policy=POLICY, set_based=set_based)
            results[set_based] = _stored()
            transaction.set_rollback(True)

    assert results[True] == results[False]
    consumed = [row[4] for row in results[True]["series"]]  # integral floats (1234.0) and others
    assert any(re.search(r"\d\.0[,}]", text) for text in consumed)
    assert any(text != "{}" for text in consumed)
    assert len(results[True]["series"]) == len(gaps) * (
        LocalQueue.objects.count() + 4 + 1 + 1  # namespaces, the ClusterQueue, the cohort
    )


@pytest.mark.parametrize("missed", ["memory", "cpu"])
def test_given_a_resource_the_locking_reads_missed_then_the_sample_still_stores_what_the_row_by_row_one_does(
    missed, monkeypatch
):
    """A counter or status key committed between the locking reads and the statement (here:
    hidden from the reads) makes the statement write nothing and the sample go row by row."""
    _varied_cluster()
    t0 = timezone.now() - timedelta(days=3)
    lock_level = usage._lock_level

    def without(model, **kwargs):
        updates, keys = lock_level(model, **kwargs)
        return updates, keys - {missed}

    results = {}
    for set_based in (True, False):
        with transaction.atomic(), monkeypatch.context() as patch:
            patch.setattr(usage, "_lock_level", without)
            for gap in (timedelta(0), HOUR):
                usage.sample_usage(now=t0 + gap, policy=POLICY, set_based=set_based)
            results[set_based] = _stored()
            transaction.set_rollback(True)

    assert results[True] == results[False]
    assert any(missed in text for _, _, _, _, text, *_ in results[True]["series"])  # allocated


def test_given_counters_then_admitted_usage_equals_the_old_join_per_level():
    lqs = _varied_cluster()
    chains = {lq.cluster_queue_id: (lq.cluster_queue.cohort_id,) for lq in lqs}

    from_counters = usage.admitted_usage(chains)

    expected: dict[str, dict[int, dict[str, int]]] = {kind: {} for kind in UsageSample.Kind.values}
    for (lq_id, cq_id, resource), (amount, _) in joined().items():
        lq = LocalQueue.objects.get(pk=lq_id)
        for kind, key in (
            ("localQueue", lq_id),
            ("namespace", lq.namespace_id),
            ("clusterQueue", cq_id),
            ("cohort", chains[cq_id][0]),
        ):
            expected[kind].setdefault(key, {})
            expected[kind][key][resource] = expected[kind][key].get(resource, 0) + amount
    assert from_counters == expected
    assert from_counters["localQueue"]


def test_given_more_queues_and_work_then_a_sample_makes_the_same_number_of_statements():
    _varied_cluster()
    usage.sample_usage(policy=POLICY)  # every row sampled once: the same branches from now on
    with CaptureQueriesContext(connection) as small:
        usage.sample_usage(now=timezone.now() + HOUR, policy=POLICY)
    _varied_cluster()
    usage.sample_usage(now=timezone.now() + 2 * HOUR, policy=POLICY)
    with CaptureQueriesContext(connection) as large:
        usage.sample_usage(now=timezone.now() + 3 * HOUR, policy=POLICY)

    assert len(large.captured_queries) == len(small.captured_queries)
    statements = " ".join(query["sql"] for query in large.captured_queries)
    assert "queues_workloadresource" not in statements
    assert re.search(r"queues_workload\b", statements) is None  # counters, not a count of the workloads


def test_given_matching_counters_then_the_command_says_so():
    (lq_a, _lq_b), cq = two_queues()
    workload = submit_mixed(lq_a, "run", 100, None)
    transitions.admit_many(
        [transitions.Admit(workload.pk, cq.id, {"cpu": "default"})],
        now=timezone.now(),
        started=True,
        flavor_ids=dict(ResourceFlavor.objects.values_list("name", "id")),
    )
    out = StringIO()

    call_command("check_usage_counters", stdout=out)

    assert out.getvalue() == "usage counters match the admitted workloads\n"


# --- concurrency: changes from many transactions at once, folded meanwhile ------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_given_submissions_admissions_ends_cancels_and_folds_at_once_then_the_counts_stay_exact():
    from queues import services

    (lq_a, lq_b), cq = two_queues()
    flavors = dict(ResourceFlavor.objects.values_list("name", "id"))
    queues = (lq_a, lq_b)
    rounds = 25
    barrier = threading.Barrier(5)
    errors: list[BaseException] = []

    def pending_ids() -> list[int]:
        return list(Workload.objects.filter(local_queue__in=queues, state="Pending").values_list("id", flat=True))

    def submitter(tag: str) -> None:
        for index in range(rounds):
            services.submit_workload(
                local_queue=queues[index % 2],
                name=f"{tag}-{index}",
                pod_sets=[{"count": 1, "requests": {"cpu": "100m"}}],
                request_pass=False,
            )

    def admitter() -> None:
        for _ in range(rounds):
            ids = pending_ids()[::2]
            transitions.admit_many(
                [transitions.Admit(pk, cq.id, {"cpu": "default"}) for pk in ids],
                now=timezone.now(),
                started=True,
                flavor_ids=flavors,
            )

    def ender() -> None:
        for index in range(rounds):
            ids = list(Workload.objects.filter(local_queue__in=queues, state="Admitted").values_list("id", flat=True))
            if index % 2:
                transitions.evict_many([transitions.Evict(pk, "preempted") for pk in ids[::3]], now=timezone.now())
            else:
                transitions.finish_many([transitions.Finish(pk, timezone.now()) for pk in ids[::3]])
            for pk in pending_ids()[:1]:
                with contextlib.suppress(InvalidTransition):
                    lifecycle.cancel_workload(pk)

    def folder() -> None:
        for _ in range(rounds):
            usage_counters.fold()

    def run(work: Callable[[], None]) -> None:
        try:
            barrier.wait(timeout=30)
            work()
        except BaseException as error:  # noqa: BLE001 - asserted below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=run, args=(work,))
        for work in (lambda: submitter("x"), lambda: submitter("y"), admitter, ender, folder)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    workloads = Workload.objects.filter(local_queue__in=queues)
    assert workloads.filter(admitted_at__isnull=False).exists() or workloads.filter(eviction_count__gt=0).exists()
    assert workloads.filter(state="Finished").exists() and workloads.filter(state="Cancelled").exists()
    assert stored_counts() == real_counts()
    assert usage_counters.check() == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="fillfactor is PostgreSQL's")
def test_given_the_migrations_then_the_rows_every_sample_rewrites_have_room_on_their_pages():
    """0023: a sample's rewrite of a LocalQueue or namespace row stays on its page (HOT)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reloptions FROM pg_class WHERE relname IN "
            "('queues_localqueue', 'queues_namespace', 'queues_workloadcount') ORDER BY relname"
        )
        options = dict(cursor.fetchall())

    assert options == {
        "queues_localqueue": ["fillfactor=50"],
        "queues_namespace": ["fillfactor=50"],
        "queues_workloadcount": ["fillfactor=50"],
    }
