"""``/metrics``: Prometheus text format, values in base units, every level (LocalQueue,
ClusterQueue, namespace, cohort subtree), a fixed number of queries per scrape."""

from __future__ import annotations

import pytest
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from budgets.metrics import BudgetCollector, BudgetState
from budgets.models import Budget
from queues import services
from queues.interop.collector import QUERIES, DatabaseCollector
from queues.interop.kueue.apply import import_manifests
from queues.metrics import ADMISSION_PASS_DURATION, ADMISSIONS
from queues.models import ClusterQueue, LocalQueue, ResourceFlavor, Workload, WorkloadState
from queues.services.workloads import sync_workload_resources

pytestmark = pytest.mark.django_db


def samples(body: str) -> dict[tuple[str, frozenset], float]:
    found = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float:
    return found[(name, frozenset(labels.items()))]


def admit(local_queue: LocalQueue, name: str, requests: dict[str, str], flavor: str, count: int = 1) -> Workload:
    """Submit and mark admitted (the control loop's job, which is not merged yet)."""
    workload = services.submit_workload(
        local_queue=local_queue, name=name, pod_sets=[{"count": count, "requests": requests}]
    )
    workload.state = WorkloadState.ADMITTED
    workload.cluster_queue = local_queue.cluster_queue
    workload.flavor_assignment = dict.fromkeys(requests, flavor)
    workload.save()
    sync_workload_resources(workload)
    return workload


@pytest.fixture
def busy_cluster(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)
    vision = LocalQueue.objects.get(namespace__name="team-vision", name="training")
    language = LocalQueue.objects.get(namespace__name="team-language", name="training")
    etl = LocalQueue.objects.get(namespace__name="data-eng", name="etl")
    admit(vision, "train-1", {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"}, "a100", count=2)
    admit(language, "train-2", {"nvidia.com/gpu": "1"}, "spot-gpu")
    admit(etl, "etl-1", {"cpu": "100m"}, "default-cpu")
    services.submit_workload(local_queue=vision, name="train-3", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    services.submit_workload(local_queue=etl, name="etl-2", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    LocalQueue.objects.filter(pk=vision.pk).update(
        consumed_resources={"cpu": 2500.0, "nvidia.com/gpu": 1500.5}, weighted_share=0.83
    )
    return {"vision": vision, "language": language, "etl": etl}


def test_given_busy_cluster_when_scraped_then_local_queue_counts_and_usage_are_in_base_units(client, busy_cluster):
    response = client.get(reverse("metrics"))

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    found = samples(response.content.decode())
    lq = {"namespace": "team-vision", "local_queue": "training", "cluster_queue": "gpu-training"}
    assert value(found, "fairportal_local_queue_admitted_workloads", **lq) == 1
    assert value(found, "fairportal_local_queue_pending_workloads", **lq) == 1
    assert value(found, "fairportal_local_queue_admitted_usage", **lq, resource="cpu", flavor="a100") == 16
    assert value(found, "fairportal_local_queue_admitted_usage", **lq, resource="memory", flavor="a100") == 128 * 2**30
    assert value(found, "fairportal_local_queue_admitted_usage", **lq, resource="nvidia.com/gpu", flavor="a100") == 4
    assert value(found, "fairportal_local_queue_decayed_usage", **lq, resource="cpu") == 2.5
    assert value(found, "fairportal_local_queue_decayed_usage", **lq, resource="nvidia.com/gpu") == 1.5005
    assert value(found, "fairportal_local_queue_weighted_share", **lq) == 0.83
    assert value(found, "fairportal_local_queue_weight", **lq) == 3
    etl = {"namespace": "data-eng", "local_queue": "etl", "cluster_queue": "batch-cpu"}
    assert value(found, "fairportal_local_queue_admitted_usage", **etl, resource="cpu", flavor="default-cpu") == 0.1


def test_given_busy_cluster_when_scraped_then_cluster_queue_namespace_and_cohort_levels_add_up(client, busy_cluster):
    found = samples(client.get(reverse("metrics")).content.decode())

    training = {"cluster_queue": "gpu-training", "cohort": "research"}
    assert value(found, "fairportal_cluster_queue_admitted_workloads", **training) == 2
    assert value(found, "fairportal_cluster_queue_pending_workloads", **training) == 1
    assert (
        value(
            found, "fairportal_cluster_queue_admitted_usage", **training, resource="nvidia.com/gpu", flavor="spot-gpu"
        )
        == 1
    )
    assert value(found, "fairportal_namespace_admitted_workloads", namespace="data-eng") == 1
    assert value(found, "fairportal_namespace_pending_workloads", namespace="data-eng") == 1
    # the org cohort's subtree holds all three ClusterQueues (through research and platform)
    assert value(found, "fairportal_cohort_admitted_workloads", cohort="org", parent="") == 3
    assert value(found, "fairportal_cohort_pending_workloads", cohort="org", parent="") == 2
    assert value(found, "fairportal_cohort_admitted_workloads", cohort="research", parent="org") == 2
    assert (
        value(found, "fairportal_cohort_admitted_usage", cohort="org", parent="", resource="cpu", flavor="default-cpu")
        == 0.1
    )
    assert value(found, "fairportal_cohort_weight", cohort="platform", parent="org") == 0.5


def test_given_quotas_when_scraped_then_nominal_quotas_and_cluster_capacity_are_exported(client, busy_cluster):
    found = samples(client.get(reverse("metrics")).content.decode())

    assert (
        value(
            found,
            "fairportal_cluster_queue_nominal_quota",
            cluster_queue="gpu-training",
            cohort="research",
            flavor="a100",
            resource="nvidia.com/gpu",
        )
        == 16
    )
    assert (
        value(found, "fairportal_cohort_nominal_quota", cohort="research", flavor="a100", resource="nvidia.com/gpu")
        == 8
    )
    # 16 + 8 (gpu-training) + 4 (gpu-inference) + 8 (research's own)
    assert value(found, "fairportal_cluster_capacity", resource="nvidia.com/gpu") == 36
    assert value(found, "fairportal_cluster_capacity", resource="cpu") == 128 + 32 + 0.25


def test_given_budget_when_scraped_then_allocated_and_used_resource_seconds_are_exported(client, busy_cluster):
    Budget.objects.create(
        name="vision-gpu",
        local_queue=busy_cluster["vision"],
        kind="ResourceHours",
        resource="nvidia.com/gpu",
        allocated_hours=500,
    )

    found = samples(client.get(reverse("metrics")).content.decode())

    labels = {
        "budget": "vision-gpu",
        "kind": "ResourceHours",
        "target_kind": "local_queue",
        "target": "team-vision/training",
        "resource": "nvidia.com/gpu",
    }
    assert value(found, "fairportal_budget_allocated_resource_seconds", **labels) == 500 * 3600
    assert value(found, "fairportal_budget_used_resource_seconds", **labels) == 0  # no accounting run yet
    assert value(found, "fairportal_budget_exhausted", **labels) == 0

    budget = Budget.objects.get()
    with_accounting = BudgetCollector(
        budget_usage=lambda budgets: {budget.pk: BudgetState(used_hours=512.5, exhausted=True)}
    )
    families = {f.name: f for f in with_accounting.collect()}
    assert families["fairportal_budget_used_resource_seconds"].samples[0].value == 512.5 * 3600
    assert families["fairportal_budget_used_ratio"].samples[0].value == 512.5 / 500
    assert families["fairportal_budget_exhausted"].samples[0].value == 1.0


def test_given_control_loop_observations_then_they_appear_on_the_same_page(client, db):
    ADMISSIONS.labels(cluster_queue="cq-metrics-test", admission_mode="TimeAware").inc(3)
    ADMISSION_PASS_DURATION.labels(scope="cohort:metrics-test").observe(0.04)

    found = samples(client.get(reverse("metrics")).content.decode())

    assert value(found, "fairportal_admissions_total", cluster_queue="cq-metrics-test", admission_mode="TimeAware") == 3
    assert value(found, "fairportal_admission_pass_duration_seconds_count", scope="cohort:metrics-test") == 1


def test_given_bigger_cluster_then_a_scrape_makes_the_same_number_of_queries(busy_cluster, django_assert_num_queries):
    def scrape() -> None:
        list(DatabaseCollector().collect())
        list(BudgetCollector().collect())

    with django_assert_num_queries(QUERIES + 1):
        scrape()
    cq = ClusterQueue.objects.get(name="batch-cpu")
    flavor = ResourceFlavor.objects.get(name="default-cpu")
    for i in range(10):
        queue = LocalQueue.objects.create(namespace=busy_cluster["etl"].namespace, name=f"extra-{i}", cluster_queue=cq)
        admit(queue, f"extra-{i}", {"cpu": "1", "memory": "1Gi"}, flavor.name)
    with django_assert_num_queries(QUERIES + 1):
        scrape()


def test_given_metrics_token_when_scraped_without_it_then_401_and_with_it_200(client, settings, db):
    settings.METRICS_TOKEN = "s3cret"

    assert client.get(reverse("metrics")).status_code == 401
    assert client.get(reverse("metrics"), HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get(reverse("metrics"), HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_given_budget_used_up_by_real_accounting_when_scraped_then_used_and_exhausted_show(client, db):
    from datetime import timedelta

    from django.utils import timezone

    from budgets.services import reconcile_budget
    from queues.admission import load as snapshot
    from queues.admission import passes as admission
    from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

    cq = make_cluster_queue("metered-cq", cpu="4")
    lq = make_local_queue("team-metered", "main", cq)
    submit(lq, "long-job", cpu="2", duration=None)
    now = timezone.now()
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=now - timedelta(hours=2))
    budget = Budget.objects.create(name="metered", local_queue=lq, allocated_hours=1, anchor=now - timedelta(days=1))
    reconcile_budget(budget.pk, now=now)

    found = samples(client.get(reverse("metrics")).content.decode())

    labels = {
        "budget": "metered",
        "kind": "WallTime",
        "target_kind": "local_queue",
        "target": "team-metered/main",
        "resource": "",
    }
    assert value(found, "fairportal_budget_used_seconds", **labels) == pytest.approx(7200, abs=40)
    assert value(found, "fairportal_budget_exhausted", **labels) == 1


def test_given_no_token_and_a_public_bind_address_when_scraped_then_401_saying_to_set_one(client, settings, db):
    settings.METRICS_TOKEN = ""
    settings.BIND_IS_LOOPBACK = False  # BIND_ADDRESS=0.0.0.0

    response = client.get(reverse("metrics"))

    assert response.status_code == 401
    assert "set METRICS_TOKEN" in response.content.decode()
    assert "fairportal_" not in response.content.decode()


def test_given_no_token_on_a_loopback_bound_server_then_the_scrape_is_open(client, settings, db):
    settings.METRICS_TOKEN = ""
    settings.BIND_IS_LOOPBACK = True  # BIND_ADDRESS=127.0.0.1, the default

    assert client.get(reverse("metrics")).status_code == 200


def test_given_tenant_labels_off_then_no_sample_names_a_tenant_and_cluster_queue_totals_stay(
    client, busy_cluster, settings
):
    Budget.objects.create(
        name="vision-gpu",
        local_queue=busy_cluster["vision"],
        kind="ResourceHours",
        resource="nvidia.com/gpu",
        allocated_hours=500,
    )
    with_labels = samples(client.get(reverse("metrics")).content.decode())
    settings.METRICS_TENANT_LABELS = False

    body = client.get(reverse("metrics")).content.decode()

    found = samples(body)
    tenant_labels = {"namespace", "local_queue", "budget", "target"}
    assert any(tenant_labels & {k for k, _ in labels} for _, labels in with_labels)  # on by default
    assert not [name for name, labels in found if tenant_labels & {k for k, _ in labels}]
    for tenant_name in ("team-vision", "team-language", "vision-gpu"):
        assert tenant_name not in body
    cluster_queue_samples = {key: v for key, v in with_labels.items() if key[0].startswith("fairportal_cluster_queue_")}
    assert cluster_queue_samples and all(found[key] == v for key, v in cluster_queue_samples.items())
