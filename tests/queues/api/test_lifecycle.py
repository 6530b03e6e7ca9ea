"""Workload lifecycle over the API: idempotent submission, status, and every transition."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from queues.models import AdmissionRecord, IdempotencyKey, Workload, WorkloadReason, WorkloadState
from queues.services import cluster, lifecycle, transitions
from tests.queues.api.conftest import admit, client_for
from tests.queues.api.helpers import database_snapshot, place_in_line

pytestmark = pytest.mark.django_db

WL = "/api/v1/workloads/"


def body(name: str = "train-1", **overrides) -> dict:
    data = {
        "name": name,
        "local_queue": "team-a/main",
        "pod_sets": [{"count": 2, "requests": {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": 1}}],
    }
    data.update(overrides)
    return data


# -- submission ---------------------------------------------------------------------------------


def test_given_submission_then_201_with_quantities_as_numbers_and_notation(world, clients):
    response = clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="key-1")

    assert response.status_code == 201
    data = response.json()
    assert response["Location"] == f"{WL}{data['id']}/"
    assert data["state"] == "Pending"
    assert data["pod_sets"][0]["requests"] == {"cpu": 0.5, "memory": 2147483648, "nvidia.com/gpu": 1}
    assert data["pod_sets"][0]["requests_formatted"] == {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": "1"}
    assert data["total_requests"] == {"cpu": 1, "memory": 4294967296, "nvidia.com/gpu": 2}
    assert data["total_requests_formatted"] == {"cpu": "1", "memory": "4Gi", "nvidia.com/gpu": "2"}
    stored = Workload.objects.get(pk=data["id"])
    assert stored.requests == {"cpu": 1000, "memory": 4294967296000, "nvidia.com/gpu": 2000}
    assert sorted(stored.resources.values_list("resource", "amount")) == sorted(stored.requests.items())


def test_given_same_key_and_same_body_when_retried_then_the_first_workload_comes_back(world, clients):
    first = clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="key-1")

    again = clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="key-1")

    assert again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert Workload.objects.filter(name="train-1").count() == 1


def test_given_same_key_when_body_keys_come_in_another_order_then_still_a_replay(world, clients):
    first = clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="key-1")
    reordered = dict(reversed(list(body().items())))

    again = clients["editor_a"].post(WL, reordered, format="json", HTTP_IDEMPOTENCY_KEY="key-1")

    assert again.json()["id"] == first.json()["id"]


def test_given_same_key_and_different_body_then_422_and_nothing_new(world, clients):
    clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="key-1")
    before = database_snapshot()

    response = clients["editor_a"].post(WL, body(name="train-2"), format="json", HTTP_IDEMPOTENCY_KEY="key-1")

    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"
    assert "different request body" in response.json()["detail"]
    assert database_snapshot() == before


def test_given_refused_submission_when_retried_with_the_same_key_and_a_fixed_body_then_created(world, clients):
    refused = clients["editor_a"].post(
        WL, body(pod_sets=[{"requests": {"cpu": "-1"}}]), format="json", HTTP_IDEMPOTENCY_KEY="key-1"
    )
    assert refused.status_code == 400
    assert not IdempotencyKey.objects.exists()

    fixed = clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="key-1")

    assert fixed.status_code == 201
    assert "Idempotent-Replayed" not in fixed


def test_given_two_users_with_the_same_key_then_their_submissions_are_independent(world, clients):
    mine = clients["editor_a"].post(WL, body(), format="json", HTTP_IDEMPOTENCY_KEY="shared-key")

    theirs = clients["admin"].post(WL, body(name="train-2"), format="json", HTTP_IDEMPOTENCY_KEY="shared-key")

    assert theirs.status_code == 201
    assert theirs.json()["id"] != mine.json()["id"]


def test_given_no_key_when_the_same_body_is_sent_twice_then_the_duplicate_name_is_refused(world, clients):
    clients["editor_a"].post(WL, body(), format="json")

    again = clients["editor_a"].post(WL, body(), format="json")

    assert again.status_code == 400
    assert Workload.objects.filter(name="train-1").count() == 1


# -- status ---------------------------------------------------------------------------------------


def test_given_pending_workload_with_a_reason_when_polled_then_position_and_reason_are_shown(world, clients):
    place_in_line(world.pending_a, 3)
    WorkloadReason.objects.create(
        workload_id=world.pending_a.pk,
        code="InsufficientQuota",
        message="cpu: needs 2, 0 free in ClusterQueue shared",
        shortages=[{"resource": "cpu", "flavor": "default", "requested": 2000, "available": 500, "ceiling": 4000}],
    )

    data = clients["viewer_a"].get(f"{WL}{world.pending_a.pk}/").json()

    assert data["queue_position"] == 3
    assert data["pending_reason"] == {
        "code": "InsufficientQuota",
        "message": "cpu: needs 2, 0 free in ClusterQueue shared",
        "shortages": [
            {
                "resource": "cpu",
                "flavor": "default",
                "requested": 2,
                "requested_formatted": "2",
                "available": 0.5,
                "available_formatted": "500m",
                "missing": 1.5,
                "missing_formatted": "1500m",
                "ceiling": 4,
                "ceiling_formatted": "4",
                "never_fits": False,
            }
        ],
        "by_reference": False,
    }


def test_given_workload_without_a_reason_then_pending_reason_is_null(world, clients):
    assert clients["viewer_a"].get(f"{WL}{world.pending_a.pk}/").json()["pending_reason"] is None


# -- transitions --------------------------------------------------------------------------------

SETUPS = {
    "Pending": lambda w: w,
    "Admitted": lambda w: admit(w),
    "Running": lambda w: lifecycle.start_workload(admit(w).pk),
    "Finished": lambda w: lifecycle.finish_workload(admit(w).pk),
    "Failed": lambda w: lifecycle.fail_workload(admit(w).pk),
    "Cancelled": lambda w: lifecycle.cancel_workload(w.pk),
}
# (starting point, report) -> the state after it, or None for a 409 naming the current state.
TRANSITIONS = {
    ("Pending", "start"): None,
    ("Pending", "finish"): None,
    ("Pending", "fail"): None,
    ("Pending", "cancel"): "Cancelled",
    ("Admitted", "start"): "Admitted",
    ("Admitted", "finish"): "Finished",
    ("Admitted", "fail"): "Failed",
    ("Admitted", "cancel"): "Cancelled",
    ("Running", "start"): None,
    ("Running", "finish"): "Finished",
    ("Running", "fail"): "Failed",
    ("Running", "cancel"): "Cancelled",
    **{
        (end, report): None
        for end in ("Finished", "Failed", "Cancelled")
        for report in ("start", "finish", "fail", "cancel")
    },
}


@pytest.mark.parametrize(("setup", "report"), list(TRANSITIONS), ids=lambda value: str(value))
def test_given_state_when_reported_then_transition_or_409_with_current_state(world, clients, setup, report):
    workload = SETUPS[setup](world.pending_a)
    current = Workload.objects.get(pk=workload.pk).state
    expected = TRANSITIONS[(setup, report)]

    response = clients["admin"].post(f"{WL}{workload.pk}/{report}/")

    if expected is None:
        assert response.status_code == 409
        assert response.json()["state"] == current
        assert response.json()["code"] == "invalid_transition"
        assert Workload.objects.get(pk=workload.pk).state == current
    else:
        assert response.status_code == 200
        assert response.json()["state"] == expected
        assert Workload.objects.get(pk=workload.pk).state == expected


def test_given_admitted_workload_when_started_then_started_at_is_recorded(world, clients):
    response = clients["executor"].post(f"{WL}{world.admitted_a.pk}/start/")

    assert response.status_code == 200
    assert response.json()["started_at"] is not None


def test_given_admitted_workload_when_finished_then_wall_time_comes_from_the_timestamps(world):
    admitted_at = timezone.now().replace(microsecond=0) - timedelta(hours=2)
    workload = admit(world.pending_a, at=admitted_at)
    end = admitted_at + timedelta(seconds=3723)

    finished = lifecycle.finish_workload(workload.pk, now=end)

    assert finished.wall_time_seconds == 3723
    assert finished.finished_at == end
    record = AdmissionRecord.objects.get(workload=workload)
    assert (record.ended_at, record.end_reason, record.seconds()) == (end, "Finished", 3723)


def test_given_an_eviction_before_when_failed_then_past_execution_is_kept_and_current_added(world):
    start = timezone.now().replace(microsecond=0) - timedelta(hours=1)
    transitions.evict(
        workload_id=admit(world.pending_a, at=start).pk, now=start + timedelta(seconds=50), message="preempted"
    )
    admit(world.pending_a, at=start + timedelta(seconds=200))

    failed = lifecycle.fail_workload(world.pending_a.pk, now=start + timedelta(seconds=300), message="OOMKilled")

    assert (failed.wall_time_seconds, failed.accumulated_past_execution_seconds) == (100, 50)
    assert failed.total_wall_time_seconds() == 150
    assert cluster.total_wall_time_seconds(failed.pk) == 150
    assert AdmissionRecord.objects.get(workload=failed, end_reason="Failed").end_message == "OOMKilled"


def test_given_admitted_workload_when_cancelled_then_its_interval_closes_as_cancelled(world, clients):
    response = clients["editor_a"].post(f"{WL}{world.admitted_a.pk}/cancel/", {"message": "no longer needed"})

    assert response.status_code == 200
    assert 600 <= response.json()["wall_time_seconds"] <= 660
    record = AdmissionRecord.objects.get(workload=world.admitted_a)
    assert (record.end_reason, record.end_message) == ("Cancelled", "no longer needed")
    assert record.ended_at is not None


def test_given_an_overlong_message_then_400_names_it_and_nothing_changes(world, clients):
    before = database_snapshot()

    response = clients["executor"].post(f"{WL}{world.admitted_a.pk}/fail/", {"message": "x" * 301})

    assert response.status_code == 400
    assert "message" in response.json()
    assert database_snapshot() == before


def test_given_finish_over_the_api_then_wall_time_is_the_admission_so_far(world, clients):
    response = clients["executor"].post(f"{WL}{world.admitted_a.pk}/finish/")

    assert 600 <= response.json()["wall_time_seconds"] <= 660  # admitted ten minutes ago


def test_given_pending_workload_when_cancelled_then_no_wall_time_and_no_queue_position(world, clients):
    place_in_line(world.pending_a, 2)
    WorkloadReason.objects.create(workload_id=world.pending_a.pk, code="InsufficientQuota")

    data = clients["editor_a"].post(f"{WL}{world.pending_a.pk}/cancel/").json()

    assert data["state"] == WorkloadState.CANCELLED
    assert data["wall_time_seconds"] == 0
    assert data["queue_position"] is None
    assert data["pending_reason"] is None
    assert data["finished_at"] is not None


def test_given_clock_skew_when_admitted_in_the_future_then_wall_time_is_zero_not_negative(world):
    workload = admit(world.pending_a, at=timezone.now() + timedelta(minutes=5))

    assert lifecycle.finish_workload(workload.pk).wall_time_seconds == 0


def test_given_executor_and_tenant_b_then_reports_about_tenant_a_work_differ(world):
    executor = client_for(world.users["executor"])
    tenant_b = client_for(world.users["tenant_b"])

    assert tenant_b.post(f"{WL}{world.admitted_a.pk}/finish/").status_code == 404
    assert executor.post(f"{WL}{world.admitted_a.pk}/finish/").status_code == 200


def test_given_stored_queue_order_then_the_list_shows_positions_and_orders_by_them(world, clients):
    from django.utils import timezone

    from queues.models import PendingOrder

    lines: dict[int, list[int]] = {}
    for workload in (world.pending_b, world.pending_a):  # b first in line, then a
        lines.setdefault(workload.local_queue.cluster_queue_id, []).append(workload.pk)
    for cq_id, ids in lines.items():
        PendingOrder.objects.update_or_create(
            cluster_queue_id=cq_id, defaults={"workload_ids": ids, "planned_at": timezone.now()}
        )
    expected = {w.pk: lines[w.local_queue.cluster_queue_id].index(w.pk) + 1 for w in (world.pending_a, world.pending_b)}

    listed = clients["admin"].get(f"{WL}?state=Pending&ordering=-queue_position").json()["results"]

    positions = {row["id"]: row["queue_position"] for row in listed}
    assert {pk: positions[pk] for pk in expected} == expected
    ours = [row["queue_position"] for row in listed if row["id"] in expected]
    assert ours == sorted(ours, reverse=True)
