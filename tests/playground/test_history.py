"""Slurm history and SWF traces as scenarios (``playground.history``), the ``import_history``
command, the start form's history source, and at which level each admission mode acts."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.urls import reverse

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate
from playground import history
from playground.compare import MODE_LEVELS, mode_levels
from playground.models import Scenario

FIXTURES = Path(__file__).resolve().parents[1] / "queues" / "backends" / "fixtures"

# A hand-written SWF trace: three users of two groups, two partitions, one cancelled job
# (run time -1) and one with no allocated processors (requested ones used).
SWF_SAMPLE = """\
; Version: 2.2
; Computer: hand-written sample
; MaxProcs: 16
;
1    0     5   600  4  -1  -1  4  1200 -1 1 1 1 -1 1 1 -1 -1
2   10     0   300  2  -1  1024  2  600 -1 1 2 1 -1 1 1 -1 -1
3   20    -1    -1  8  -1  -1  8  600 -1 5 3 2 -1 1 1 -1 -1
4   30     0  3600 -1  -1  -1  8 7200 -1 1 3 2 -1 1 2 -1 -1
5   60     2    45  1  -1  -1  1  100 -1 1 1 1 -1 1 1 -1 -1
6  120     0   900  16 -1  -1 16 1800 -1 1 2 1 -1 1 1 -1 -1
"""


# --- sacct, each recorded version ------------------------------------------------------------


@pytest.mark.parametrize("version", ["22.05", "24.11", "26.05"])
def test_given_each_versions_real_sacct_then_jobs_that_ran_become_workloads(version):
    text = (FIXTURES / f"slurm-{version}" / "sacct.json").read_text()
    parsed = history.read_sacct(text)
    document = history.to_scenario(parsed, layout="account", mode="drs")

    ran = {job.name for job in parsed.jobs}
    assert len(ran) >= 4 and parsed.skipped >= 6  # pending jobs never ran: skipped
    assert document["namespaces"] == [{"name": "root"}]
    assert document["localQueues"] == [{"name": "root/root", "clusterQueue": "pool"}]
    assert document["resourceFlavors"] == [{"name": "main"}]
    pool = document["clusterQueues"][0]
    assert pool["admissionScope"] == {"admissionMode": "DominantResourceShare"}
    by_name = {w["name"]: w for w in document["workloads"]}
    running = next(w for w in by_name.values() if w["podSets"][0]["requests"].get("nvidia.com/gpu"))
    assert running["podSets"][0]["requests"] == {"cpu": "4", "memory": "2Gi", "nvidia.com/gpu": "2"}
    assert pool["quotas"][0]["resources"]["nvidia.com/gpu"] == {"nominal": "2"}
    assert min(int(w["submitAt"].rstrip("s")) for w in by_name.values()) == 0
    result = simulate(parse_scenario(document))
    assert result["summary"]["workloads"]["finished"] == len(by_name)


def test_given_22_05_sacct_then_a_requeued_job_keeps_both_records():
    parsed = history.read_sacct((FIXTURES / "slurm-22.05" / "sacct.json").read_text())
    names = [job.name for job in parsed.jobs]
    assert "job-1" in names and len(names) == len(set(names))
    first = next(job for job in parsed.jobs if job.name == "job-1")
    assert (first.cpus, first.memory, first.runtime) == (2, 1024 * 2**20, 2)


def test_given_a_period_then_only_jobs_submitted_in_it_are_replayed_from_its_start():
    parsed = history.read_swf(SWF_SAMPLE)
    document = history.to_scenario(parsed, start=15, end=100)
    assert [w["name"] for w in document["workloads"]] == ["job-4", "job-5"]
    assert [w["submitAt"] for w in document["workloads"]] == ["15s", "45s"]


# --- SWF --------------------------------------------------------------------------------------


def test_given_the_swf_sample_then_users_groups_partitions_times_and_sizes_are_kept():
    parsed = history.read_swf(SWF_SAMPLE)
    assert parsed.skipped == 1 and parsed.max_procs == 16
    document = history.to_scenario(parsed, layout="account")
    assert [n["name"] for n in document["namespaces"]] == ["g1", "g2"]
    assert [q["name"] for q in document["localQueues"]] == ["g1/u1", "g1/u2", "g2/u3"]
    assert [f["name"] for f in document["resourceFlavors"]] == ["p1", "p2"]
    by_name = {w["name"]: w for w in document["workloads"]}
    assert set(by_name) == {"job-1", "job-2", "job-4", "job-5", "job-6"}
    assert by_name["job-2"] == {
        "name": "job-2",
        "localQueue": "g1/u2",
        "submitAt": "10s",
        "duration": "300s",
        "podSets": [{"count": 1, "requests": {"cpu": "2", "memory": "2Mi"}}],
    }
    assert by_name["job-4"]["podSets"][0]["requests"] == {"cpu": "8"}  # requested processors when allocated is -1
    quotas = {q["flavor"]: q["resources"]["cpu"]["nominal"] for q in document["clusterQueues"][0]["quotas"]}
    assert quotas == {"p1": "22", "p2": "8"}  # largest concurrent allocation per partition (two flavors)
    per_user = history.to_scenario(parsed, layout="user", capacity={"cpu": 32})
    assert [q["name"] for q in per_user["localQueues"]] == ["u1/jobs", "u2/jobs", "u3/jobs"]
    assert {q["resources"]["cpu"]["nominal"] for q in per_user["clusterQueues"][0]["quotas"]} == {"32"}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("1 0 0 10 1\n", "line 1: expected 18 fields, got 5"),
        (";\n1 0 0 10 x -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n", "line 2 field 5 (allocated processors): not a number"),
        ("1 -5 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n", "line 1 field 2 (submit time): must be 0 to"),
        ("1 0 0 99999999999 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n", "line 1 field 4 (run time): at most"),
        ("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n" * 2, "job numbers repeat"),
        ("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 " + "9" * 5000 + "\n", "line 1: longer than"),
    ],
)
def test_given_a_bad_swf_line_then_the_error_names_the_line_and_field(text, field):
    with pytest.raises(ValidationError, match=field.replace("(", r"\(").replace(")", r"\)")):
        history.read_swf(text)


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("{not json", "line 1: not JSON"),
        ('{"jobs": 3}', "jobs: jobs: expected a list"),
        ('{"jobs": [{"job_id": 1, "time": {"submission": "soon"}}]}', "jobs: time.submission: expected a number"),
        ('{"jobs": [{"job_id": 1, "time": {"submission": -1}}]}', r"jobs\[0\].time.submission: expected epoch seconds"),
        ('{"jobs": [{"job_id": 1, "state": 5}]}', "jobs: state: expected an object"),
        ('{"jobs": [{"job_id": 1, "time": {"submission": 5, "start": 6, "elapsed": -3}}]}', r"jobs\[0\].time.elapsed"),
    ],
)
def test_given_bad_sacct_json_then_the_error_names_the_field(content, field):
    with pytest.raises(ValidationError, match=field):
        history.read_sacct(content)


def test_given_too_much_input_then_it_is_refused_before_parsing():
    with pytest.raises(ValidationError, match="larger than 5 MiB"):
        history.read_swf(" " * (history.MAX_HISTORY_BYTES + 1))
    with pytest.raises(ValidationError, match=r"capacity\.cpu: 4 CPUs is less than job job-6's 16"):
        history.to_scenario(history.read_swf(SWF_SAMPLE), capacity={"cpu": 4})
    with pytest.raises(ValidationError, match="mode: one of"):
        history.parse_mode("fastest")


def test_the_synthetic_trace_is_seeded_and_of_the_promised_shape():
    text = history.synthetic_swf()
    assert text == history.synthetic_swf()
    parsed = history.read_swf(text)
    assert len(parsed.jobs) == 3200 and len({j.user for j in parsed.jobs}) == 43
    assert {j.cpus for j in parsed.jobs} <= {1, 2, 4, 8, 16, 32, 64, 128} and max(j.cpus for j in parsed.jobs) == 128
    first = min(j.submit for j in parsed.jobs)
    assert first >= 1_793_577_600  # 2026-11-02, the header's UnixStartTime
    assert (
        max(j.runtime for j in parsed.jobs) <= 17 * 3600
        and max(j.submit for j in parsed.jobs) - first < 10 * 86400 + 60
    )


def test_converting_a_5_mib_trace_takes_under_a_few_seconds():
    import time

    line = "{n} {n} 0 600 4 -1 -1 4 1200 -1 1 {u} 1 -1 1 1 -1 -1\n"
    text = "".join(line.format(n=n, u=n % 40) for n in range(1, history.MAX_HISTORY_JOBS + 1))
    started = time.perf_counter()
    history.to_scenario(history.read_swf(text))
    assert time.perf_counter() - started < 5


# --- the command ------------------------------------------------------------------------------


def test_import_history_writes_a_scenario_simulate_runs(tmp_path):
    trace = tmp_path / "site.swf"
    trace.write_text(SWF_SAMPLE)
    out = tmp_path / "site.yaml"
    call_command(
        "import_history", str(trace), "--mode", "usage", "--layout", "user", "-o", str(out), stderr=io.StringIO()
    )
    document = yaml.safe_load(out.read_text())
    assert document["name"] == "site"
    assert document["clusterQueues"][0]["admissionScope"]["admissionMode"] == "UsageBasedAdmissionFairSharing"
    stdout = io.StringIO()
    call_command("import_history", str(FIXTURES / "slurm-26.05" / "sacct.json"), "--capacity", "cpu=64", stdout=stdout)
    assert yaml.safe_load(stdout.getvalue())["clusterQueues"][0]["quotas"][0]["resources"]["cpu"] == {"nominal": "64"}
    with pytest.raises(CommandError, match="line 1: expected 18 fields"):
        bad = tmp_path / "bad.swf"
        bad.write_text("1 2 3\n")
        call_command("import_history", str(bad))
    with pytest.raises(CommandError, match="--from: expected a date"):
        call_command("import_history", str(trace), "--from", "yesterday")


# --- the start form ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_given_an_uploaded_trace_then_it_becomes_a_scenario(admin_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    assert "Slurm history / SWF trace" in admin_client.get(reverse("playground:index")).content.decode()

    upload = SimpleUploadedFile("site.swf", SWF_SAMPLE.encode(), content_type="text/plain")
    response = admin_client.post(
        reverse("playground:start"),
        {
            "source": "history",
            "history_file": upload,
            "history_layout": "user",
            "history_mode": "DominantResourceShare",
        },
    )
    assert response.status_code == 302, response.context["form"].errors
    stored = Scenario.objects.get()
    assert [q["name"] for q in stored.document["localQueues"]] == ["u1/jobs", "u2/jobs", "u3/jobs"]
    assert stored.document["clusterQueues"][0]["admissionScope"]["admissionMode"] == "DominantResourceShare"


@pytest.mark.django_db
def test_given_a_bad_trace_then_the_form_names_the_line_and_nothing_is_stored(admin_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("bad.swf", b"1 2 3\n", content_type="text/plain")
    response = admin_client.post(reverse("playground:start"), {"source": "history", "history_file": upload})
    assert response.status_code == 400
    assert "line 1: expected 18 fields" in response.context["form"].errors["history_file"][0]
    assert not Scenario.objects.exists()


# --- at which level each mode acts --------------------------------------------------------------


def _contended(mode: str) -> dict:
    """Six heavy users each queue three full-machine jobs at t=0-2s; a light user one at 30 min.
    Every job needs the whole machine, so whenever room frees every user has nothing running."""
    heavy = [f"h{i}" for i in range(1, 7)]
    workloads = [
        {
            "name": f"{user}-{n}",
            "localQueue": f"{user}/jobs",
            "submitAt": f"{n}s",
            "duration": "1h",
            "podSets": [{"requests": {"cpu": "4"}}],
        }
        for n in range(3)
        for user in heavy
    ]
    workloads.append(
        {
            "name": "light-0",
            "localQueue": "light/jobs",
            "submitAt": "30m",
            "duration": "1h",
            "podSets": [{"requests": {"cpu": "4"}}],
        }
    )
    return {
        "name": "contended",
        "clock": {"tick": "1h"},
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [
            {
                "name": "pool",
                "admissionScope": {"admissionMode": mode},
                "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": 4}}}],
            }
        ],
        "localQueues": [{"name": f"{u}/jobs", "clusterQueue": "pool"} for u in [*heavy, "light"]],
        "workloads": workloads,
    }


def _light_wait_hours(mode: str) -> float:
    return simulate(parse_scenario(_contended(mode)))["workloads"]["light-0"]["waitSeconds"] / 3600


def test_with_every_contender_idle_drs_ties_at_share_zero_and_is_fifo_usage_and_time_aware_remember():
    fifo = _light_wait_hours("NoAdmissionFairSharing")
    assert fifo == 17.5  # behind all 18 heavy jobs
    assert _light_wait_hours("DominantResourceShare") == fifo  # intended: no memory, ties by timestamp
    assert _light_wait_hours("UsageBasedAdmissionFairSharing") == 5.5  # behind the heavy users yet to run
    assert _light_wait_hours("TimeAware") == 5.5  # was 17.5: idle queues tied, history never reached the order


def test_drs_helps_a_light_user_against_users_holding_resources_now():
    document = _contended("DominantResourceShare")
    document["clusterQueues"][0]["quotas"][0]["resources"]["cpu"]["nominal"] = 8  # one heavy user holds it all
    document["workloads"] = [w for w in document["workloads"] if w["name"].startswith(("h1-", "light"))]
    document["workloads"] += [
        {**w, "name": w["name"].replace("h1-", "h1-more-"), "submitAt": "3s"}
        for w in document["workloads"]
        if w["name"].startswith("h1-")
    ]
    drs = simulate(parse_scenario(document))["workloads"]["light-0"]["waitSeconds"]
    document["clusterQueues"][0]["admissionScope"]["admissionMode"] = "NoAdmissionFairSharing"
    fifo = simulate(parse_scenario(document))["workloads"]["light-0"]["waitSeconds"]
    assert drs == 1800 < fifo == 3 * 3600 - 1800


def test_the_verdict_says_at_which_level_each_mode_acts():
    rows = mode_levels(["NoAdmissionFairSharing"], ["DominantResourceShare"])
    assert [(r["mode"], r["baseline"], r["edited"]) for r in rows] == [
        ("DominantResourceShare", False, True),
        ("NoAdmissionFairSharing", True, False),
    ]
    assert set(MODE_LEVELS) == {
        "NoAdmissionFairSharing",
        "UsageBasedAdmissionFairSharing",
        "DominantResourceShare",
        "TimeAware",
    }
    assert "current allocation" in rows[0]["level"]
