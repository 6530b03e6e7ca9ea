"""``bin/fairportal`` against a real fairportal (pytest-django's live server, the demo cluster
after an hour of the control loop, real API tokens): what each verb prints, in a table and as
JSON, checked against the database; and what a tenant may not see."""

from __future__ import annotations

import json
import re

import pytest
from django.db import models

from queues.models import LocalQueue, PendingPosition, Workload, WorkloadState
from tests.cli.conftest import Demo, Ran, as_user, fairportal

pytestmark = pytest.mark.django_db

SHARES_HEADER = [
    "CLUSTERQUEUE", "LOCALQUEUE", "MODE", "NS_WEIGHT", "WEIGHT", "NORM_SHARE", "USAGE_SCORE", "USAGE_SHARE",
    "ADMITTED_SHARE", "PENDING", "ADMITTED", "RANK", "DECAYED_USAGE",
]  # fmt: skip
WHY_HEADER = [
    "WORKLOAD", "ID", "CLUSTERQUEUE", "MODE", "PRIORITY", "CLASS", "AGE", "NS_WEIGHT", "LQ_WEIGHT", "USAGE_SCORE",
    "POSITION",
]  # fmt: skip
ALICE_NAMESPACES = {"team-vision", "team-nlp"}
OTHER_NAMESPACES = {"team-speech", "team-robotics", "team-recsys", "team-platform", "team-interns"}


def ok(ran: Ran) -> str:
    assert ran.code == 0, ran.err
    assert "Traceback" not in ran.err
    return ran.out


def table(text: str) -> tuple[list[str], list[list[str]]]:
    """Header names and rows of an aligned table, cut at the header's column starts."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [match.start() for match in re.finditer(r"\S+", header)]
    rows = []
    for line in lines[1:]:
        bounds = [*starts[1:], None]
        rows.append([line[start:end].strip() for start, end in zip(starts, bounds)])
    return header.split(), rows


def head_positions() -> dict[str, int]:
    """LocalQueue key -> position of its first pending workload, from the stored queue order."""
    heads: dict[str, int] = {}
    for position in PendingPosition.objects.filter(workload__state=WorkloadState.PENDING).select_related(
        "workload__local_queue__namespace"
    ):
        key = position.workload.local_queue.key
        heads[key] = min(heads.get(key, position.position), position.position)
    return heads


# --- shares ----------------------------------------------------------------------------------------


def test_given_admin_when_shares_then_every_local_queue_with_its_weights_usage_and_rank(demo_server: Demo):
    header, rows = table(ok(as_user(demo_server, "admin", "shares")))

    assert header == SHARES_HEADER
    by_key = {row[1]: dict(zip(header, row)) for row in rows}
    assert set(by_key) == {lq.key for lq in LocalQueue.objects.select_related("namespace")}
    vision = LocalQueue.objects.select_related("namespace").get(namespace__name="team-vision", name="training")
    assert by_key["team-vision/training"]["CLUSTERQUEUE"] == "gpu-training"
    assert by_key["team-vision/training"]["MODE"] == "UsageBased"
    assert float(by_key["team-vision/training"]["WEIGHT"]) == float(vision.weight)
    assert float(by_key["team-vision/training"]["NS_WEIGHT"]) == float(vision.namespace.weight)
    # ranks: the LocalQueues of a ClusterQueue in the order their first pending workloads stand
    heads = head_positions()
    for cluster_queue in {row["CLUSTERQUEUE"] for row in by_key.values()}:
        members = {key: row for key, row in by_key.items() if row["CLUSTERQUEUE"] == cluster_queue}
        ranked = sorted((heads[key], key) for key in members if key in heads)
        for rank, (_head, key) in enumerate(ranked, start=1):
            assert members[key]["RANK"] == f"{rank}/{len(ranked)}"
        for key in members.keys() - heads.keys():
            assert members[key]["RANK"] == "-"


def test_given_shares_json_then_the_numbers_are_the_control_loops(demo_server: Demo):
    rows = json.loads(ok(as_user(demo_server, "admin", "shares", "--json", "--cluster-queue", "gpu-training")))

    assert {row["cluster_queue"] for row in rows} == {"gpu-training"}
    for row in rows:
        namespace, name = row["local_queue"].split("/")
        lq = LocalQueue.objects.get(namespace__name=namespace, name=name)
        assert row["usage_score"] == pytest.approx(lq.weighted_share)
        assert row["decayed_usage"] == pytest.approx({r: v / 1000 for r, v in lq.consumed_resources.items()})
        assert row["pending"] == lq.workloads.filter(state=WorkloadState.PENDING).count()
        assert row["admitted_count"] == lq.workloads.filter(state=WorkloadState.ADMITTED).count()
    assert sum(row["normalized_share"] for row in rows) == pytest.approx(1.0)  # the weights split the quota


def test_given_a_tenant_when_shares_then_only_its_namespaces(demo_server: Demo):
    out = ok(as_user(demo_server, "alice", "shares"))
    _header, rows = table(out)

    assert {row[1].split("/")[0] for row in rows} == ALICE_NAMESPACES
    assert not any(namespace in out for namespace in OTHER_NAMESPACES)
    bob = json.loads(ok(as_user(demo_server, "bob", "shares", "--json")))
    assert {row["namespace"] for row in bob} == {"team-speech"}


# --- why ---------------------------------------------------------------------------------------------


def test_given_a_pending_workload_when_why_then_its_factors_position_reason_and_who_is_ahead(demo_server: Demo):
    key, workload_id = demo_server.alice_workload
    workload = Workload.objects.with_queue_position().get(pk=workload_id)
    out = ok(as_user(demo_server, "alice", "why", key))

    factors, rest = out.split("\n\n", 1)
    header, rows = table(factors)
    assert header == WHY_HEADER
    row = dict(zip(header, rows[0]))
    assert row["WORKLOAD"] == key and row["ID"] == str(workload_id)
    assert row["POSITION"] == str(workload.queue_position)
    assert row["PRIORITY"] == str(workload.priority) and row["CLASS"] == workload.priority_class
    assert f"reason:   {workload.pending_reason_code} (" in rest
    ahead = int(re.search(r"ahead of it: (\d+) pending workload", rest).group(1))
    assert ahead == workload.queue_position - 1  # nothing changed since the pass that ordered them
    counts = [int(line.split()[0]) for line in rest.split("AHEAD  LOCALQUEUE")[1].splitlines()[1:] if line.strip()]
    assert sum(counts) == ahead


def test_given_why_by_id_and_json_then_the_same_workload(demo_server: Demo):
    key, workload_id = demo_server.alice_workload
    data = json.loads(ok(as_user(demo_server, "alice", "why", str(workload_id), "--json")))

    assert data["workload"] == key and data["state"] == "Pending"
    assert data["queue_position"] == Workload.objects.with_queue_position().get(pk=workload_id).queue_position
    assert set(data["factors"]) >= {
        "priority",
        "priority_class",
        "namespace_weight",
        "local_queue_weight",
        "usage_score",
    }
    assert data["reason"]["code"]


def test_given_another_tenants_workload_when_why_then_the_same_line_as_a_missing_one(demo_server: Demo):
    bob_key, bob_id = demo_server.bob_workload
    by_name = as_user(demo_server, "alice", "why", bob_key)
    by_id = as_user(demo_server, "alice", "why", str(bob_id))
    missing = as_user(demo_server, "alice", "why", "team-speech/no-such-workload")

    for ran, shown in ((by_name, bob_key), (by_id, str(bob_id)), (missing, "team-speech/no-such-workload")):
        assert ran.code == 1 and ran.out == ""
        assert ran.err == f"fairportal: no workload {shown} that you may see (check the id, or namespace/name)\n"
    assert ok(as_user(demo_server, "bob", "why", bob_key))  # bob sees his own


def test_given_a_tenant_when_why_then_other_tenants_queues_are_not_named(demo_server: Demo):
    bob_key, _bob_id = demo_server.bob_workload
    out = ok(as_user(demo_server, "bob", "why", bob_key))
    data = json.loads(ok(as_user(demo_server, "bob", "why", bob_key, "--json")))

    assert not any(namespace in out for namespace in ALICE_NAMESPACES | OTHER_NAMESPACES - {"team-speech"})
    hidden = [item for item in data["ahead"] if not item["same_local_queue"]]
    assert hidden, "the demo puts other tenants' work ahead of bob's"
    assert {item["local_queue"] for item in hidden} == {"another tenant's queues"}
    admin = json.loads(ok(as_user(demo_server, "admin", "why", bob_key, "--json")))
    assert any(item["local_queue"].startswith("team-") for item in admin["ahead"] if not item["same_local_queue"])


# --- pending, budgets ------------------------------------------------------------------------------


def test_given_pending_queue_then_its_workloads_in_queue_order(demo_server: Demo):
    header, rows = table(ok(as_user(demo_server, "alice", "pending", "--queue", "team-vision/training")))

    assert header == ["CLUSTERQUEUE", "POSITION", "ID", "WORKLOAD", "PRIORITY", "WAITING", "REQUESTS", "REASON"]
    expected = list(
        Workload.objects.with_queue_position()
        .filter(local_queue__namespace__name="team-vision", local_queue__name="training", state=WorkloadState.PENDING)
        .order_by("queue_position")
        .values_list("queue_position", "id", "reason__code")
    )
    assert [(int(r[1]), int(r[2]), r[7]) for r in rows] == expected
    data = json.loads(ok(as_user(demo_server, "alice", "pending", "--queue", "team-vision/training", "--json")))
    assert [row["id"] for row in data] == [e[1] for e in expected]
    assert not json.loads(ok(as_user(demo_server, "bob", "pending", "--queue", "team-vision/training", "--json")))


def test_given_budgets_then_the_tenant_sees_its_own_without_alert_destinations(demo_server: Demo):
    header, rows = table(ok(as_user(demo_server, "alice", "budgets")))
    data = json.loads(ok(as_user(demo_server, "alice", "budgets", "--json")))
    admin = json.loads(ok(as_user(demo_server, "admin", "budgets", "--json")))

    assert header[:4] == ["BUDGET", "TARGET", "KIND", "RESOURCE"] and "STATE" in header
    assert "vision-gpu-hours" in {row[0] for row in rows}
    assert {budget["name"] for budget in data} < {budget["name"] for budget in admin}
    assert all("alert_emails" not in budget and "webhook_url" not in budget for budget in data)
    assert all(budget["status"]["state"] in {"ok", "at_risk", "held", "exhausted", "error"} for budget in data)


def test_given_limit_then_fewer_rows_and_a_note_on_stderr(demo_server: Demo):
    ran = as_user(demo_server, "admin", "pending", "--limit", "3")

    assert ran.code == 0
    assert len(ran.out.splitlines()) == 1 + 3
    total = Workload.objects.filter(state=WorkloadState.PENDING).count()
    assert ran.err == f"fairportal: showing 3 of {total} rows (--limit to see more)\n"


# --- failures against the real server ---------------------------------------------------------------


def test_given_a_bad_token_then_one_line_and_exit_1(demo_server: Demo):
    ran = fairportal("shares", server=demo_server.url, token="not-a-real-key")

    assert ran.code == 1 and ran.out == ""
    assert ran.err.startswith("fairportal: the server refused the token (401")
    assert ran.err.count("\n") == 1


def test_given_the_server_with_a_trailing_path_then_the_same_answers(demo_server: Demo):
    plain = ok(as_user(demo_server, "alice", "shares", "--json"))
    slash = ok(fairportal("--server", demo_server.url + "/", "shares", "--json", token=demo_server.tokens["alice"]))

    assert json.loads(plain) == json.loads(slash)


def test_given_a_scenario_the_engine_refuses_then_the_field_is_named_and_exit_1(demo_server: Demo, tmp_path):
    scenario = tmp_path / "bad.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "bad",
                "clock": {"horizon": "0s"},
                "resourceFlavors": [{"name": "default"}],
                "clusterQueues": [
                    {"name": "cq", "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": "-1"}}}]}
                ],
                "localQueues": [{"name": "a/main", "clusterQueue": "cq"}],
            }
        )
    )
    ran = as_user(demo_server, "alice", "simulate", str(scenario))

    assert ran.code == 1 and ran.out == ""
    assert ran.err.startswith("fairportal: the server answered 400: scenario: clusterQueues[0].quotas[0]")
    assert "must not be negative" in ran.err and ran.err.count("\n") == 1


# --- clusters --------------------------------------------------------------------------------------

CLUSTERS_HEADER = [
    "CLUSTER", "HEALTH", "ADMITTED_WL", "PENDING_ONLY", "PENDING_COULD", "USE", "CAPACITY", "ADMITTED",
]  # fmt: skip


@pytest.mark.parametrize(("user", "namespaces"), [("admin", None), ("alice", ALICE_NAMESPACES)])
def test_given_clusters_then_each_cluster_with_the_admitted_and_pending_work_the_token_may_see(
    demo_server: Demo, user, namespaces
):
    header, rows = table(ok(as_user(demo_server, user, "clusters")))

    assert header == CLUSTERS_HEADER
    assert [row[0] for row in rows] == ["default"] and rows[0][1] == "reachable"
    workloads = (
        Workload.objects.all() if namespaces is None else Workload.objects.filter(namespace__name__in=namespaces)
    )
    assert int(rows[0][2]) == workloads.filter(state=WorkloadState.ADMITTED).count()
    pending = workloads.filter(state=WorkloadState.PENDING).count()
    assert int(rows[0][3]) == int(rows[0][4]) == pending  # one cluster: every pending workload can only go there


def test_given_clusters_json_then_the_apis_figures(demo_server: Demo):
    rows = json.loads(ok(as_user(demo_server, "alice", "clusters", "--json")))

    assert [row["name"] for row in rows] == ["default"]
    assert set(rows[0]["figures"]) >= {"capacity", "admitted", "admitted_workloads", "pending_only_here", "health"}
    assert "last_error" not in rows[0]["health"] and "rest_secret" not in rows[0]  # a tenant's view


def test_given_pending_for_a_cluster_then_the_workloads_bound_to_it(demo_server: Demo):
    rows = json.loads(ok(as_user(demo_server, "admin", "pending", "--cluster", "default", "--json")))

    bound = Workload.objects.filter(state=WorkloadState.PENDING).filter(
        models.Q(cluster__name="default") | models.Q(cluster_job__cluster__name="default")
    )
    assert sorted(row["id"] for row in rows) == sorted(bound.values_list("id", flat=True))


def test_given_an_unknown_cluster_then_one_line_and_exit_1(demo_server: Demo):
    ran = as_user(demo_server, "alice", "pending", "--cluster", "nowhere")

    assert ran.code == 1 and ran.out == ""
    assert ran.err == "fairportal: no cluster named 'nowhere' (bin/fairportal clusters lists them)\n"
    bad = as_user(demo_server, "alice", "pending", "--cluster", "Not_A_Name;rm")
    assert bad.code == 2 and len(bad.err.splitlines()) <= 3 and "Traceback" not in bad.err
