"""A position right after submit, ``?ordering=position``, pending lists in queue order by
default, and an unknown ``?ordering=`` term refused with a 400 naming the parameter.

Through the real API (``POST /api/v1/workloads/`` then ``GET``), on PostgreSQL, with real
admission passes ranking the queue.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from core.models import TenantMembership
from queues.admission import passes
from queues.models import PendingOrder, WorkloadState
from tests.factories import TenantMembershipFactory, UserFactory
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db
WL = "/api/v1/workloads/"


@pytest.fixture
def queue():
    """A 4-CPU ClusterQueue fed by one LocalQueue, full: one 4-CPU job runs, three 1-CPU jobs wait."""
    cq = make_cluster_queue("cq", cpu="4", mode="NoAdmissionFairSharing")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "big", cpu="4")
    passes.run_all_admission_passes()
    for index, priority in enumerate((0, 5, 0)):
        submit(lq, f"wait-{index}", cpu="1", priority=priority)
    passes.run_all_admission_passes()
    user = UserFactory(username="editor-a")
    TenantMembershipFactory(user=user, namespace=lq.namespace, role=TenantMembership.Role.EDITOR)
    api = APIClient()
    api.force_authenticate(user)
    return api


def body(name: str) -> dict:
    return {"name": name, "local_queue": "team-a/main", "pod_sets": [{"count": 1, "requests": {"cpu": "1"}}]}


def positions(api: APIClient, **params) -> list[tuple[str, int | None, str | None]]:
    rows = api.get(WL, {"page_size": 100, **params}).json()["results"]
    return [(row["name"], row["queue_position"], row["queue_position_state"]) for row in rows]


def test_given_a_submission_then_its_first_poll_has_the_position_the_next_pass_gives(queue):
    created = queue.post(WL, body("new-1"), format="json")
    polled = queue.get(f"{WL}{created.json()['id']}/").json()

    # ranked: wait-1 (priority 5) 1, wait-0 2, wait-2 3; the new one (priority 0, newest) 4th
    assert created.status_code == 201
    assert (created.json()["queue_position"], created.json()["queue_position_state"]) == (4, "estimated")
    assert (polled["queue_position"], polled["queue_position_state"]) == (4, "estimated")
    passes.run_all_admission_passes()
    ranked = queue.get(f"{WL}{created.json()['id']}/").json()
    assert (ranked["queue_position"], ranked["queue_position_state"]) == (4, "ranked")


def test_given_several_submissions_before_a_pass_then_each_estimate_counts_the_others(queue):
    ids = [queue.post(WL, body(f"burst-{i}"), format="json").json()["id"] for i in range(3)]

    estimated = [queue.get(f"{WL}{pk}/").json()["queue_position"] for pk in ids]
    passes.run_all_admission_passes()
    ranked = [queue.get(f"{WL}{pk}/").json()["queue_position"] for pk in ids]

    assert estimated == [4, 5, 6]
    assert ranked == estimated


def test_given_a_higher_priority_submission_then_it_is_estimated_ahead_of_lower_ones(queue):
    admin = APIClient()
    admin.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))
    created = admin.post(WL, {**body("urgent"), "priority": 9}, format="json").json()
    passes.run_all_admission_passes()

    assert (created["queue_position"], created["queue_position_state"]) == (1, "estimated")
    assert queue.get(f"{WL}{created['id']}/").json()["queue_position"] == 1


def test_a_pending_list_is_in_queue_order_by_default_and_with_ordering_position(queue):
    queue.post(WL, body("new-1"), format="json")

    default = positions(queue, state="Pending")
    explicit = positions(queue, state="Pending", ordering="position")
    reverse = positions(queue, state="Pending", ordering="-position")

    assert default == [
        ("wait-1", 1, "ranked"),
        ("wait-0", 2, "ranked"),
        ("wait-2", 3, "ranked"),
        ("new-1", 4, "estimated"),
    ]
    assert explicit == default
    assert reverse == default[::-1]


def test_a_list_of_every_state_keeps_the_models_order_unless_asked(queue):
    queue.post(WL, body("new-1"), format="json")

    names = [name for name, _, _ in positions(queue)]
    by_position = positions(queue, ordering="position")

    assert names == ["wait-1", "big", "wait-0", "wait-2", "new-1"]  # the model's order: priority, queue time
    # ranked, then estimated (new-1, queued after big), then what is not pending
    assert [name for name, _, _ in by_position] == ["wait-1", "wait-0", "wait-2", "new-1", "big"]
    assert by_position[-1][1:] == (None, None)  # admitted: no position, no state


@pytest.mark.parametrize("ordering", ["positon", "-nope", "name,,priority", "x" * 500, "--name"])
def test_an_unknown_ordering_term_is_a_400_naming_the_parameter(queue, ordering):
    answer = queue.get(WL, {"ordering": ordering})

    assert answer.status_code == 400
    (message,) = answer.json()["ordering"]
    assert "unknown ordering term" in message and "position" in message
    assert len(message) < 400  # the term is quoted at most 40 characters, never echoed whole


def test_an_unknown_ordering_is_refused_on_every_list_not_only_workloads(queue):
    answer = queue.get("/api/v1/cluster-queues/", {"ordering": "priority"})

    assert answer.status_code == 400 and "ordering" in answer.json()
    assert queue.get("/api/v1/cluster-queues/", {"ordering": "-name"}).status_code == 200
    assert queue.get("/api/v1/cluster-queues/", {"ordering": ""}).status_code == 200  # empty: the default


def test_a_cancelled_workload_has_no_position_and_no_state(queue):
    created = queue.post(WL, body("gone"), format="json").json()
    queue.post(f"{WL}{created['id']}/cancel/", {}, format="json")

    polled = queue.get(f"{WL}{created['id']}/").json()

    assert polled["state"] == WorkloadState.CANCELLED
    assert (polled["queue_position"], polled["queue_position_state"]) == (None, None)


def test_without_any_pass_the_first_submissions_are_numbered_from_one(db):
    lq = make_local_queue("team-a", "main", make_cluster_queue("empty", cpu="1"))
    user = UserFactory(username="editor-a")
    TenantMembershipFactory(user=user, namespace=lq.namespace, role=TenantMembership.Role.EDITOR)
    api = APIClient()
    api.force_authenticate(user)

    first = api.post(WL, body("one"), format="json").json()
    second = api.post(WL, body("two"), format="json").json()

    assert not PendingOrder.objects.exists()
    assert (first["queue_position"], second["queue_position"]) == (1, 2)
    assert api.get(f"{WL}{first['id']}/").json()["queue_position_state"] == "estimated"


def test_position_terms_combine_with_each_other_and_with_fields(queue):
    answer = queue.get(WL, {"ordering": "queue_position,-position,name", "state": "Pending"})

    assert answer.status_code == 200
    assert [row["name"] for row in answer.json()["results"]] == ["wait-1", "wait-0", "wait-2"]


def test_a_workload_a_gate_holds_out_of_line_says_held_not_estimated(db):
    """Budgets' safe admission keeps a workload out of the pass (no position): the API says
    ``held`` rather than estimating a place it will not take while the gate holds it."""
    from tests.budgets.helpers import admission_pass, at, budget, cluster
    from tests.budgets.helpers import submit as submit_with_runtime

    cq, lq = cluster()
    budget(lq, hours="2", safe_admission=True)
    submit_with_runtime(lq, "big", max_runtime=90 * 60)
    held = submit_with_runtime(lq, "too-big", max_runtime=60 * 60)  # its worst case no longer fits
    admission_pass(cq, at())
    api = APIClient()
    api.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))

    polled = api.get(f"{WL}{held.pk}/").json()

    assert polled["pending_reason"]["code"] == "BudgetInsufficient"
    assert (polled["queue_position"], polled["queue_position_state"]) == (None, "held")
