"""The one audited write path (``core.audit``): every caller writes exactly one PolicyChange
row per change, naming its actor and its surface, with the before and after pictures."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from budgets import enforcement
from budgets.models import Budget
from budgets.services import delete_budget, update_budget
from core.audit import audited_delete, audited_save, audited_write
from core.models import PolicyChange, Surface
from queues.interop.kueue.apply import import_manifests
from queues.models import ClusterQueue, LocalQueue, Namespace, QueueHold, ResourceFlavor
from queues.services.policy import save_policy_object
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

FLAVOR_MANIFEST = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: spot
"""


@pytest.fixture
def world():
    ResourceFlavor.objects.create(name="default")
    cq = ClusterQueue.objects.create(name="shared")
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))
    lq = LocalQueue.objects.create(namespace=namespace, name="main", cluster_queue=cq)
    budget = Budget.objects.create(name="team-hours", local_queue=lq, allocated_hours=Decimal(10))
    admin = UserFactory(username="boss", is_staff=True, is_superuser=True)
    return {"namespace": namespace, "lq": lq, "budget": budget, "admin": admin}


def _save_namespace(world):
    namespace = world["namespace"]
    namespace.weight = Decimal(3)
    save_policy_object(namespace, actor=world["admin"], surface=Surface.API)


def _delete_local_queue(world):
    audited_delete(world["lq"], actor=world["admin"], surface=Surface.API)  # the API's PolicyViewSet


def _update_budget(world):
    update_budget(world["budget"], allocated_hours=Decimal(20), actor=world["admin"], surface=Surface.UI)


def _delete_budget(world):
    delete_budget(world["budget"], actor=world["admin"], surface=Surface.ADMIN)


def _import_kueue(world):
    import_manifests(FLAVOR_MANIFEST, dry_run=False, actor=world["admin"], surface=Surface.API)


def _lift_hold(world):
    hold = QueueHold.objects.create(local_queue=world["lq"], message="exhausted", source="budget:1")
    enforcement.lift_hold(hold, note="budget lifted")


def _playground_budget_write(world):
    """What ``playground.services.apply`` calls for a budget delta."""
    update_budget(world["budget"], allocated_hours=Decimal(5), actor=world["admin"], surface=Surface.PLAYGROUND)


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        (_save_namespace, ("update", "namespace", Surface.API, "boss")),
        (_delete_local_queue, ("delete", "localqueue", Surface.API, "boss")),
        (_update_budget, ("update", "budget", Surface.UI, "boss")),
        (_delete_budget, ("delete", "budget", Surface.ADMIN, "boss")),
        (_import_kueue, ("create", "resourceflavor", Surface.API, "boss")),
        (_lift_hold, ("delete", "queuehold", Surface.SYSTEM, "")),
        (_playground_budget_write, ("update", "budget", Surface.PLAYGROUND, "boss")),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_given_a_caller_when_it_writes_then_exactly_one_row_names_actor_and_surface(world, write, expected):
    write(world)

    (row,) = PolicyChange.objects.all()
    assert (row.action, row.object_type, row.surface, row.actor_name) == expected
    assert (row.before is None) == (row.action == "create") and (row.after is None) == (row.action == "delete")


def test_given_the_admin_when_a_local_queue_is_changed_then_one_row_with_the_admin_surface(client, world):
    client.force_login(world["admin"])
    lq = world["lq"]
    fields = {
        "namespace": lq.namespace_id,
        "name": lq.name,
        "cluster_queue": lq.cluster_queue_id,
        "weight": "4",
        "stop_policy": "None",
        "description": "",
    }

    response = client.post(reverse("admin:queues_localqueue_change", args=[lq.pk]), fields)

    assert response.status_code == 302, response.content.decode()[:2000]
    (row,) = PolicyChange.objects.all()
    assert (row.action, row.surface, row.actor_name) == ("update", Surface.ADMIN, "boss")
    assert (row.before["weight"], row.after["weight"]) == ("1", "4")


def test_given_a_write_that_changes_nothing_then_no_row(world):
    audited_save(world["namespace"], actor=world["admin"], surface=Surface.API)

    assert not PolicyChange.objects.exists()


def test_given_a_block_that_fails_then_nothing_is_recorded(world):
    namespace = world["namespace"]
    with pytest.raises(RuntimeError), audited_write(namespace, surface=Surface.API):
        namespace.weight = Decimal(7)
        namespace.save()
        raise RuntimeError("refused")

    assert not PolicyChange.objects.exists()
    assert Namespace.objects.get(pk=namespace.pk).weight == Decimal(1)


def test_given_a_row_deleted_meanwhile_when_written_then_it_is_not_brought_back(world):
    stale = LocalQueue.objects.get(pk=world["lq"].pk)
    LocalQueue.objects.filter(pk=stale.pk).delete()
    stale.description = "changed"

    with pytest.raises(LocalQueue.DoesNotExist):
        save_policy_object(stale, actor=world["admin"], surface=Surface.API)

    assert not LocalQueue.objects.filter(pk=stale.pk).exists() and not PolicyChange.objects.exists()
