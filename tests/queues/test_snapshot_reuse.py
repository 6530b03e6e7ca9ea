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
from queues.models import AdmissionMode, Workload, WorkloadState
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
