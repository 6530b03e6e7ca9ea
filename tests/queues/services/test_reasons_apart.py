"""Pending reasons stored apart from the workload rows (``WorkloadReason``), written only when
their meaning changes, and read by the pages and the API as the engine wrote them.

"Today's text" is the engine's plan with every waiting workload explained
(``plan(..., explain_first=None)``, what the pass stored before reasons moved), computed on the
same loaded snapshot, gates and time as the pass; every pending workload's reason is then read
back through the API and through the workload list's selector and compared.
"""

from __future__ import annotations

import random

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.http import QueryDict
from django.utils import timezone
from rest_framework.test import APIClient

from core.access import ADMIN
from fairshare.admission import reasons as text
from fairshare.admission.planner import plan
from fairshare.types import INSUFFICIENT_QUOTA, NAMESPACE_QUOTA_EXCEEDED, WAITING_FOR_FAIR_SHARE
from queues.admission import apply, gates, load, passes
from queues.models import PendingOrder, Workload, WorkloadReason, WorkloadState
from queues.selectors.overview import _reasons as overview_reasons
from queues.selectors.reasons import sentence
from queues.selectors.structure import load_structure
from queues.selectors.workloads import workload_page
from queues.services import transitions
from tests.factories import UserFactory
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

QUOTA = {INSUFFICIENT_QUOTA, WAITING_FOR_FAIR_SHARE}


def todays_reasons(unit_key: str, now) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, int]]]:
    """What the pass would store with every workload explained: {key: (code, message)}, and
    {key: (ClusterQueue, position)} for those in line (gated ones have none)."""
    unit = load.unit_by_key(unit_key)
    with transaction.atomic():
        loaded = load.build_snapshot(unit, settings.FAIR_SHARING)
        gated = gates.apply_gates(loaded, now)
        full = plan(loaded.snapshot, now.timestamp())
        transaction.set_rollback(True)
    reasons = {r.workload: (r.code, r.message) for r in full.pending} | dict(gated)
    return reasons, {r.workload: (r.cluster_queue, r.position) for r in full.pending}


def expected(reasons, places, explained: int) -> dict[str, tuple[str, str]]:
    """Today's reasons, the later quota-waiting ones of a queue by reference to its head."""
    heads: dict[str, str] = {}
    for key, (queue, _position) in sorted(places.items(), key=lambda item: item[1]):
        if reasons[key][0] in QUOTA:
            heads.setdefault(queue, key)
    result = dict(reasons)
    for key, (queue, position) in places.items():
        code, _ = reasons[key]
        head = heads.get(queue)
        if position > explained and code in QUOTA and key != head:
            result[key] = (INSUFFICIENT_QUOTA, text.waiting_behind(queue, explained, head, reasons[head][1]))
    return result


def rendered_by_api() -> dict[str, tuple[str, str]]:
    client = APIClient()
    client.force_authenticate(UserFactory(username="reader", is_staff=True, is_superuser=True))
    found: dict[str, tuple[str, str]] = {}
    page = 1
    while True:
        body = client.get("/api/v1/workloads/", {"state": "Pending", "page_size": 500, "page": page}).json()
        for row in body["results"]:
            reason = row["pending_reason"] or {"code": "", "message": ""}
            found[f"{row['namespace']}/{row['name']}"] = (reason["code"], reason["message"])
        if not body["next"]:
            return found
        page += 1


def rendered_by_pages() -> dict[str, tuple[str, str]]:
    """The workload list page's rows (code and sentence), as its template shows them."""
    rows = workload_page(ADMIN, QueryDict("state=Pending"), load_structure(), page_size=100_000).rows
    return {f"{row.namespace}/{row.name}": (row.reason_code, row.reason) for row in rows}


def check_pass(unit_key: str, explained: int) -> tuple[int, int]:
    """Run one pass and compare every pending workload's reason, as the API and the pages show
    it, with today's; the number of workloads and of those explained by reference."""
    now = timezone.now()
    reasons, places = todays_reasons(unit_key, now)
    passes.run_admission_pass(unit_key, now=now)
    want = expected(reasons, places, explained)
    waiting = set(Workload.objects.filter(state=WorkloadState.PENDING).values_list("namespace__name", "name"))
    in_unit = {key for key in (f"{ns}/{name}" for ns, name in waiting) if key in want}
    api, pages = rendered_by_api(), rendered_by_pages()
    for key in in_unit:
        assert api[key] == want[key], key
        assert pages[key] == (want[key][0], sentence(*want[key])), key
    return len(in_unit), sum(1 for key in in_unit if want[key] != reasons[key])


def busy_queue(rng: random.Random, count: int = 160, *, ns_quota: str | None = "3"):
    """One ClusterQueue of 8 cores, three tenants (one with a namespace quota), far more work than fits."""
    cq = make_cluster_queue("cq-busy", cpu="8")
    queues = [
        make_local_queue("team-a", "main", cq),
        make_local_queue("team-b", "main", cq, weight="2"),
        make_local_queue("team-c", "main", cq, ns_quota=ns_quota),
    ]
    for index in range(count):
        submit(rng.choice(queues), f"job-{index}", cpu=str(rng.choice([1, 1, 2, 3])), priority=rng.choice([0, 0, 5]))
    return load.unit_for_cluster_queue(cq.id).key


def free_some(rng: random.Random, share: float = 0.5) -> None:
    ending = list(Workload.objects.filter(state=WorkloadState.ADMITTED).values_list("id", flat=True))
    picked = [pk for pk in ending if rng.random() < share] or ending[:1]
    transitions.finish_many([transitions.Finish(pk, timezone.now()) for pk in picked])


@pytest.mark.django_db
def test_given_the_demo_when_passes_run_then_every_pending_reason_reads_as_today(demo):
    load.clear_caches()
    checked = 0
    for unit in load.admission_units():
        for _ in range(2):  # the first evaluation, then a pass against what it left
            count, referred = check_pass(unit.key, settings.ADMISSION_EXPLAINED_PER_QUEUE)
            assert referred == 0  # no demo queue holds more than the first 50: all explained in full
            checked += count
    assert checked > 10
    assert WorkloadReason.objects.filter(workload__state=WorkloadState.PENDING).exists()


@pytest.mark.django_db
def test_given_a_long_queue_explained_in_full_then_every_pending_reason_reads_as_today(settings):
    settings.ADMISSION_EXPLAINED_PER_QUEUE = 100_000
    rng = random.Random(11)
    unit = busy_queue(rng)
    for _ in range(3):
        count, referred = check_pass(unit, 100_000)
        assert count > 100 and referred == 0
        free_some(rng)


@pytest.mark.django_db
def test_given_a_long_queue_then_the_first_are_as_today_and_the_rest_refer_to_the_head(settings):
    settings.ADMISSION_EXPLAINED_PER_QUEUE = 10
    rng = random.Random(12)
    unit = busy_queue(rng)
    for _ in range(3):
        count, referred = check_pass(unit, 10)
        assert count > 100 and referred > count // 2
        free_some(rng)
    stored = WorkloadReason.objects.filter(workload__state=WorkloadState.PENDING, behind__isnull=False)
    assert stored.count() > 50 and set(stored.values_list("message", flat=True)) == {""}  # narrow: a reference
    order = PendingOrder.objects.get(cluster_queue__name="cq-busy")
    assert order.by_reference.startswith("waiting behind the first 10 workloads of ClusterQueue cq-busy")


def count_writes(monkeypatch) -> list[int]:
    written: list[int] = []
    real = apply.write_reasons

    def counting(loaded, reasons):
        written.append(len(reasons))
        return real(loaded, reasons)

    monkeypatch.setattr(apply, "write_reasons", counting)
    return written


@pytest.mark.django_db
def test_given_admissions_then_only_reasons_whose_meaning_changed_are_written(settings, monkeypatch):
    settings.ADMISSION_EXPLAINED_PER_QUEUE = 10
    rng = random.Random(13)
    # no namespace quota: a tenant's workloads going from NamespaceQuotaExceeded to
    # InsufficientQuota when its namespace gets room is a change of meaning, written
    unit = busy_queue(rng, count=300, ns_quota=None)
    passes.run_admission_pass(unit)  # the first evaluation writes every reason
    passes.run_admission_pass(unit)
    free_some(rng)
    written = count_writes(monkeypatch)

    result = passes.run_admission_pass(unit)

    assert result.admitted and result.pending > 250
    # at most: the first ten (their figures moved), and as many that fair-share order moved into
    # the first ten (explained now) or out of them (by reference now); not the other 270-odd
    assert 0 < sum(written) <= 2 * 10 + len(result.admitted)
    written.clear()
    assert not passes.run_admission_pass(unit).admitted
    assert sum(written) <= 2 * 10  # the next pass: the first ten now quote the final state
    written.clear()
    passes.run_admission_pass(unit)
    assert sum(written) == 0


@pytest.mark.django_db
def test_given_an_eviction_then_its_reason_is_the_pending_reason_and_an_admission_hides_it():
    cq = make_cluster_queue("cq-evict", cpu="2")
    lq = make_local_queue("team-a", "main", cq)
    running = submit(lq, "running", cpu="2")
    waiting = submit(lq, "waiting", cpu="2")
    unit = load.unit_for_cluster_queue(cq.id).key
    passes.run_admission_pass(unit)
    running.refresh_from_db()
    assert running.state == WorkloadState.ADMITTED and running.pending_reason_code == ""
    waiting.refresh_from_db()
    assert waiting.pending_reason_code == INSUFFICIENT_QUOTA

    assert transitions.evict(workload_id=running.pk, now=timezone.now(), message="drained: x", code="QueueStopped")

    running.refresh_from_db()
    assert (running.pending_reason_code, running.pending_reason_message) == ("QueueStopped", "drained: x")
    assert list(
        Workload.objects.filter(state=WorkloadState.PENDING).order_by("name").values_list("name", "reason__code")
    ) == [("running", "QueueStopped"), ("waiting", INSUFFICIENT_QUOTA)]

    passes.run_admission_pass(unit)  # admits one of the two again

    admitted = Workload.objects.with_reasons().get(state=WorkloadState.ADMITTED)
    assert WorkloadReason.objects.filter(workload=admitted).exists()  # left behind, no longer read
    assert (admitted.pending_reason_code, admitted.pending_reason_message) == ("", "")
    client = APIClient()
    client.force_authenticate(UserFactory(username="reader", is_staff=True, is_superuser=True))
    assert client.get(f"/api/v1/workloads/{admitted.pk}/").json()["pending_reason"] is None


@pytest.mark.django_db
def test_given_reasons_by_reference_then_the_reason_filter_and_the_overview_count_them(settings):
    settings.ADMISSION_EXPLAINED_PER_QUEUE = 5
    unit = busy_queue(random.Random(14), count=60)
    passes.run_admission_pass(unit)
    passes.run_admission_pass(unit)
    by_code = {
        code: Workload.objects.filter(state=WorkloadState.PENDING, reason__code=code).count()
        for code in (INSUFFICIENT_QUOTA, NAMESPACE_QUOTA_EXCEEDED)
    }
    assert by_code[INSUFFICIENT_QUOTA] > 20

    client = APIClient()
    client.force_authenticate(UserFactory(username="reader", is_staff=True, is_superuser=True))
    body = client.get("/api/v1/workloads/", {"pending_reason": INSUFFICIENT_QUOTA, "page_size": 500}).json()

    assert body["count"] == by_code[INSUFFICIENT_QUOTA]
    assert {row["pending_reason"]["code"] for row in body["results"]} == {INSUFFICIENT_QUOTA}
    counted = {reason.code: reason.count for reason in overview_reasons(ADMIN)}  # the overview's table
    assert counted[INSUFFICIENT_QUOTA] == by_code[INSUFFICIENT_QUOTA]
    assert sum(counted.values()) == Workload.objects.filter(state=WorkloadState.PENDING).count()


# --- the migration ----------------------------------------------------------------------------------

BEFORE = [("queues", "0014_usage_counters")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_given_reasons_on_the_workload_rows_when_migrated_then_they_move_apart_and_back():
    cq = make_cluster_queue("cq-m", cpu="1")
    lq = make_local_queue("team-a", "main", cq)
    waiting = [submit(lq, f"w-{i}") for i in range(3)]
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(BEFORE).loader.project_state(BEFORE).apps.get_model("queues", "Workload")
        old.objects.filter(pk=waiting[0].pk).update(
            pending_reason_code=INSUFFICIENT_QUOTA, pending_reason_message="insufficient quota for cpu"
        )
        old.objects.filter(pk=waiting[1].pk).update(pending_reason_code="QueueStopped")
        old.objects.filter(pk=waiting[2].pk).update(state=WorkloadState.CANCELLED, pending_reason_code="Stale")
    finally:
        _migrate(latest)

    moved = dict(WorkloadReason.objects.values_list("workload_id", "code"))
    assert moved == {waiting[0].pk: INSUFFICIENT_QUOTA, waiting[1].pk: "QueueStopped"}  # pending ones only
    first = Workload.objects.get(pk=waiting[0].pk)
    assert (first.pending_reason_code, first.pending_reason_message) == (
        INSUFFICIENT_QUOTA,
        "insufficient quota for cpu",
    )

    PendingOrder.objects.create(
        cluster_queue=cq, workload_ids=[w.pk for w in waiting], planned_at=timezone.now(), by_reference="behind x"
    )
    WorkloadReason.objects.filter(workload_id=waiting[1].pk).update(code=INSUFFICIENT_QUOTA, behind_id=cq.pk)
    try:
        old = _migrate(BEFORE).loader.project_state(BEFORE).apps.get_model("queues", "Workload")
        back = {
            pk: (code, message)
            for pk, code, message in old.objects.values_list("id", "pending_reason_code", "pending_reason_message")
        }
    finally:
        _migrate(latest)
    assert back[waiting[0].pk] == (INSUFFICIENT_QUOTA, "insufficient quota for cpu")
    assert back[waiting[1].pk] == (INSUFFICIENT_QUOTA, "behind x")  # rendered from its queue's sentence


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the counts docs/architecture.md gives are PostgreSQL's")
def test_given_a_unit_of_one_cluster_queue_then_a_pass_costs_the_statements_docs_architecture_states():
    from django.test.utils import CaptureQueriesContext

    cq = make_cluster_queue("cq-count", cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    for index in range(12):
        submit(lq, f"job-{index}")
    unit = load.unit_for_cluster_queue(cq.id).key
    load.clear_caches()

    with CaptureQueriesContext(connection) as cold:
        assert passes.run_admission_pass(unit).admitted  # admits, writes reasons and the order
    passes.run_admission_pass(unit)  # explains the wait against what the first pass left
    with CaptureQueriesContext(connection) as warm:
        assert not passes.run_admission_pass(unit).admitted  # nothing changed

    assert (len(cold.captured_queries), len(warm.captured_queries)) == (36, 21)
