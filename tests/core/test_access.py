"""The one access rule: which rows of each model every role sees (``Access.visible_to``), and the
predicates the API, the pages, budgets and the playground ask.

Two tenants share ClusterQueue ``shared``; team-b also queues alone on ``solo``. Budgets sit on a
namespace, a LocalQueue and both ClusterQueues; the audit log has a row about each tenant's
LocalQueue, about the shared ClusterQueue budget and about the cohort.
"""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser, Group
from django.utils import timezone

from budgets.models import Budget, BudgetEvent
from core.access import ADMIN, ANONYMOUS, EXECUTORS_GROUP, Access, access_for
from core.audit import policy_state, record_change
from core.models import PolicyChange, TenantMembership
from playground.models import Run, Scenario
from queues.models import ClusterQueue, Cohort, LocalQueue, Namespace, ResourceFlavor, UsageSample, Workload
from queues.services import submit_workload
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SAMPLE = UsageSample.Kind
ROLES = ("anonymous", "no_role", "admin", "editor_a", "viewer_b", "executor")


@pytest.fixture
def world():
    ResourceFlavor.objects.create(name="default")
    cohort = Cohort.objects.create(name="org")
    shared = ClusterQueue.objects.create(name="shared", cohort=cohort)
    solo = ClusterQueue.objects.create(name="solo")
    ns_a, ns_b = Namespace.objects.create(name="team-a"), Namespace.objects.create(name="team-b")
    lq_a = LocalQueue.objects.create(namespace=ns_a, name="main", cluster_queue=shared)
    lq_b = LocalQueue.objects.create(namespace=ns_b, name="main", cluster_queue=shared)
    LocalQueue.objects.create(namespace=ns_b, name="alone", cluster_queue=solo)
    for lq, name in ((lq_a, "wa"), (lq_b, "wb")):
        submit_workload(local_queue=lq, name=name, pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    budgets = {
        "on-ns-a": Budget.objects.create(name="on-ns-a", namespace=ns_a, allocated_hours=Decimal(1)),
        "on-lq-b": Budget.objects.create(name="on-lq-b", local_queue=lq_b, allocated_hours=Decimal(1)),
        "on-shared": Budget.objects.create(name="on-shared", cluster_queue=shared, allocated_hours=Decimal(1)),
        "on-solo": Budget.objects.create(name="on-solo", cluster_queue=solo, allocated_hours=Decimal(1)),
    }
    for budget in budgets.values():
        BudgetEvent.objects.create(
            budget=budget,
            kind=BudgetEvent.Kind.EXHAUSTED,
            message=budget.name,
            at=timezone.now(),
            period_start=budget.anchor,
            used_hours=Decimal(1),
            allocated_hours=Decimal(1),
        )
    for instance, note in ((lq_a, "lq-a"), (lq_b, "lq-b"), (budgets["on-shared"], "budget-shared"), (cohort, "cohort")):
        record_change(
            instance=instance, action=PolicyChange.Action.CREATE, before=None, after=policy_state(instance), note=note
        )
    samples = ((SAMPLE.NAMESPACE, ns_a.pk), (SAMPLE.LOCAL_QUEUE, lq_b.pk), (SAMPLE.CLUSTER_QUEUE, shared.pk))
    for kind, object_id in samples:
        UsageSample.objects.create(kind=kind, object_id=object_id, sampled_at=timezone.now())
    users = {
        "no_role": UserFactory(username="no-role"),
        "admin": UserFactory(username="admin", is_staff=True),
        "editor_a": UserFactory(username="editor-a"),
        "viewer_b": UserFactory(username="viewer-b"),
        "executor": UserFactory(username="executor"),
    }
    TenantMembership.objects.create(user=users["editor_a"], namespace=ns_a, role=TenantMembership.Role.EDITOR)
    TenantMembership.objects.create(user=users["viewer_b"], namespace=ns_b, role=TenantMembership.Role.VIEWER)
    users["executor"].groups.add(Group.objects.get_or_create(name=EXECUTORS_GROUP)[0])
    for role in ("editor_a", "viewer_b"):
        scenario = Scenario.objects.create(
            name=f"{role}-scenario", owner=users[role], document={}, source=Scenario.Source.PRESET
        )
        Run.objects.create(scenario=scenario, owner=users[role], title=f"{role}-run")
    users["anonymous"] = AnonymousUser()
    return SimpleNamespace(users=users, lq_a=lq_a, lq_b=lq_b, budgets=budgets)


# What each role sees, by model, as the rows' labels. Admins see every row.
TABLE = {
    Namespace: (
        "name",
        {"anonymous": set(), "no_role": set(), "editor_a": {"team-a"}, "viewer_b": {"team-b"}, "executor": set()},
    ),
    LocalQueue: (
        "key",
        {
            "anonymous": set(),
            "no_role": set(),
            "editor_a": {"team-a/main"},
            "viewer_b": {"team-b/main", "team-b/alone"},
            "executor": set(),
        },
    ),
    Workload: (
        "name",
        {"anonymous": set(), "no_role": set(), "editor_a": {"wa"}, "viewer_b": {"wb"}, "executor": {"wa", "wb"}},
    ),
    ClusterQueue: (
        "name",
        {
            "anonymous": set(),
            "no_role": {"shared", "solo"},
            "editor_a": {"shared", "solo"},
            "viewer_b": {"shared", "solo"},
            "executor": {"shared", "solo"},
        },
    ),
    Budget: (
        "name",
        {
            "anonymous": set(),
            "no_role": set(),
            "editor_a": {"on-ns-a", "on-shared"},
            "viewer_b": {"on-lq-b", "on-shared", "on-solo"},
            "executor": set(),
        },
    ),
    BudgetEvent: (
        "message",
        {
            "anonymous": set(),
            "no_role": set(),
            "editor_a": {"on-ns-a", "on-shared"},
            "viewer_b": {"on-lq-b", "on-shared", "on-solo"},
            "executor": set(),
        },
    ),
    PolicyChange: (
        "note",
        {
            "anonymous": set(),
            "no_role": set(),
            "editor_a": {"lq-a", "budget-shared"},
            "viewer_b": {"lq-b", "budget-shared"},
            "executor": set(),
        },
    ),
    UsageSample: (
        "kind",
        {
            "anonymous": set(),
            "no_role": {SAMPLE.CLUSTER_QUEUE},
            "editor_a": {SAMPLE.NAMESPACE, SAMPLE.CLUSTER_QUEUE},
            "viewer_b": {SAMPLE.LOCAL_QUEUE, SAMPLE.CLUSTER_QUEUE},
            "executor": {SAMPLE.CLUSTER_QUEUE},
        },
    ),
    Scenario: (
        "name",
        {
            "anonymous": set(),
            "no_role": set(),
            "editor_a": {"editor_a-scenario"},
            "viewer_b": {"viewer_b-scenario"},
            "executor": set(),
        },
    ),
    Run: (
        "title",
        {
            "anonymous": set(),
            "no_role": set(),
            "editor_a": {"editor_a-run"},
            "viewer_b": {"viewer_b-run"},
            "executor": set(),
        },
    ),
}


def _labels(queryset, attribute):
    return {str(getattr(row, attribute)) for row in queryset}


@pytest.mark.parametrize("role", ROLES)
def test_given_a_role_when_asking_what_it_sees_then_the_table_holds(world, role):
    access = access_for(world.users[role])

    seen = {model.__name__: _labels(access.visible_to(model), attribute) for model, (attribute, _) in TABLE.items()}

    if role == "admin":
        expected = {model.__name__: _labels(model.objects.all(), attribute) for model, (attribute, _) in TABLE.items()}
    else:
        expected = {model.__name__: by_role[role] for model, (_, by_role) in TABLE.items()}
    assert seen == expected


def test_given_a_queryset_then_it_is_narrowed_not_replaced(world):
    access = access_for(world.users["viewer_b"])

    rows = access.visible_to(LocalQueue.objects.filter(name="main"))

    assert _labels(rows, "key") == {"team-b/main"}


def test_given_a_model_without_a_declared_rule_then_asking_is_an_error_not_everything(world):
    with pytest.raises(LookupError, match="no visibility rule"):
        access_for(world.users["editor_a"]).visible_to(TenantMembership)


def test_given_each_role_then_the_predicates_agree_with_the_rule(world):
    editor, viewer = access_for(world.users["editor_a"]), access_for(world.users["viewer_b"])
    executor, nobody = access_for(world.users["executor"]), access_for(world.users["no_role"])

    assert (editor.can_edit(world.lq_a), editor.can_edit(world.lq_b)) == (True, False)
    assert viewer.can_read_namespace(world.lq_b.namespace_id) and not viewer.can_edit(world.lq_b)
    assert not editor.can_edit(world.budgets["on-ns-a"])  # budgets: admins only
    assert ADMIN.can_edit(world.budgets["on-ns-a"]) and ADMIN.can_apply_runs
    assert (editor.can_use_playground, editor.can_apply_runs) == (True, False)
    assert not nobody.can_use_playground and not executor.can_use_playground
    assert executor.is_executor and not executor.is_tenant
    assert access_for(world.users["anonymous"]) == ANONYMOUS and not ANONYMOUS.is_authenticated


def test_given_an_inactive_user_then_it_has_no_roles(world):
    user = world.users["admin"]
    user.is_active = False

    assert access_for(user) == Access()
