"""Estimated start: the live state replayed forward on the simulator, with its assumptions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from core.models import TenantMembership
from playground.services import estimate
from queues import services
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import Namespace, Workload
from tests.factories import UserFactory
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


def one_slot_cluster(running_for: int | None):
    """1 CPU; ``first`` (1 CPU, declared ``running_for`` seconds) admitted 100 s ago, ``second`` waits."""
    cq = make_cluster_queue("cq", cpu="1")
    lq = make_local_queue("team-a", "main", cq)
    started = timezone.now() - timedelta(seconds=100)
    first = services.submit_workload(
        local_queue=lq,
        name="first",
        pod_sets=[{"count": 1, "requests": {"cpu": "1"}}],
        duration_seconds=running_for,
        queued_at=started - timedelta(seconds=5),
    )
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=started)
    second = services.submit_workload(
        local_queue=lq,
        name="second",
        pod_sets=[{"count": 1, "requests": {"cpu": "1"}}],
        duration_seconds=300,
        queued_at=started,
    )
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=timezone.now())
    return Workload.objects.get(pk=first.pk), Workload.objects.get(pk=second.pk)


def test_given_a_running_job_with_600s_left_of_its_duration_then_the_waiting_one_starts_when_it_ends():
    first, second = one_slot_cluster(running_for=600)
    assert (first.state, second.state) == ("Admitted", "Pending")

    result = estimate.estimate_for(second)

    assert result.state == "at"
    expected = first.admitted_at + timedelta(seconds=600)
    assert abs((result.start - expected).total_seconds()) <= 2
    assert any("declared duration" in line for line in result.assumptions)


def test_given_the_running_job_declares_no_duration_then_the_estimate_says_not_within_the_horizon():
    _first, second = one_slot_cluster(running_for=None)

    result = estimate.estimate_for(second)

    assert result.state == "beyond"
    assert any("1 declare neither" in line for line in result.assumptions)


def test_given_more_work_than_the_bound_then_no_estimate_is_computed(monkeypatch):
    _first, second = one_slot_cluster(running_for=600)
    monkeypatch.setattr(estimate, "MAX_WORKLOADS", 1)

    assert estimate.estimate_for(second).state == "too_big"


def test_given_the_workload_page_when_its_estimate_is_fetched_then_it_renders_with_assumptions(admin_client):
    _first, second = one_slot_cluster(running_for=600)

    body = admin_client.get(f"/namespaces/team-a/workloads/{second.name}/estimate/").content.decode()

    assert 'data-state="at"' in body and 'id="estimated-start"' in body and "Assumptions of the estimate" in body


def test_given_another_tenant_then_the_estimate_is_a_404_and_its_own_member_gets_it(client, tenant):
    one_slot_cluster(running_for=600)
    other = UserFactory(username="pg-other")
    TenantMembership.objects.create(
        user=other, namespace=Namespace.objects.create(name="team-b"), role=TenantMembership.Role.EDITOR
    )
    url = "/namespaces/team-a/workloads/second/estimate/"

    client.force_login(other)
    assert client.get(url).status_code == 404
    client.force_login(tenant)
    assert client.get(url).status_code == 200
