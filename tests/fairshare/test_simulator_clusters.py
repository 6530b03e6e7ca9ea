"""Scenarios with several clusters: flavor membership, the per-cluster summary (computed by hand
below), an outage window, and the validation errors naming the field."""

from __future__ import annotations

import copy

import pytest
import yaml

from fairshare.errors import ValidationError
from fairshare.simulation.cli import render_table
from fairshare.simulation.scenario import apply_set, parse_scenario
from fairshare.simulation.simulator import EVENT, REFERENCE, simulate

# team-a holds 4 CPUs on the old cluster and 4 on the new one, in one resource group: Kueue's
# fungibility tries old-cpu first. Three 4-CPU one-hour jobs arrive at t=0 in a 4 h replay.
TWO_CLUSTERS = """
name: two-clusters
clock: {horizon: 4h, tick: 10m}
clusters: [{name: old}, {name: new}]
resourceFlavors: [{name: old-cpu, cluster: old}, {name: new-cpu, cluster: new}]
clusterQueues:
  - name: team-a
    quotas:
      - {flavor: old-cpu, resources: {cpu: {nominal: 4}}}
      - {flavor: new-cpu, resources: {cpu: {nominal: 4}}}
localQueues: [{name: a/main, clusterQueue: team-a}]
workloads:
  - {name: w1, localQueue: a/main, duration: 1h, podSets: [{requests: {cpu: 4}}]}
  - {name: w2, localQueue: a/main, duration: 1h, podSets: [{requests: {cpu: 4}}]}
  - {name: w3, localQueue: a/main, duration: 1h, podSets: [{requests: {cpu: 4}}]}
"""


def document() -> dict:
    return yaml.safe_load(TWO_CLUSTERS)


def admitted(result: dict) -> list[tuple[int, str, str]]:
    return [(e["t"], e["workload"], e["flavors"]["cpu"]) for e in result["events"] if e["type"] == "admitted"]


@pytest.mark.parametrize("stepping", [EVENT, REFERENCE])
def test_given_two_clusters_then_the_summary_breaks_capacity_utilisation_admissions_and_waits_down_per_cluster(
    stepping,
):
    result = simulate(parse_scenario(document()), stepping=stepping)

    # At 0 one job goes to old-cpu and one to new-cpu, the third waits; at 1 h both free and it
    # takes old-cpu (the first flavor) until 2 h.
    flavors = [flavor for _, _, flavor in admitted(result)]
    assert flavors == ["old-cpu", "new-cpu", "old-cpu"]
    assert [t for t, _, _ in admitted(result)] == [0, 0, 3600]
    # old: 4 CPUs busy over [0, 2 h) of 4 h -> 0.5; waits 0 and 3600 s (nearest rank: p50 0, p95 3600).
    # new: 4 CPUs busy over [0, 1 h) -> 0.25; one wait of 0.
    assert result["summary"]["clusters"] == {
        "old": {
            "flavors": ["old-cpu"],
            "capacity": {"cpu": 4},
            "utilization": {"cpu": 0.5},
            "admitted": 2,
            "waitSeconds": {"p50": 0, "p95": 3600},
            "unavailableSeconds": 0,
        },
        "new": {
            "flavors": ["new-cpu"],
            "capacity": {"cpu": 4},
            "utilization": {"cpu": 0.25},
            "admitted": 1,
            "waitSeconds": {"p50": 0, "p95": 0},
            "unavailableSeconds": 0,
        },
    }
    assert result["summary"]["utilization"] == {"cpu": 0.375}  # the whole: (8 + 4) CPU-hours of 32


@pytest.mark.parametrize("stepping", [EVENT, REFERENCE])
def test_given_the_old_cluster_down_for_two_hours_then_nothing_is_admitted_onto_it_until_it_is_back(stepping):
    doc = document()
    apply_set(doc, "clusters.old.unavailable={from: 0s, until: 2h}")

    result = simulate(parse_scenario(doc), stepping=stepping)

    # new-cpu runs one job at a time from 0; at 2 h the second finishes and old comes back:
    # the third (waiting since 0) takes old-cpu, the first flavor, until 3 h.
    assert [(t, flavor) for t, _, flavor in admitted(result)] == [(0, "new-cpu"), (3600, "new-cpu"), (7200, "old-cpu")]
    outages = [(e["t"], e["type"], e["cluster"]) for e in result["events"] if e["type"].startswith("cluster")]
    assert outages == [(0, "clusterDown", "old"), (7200, "clusterUp", "old")]
    clusters = result["summary"]["clusters"]
    assert clusters["old"]["unavailableSeconds"] == 7200
    assert clusters["old"]["admitted"] == 1 and clusters["old"]["waitSeconds"] == {"p50": 7200, "p95": 7200}
    assert clusters["old"]["utilization"] == {"cpu": 0.25}  # [2 h, 3 h) of 4 h
    assert clusters["new"]["admitted"] == 2 and clusters["new"]["waitSeconds"] == {"p50": 0, "p95": 3600}
    assert clusters["new"]["utilization"] == {"cpu": 0.5}


def test_given_a_flavor_moved_to_the_other_cluster_then_its_capacity_and_work_count_there():
    doc = document()
    apply_set(doc, "resourceFlavors.old-cpu.cluster=new")

    clusters = simulate(parse_scenario(doc))["summary"]["clusters"]

    assert clusters["old"] == {
        "flavors": [],
        "capacity": {},
        "utilization": {},
        "admitted": 0,
        "waitSeconds": {"p50": 0, "p95": 0},
        "unavailableSeconds": 0,
    }
    assert clusters["new"]["flavors"] == ["old-cpu", "new-cpu"]
    assert clusters["new"]["capacity"] == {"cpu": 8}
    assert clusters["new"]["admitted"] == 3
    assert clusters["new"]["utilization"] == {"cpu": 0.375}


def test_given_a_quota_moved_to_a_flavor_of_the_other_cluster_then_the_queue_runs_there():
    doc = document()
    doc["clusterQueues"][0]["quotas"].pop()  # team-a holds only old-cpu
    apply_set(doc, "clusterQueues.team-a.quotas.old-cpu.flavor=new-cpu")

    result = simulate(parse_scenario(doc))

    assert {flavor for _, _, flavor in admitted(result)} == {"new-cpu"}
    assert result["summary"]["clusters"]["new"]["admitted"] == 3
    assert result["summary"]["clusters"]["old"]["capacity"] == {}


def test_given_no_clusters_then_the_summary_has_no_breakdown():
    doc = document()
    del doc["clusters"]
    for flavor in doc["resourceFlavors"]:
        del flavor["cluster"]

    assert "clusters" not in simulate(parse_scenario(doc))["summary"]


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (lambda d: d["resourceFlavors"][1].update(cluster="moon"), "resourceFlavors[1].cluster", "unknown cluster"),
        (lambda d: d["resourceFlavors"][0].pop("cluster"), "resourceFlavors[0].cluster", "is required"),
        (lambda d: d["clusters"].append({"name": "old"}), "clusters[2].name", "duplicate cluster"),
        (lambda d: d["clusters"][0].update(name="x" * 64), "clusters[0].name", "at most 63"),
        (lambda d: d["clusters"][0].update(zone="eu"), "clusters[0].zone", "unknown field"),
        (
            lambda d: d["clusters"][0].update(unavailable={"from": "2h", "until": "1h"}),
            "clusters[0].unavailable.until",
            "must be after from",
        ),
        (lambda d: d["clusters"][0].update(unavailable={"from": "2h"}), "clusters[0].unavailable.until", "required"),
        (lambda d: d.update(clusters=[{"name": f"c{i}"} for i in range(101)]), "clusters", "at most 100"),
        (
            lambda d: d["clusterQueues"][0]["quotas"][0].update(flavor="new-cpu"),
            "clusterQueues[0].quotas[1].flavor",
            "listed twice",
        ),
    ],
)
def test_given_a_bad_cluster_field_then_the_error_names_it(edit, field, message):
    doc = copy.deepcopy(document())
    edit(doc)

    with pytest.raises(ValidationError) as raised:
        parse_scenario(doc)

    assert raised.value.field == field
    assert message in raised.value.message


def test_given_a_long_unknown_cluster_name_then_the_error_quotes_only_its_start():
    doc = document()
    doc["resourceFlavors"][0]["cluster"] = "c" * 5000

    with pytest.raises(ValidationError) as raised:
        parse_scenario(doc)

    assert len(str(raised.value)) < 200


def test_the_table_output_has_a_line_per_cluster():
    doc = document()
    apply_set(doc, "clusters.old.unavailable={from: 0s, until: 2h}")

    lines = render_table(simulate(parse_scenario(doc))).splitlines()

    assert lines[-2:] == [
        "cluster old (old-cpu): utilization cpu 25.0%, 1 admitted, wait p50 2.0h, p95 2.0h, unavailable 2.0h",
        "cluster new (new-cpu): utilization cpu 50.0%, 2 admitted, wait p50 0s, p95 60.0m",
    ]


def test_given_many_workloads_and_an_outage_then_event_stepping_gives_the_reference_result():
    doc = document()
    doc["workloads"] = []
    doc["clock"] = {"horizon": "12h", "tick": "5m"}
    doc["cohorts"] = [{"name": "site", "quotas": [{"flavor": "new-cpu", "resources": {"cpu": {"nominal": 8}}}]}]
    doc["clusterQueues"][0]["cohort"] = "site"
    doc["clusterQueues"].append(
        {"name": "team-b", "cohort": "site", "quotas": [{"flavor": "old-cpu", "resources": {"cpu": {"nominal": 2}}}]}
    )
    doc["localQueues"].append({"name": "b/main", "clusterQueue": "team-b"})
    doc["generators"] = [
        {
            "localQueue": "a/main",
            "count": 60,
            "seed": 3,
            "interarrival": "6m",
            "duration": "40m",
            "podSets": [{"requests": {"cpu": 2}}],
        },
        {
            "localQueue": "b/main",
            "count": 60,
            "seed": 4,
            "interarrival": "7m",
            "duration": "50m",
            "podSets": [{"requests": {"cpu": 3}}],
        },
    ]
    apply_set(doc, "clusters.new.unavailable={from: 2h, until: 5h}")
    scenario = parse_scenario(doc)

    event, reference = simulate(scenario, stepping=EVENT), simulate(scenario, stepping=REFERENCE)

    assert event == reference
    clusters = event["summary"]["clusters"]
    assert clusters["new"]["unavailableSeconds"] == 3 * 3600
    down = [e for e in event["events"] if e["type"] == "admitted" and 7200 <= e["t"] < 18000]
    assert down and all(e["flavors"]["cpu"] == "old-cpu" for e in down)  # nothing onto the new cluster meanwhile
    assert clusters["old"]["admitted"] + clusters["new"]["admitted"] >= len(
        {e["workload"] for e in event["events"] if e["type"] == "admitted"}
    )
