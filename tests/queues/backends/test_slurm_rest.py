"""The rest transport: slurmrestd with a JWT.

Pure tests check configuration errors, the job description built from sbatch options, and an
unreachable server (a port nothing listens on: a real refused connection). Tests marked
``slurmrest`` talk to a real slurmrestd of a 24.11 or 26.05 local cluster:
``SLURM_REST_URL``, ``SLURM_JWT_FILE`` (or ``SLURM_JWT``) and ``SLURM_REST_USER`` name it
(deploy/slurm/local-slurm.sh start-rest; the token from the cluster's ``scontrol token``).
"""

from __future__ import annotations

import os
import socket
import time

import pytest

from queues.backends.base import BackendUnavailable, SubmissionRefused
from queues.backends.slurm.rest import SlurmRestClient, SlurmRestError, job_description
from tests.queues.backends.slurm_cluster import CLUSTERS

TOKEN = "eyJhbGciOiJIUzI1NiJ9.not-a-real-token.signature"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"url": "ftp://x"}, "SLURM_REST_URL"),
        ({"url": "http://127.0.0.1:1/", "token": ""}, "SLURM_JWT or SLURM_JWT_FILE"),
        ({"url": "http://127.0.0.1:1/", "token": TOKEN, "token_file": "/tmp/x"}, "SLURM_JWT or SLURM_JWT_FILE"),
        ({"url": "http://127.0.0.1:1/", "token": "two words"}, "SLURM_JWT"),
        ({"url": "http://127.0.0.1:1/", "token": TOKEN, "user": "root; rm"}, "SLURM_REST_USER"),
        ({"url": "http://127.0.0.1:1/", "token": TOKEN, "version": "v1"}, "SLURM_REST_VERSION"),
        ({"url": "http://127.0.0.1:1/", "token": TOKEN, "parallel": 0}, "parallel"),
    ],
)
def test_given_bad_configuration_then_the_error_names_the_field_and_never_the_token(arguments, field):
    url = arguments.pop("url")
    arguments.setdefault("token", TOKEN)
    with pytest.raises(ValueError) as raised:
        SlurmRestClient(url, **arguments)
    assert field in str(raised.value)
    assert TOKEN not in str(raised.value)


def test_given_nothing_listening_then_every_call_is_backend_unavailable_without_the_token():
    client = SlurmRestClient(f"http://127.0.0.1:{free_port()}", token=TOKEN, timeout=2)
    began = time.monotonic()
    for call in (client.jobs, lambda: client.release(["1"]), lambda: client.accounting(["1"])):
        with pytest.raises(BackendUnavailable) as raised:
            call()
        assert "unreachable" in str(raised.value)
        assert TOKEN not in str(raised.value) and TOKEN not in repr(raised.value.__cause__)
    assert time.monotonic() - began < 10  # bounded by the timeout
    assert TOKEN not in repr(client)


def test_given_the_backends_sbatch_options_then_the_job_description_asks_for_the_same():
    job = job_description(
        [
            "--ntasks=1",
            "--cpus-per-task=2",
            "--mem=512M",
            "--gres=gpu:1",
            "--hold",
            "--comment=fairportal:a/main",
            "--job-name=train",
            "--output=/dev/null",
            "--time=5",
        ],
        "python train.py",
    )
    assert job["script"] == "#!/bin/sh\npython train.py\n"
    assert (job["tasks"], job["cpus_per_task"], job["hold"], job["comment"], job["name"]) == (
        1,
        2,
        True,
        "fairportal:a/main",
        "train",
    )
    assert job["memory_per_node"]["number"] == 512 and job["time_limit"]["number"] == 5
    assert job["tres_per_node"] == "gres/gpu:1"
    with pytest.raises(SubmissionRefused, match="--exclusive"):
        job_description(["--exclusive=user"], "true")


# --- against a real slurmrestd -----------------------------------------------------------------

rest = pytest.mark.slurmrest


def _rest_endpoints() -> list[tuple[str, dict[str, str]]]:
    """(version, settings) of every slurmrestd to test: each local cluster whose ``rest.env``
    `deploy/slurm/local-slurm.sh start-rest` wrote (`make slurm` starts 24.11's and 26.05's), or
    the one SLURM_REST_URL names."""
    if os.environ.get("SLURM_REST_URL"):
        keys = ("SLURM_REST_URL", "SLURM_JWT", "SLURM_JWT_FILE", "SLURM_REST_USER")
        return [("env", {key: os.environ.get(key, "") for key in keys})]
    found = []
    for version, directory in CLUSTERS:
        env_file = directory / "rest.env" if directory is not None else None
        if env_file is not None and env_file.is_file():
            lines = (line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
            found.append((version, {key.strip(): value.strip() for key, value in lines}))
    return found


REST_ENDPOINTS = _rest_endpoints()


@pytest.fixture(params=REST_ENDPOINTS or [None], ids=[version for version, _ in REST_ENDPOINTS] or ["none"])
def rest_client(request) -> SlurmRestClient:
    if request.param is None:
        message = "no slurmrestd: `make slurm` starts 24.11's and 26.05's (deploy/slurm/local-slurm.sh start-rest)"
        if os.environ.get("FAIRPORTAL_SLURM_DIRS"):
            pytest.fail(message)  # under `make test` the clusters are there: a missing slurmrestd is a failure
        pytest.skip(message)
    _, endpoint = request.param
    return SlurmRestClient(
        endpoint["SLURM_REST_URL"],
        token=endpoint.get("SLURM_JWT", ""),
        token_file=endpoint.get("SLURM_JWT_FILE", ""),
        user=endpoint.get("SLURM_REST_USER", ""),
        timeout=20,
    )


def held_job(client: SlurmRestClient, seconds: int = 2, queue: str = "team-a/main") -> str:
    return client.submit(
        [
            "--ntasks=1",
            "--cpus-per-task=1",
            "--mem=64M",
            "--hold",
            f"--comment=fairportal:{queue}",
            "--job-name=fp-rest",
            "--output=/dev/null",
            "--time=2",
        ],
        f"sleep {seconds}",
    )


def record(client: SlurmRestClient, job_id: str) -> dict:
    return next(job for job in client.jobs() if str(job["job_id"]) == job_id)


def state(client: SlurmRestClient, job_id: str) -> str:
    raw = record(client, job_id)["job_state"]
    return (raw[0] if isinstance(raw, list) else raw) if raw else ""


def wait_for(condition, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.3)
    return value


@rest
def test_given_slurmrestd_then_a_held_job_is_submitted_released_run_and_accounted(rest_client):
    assert rest_client.version() >= "v0.0.40"
    job_id = held_job(rest_client)
    assert record(rest_client, job_id)["state_reason"] == "JobHeldUser"
    assert record(rest_client, job_id)["comment"] == "fairportal:team-a/main"

    assert rest_client.update([job_id], Partition="gpu", AdminComment="fairportal: hello").refused == {}
    assert (record(rest_client, job_id)["partition"], record(rest_client, job_id)["admin_comment"]) == (
        "gpu",
        "fairportal: hello",
    )
    assert rest_client.release([job_id]).refused == {}

    wait_for(lambda: state(rest_client, job_id) == "COMPLETED", timeout=60)
    accounted = wait_for(lambda: rest_client.accounting([job_id]).get(job_id), timeout=30)
    assert accounted["time"]["end"] >= accounted["time"]["start"] > 0


@rest
def test_given_many_jobs_then_one_batch_holds_releases_and_cancels_them_and_refuses_unknown_ids(rest_client):
    jobs = [held_job(rest_client, seconds=30) for _ in range(6)]

    refused = rest_client.release([*jobs, "999999"]).refused

    assert list(refused) == ["999999"] and "Invalid job id" in refused["999999"]
    wait_for(lambda: all(state(rest_client, job) == "RUNNING" for job in jobs))
    pending = held_job(rest_client)  # not started: refused by a requeue (as scontrol requeuehold does)
    requeued = rest_client.requeue_hold([*jobs, pending])
    if rest_client._has("/slurm/{v}/jobs/requeue"):  # 26.05: the running ones requeued held
        assert list(requeued.refused) == [pending] and "pending" in requeued.refused[pending]
        wait_for(
            lambda: all(record(rest_client, job)["state_reason"] in ("JobHeldUser", "JobHeldAdmin") for job in jobs)
        )
    else:  # 24.11: no requeue in the API: the running ones are refused (they keep running), the held one held
        assert set(requeued.refused) == set(jobs) and "no requeue" in requeued.refused[jobs[0]]
    jobs.append(pending)
    assert rest_client.cancel(jobs).refused == {}
    wait_for(lambda: all(state(rest_client, job) == "CANCELLED" for job in jobs))


@rest
def test_given_a_wrong_token_then_backend_unavailable_names_the_setting_never_the_token(rest_client):
    wrong = rest_client._current_token()[:-6] + "AAAAAA"
    client = SlurmRestClient(rest_client.url, token=wrong, user=rest_client.user, timeout=10)

    with pytest.raises(SlurmRestError) as raised:
        client.jobs()

    assert "SLURM_JWT" in str(raised.value)
    assert wrong not in str(raised.value) and rest_client._current_token() not in str(raised.value)
    assert isinstance(raised.value, BackendUnavailable)  # the backend backs off as for an unreachable cli


@pytest.fixture
def rest_backend(rest_client, settings, tmp_path):
    """The control loop's backend on the rest transport (SLURM_TRANSPORT=rest), token from a file."""
    token_file = tmp_path / "jwt"
    token_file.write_text(rest_client._current_token() + "\n")
    settings.CLUSTER_BACKEND = "slurm"
    settings.SLURM_TRANSPORT = "rest"
    settings.SLURM_REST_URL = rest_client.url
    settings.SLURM_JWT_FILE = str(token_file)
    settings.SLURM_REST_USER = rest_client.user
    settings.SLURM_REST_VERSION = ""
    settings.SLURM_FLAVOR_PARTITIONS = {}
    settings.SLURM_ACCOUNT_QUEUES = {}
    settings.CLUSTER_BACKOFF_SECONDS = 1
    return token_file


def rest_queue():
    from fairshare.quantities import parse_millis
    from queues.models import AdmissionMode, ClusterQueue, ClusterQueueQuota, LocalQueue, Namespace, ResourceFlavor

    cq = ClusterQueue.objects.create(name="cq-rest", admission_mode=AdmissionMode.USAGE_BASED)
    flavor = ResourceFlavor.objects.create(name="default")
    for resource in ("cpu", "memory"):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis("64Gi")
        )
    return LocalQueue.objects.create(namespace=Namespace.objects.create(name="team-a"), name="main", cluster_queue=cq)


@rest
@pytest.mark.django_db(transaction=True)
def test_given_the_rest_transport_then_the_loop_imports_admits_releases_and_ends_the_job_at_slurms_times(
    rest_client, rest_backend
):
    from queues.admission import passes as admission
    from queues.models import Workload, WorkloadState
    from queues.services import cluster

    rest_queue()
    job_id = held_job(rest_client, seconds=1)

    report = cluster.sync_cluster()
    workload = Workload.objects.get(cluster_job__external_id=job_id)
    assert report.imported == [workload.pk] and workload.state == WorkloadState.PENDING
    admission.run_all_admission_passes()  # releases through slurmrestd after the commit
    assert Workload.objects.get(pk=workload.pk).state == WorkloadState.ADMITTED

    def finished() -> bool:
        cluster.sync_cluster()
        return Workload.objects.get(pk=workload.pk).state == WorkloadState.FINISHED

    wait_for(finished, timeout=60)
    times = rest_client.accounting([job_id])[job_id]["time"]
    workload = Workload.objects.get(pk=workload.pk)
    assert (int(workload.started_at.timestamp()), int(workload.finished_at.timestamp())) == (
        times["start"],
        times["end"],
    )


@rest
@pytest.mark.django_db(transaction=True)
def test_given_a_rejected_token_then_the_backend_is_marked_unreachable_and_no_page_shows_the_token(
    rest_client, rest_backend, admin_client
):
    from queues.services import cluster

    rest_queue()
    wrong = rest_client._current_token()[:-6] + "AAAAAA"
    rest_backend.write_text(wrong + "\n")

    cluster.sync_cluster()

    status = cluster.backend_status()
    assert not status.reachable and "SLURM_JWT" in status.last_error
    page = admin_client.get("/").content.decode() + admin_client.get("/admin/queues/backendhealth/").content.decode()
    assert "unreachable" in page
    for token in (wrong, rest_client._current_token()):
        assert token not in status.last_error and token not in page
