"""A unit whose pending rows did not change since this process's last pass is loaded from one
aggregate of their versions (``load._version_sums``), their stored reasons read as usual; any
change of a row shows in the next snapshot. PostgreSQL only: the versions are ``xmin``."""

from __future__ import annotations

import random

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from queues.admission import load
from queues.admission import passes as admission
from queues.models import AdmissionMode, Namespace, Workload, WorkloadReason, WorkloadState
from tests.queues.test_snapshot import busy_unit

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row versions (xmin) are PostgreSQL's"),
    pytest.mark.django_db(transaction=True),
]


def pending_rows_read(queries: list[dict[str, str]]) -> int:
    """Statements that read pending workloads row by row (versions, or the rows themselves)."""
    return sum(q["sql"].startswith('SELECT "queues_workload"."id" AS "id"') for q in queries)


def settled(unit: load.AdmissionUnit) -> admission.PassResult:
    """Passes until one admits nothing (it rewrites the reasons the admissions before changed)."""
    for _ in range(5):
        result = admission.run_admission_pass(unit.key)
        if not result.admitted and not result.evicted:
            return result
    raise AssertionError("the unit kept admitting")


def cold(unit: load.AdmissionUnit) -> load.LoadedSnapshot:
    load.clear_caches()
    return load.build_snapshot(unit, settings.FAIR_SHARING)


def test_given_a_pass_that_wrote_reasons_then_the_next_snapshot_reuses_every_row_as_a_cold_read_would_see_it():
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(11))
    load.clear_caches()
    last = settled(unit)  # its reasons are stored apart: the pending rows keep their versions
    assert last.pending > 0

    with CaptureQueriesContext(connection) as queries:
        warm = load.build_snapshot(unit, settings.FAIR_SHARING)

    assert pending_rows_read(queries.captured_queries) == 0
    reference = cold(unit)
    assert warm.snapshot == reference.snapshot
    assert warm.current_reasons == reference.current_reasons
    assert sorted(warm.workload_ids.items()) == sorted(reference.workload_ids.items())


def test_given_one_pending_row_changed_then_the_next_snapshot_reads_it_again():
    unit = busy_unit(AdmissionMode.DOMINANT_RESOURCE_SHARE, random.Random(12))
    load.clear_caches()
    settled(unit)
    load.build_snapshot(unit, settings.FAIR_SHARING)
    waiting = Workload.objects.filter(state=WorkloadState.PENDING).order_by("id").last()
    Workload.objects.filter(pk=waiting.pk).update(priority=777)

    with CaptureQueriesContext(connection) as queries:
        warm = load.build_snapshot(unit, settings.FAIR_SHARING)

    assert pending_rows_read(queries.captured_queries) >= 1
    changed = {w.key: w for w in warm.snapshot.workloads}[f"{waiting.namespace.name}/{waiting.name}"]
    assert changed.priority == 777
    assert warm.snapshot == cold(unit).snapshot


def reason_rows_read(queries: list[dict[str, str]]) -> int:
    """Statements that read stored reasons row by row (not the aggregate of their versions)."""
    return sum(q["sql"].startswith('SELECT "queues_workloadreason"."workload_id"') for q in queries)


def test_given_a_pass_that_wrote_reasons_then_the_next_one_knows_them_from_one_aggregate_and_stores_what_a_cold_pass_would():
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(13))
    load.clear_caches()
    admission.run_admission_pass(unit.key)  # admits and writes reasons: both carried into the cache

    with CaptureQueriesContext(connection) as queries:
        warm = load.build_snapshot(unit, settings.FAIR_SHARING)

    assert reason_rows_read(queries.captured_queries) == 0
    assert pending_rows_read(queries.captured_queries) == 0  # the admissions left the pending rows
    reference = cold(unit)
    assert warm.current_reasons == reference.current_reasons
    assert warm.snapshot == reference.snapshot  # the admitted totals too


def test_given_a_reason_row_written_by_someone_else_then_the_next_pass_reads_the_reasons_again():
    unit = busy_unit(AdmissionMode.DOMINANT_RESOURCE_SHARE, random.Random(14))
    load.clear_caches()
    settled(unit)
    waiting = Workload.objects.filter(state=WorkloadState.PENDING).order_by("id").first()
    WorkloadReason.objects.filter(workload_id=waiting.pk).update(message="written elsewhere")

    with CaptureQueriesContext(connection) as queries:
        warm = load.build_snapshot(unit, settings.FAIR_SHARING)

    assert reason_rows_read(queries.captured_queries) == 1
    key = f"{waiting.namespace.name}/{waiting.name}"
    assert warm.current_reasons[key][1] == "written elsewhere"
    admission.run_admission_pass(unit.key)  # writes its own sentence back
    assert WorkloadReason.objects.get(workload_id=waiting.pk).message != "written elsewhere"


def test_given_a_namespace_row_changed_then_the_next_snapshot_reads_it_again_and_reuses_the_others():
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(15))
    load.clear_caches()
    settled(unit)
    load.build_snapshot(unit, settings.FAIR_SHARING)
    namespace = Namespace.objects.order_by("id").first()
    Namespace.objects.filter(pk=namespace.pk).update(weight=7)

    with CaptureQueriesContext(connection) as queries:
        warm = load.build_snapshot(unit, settings.FAIR_SHARING)

    changed = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith('SELECT "queues_namespace"."id" AS "id", "queues_namespace"."name"')
    ]
    assert len(changed) == 1 and "ANY" in changed[0]  # only the changed row is read in full
    assert {n.name: n.weight for n in warm.snapshot.namespaces}[namespace.name] == 7.0
    assert warm.snapshot == cold(unit).snapshot
