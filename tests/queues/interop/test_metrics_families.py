"""The families added for issue 28: Kueue's ClusterQueue families (names, labels, values), pending
workloads by reason and Kueue status, ClusterQueue status, entitlement and starved tenants, the
backend's reachability, the last admission pass, the build, the admission wait histogram and pass
results, budgets in seconds (hours as deprecated aliases) and the what-if lane's backlog."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.urls import reverse
from django.utils import timezone

from budgets.metrics import DEPRECATED_ALIASES
from budgets.models import Budget
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.metrics import CONTROL_LOOP_REGISTRY
from queues.models import BackendHealth, Workload, WorkloadReason, default_cluster
from tests.queues.interop.test_metrics import busy_cluster, samples, value  # noqa: F401 - busy_cluster is a fixture
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"


def scrape(client) -> dict:
    return samples(client.get(reverse("metrics")).content.decode())


def counter(name: str, **labels: str) -> float:
    return CONTROL_LOOP_REGISTRY.get_sample_value(name, labels) or 0.0


def test_given_busy_cluster_then_kueue_quota_families_use_kueues_names_labels_and_base_units(client, busy_cluster):
    found = scrape(client)

    training = {"cohort": "research", "cluster_queue": "gpu-training"}
    # 2 pods x 2 GPUs (team-vision) on a100, 1 GPU (team-language) on spot-gpu
    assert value(found, "kueue_cluster_queue_resource_reservation", **training, flavor="a100", resource=GPU) == 4
    assert value(found, "kueue_cluster_queue_resource_usage", **training, flavor="a100", resource=GPU) == 4
    assert value(found, "kueue_cluster_queue_resource_reservation", **training, flavor="spot-gpu", resource=GPU) == 1
    assert value(found, "kueue_cluster_queue_nominal_quota", **training, flavor="a100", resource=GPU) == 16
    assert value(found, "kueue_cluster_queue_borrowing_limit", **training, flavor="default-cpu", resource="cpu") == 64
    assert (
        value(found, "kueue_cluster_queue_borrowing_limit", **training, flavor="default-cpu", resource="memory")
        == 512 * 2**30
    )
    batch = {"cohort": "platform", "cluster_queue": "batch-cpu"}
    assert value(found, "kueue_cluster_queue_lending_limit", **batch, flavor="default-cpu", resource="cpu") == 0.1
    # no limit set: no sample (Kueue's "unlimited"), while the quota cell itself is there
    assert (
        "kueue_cluster_queue_lending_limit",
        frozenset({**batch, "flavor": "default-cpu", "resource": "memory"}.items()),
    ) not in found
    assert (
        value(found, "kueue_cluster_queue_nominal_quota", **batch, flavor="default-cpu", resource="memory")
        == 0.5 * 2**30
    )
    # a quota cell nothing uses reserves 0
    inference = {"cohort": "research", "cluster_queue": "gpu-inference"}
    assert value(found, "kueue_cluster_queue_resource_reservation", **inference, flavor="a100", resource=GPU) == 0
    assert value(found, "kueue_admitted_active_workloads", cluster_queue="gpu-training") == 2


def test_given_pending_reasons_then_kueue_status_and_reasons_split_the_pending_count(client, busy_cluster):
    for name, code in (("etl-2", "InsufficientQuota"), ("train-3", "WaitingForFairShare")):
        WorkloadReason.objects.update_or_create(workload=Workload.objects.get(name=name), defaults={"code": code})
    extra = submit(busy_cluster["etl"], "etl-3")  # not seen by any pass yet

    found = scrape(client)

    assert extra.pending_reason_code == ""
    assert value(found, "kueue_pending_workloads", cluster_queue="batch-cpu", status="inadmissible") == 1
    assert value(found, "kueue_pending_workloads", cluster_queue="batch-cpu", status="active") == 1
    assert value(found, "kueue_pending_workloads", cluster_queue="gpu-training", status="active") == 1
    assert value(found, "kueue_pending_workloads", cluster_queue="gpu-training", status="inadmissible") == 0
    batch = {"cluster_queue": "batch-cpu", "cohort": "platform"}
    by_reason = "fairportal_cluster_queue_pending_workloads_by_reason"
    assert value(found, by_reason, **batch, reason="InsufficientQuota") == 1
    assert value(found, by_reason, **batch, reason="NotEvaluated") == 1
    assert (
        value(found, "fairportal_namespace_pending_workloads_by_reason", namespace="data-eng", reason="NotEvaluated")
        == 1
    )
    assert (
        value(
            found,
            "fairportal_cluster_queue_pending_workloads_by_reason",
            cluster_queue="gpu-training",
            cohort="research",
            reason="WaitingForFairShare",
        )
        == 1
    )


def test_given_a_stopped_cluster_queue_then_its_kueue_status_is_pending_and_the_others_active(client, busy_cluster):
    found = scrape(client)

    # gpu-inference has stopPolicy: Hold in the manifest
    assert value(found, "kueue_cluster_queue_status", cluster_queue="gpu-inference", status="pending") == 1
    assert value(found, "kueue_cluster_queue_status", cluster_queue="gpu-inference", status="active") == 0
    assert value(found, "kueue_cluster_queue_status", cluster_queue="gpu-training", status="active") == 1
    for queue in ("gpu-inference", "gpu-training", "batch-cpu"):
        assert (
            sum(
                value(found, "kueue_cluster_queue_status", cluster_queue=queue, status=s)
                for s in ("pending", "active", "terminating")
            )
            == 1
        )


def test_given_the_backend_failing_then_reachable_is_0_with_the_failures_and_1_again_once_it_answers(client, db):
    backend = django_settings.CLUSTER_BACKEND
    labels = {"cluster": "default", "backend": backend}  # the default cluster: CLUSTER_BACKEND
    assert value(scrape(client), "fairportal_cluster_backend_reachable", **labels) == 1  # no row yet
    BackendHealth.objects.create(
        cluster=default_cluster(), backend=backend, reachable=False, failures=3, unreachable_since=timezone.now()
    )

    down = scrape(client)
    BackendHealth.objects.filter(backend=backend).update(reachable=True, failures=0)
    up = scrape(client)

    assert value(down, "fairportal_cluster_backend_reachable", **labels) == 0
    assert value(down, "fairportal_cluster_backend_consecutive_failures", **labels) == 3
    assert value(up, "fairportal_cluster_backend_reachable", **labels) == 1
    assert value(up, "fairportal_cluster_backend_consecutive_failures", **labels) == 0


def test_given_an_admission_pass_then_waits_from_queue_or_eviction_time_results_and_last_pass_are_exported(client, db):
    cq = make_cluster_queue("wait-cq", cpu="4")
    lq = make_local_queue("team-wait", "main", cq)
    now = timezone.now().replace(microsecond=0)
    fresh = submit(lq, "fresh")
    requeued = submit(lq, "requeued")
    Workload.objects.filter(pk=fresh.pk).update(queued_at=now - timedelta(seconds=300))
    # queued an hour ago, evicted a minute ago: Kueue counts the wait from the requeue
    Workload.objects.filter(pk=requeued.pk).update(
        queued_at=now - timedelta(hours=1), last_evicted_at=now - timedelta(seconds=60)
    )
    labels = {"cluster_queue": "wait-cq"}
    before = {
        "count": counter("kueue_admission_wait_time_seconds_count", **labels),
        "sum": counter("kueue_admission_wait_time_seconds_sum", **labels),
        "le64": counter("kueue_admission_wait_time_seconds_bucket", **labels, le="64.0"),
        "le512": counter("kueue_admission_wait_time_seconds_bucket", **labels, le="512.0"),
        "success": counter("kueue_admission_attempts_total", result="success"),
        "inadmissible": counter("kueue_admission_attempts_total", result="inadmissible"),
    }

    unit = snapshot.unit_for_cluster_queue(cq.id).key
    admitted = admission.run_admission_pass(unit, now=now)
    idle = admission.run_admission_pass(unit, now=now + timedelta(seconds=5))  # nothing to admit: no attempt
    submit(lq, "too-big", cpu="64")  # more than the quota: an attempt that admits nothing
    again = admission.run_admission_pass(unit, now=now + timedelta(seconds=10))
    found = scrape(client)

    assert sorted(admitted.admitted) == ["team-wait/fresh", "team-wait/requeued"]
    assert not idle.admitted and not idle.pending and not again.admitted and again.pending == 1
    assert counter("kueue_admission_wait_time_seconds_count", **labels) - before["count"] == 2
    assert counter("kueue_admission_wait_time_seconds_sum", **labels) - before["sum"] == pytest.approx(360)
    assert counter("kueue_admission_wait_time_seconds_bucket", **labels, le="64.0") - before["le64"] == 1
    assert counter("kueue_admission_wait_time_seconds_bucket", **labels, le="512.0") - before["le512"] == 2
    assert counter("kueue_admitted_workloads_total", **labels) >= 2
    assert counter("kueue_admission_attempts_total", result="success") - before["success"] == 1
    assert counter("kueue_admission_attempts_total", result="inadmissible") - before["inadmissible"] == 1
    last_pass = value(found, "fairportal_cluster_queue_last_admission_pass_timestamp_seconds", cluster_queue="wait-cq")
    assert last_pass == (now + timedelta(seconds=10)).timestamp()
    assert value(found, "kueue_admission_wait_time_seconds_count", **labels) >= 2  # on /metrics too


def test_given_the_demo_then_starved_namespaces_are_the_dashboards_starved_tenants(client, demo):
    from queues.selectors.overview import cluster_overview

    admission.run_all_admission_passes()

    found = scrape(client)

    starved = {
        dict(labels)["namespace"]
        for (name, labels), v in found.items()
        if name == "fairportal_namespace_starved" and v == 1
    }
    served = {
        dict(labels)["namespace"]
        for (name, labels), v in found.items()
        if name == "fairportal_namespace_starved" and v == 0
    }
    assert starved and served
    assert starved == {tenant.namespace for tenant in cluster_overview("6h").starved.tenants}
    for namespace in starved:
        assert value(found, "fairportal_namespace_entitlement_ratio", namespace=namespace) < 1


def test_given_the_build_then_build_info_names_version_python_django_and_backend(client, db):
    import platform

    import django

    found = scrape(client)

    (labels,) = [dict(labels) for name, labels in found if name == "fairportal_build_info"]
    assert labels == {
        "version": django_settings.SPECTACULAR_SETTINGS["VERSION"],
        "python_version": platform.python_version(),
        "django_version": django.get_version(),
        "cluster_backend": django_settings.CLUSTER_BACKEND,
    }
    assert found[("fairportal_build_info", frozenset(labels.items()))] == 1


def test_given_budgets_of_both_kinds_then_seconds_families_split_by_unit_and_hours_stay_as_deprecated(
    client, busy_cluster
):
    Budget.objects.create(
        name="vision-gpu", local_queue=busy_cluster["vision"], kind="ResourceHours", resource=GPU, allocated_hours=500
    )
    Budget.objects.create(name="etl-wall", namespace=busy_cluster["etl"].namespace, allocated_hours=2)

    body = client.get(reverse("metrics")).content.decode()
    found = samples(body)

    gpu = {
        "budget": "vision-gpu",
        "kind": "ResourceHours",
        "target_kind": "local_queue",
        "target": "team-vision/training",
        "resource": GPU,
    }
    wall = {"budget": "etl-wall", "kind": "WallTime", "target_kind": "namespace", "target": "data-eng", "resource": ""}
    assert value(found, "fairportal_budget_allocated_resource_seconds", **gpu) == 500 * 3600
    assert value(found, "fairportal_budget_allocated_seconds", **wall) == 2 * 3600
    assert ("fairportal_budget_allocated_seconds", frozenset(gpu.items())) not in found  # one unit per family
    assert ("fairportal_budget_allocated_resource_seconds", frozenset(wall.items())) not in found
    assert value(found, "fairportal_budget_used_ratio", **gpu) == 0
    # the previous release's names, for one more release, saying so
    assert value(found, "fairportal_budget_allocated_hours", **gpu) == 500
    assert value(found, "fairportal_budget_used_hours", **wall) == 0
    for alias, replacements in DEPRECATED_ALIASES.items():
        (help_line,) = [line for line in body.splitlines() if line.startswith(f"# HELP {alias} ")]
        assert "DEPRECATED" in help_line and all(new in help_line for new in replacements)


def test_given_a_budget_charged_by_real_accounting_then_used_seconds_ratio_and_period_end_show(client, db):
    from budgets.services import reconcile_budget

    cq = make_cluster_queue("metered-cq", cpu="4")
    lq = make_local_queue("team-metered", "main", cq)
    submit(lq, "long-job", cpu="2", duration=None)
    now = timezone.now()
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=now - timedelta(hours=2))
    budget = Budget.objects.create(
        name="metered", local_queue=lq, allocated_hours=4, renewal="weekly", anchor=now - timedelta(days=1)
    )
    reconcile_budget(budget.pk, now=now)

    found = scrape(client)

    labels = {
        "budget": "metered",
        "kind": "WallTime",
        "target_kind": "local_queue",
        "target": "team-metered/main",
        "resource": "",
    }
    assert value(found, "fairportal_budget_used_seconds", **labels) == pytest.approx(2 * 3600, abs=40)
    assert value(found, "fairportal_budget_used_ratio", **labels) == pytest.approx(0.5, abs=0.01)
    state = Budget.objects.select_related("state").get(pk=budget.pk).state
    assert value(found, "fairportal_budget_period_end_timestamp_seconds", **labels) == state.period_end.timestamp()
    assert state.period_end > now


def test_given_runs_on_the_whatif_lane_then_the_backlog_and_oldest_waiting_run_are_exported(client, db):
    from playground.models import Run
    from tests.factories import UserFactory, simulation_run

    owner = UserFactory(username="lane-owner")
    now = timezone.now().replace(microsecond=0)
    for age, status in ((30, "queued"), (600, "queued"), (90, "running"), (4000, "succeeded"), (5000, "failed")):
        run = simulation_run(owner, status=status)
        Run.objects.filter(pk=run.pk).update(created_at=now - timedelta(seconds=age))

    found = scrape(client)

    assert value(found, "fairportal_whatif_runs", status="queued") == 2
    assert value(found, "fairportal_whatif_runs", status="running") == 1
    assert (
        value(found, "fairportal_whatif_oldest_run_created_timestamp_seconds", status="queued")
        == (now - timedelta(seconds=600)).timestamp()
    )
    assert not [
        name
        for name, labels in found
        if name.startswith("fairportal_whatif") and dict(labels).get("status") in ("succeeded", "failed")
    ]
