"""Reasons the control loop writes for everyone name nobody else to a tenant (API and pages)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from fairshare.admission import reasons
from queues.models import Workload, WorkloadReason
from queues.services import transitions

pytestmark = pytest.mark.django_db


def preempt_by_other_tenant(world) -> Workload:
    """team-a's admitted workload preempted by team-b's, written as the admission pass writes it."""
    message = reasons.preempted(f"team-b/{world.pending_b.name}", "(reclaimWithinCohort)")
    assert transitions.evict(
        workload_id=world.admitted_a.pk, now=timezone.now(), message=f"Preempted: {message}", code="Preempted"
    )
    WorkloadReason.objects.update_or_create(
        workload_id=world.pending_a.pk,
        defaults={
            "code": "WaitingForFairShare",
            "message": reasons.waiting_for_fair_share("LocalQueue", "team-b/main", "2", "team-a/main", "1", "x"),
        },
    )
    return Workload.objects.get(pk=world.admitted_a.pk)


def test_given_a_workload_preempted_by_another_tenant_when_its_tenant_reads_it_then_no_other_name_appears(
    world, clients
):
    evicted = preempt_by_other_tenant(world)

    body = clients["viewer_a"].get(f"/api/v1/workloads/{evicted.pk}/").json()
    admin = clients["admin"].get(f"/api/v1/workloads/{evicted.pk}/").json()

    assert body["last_eviction_reason"] == "Preempted: preempted by another tenant's workload (reclaimWithinCohort)"
    assert body["pending_reason"]["message"] == body["last_eviction_reason"]  # the reason it waits again
    assert (
        admin["last_eviction_reason"] == f"Preempted: preempted by team-b/{world.pending_b.name} (reclaimWithinCohort)"
    )


def test_given_a_list_of_workloads_when_a_tenant_reads_it_then_reasons_name_no_other_tenant(world, clients):
    preempt_by_other_tenant(world)

    response = clients["editor_a"].get("/api/v1/workloads/", {"namespace": "team-a"})

    assert response.status_code == 200
    assert "team-b" not in response.content.decode()
    messages = {row["name"]: (row["pending_reason"] or {}).get("message") for row in response.json()["results"]}
    assert messages["a-pending"].startswith("another tenant's queue was ahead in fair-share order")
