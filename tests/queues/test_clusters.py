"""Several clusters behind one fairportal (issue 27's foundation).

Flavors belong to clusters, the flavor the pass assigns decides the cluster a workload runs on,
each cluster syncs, backs off and reports its health on its own, and an unreachable cluster
holds only the admissions to its own flavors. The unreachable cluster here is a real Slurm
backend pointed at client tools that do not exist (the same ``BackendUnavailable`` a stopped
slurmctld gives); the running clusters are the built-in simulated ones.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from fairshare.quantities import parse_millis
from queues import backends
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.backends.slurm.backend import SlurmBackend
from queues.backends.slurm.client import SlurmClient
from queues.backends.slurm.rest import SlurmRestClient
from queues.models import (
    BackendHealth,
    Cluster,
    ClusterJob,
    ClusterQueue,
    ClusterQueueQuota,
    ResourceFlavor,
    Workload,
    WorkloadState,
    default_cluster,
)
from queues.services import cluster as cluster_service
from queues.services import transitions
from tests.factories import TenantMembershipFactory, UserFactory
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db

BROKEN_SLURM = {"backend": "slurm", "slurm_bin_dir": "/nonexistent/slurm/bin", "slurm_conf": "/nonexistent/slurm.conf"}


def two_flavor_queue(name: str, flavors: list[tuple[str, Cluster, str]]) -> ClusterQueue:
    """A ClusterQueue with one resource group (cpu) over ``flavors`` in this order."""
    cq = ClusterQueue.objects.create(name=name, admission_mode="UsageBasedAdmissionFairSharing")
    for order, (flavor, on, cpu) in enumerate(flavors):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq,
            flavor=ResourceFlavor.objects.create(name=flavor, cluster=on),
            resource="cpu",
            nominal=parse_millis(cpu),
            flavor_order=order,
        )
    return cq


def run_pass(cq: ClusterQueue, now=None):
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=now)


# --- the default cluster -------------------------------------------------------------------


def test_given_a_fresh_install_then_one_default_cluster_from_settings_owns_new_flavors(settings):
    settings.CLUSTER_BACKEND = "external"
    flavor = ResourceFlavor.objects.create(name="plain")

    default = default_cluster()
    assert (default.name, default.from_settings, default.backend) == ("default", True, "")
    assert default.effective_backend == "external"  # CLUSTER_BACKEND, read at each use
    assert flavor.cluster == default
    assert backends.current().name == "external"
    assert Cluster.objects.count() == 1


def test_given_the_default_cluster_then_its_connection_cannot_be_set_and_it_cannot_be_deleted(admin_client):
    default = default_cluster()
    default.slurm_conf = "/etc/slurm/slurm.conf"
    with pytest.raises(Exception, match="takes this from the settings"):
        default.full_clean()

    api = APIClient()
    api.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))
    response = api.delete(f"/api/v1/clusters/{default.pk}/")
    # refused by the delete service, as every delete a state forbids: 409 (the request was valid)
    assert response.status_code == 409
    assert response.json() == {
        "detail": "The default cluster (from the settings) cannot be deleted.",
        "code": "protected",
    }
    assert Cluster.objects.filter(pk=default.pk).exists()


# --- placement by flavor ----------------------------------------------------------------------


def test_given_a_queue_over_two_clusters_then_each_admission_runs_on_its_flavors_cluster():
    default = default_cluster()
    other = Cluster.objects.create(name="second", backend="simulated")
    cq = two_flavor_queue("spread", [("on-default", default, "2"), ("on-second", other, "2")])
    lq = make_local_queue("team-a", "main", cq)
    jobs = [submit(lq, f"job-{index}", cpu="1", duration=600) for index in range(5)]

    result = run_pass(cq)

    assert len(result.admitted) == 4 and not result.backed_off
    placed = {
        w.name: (w.flavor_assignment.get("cpu"), w.cluster.name if w.cluster else None) for w in Workload.objects.all()
    }
    assert placed[jobs[0].name] == ("on-default", "default")  # Kueue's order: the first flavor first
    assert placed[jobs[1].name] == ("on-default", "default")
    assert placed[jobs[2].name] == ("on-second", "second")  # the first is full: the next flavor, its cluster
    assert placed[jobs[3].name] == ("on-second", "second")
    assert placed[jobs[4].name] == (None, None)  # pending: no cluster yet


def test_given_each_cluster_synced_then_its_simulated_clock_finishes_only_its_own_workloads():
    default = default_cluster()
    other = Cluster.objects.create(name="second", backend="simulated")
    cq = two_flavor_queue("spread", [("on-default", default, "1"), ("on-second", other, "1")])
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "first", duration=60)
    submit(lq, "second", duration=60)
    start = timezone.now() - timedelta(hours=1)
    run_pass(cq, now=start)

    report = cluster_service.sync_cluster(cluster=other)

    states = dict(Workload.objects.values_list("name", "state"))
    assert states == {"first": WorkloadState.ADMITTED, "second": WorkloadState.FINISHED}
    assert report.finished == [Workload.objects.get(name="second").pk]
    assert cluster_service.sync_cluster().finished == [Workload.objects.get(name="first").pk]  # every cluster


def test_given_flavors_of_two_clusters_in_two_resource_groups_then_the_queue_is_refused_naming_the_field():
    other = Cluster.objects.create(name="second", backend="simulated")
    ResourceFlavor.objects.create(name="cpu-here")
    ResourceFlavor.objects.create(name="gpu-there", cluster=other)
    api = APIClient()
    api.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))

    response = api.post(
        "/api/v1/cluster-queues/",
        {
            "name": "mixed",
            "quotas": [
                {"flavor": "cpu-here", "resource": "cpu", "nominal": "8"},
                {"flavor": "gpu-there", "resource": "nvidia.com/gpu", "nominal": "2"},
            ],
        },
        format="json",
    )

    assert response.status_code == 400
    assert "a workload would run on two clusters" in str(response.json()["quotas"])
    assert not ClusterQueue.objects.filter(name="mixed").exists()


# --- per-cluster health ---------------------------------------------------------------------


def test_given_one_cluster_unreachable_then_only_admissions_to_its_flavors_wait_and_it_says_so(client):
    default = default_cluster()
    down = Cluster.objects.create(name="down", **BROKEN_SLURM)
    cq = two_flavor_queue("spread", [("on-default", default, "1"), ("on-down", down, "4")])
    lq = make_local_queue("team-a", "main", cq)
    first, second = submit(lq, "first"), submit(lq, "second")

    report = cluster_service.sync_cluster()  # the simulated default answers, the broken Slurm does not
    result = run_pass(cq)

    assert report.backed_off
    health = {row.cluster.name: row.reachable for row in BackendHealth.objects.select_related("cluster")}
    assert health == {"default": True, "down": False}
    assert cluster_service.unavailable_flavors() == frozenset({"on-down"})
    assert not result.backed_off and result.admitted == [f"team-a/{first.name}"]
    second.refresh_from_db()
    assert second.state == WorkloadState.PENDING
    assert second.pending_reason_message.endswith("; flavor on-down unavailable now (cluster down or disabled)")

    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["cluster"].startswith("cluster down (backend slurm) unreachable since ")
    metrics = client.get("/metrics").content.decode()
    assert 'fairportal_cluster_backend_reachable{backend="slurm",cluster="down"} 0.0' in metrics
    assert 'fairportal_cluster_backend_reachable{backend="simulated",cluster="default"} 1.0' in metrics


def test_given_one_cluster_unreachable_then_the_overview_names_it_and_shows_every_clusters_health(client):
    default_cluster()
    down = Cluster.objects.create(name="down", **BROKEN_SLURM)
    cluster_service.sync_cluster()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))

    page = client.get("/").content.decode()

    assert "Cluster down (backend slurm) unreachable" in page
    assert "the other clusters go on" in page
    assert f'data-cluster="{down.name}"' in page and 'data-cluster="default"' in page


def test_given_every_flavor_of_a_unit_unavailable_then_the_pass_decides_nothing_as_before():
    down = Cluster.objects.create(name="down", **BROKEN_SLURM)
    cq = two_flavor_queue("only-down", [("on-down", down, "4")])
    lq = make_local_queue("team-a", "main", cq)
    waiting = submit(lq, "waits")
    cluster_service.sync_cluster(cluster=down)

    result = run_pass(cq)

    assert result.backed_off and result.admitted == []
    waiting.refresh_from_db()
    assert waiting.state == WorkloadState.PENDING and waiting.pending_reason_code == ""  # nothing written


def test_given_a_disabled_cluster_then_it_is_not_synced_and_its_flavors_take_no_admissions():
    off = Cluster.objects.create(name="off", enabled=False, **BROKEN_SLURM)
    default = default_cluster()
    cq = two_flavor_queue("spread", [("on-off", off, "4"), ("on-default", default, "1")])
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "a")
    submit(lq, "b")

    report = cluster_service.sync_cluster()
    result = run_pass(cq)

    assert not report.backed_off  # the broken, disabled cluster was never called
    assert not BackendHealth.objects.filter(cluster=off).exists()
    assert [Workload.objects.get(name=key.split("/")[1]).cluster for key in result.admitted] == [default]


# --- backends per cluster ---------------------------------------------------------------------


def test_given_a_slurm_cluster_row_then_its_backend_uses_its_own_tools_conf_and_maps():
    row = Cluster.objects.create(
        name="old-slurm",
        backend="slurm",
        slurm_bin_dir="/opt/slurm-22.05/bin",
        slurm_conf="/etc/slurm-old/slurm.conf",
        flavor_partitions={"cpu-old": "main"},
        account_queues={"physics": "team-physics/main"},
    )

    backend = backends.backend_for(row)

    assert isinstance(backend, SlurmBackend) and backend.cluster == row
    assert isinstance(backend.client, SlurmClient)
    assert backend.client.bin_dir == "/opt/slurm-22.05/bin"
    assert backend.client.env["SLURM_CONF"] == "/etc/slurm-old/slurm.conf"
    assert backend.flavor_partitions == {"cpu-old": "main"}
    assert backend.account_queues == {"physics": "team-physics/main"}


def test_given_a_rest_cluster_then_the_token_comes_from_where_the_row_points_and_a_missing_one_backs_off(
    monkeypatch,
):
    row = Cluster.objects.create(
        name="rest-slurm",
        backend="slurm",
        slurm_transport="rest",
        rest_url="http://127.0.0.1:1",
        rest_secret="env:FP_TEST_CLUSTER_JWT",
        rest_user="fairportal",
    )
    monkeypatch.setenv("FP_TEST_CLUSTER_JWT", "header.payload.signature")
    client = backends.backend_for(row).client
    assert isinstance(client, SlurmRestClient) and client.url == "http://127.0.0.1:1"
    assert "header.payload.signature" not in repr(client)

    monkeypatch.delenv("FP_TEST_CLUSTER_JWT")
    report = cluster_service.sync_cluster(cluster=row)
    assert report.backed_off
    assert "cluster rest-slurm" in BackendHealth.objects.get(cluster=row).last_error


def test_given_two_slurm_clusters_then_the_same_job_id_links_once_on_each():
    other = Cluster.objects.create(name="second", **BROKEN_SLURM)
    ClusterJob.objects.create(backend="slurm", external_id="5")  # on the default cluster
    ClusterJob.objects.create(backend="slurm", cluster=other, external_id="5")

    assert ClusterJob.objects.filter(external_id="5").count() == 2
    with pytest.raises(Exception, match="cluster_job_unique_external_id"):
        ClusterJob.objects.create(backend="slurm", cluster=other, external_id="5")


# --- API and filters ----------------------------------------------------------------------------


def test_given_the_clusters_api_then_admins_write_and_tenants_read_names_and_health_only():
    admin = APIClient()
    admin.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))
    tenant = APIClient()
    tenant.force_authenticate(TenantMembershipFactory(namespace__name="team-a").user)

    created = admin.post(
        "/api/v1/clusters/",
        {
            "name": "gpu",
            "backend": "slurm",
            "slurm_conf": "/etc/slurm-gpu/slurm.conf",
            "flavor_partitions": {"a100": "gpu"},
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["health"]["reachable"] is True

    seen = tenant.get("/api/v1/clusters/").json()["results"]
    assert {row["name"] for row in seen} == {"default", "gpu"}
    assert all(set(row) == {"id", "name", "enabled", "health", "figures"} for row in seen)
    assert all("last_error" not in row["health"] for row in seen)
    assert tenant.post("/api/v1/clusters/", {"name": "mine", "backend": "simulated"}, format="json").status_code == 403
    assert not Cluster.objects.filter(name="mine").exists()


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"name": "Bad_Name", "backend": "simulated"}, "name", "not a valid name"),
        ({"name": "x", "backend": "kubernetes"}, "backend", "not a valid choice"),
        ({"name": "x", "backend": "slurm", "rest_secret": "eyJhbGciOiJIUzI1NiJ9.e30.x"}, "rest_secret", "env:"),
        ({"name": "x", "backend": "slurm", "slurm_conf": "relative/slurm.conf"}, "slurm_conf", "absolute path"),
        ({"name": "x", "backend": "slurm", "rest_user": "root; rm"}, "rest_user", "user name"),
        (
            {"name": "x", "backend": "slurm", "flavor_partitions": {"a100": "bad partition!"}},
            "flavor_partitions",
            "not a valid",
        ),
        ({"name": "x", "backend": "slurm", "account_queues": {"phys": "no-slash"}}, "account_queues", "not a valid"),
        ({"name": "x" * 64, "backend": "simulated"}, "name", "63"),
    ],
)
def test_given_a_bad_cluster_then_400_names_the_field_and_nothing_is_stored(body, field, words):
    admin = APIClient()
    admin.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))
    before = Cluster.objects.count()

    response = admin.post("/api/v1/clusters/", body, format="json")

    assert response.status_code == 400
    assert words in str(response.json()[field])
    assert len(str(response.json())) < 2000  # no unbounded echo
    assert Cluster.objects.count() == before


def test_given_workloads_on_two_clusters_then_the_api_filters_them_by_cluster():
    default = default_cluster()
    other = Cluster.objects.create(name="second", backend="simulated")
    cq = two_flavor_queue("spread", [("on-default", default, "1"), ("on-second", other, "1")])
    lq = make_local_queue("team-a", "main", cq)
    for name in ("a", "b", "c"):
        submit(lq, name)
    run_pass(cq)
    api = APIClient()
    api.force_authenticate(UserFactory(username="root", is_staff=True, is_superuser=True))

    def names(cluster: str) -> list[str]:
        rows = api.get("/api/v1/workloads/", {"cluster": cluster}).json()["results"]
        return sorted(row["name"] for row in rows)

    assert names("default") == ["a"]
    assert names("second") == ["b"]
    assert names("nowhere") == []
    row = api.get("/api/v1/workloads/", {"cluster": "second"}).json()["results"][0]
    assert row["cluster"] == "second"


# --- the migration ---------------------------------------------------------------------------

BEFORE = [("queues", "0017_reason_shortages")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_given_an_install_before_clusters_when_migrated_then_everything_is_on_the_default_cluster_and_works(settings):
    settings.CLUSTER_BACKEND = "simulated"
    cq = make_cluster_queue("cq-m", cpu="2")
    lq = make_local_queue("team-a", "main", cq)
    finished, running, waiting = submit(lq, "done", duration=60), submit(lq, "runs", duration=60), submit(lq, "waits")
    start = timezone.now() - timedelta(minutes=30)
    flavors = dict(ResourceFlavor.objects.values_list("name", "id"))
    for workload in (finished, running):
        transitions.admit(
            workload_id=workload.pk,
            cluster_queue_id=cq.pk,
            assignment={"cpu": "default"},
            flavor_ids=flavors,
            now=start,
            started=True,
        )
    transitions.finish_many(
        [transitions.Finish(finished.pk, start + timedelta(seconds=60), WorkloadState.FINISHED, "")]
    )
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(BEFORE).loader.project_state(BEFORE).apps
        old_health = old.get_model("queues", "BackendHealth")
        old_health.objects.all().delete()
        old_health.objects.create(backend="simulated", reachable=False, failures=2, unreachable_since=start)
        old_health.objects.create(backend="slurm", reachable=False, failures=9)  # stale: another backend
        old.get_model("queues", "ClusterJob").objects.create(backend="slurm", external_id="41", workload_id=waiting.pk)
        assert not any(f.name == "cluster" for f in old.get_model("queues", "ResourceFlavor")._meta.fields)
    finally:
        _migrate(latest)

    default = Cluster.objects.get()
    assert (default.name, default.from_settings, default.backend, default.enabled) == ("default", True, "", True)
    assert set(ResourceFlavor.objects.values_list("cluster_id", flat=True)) == {default.pk}
    on = dict(Workload.objects.values_list("name", "cluster_id"))
    assert on == {"done": default.pk, "runs": default.pk, "waits": default.pk}  # "waits" has a job on it
    assert ClusterJob.objects.get().cluster == default
    health = BackendHealth.objects.get()
    assert (health.cluster, health.backend, health.reachable, health.failures) == (default, "simulated", False, 2)

    # ...and it behaves the same: the default cluster's clock finishes what ran, the pass admits.
    BackendHealth.objects.update(reachable=True, failures=0, retry_at=None)
    report = cluster_service.sync_cluster()
    assert report.finished == [running.pk]
    result = run_pass(cq)
    assert result.admitted == [f"team-a/{waiting.name}"]
    admitted = Workload.objects.get(pk=waiting.pk)
    assert admitted.cluster == default and admitted.started_at is not None  # simulated: starts on admission


def test_given_workloads_on_two_clusters_then_the_dashboard_list_filters_them_by_cluster(client):
    default = default_cluster()
    other = Cluster.objects.create(name="second", backend="simulated")
    cq = two_flavor_queue("spread", [("on-default", default, "1"), ("on-second", other, "1")])
    lq = make_local_queue("team-a", "main", cq)
    for name in ("alpha", "bravo"):
        submit(lq, name)
    run_pass(cq)
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))

    page = client.get("/workloads/", {"cluster": "second"}).content.decode()

    assert "bravo" in page and "alpha" not in page
