"""Sign-in and tenancy on every page: anonymous users are sent to the login page, another
tenant's objects do not exist (404), and a user without a namespace sees empty pages."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

EVERY_PAGE = [
    ("queues:home", []),
    ("queues:queue-tree", []),
    ("queues:workloads", []),
    ("queues:audit-log", []),
    ("queues:cohort", ["org"]),
    ("queues:cluster-queue", ["cq-gpu"]),
    ("queues:namespace", ["team-a"]),
    ("queues:local-queue", ["team-a", "train"]),
    ("queues:workload", ["team-a", "a-job-1"]),
    ("queues:edit-local-queue", ["team-a", "train"]),
    ("queues:edit-namespace", ["team-a"]),
    ("queues:edit-cluster-queue", ["cq-gpu"]),
    ("queues:edit-cohort", ["org"]),
]

# What each role gets on team-a's objects (alice edits team-a, victor views it, bob is team-b).
TEAM_A_PAGES = {
    "queues:namespace": ["team-a"],
    "queues:local-queue": ["team-a", "train"],
    "queues:workload": ["team-a", "a-job-1"],
    "queues:edit-local-queue": ["team-a", "train"],
    "queues:edit-namespace": ["team-a"],
}


@pytest.mark.parametrize(("name", "args"), EVERY_PAGE)
def test_given_anonymous_visitor_when_any_page_opened_then_redirected_to_sign_in(cluster, client, name, args):
    response = client.get(reverse(name, args=args))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(("name", "args"), EVERY_PAGE)
def test_given_admin_when_any_page_opened_then_it_renders(cluster, login, name, args):
    response = login("admin").get(reverse(name, args=args))

    assert response.status_code == 200


@pytest.mark.parametrize("name", sorted(TEAM_A_PAGES))
def test_given_other_tenant_when_team_a_object_opened_then_not_found(cluster, login, name):
    response = login("bob").get(reverse(name, args=TEAM_A_PAGES[name]))

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("user", "name", "expected"),
    [
        ("alice", "queues:namespace", 200),
        ("alice", "queues:local-queue", 200),
        ("alice", "queues:workload", 200),
        ("alice", "queues:edit-local-queue", 200),
        ("alice", "queues:edit-namespace", 403),
        ("victor", "queues:namespace", 200),
        ("victor", "queues:local-queue", 200),
        ("victor", "queues:workload", 200),
        ("victor", "queues:edit-local-queue", 403),
        ("victor", "queues:edit-namespace", 403),
    ],
)
def test_given_team_a_member_when_team_a_page_opened_then_role_decides(cluster, login, user, name, expected):
    response = login(user).get(reverse(name, args=TEAM_A_PAGES[name]))

    assert response.status_code == expected


@pytest.mark.parametrize("user", ["alice", "victor", "bob", "nobody"])
def test_given_tenant_when_cohort_pages_opened_then_not_found(cluster, login, user):
    client = login(user)

    assert client.get(reverse("queues:cohort", args=["org"])).status_code == 404
    assert client.get(reverse("queues:edit-cohort", args=["org"])).status_code == 404


def test_given_tenant_feeding_a_cluster_queue_when_opened_then_visible_and_not_editable(cluster, login):
    client = login("alice")

    assert client.get(reverse("queues:cluster-queue", args=["cq-gpu"])).status_code == 200
    assert client.get(reverse("queues:edit-cluster-queue", args=["cq-gpu"])).status_code == 403


def test_given_tenant_not_feeding_a_cluster_queue_when_opened_then_not_found(cluster, login):
    client = login("bob")  # team-b only feeds cq-gpu

    assert client.get(reverse("queues:cluster-queue", args=["cq-cpu"])).status_code == 404
    assert client.get(reverse("queues:edit-cluster-queue", args=["cq-cpu"])).status_code == 404


def test_given_unknown_objects_when_opened_then_not_found(cluster, login):
    client = login("admin")

    assert client.get(reverse("queues:local-queue", args=["team-a", "nope"])).status_code == 404
    assert client.get(reverse("queues:workload", args=["team-a", "nope"])).status_code == 404
    assert client.get(reverse("queues:cluster-queue", args=["nope"])).status_code == 404


@pytest.mark.parametrize("name", ["queues:home", "queues:queue-tree", "queues:workloads", "queues:audit-log"])
def test_given_user_without_namespace_when_list_opened_then_nothing_of_anyone_is_shown(cluster, login, name):
    body = login("nobody").get(reverse(name)).content.decode()

    for secret in ("team-a", "team-b", "team-c", "a-job", "b-job"):
        assert secret not in body
