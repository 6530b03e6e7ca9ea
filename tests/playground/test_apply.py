"""Applying a run: admins only, policy and audit rows in one transaction, nothing on a conflict."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from budgets.models import Budget
from core.access import access_for
from core.models import PolicyChange, Surface
from playground.live_export import LiveOptions
from playground.models import Application, Run
from playground.presets import get_preset
from playground.services import apply as apply_service
from playground.services import runs
from playground.services.apply import ApplyConflict, ApplyError, apply_run
from playground.services.scenarios import create_from_live, create_from_preset
from queues.models import ClusterQueue, ClusterQueueQuota, LocalQueue, Namespace
from tests.playground.clusters import volcano_cluster

pytestmark = pytest.mark.django_db


def finished_run(scenario, owner, edits) -> Run:
    run = runs.start_run(scenario, edits=edits, owner=owner, title="try it")
    done = runs.execute_run(run.pk)
    assert done.status == Run.Status.SUCCEEDED, done.error
    return done


@pytest.fixture
def volcano_run(admin, no_broker):
    volcano_cluster()
    scenario = create_from_preset("volcano-16cpu", owner=admin)
    return finished_run(scenario, admin, list(get_preset("volcano-16cpu").suggested_edits))


def weights() -> dict[str, Decimal]:
    found = {q.name: q.weight for q in ClusterQueue.objects.all()}
    found.update({n.name: n.weight for n in Namespace.objects.all()})
    return found


def test_given_an_admin_when_applying_then_the_weights_change_and_each_object_gets_a_linked_audit_row(
    volcano_run, admin
):
    application = apply_run(volcano_run, actor=admin)

    assert weights() == {"q1": 1, "q2": 3, "ns1": 3, "ns2": 1, "ns3": 2, "ns4": 6}
    changes = list(application.policy_changes.order_by("id"))
    assert [(c.object_type, c.object_repr) for c in changes] == [
        ("clusterqueue", "q2"),
        ("namespace", "ns1"),
        ("namespace", "ns3"),
        ("namespace", "ns4"),
    ]
    assert {c.surface for c in changes} == {Surface.PLAYGROUND}
    assert {c.actor_id for c in changes} == {admin.pk}
    assert all(c.note == f"playground run {volcano_run.pk}: try it" for c in changes)
    assert (changes[0].before["weight"], changes[0].after["weight"]) == ("1", "3")
    assert [(d["kind"], d["name"], d["field"], d["after"]) for d in application.deltas] == [
        ("clusterQueue", "q2", "weight", 3),
        ("namespace", "ns1", "weight", 3),
        ("namespace", "ns3", "weight", 2),
        ("namespace", "ns4", "weight", 6),
    ]
    assert application.environment == [] and application.actor_name == admin.username


def test_given_a_tenant_when_applying_then_it_is_refused_and_nothing_changes(volcano_run, tenant):
    with pytest.raises(PermissionDenied):
        apply_run(volcano_run, actor=tenant)
    assert set(weights().values()) == {1}
    assert not PolicyChange.objects.exists() and not Application.objects.exists()


def test_given_a_failure_half_way_when_applying_then_policy_audit_and_application_are_as_before(
    volcano_run, admin, monkeypatch
):
    real_save = apply_service.save_policy_object
    calls: list[str] = []

    def fail_on_the_second(instance, **kwargs):
        calls.append(str(instance))
        if len(calls) == 2:
            raise RuntimeError("database went away")
        return real_save(instance, **kwargs)

    monkeypatch.setattr(apply_service, "save_policy_object", fail_on_the_second)
    with pytest.raises(RuntimeError):
        apply_run(volcano_run, actor=admin)

    assert calls == ["q2", "ns1"]  # the first object was written before the failure...
    assert set(weights().values()) == {1}  # ...and rolled back with everything else
    assert not PolicyChange.objects.exists() and not Application.objects.exists()


def test_given_a_model_rule_broken_half_way_then_the_error_names_the_object_and_nothing_is_written(admin, no_broker):
    objects = volcano_cluster()
    from tests.queues.loop_fixtures import submit

    submit(objects["ns4/jobs"], "holding-job")  # a LocalQueue holding workloads cannot change ClusterQueue
    scenario = create_from_preset("volcano-16cpu", owner=admin)
    run = finished_run(scenario, admin, ["clusterQueues.q2.weight=3", "localQueues.ns4/jobs.clusterQueue=q1"])
    with pytest.raises(ApplyError) as caught:
        apply_run(run, actor=admin)
    assert caught.value.problems == [
        "LocalQueue ns4/jobs cluster_queue: cannot change while the LocalQueue holds workloads (as in Kueue, it is immutable)"
    ]
    assert ClusterQueue.objects.get(name="q2").weight == 1
    assert not PolicyChange.objects.exists()


def test_given_the_live_policy_changed_since_the_run_then_apply_is_a_conflict_naming_the_field(volcano_run, admin):
    Namespace.objects.filter(name="ns1").update(weight=Decimal(5))
    with pytest.raises(ApplyConflict) as caught:
        apply_run(volcano_run, actor=admin)
    assert caught.value.problems == ["Namespace ns1 weight is 5 now, the run assumed 1: re-run from today's cluster"]
    assert ClusterQueue.objects.get(name="q2").weight == 1 and not PolicyChange.objects.exists()


def test_given_an_edited_value_already_live_then_that_field_is_skipped(volcano_run, admin):
    Namespace.objects.filter(name="ns1").update(weight=Decimal(3))
    application = apply_run(volcano_run, actor=admin)
    assert [c.object_repr for c in application.policy_changes.order_by("id")] == ["q2", "ns3", "ns4"]


def test_given_objects_missing_from_the_database_then_apply_names_them(admin, no_broker):
    scenario = create_from_preset("kep4136-entry-penalty", owner=admin)
    run = finished_run(scenario, admin, ["localQueues.tenant-a/main.weight=4"])
    with pytest.raises(ApplyConflict, match="LocalQueue tenant-a/main does not exist in the database"):
        apply_run(run, actor=admin)


def test_given_only_fair_sharing_knobs_then_apply_points_to_the_environment(admin, no_broker):
    volcano_cluster()
    scenario = create_from_preset("volcano-16cpu", owner=admin)
    run = finished_run(scenario, admin, ["policy.kValue=0.5"])
    with pytest.raises(ApplyError) as caught:
        apply_run(run, actor=admin)
    assert caught.value.problems == [
        "nothing to apply: these edits change no stored policy (set K_VALUE=0.5 in the environment instead)"
    ]


def test_given_a_live_run_then_quotas_modes_and_budgets_are_applied_with_their_environment_lines(admin, no_broker):
    objects = volcano_cluster()
    Budget.objects.create(
        name="ns1-hours", local_queue=objects["ns1/jobs"], allocated_hours=Decimal(10), anchor=timezone.now()
    )
    scenario = create_from_live(access_for(admin), options=LiveOptions(days=0))
    run = finished_run(
        scenario,
        admin,
        [
            "clusterQueues.q1.quotas.default.cpu.nominal=4",
            "clusterQueues.q1.quotas.default.cpu.lendingLimit=2",
            "cohorts.cluster.admissionScope.admissionMode=UsageBasedAdmissionFairSharing",
            "budgets.ns1-hours.allocatedHours=25.5",
            "policy.usageHalfLifeTime=30m",
        ],
    )
    application = apply_run(run, actor=admin)

    quota = ClusterQueueQuota.objects.get(cluster_queue__name="q1")
    assert (quota.nominal, quota.lending_limit, quota.flavor.name) == (4000, 2000, "default")
    assert objects["cohort"].__class__.objects.get(name="cluster").admission_mode == "UsageBasedAdmissionFairSharing"
    assert Budget.objects.get(name="ns1-hours").allocated_hours == Decimal("25.5")
    assert sorted(c.object_type for c in application.policy_changes.all()) == ["budget", "clusterqueue", "cohort"]
    assert application.environment == ["USAGE_HALF_LIFE_TIME=30m"]


def test_a_tenants_redacted_view_and_an_unfinished_run_cannot_be_applied(admin, tenant, no_broker):
    volcano_cluster()
    redacted = create_from_live(access_for(tenant), options=LiveOptions(days=0))
    run = finished_run(redacted, tenant, ["clusterQueues.q2.weight=2"])
    with pytest.raises(ApplyError, match="tenant's view"):
        apply_run(run, actor=admin)
    queued = runs.start_run(
        create_from_preset("volcano-16cpu", owner=admin), edits=["clusterQueues.q2.weight=2"], owner=admin
    )
    with pytest.raises(ApplyError, match="only a succeeded run"):
        apply_run(queued, actor=admin)
    assert LocalQueue.objects.count() == 4 and not PolicyChange.objects.exists()


def test_given_the_demo_and_a_run_from_live_state_then_apply_over_the_api_writes_and_audits(admin, no_broker):
    """Regression: the demo has monthly budgets and the apply's live policy export had no
    ``clock.start``, so every apply of a live run was a 500 ("monthly renewal needs calendar dates")."""
    from queues.demo import seed_demo
    from tests.playground.test_api import client_for

    seed_demo()
    assert Budget.objects.filter(renewal=Budget.Renewal.MONTHLY).exists()
    scenario = create_from_live(access_for(admin), options=LiveOptions(days=0))
    run = finished_run(
        scenario, admin, ["namespaces.team-vision.weight=3", "budgets.vision-gpu-hours.allocatedHours=2500"]
    )

    applied = client_for(admin).post(f"/api/v1/playground/runs/{run.pk}/apply/")

    assert applied.status_code == 201, applied.content
    assert Namespace.objects.get(name="team-vision").weight == 3
    assert Budget.objects.get(name="vision-gpu-hours").allocated_hours == 2500
    changes = PolicyChange.objects.filter(surface=Surface.PLAYGROUND)
    assert sorted(changes.values_list("object_type", flat=True)) == ["budget", "namespace"]
    assert all(c.note.startswith(f"playground run {run.pk}") for c in changes)
