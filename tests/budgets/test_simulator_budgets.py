"""Budgets in scenario files, on the engine alone: WallTime and ResourceHours, Hold and
HoldAndDrain, renewal, flavors and targets, and the budget summary of a run."""

from __future__ import annotations

import re

import pytest
import yaml

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate

BASE = """
name: budgets
clock: {horizon: 6h, tick: 30m}
policy: {usageHalfLifeTime: 1h, usageSamplingInterval: 5m}
resourceFlavors: [{name: a100}, {name: h100}]
clusterQueues:
  - name: gpu
    quotas:
      - {flavor: a100, resources: {cpu: {nominal: 16}, memory: {nominal: 64Gi}, nvidia.com/gpu: {nominal: 2}}}
      - {flavor: h100, resources: {cpu: {nominal: 16}, memory: {nominal: 64Gi}, nvidia.com/gpu: {nominal: 4}}}
namespaces: [{name: a}, {name: b}]
localQueues:
  - {name: a/main, clusterQueue: gpu}
  - {name: a/batch, clusterQueue: gpu}
  - {name: b/main, clusterQueue: gpu}
workloads: []
"""


def job(
    name: str,
    queue: str = "a/main",
    *,
    cpu: str = "1",
    gpus: str | None = None,
    duration: str = "1h",
    submit: str = "0s",
    count: int = 1,
    memory: str | None = None,
) -> dict:
    requests = {"cpu": cpu}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
    if memory:
        requests["memory"] = memory
    return {
        "name": name,
        "localQueue": queue,
        "submitAt": submit,
        "duration": duration,
        "podSets": [{"count": count, "requests": requests}],
    }


def run(workloads: list[dict], budgets: list[dict], **clock: str) -> dict:
    document = yaml.safe_load(BASE)
    document["workloads"] = workloads
    document["budgets"] = budgets
    document["clock"].update(clock)
    return simulate(parse_scenario(document))


def events(result: dict, *types: str) -> list[tuple]:
    return [(e["t"], e["type"], e.get("workload") or e.get("budget")) for e in result["events"] if e["type"] in types]


def test_given_a_wall_time_budget_then_a_multi_pod_workload_counts_once_and_hold_lets_it_finish():
    result = run(
        [job("big", count=4, cpu="2", memory="8Gi", duration="3h"), job("late", submit="2h")],
        [{"name": "team", "localQueue": "a/main", "kind": "WallTime", "allocatedHours": 2, "action": "Hold"}],
    )

    assert events(result, "held") == [(7200, "held", "team")]  # 2 hours of one workload, not 8 or 32
    assert result["workloads"]["big"]["state"] == "Finished"
    assert result["workloads"]["late"]["pendingReason"]["code"] == "BudgetExhausted"
    assert result["summary"]["budgets"] == [
        {
            "budget": "team",
            "localQueue": "a/main",
            "kind": "WallTime",
            "allocatedHours": 2.0,
            "usedHours": 3.0,
            "period": 1,
            "held": True,
            "exhaustedAt": [7200],
            "burnRatePerHour": 0.0,
        },
    ]


def test_given_hold_and_drain_on_gpu_hours_then_running_work_is_evicted_when_they_run_out():
    result = run(
        [job("train", gpus="2", duration="4h")],
        [
            {
                "namespace": "a",
                "kind": "ResourceHours",
                "resource": "nvidia.com/gpu",
                "allocatedHours": 3,
                "action": "HoldAndDrain",
            }
        ],
    )

    assert events(result, "held", "evicted") == [
        (5400, "held", "ResourceHours budget of namespace a"),
        (5400, "evicted", "train"),
    ]
    assert result["summary"]["budgets"][0]["usedHours"] == 3.0  # nothing charged after the drain


def test_given_a_flavor_budget_then_only_gpus_placed_on_that_flavor_count():
    result = run(
        [job("on-a100", gpus="2", duration="5h"), job("on-h100", gpus="2", duration="5h")],
        [
            {
                "name": "a100-only",
                "clusterQueue": "gpu",
                "kind": "ResourceHours",
                "resource": "nvidia.com/gpu",
                "flavor": "a100",
                "allocatedHours": 100,
            }
        ],
    )

    assert result["summary"]["budgets"][0]["usedHours"] == 10.0  # 2 GPUs x 5 h on a100; h100 ignored


def test_given_daily_renewal_then_the_hold_lifts_at_the_boundary_and_held_work_resumes():
    result = run(
        [job("day-one", duration="3h", submit="20h"), job("waits", submit="23h", duration="1h")],
        [
            {
                "name": "daily",
                "localQueue": "a/main",
                "kind": "WallTime",
                "allocatedHours": 2,
                "action": "Hold",
                "renewal": "days",
                "renewalDays": 1,
            }
        ],
        horizon="30h",
    )

    assert events(result, "held", "resumed") == [(79200, "held", "daily"), (86400, "resumed", "daily")]
    waits = result["workloads"]["waits"]
    assert (waits["state"], waits["admittedAt"]) == ("Finished", 86400)
    # Day two only saw "waits" (00:00-01:00): one hour of its two.
    assert result["summary"]["budgets"][0] == {
        "budget": "daily",
        "localQueue": "a/main",
        "kind": "WallTime",
        "allocatedHours": 2.0,
        "usedHours": 1.0,
        "period": 2,
        "held": False,
        "exhaustedAt": [79200],
        "burnRatePerHour": 0.0,
    }


def test_given_a_workload_running_across_a_renewal_then_each_period_is_charged_its_part():
    result = run(
        [job("overnight", submit="22h", duration="4h")],
        [
            {
                "name": "daily",
                "localQueue": "a/main",
                "kind": "WallTime",
                "allocatedHours": 10,
                "renewal": "days",
                "renewalDays": 1,
            }
        ],
        horizon="26h",
    )

    assert result["summary"]["budgets"][0]["usedHours"] == 2.0  # 00:00-02:00 of day two
    assert events(result, "resumed") == []  # never held: nothing to resume


def test_given_hold_and_drain_with_weekly_renewal_then_drained_work_is_admitted_again_next_week():
    result = run(
        [job("long", queue="b/main", duration="10d")],
        [
            {
                "localQueue": "b/main",
                "kind": "WallTime",
                "allocatedHours": 24,
                "action": "HoldAndDrain",
                "renewal": "weekly",
            }
        ],
        horizon="8d",
        tick="1d",
    )

    assert [(t, kind) for t, kind, _ in events(result, "admitted", "held", "evicted", "resumed")] == [
        (0, "admitted"),
        (86400, "held"),
        (86400, "evicted"),
        (604800, "resumed"),
        (604800, "admitted"),
        (691200, "held"),
        (691200, "evicted"),  # the second week's 24 hours are used up a day later
    ]


@pytest.mark.parametrize(
    ("budget", "error"),
    [
        ({"renewal": "monthly"}, "budgets[0].renewal: monthly renewal needs calendar dates"),
        ({"renewal": "days"}, "budgets[0].renewalDays: is required"),
        ({"renewal": "days", "renewalDays": 0}, "budgets[0].renewalDays: must be at least 1"),
        ({"renewalDays": 3}, "budgets[0].renewalDays: only used with renewal: days"),
        ({"renewal": "yearly"}, "budgets[0].renewal: must be one of none, weekly, days, monthly"),
    ],
)
def test_given_a_bad_renewal_then_the_error_names_the_field(budget, error):
    with pytest.raises(ValidationError, match=re.escape(error)):
        run([], [{"localQueue": "a/main", "kind": "WallTime", "allocatedHours": 1, **budget}])


def test_given_monthly_renewal_then_the_simulator_renews_on_the_calendar_clamped_to_short_months():
    # Given a run starting on 20 February 2027 and a budget anchored on 31 January (renews on the
    # 31st, clamped to 28 February, then 31 March), 96 wall-time hours a month, two jobs at a time
    day = 86400
    result = run(
        [job(f"j{i:04d}", queue="b/main", cpu="16", duration="1h") for i in range(2 * 40 * 24)],
        [
            {
                "name": "b-month",
                "localQueue": "b/main",
                "kind": "WallTime",
                "allocatedHours": 96,
                "action": "Hold",
                "renewal": "monthly",
                "anchor": "2027-01-31T00:00:00Z",
            }
        ],
        horizon="40d",
        tick="1d",
        start="2027-02-20T00:00:00Z",
    )
    held = [t for t, kind, _ in events(result, "held")]
    resumed = [t for t, kind, _ in events(result, "resumed")]
    # Then renewals come on 28 February (8 days in) and 31 March (39 days in)
    assert resumed == [8 * day, 39 * day]
    assert held[:2] == [pytest.approx(2 * day, abs=3600), pytest.approx(10 * day, abs=3600)]
    assert result["summary"]["budgets"][0]["period"] == 3


def test_given_monthly_renewal_on_a_wall_clock_then_a_daylight_saving_month_is_an_hour_short():
    result = run(
        [],
        [{"localQueue": "a/main", "kind": "WallTime", "allocatedHours": 1, "renewal": "monthly"}],
        horizon="62d",
        tick="1d",
        start="2027-03-01T00:00:00",
        timeZone="Europe/Berlin",
    )
    # Berlin moves to summer time on 28 March: 1 April 00:00 is 31 days minus one hour later
    assert result["summary"]["budgets"][0]["period"] == 3
    from fairshare.simulation.calendar import monthly_boundaries, parse_moment, parse_time_zone

    berlin = parse_time_zone("Europe/Berlin", "tz")
    start = parse_moment("2027-03-01T00:00:00", "start", berlin)
    renewals = monthly_boundaries(start, start, berlin)
    assert [next(renewals), next(renewals)] == [31 * 86400 - 3600, 61 * 86400 - 3600]


@pytest.mark.parametrize(
    ("clock", "budget", "error"),
    [
        ({"start": "2027-02-30T00:00:00Z"}, {"renewal": "monthly"}, "clock.start: expected an ISO 8601 date-time"),
        ({"start": "2027-02-01T00:00:00"}, {"renewal": "monthly"}, "clock.start: needs a UTC offset"),
        ({"start": "2027-02-01T00:00:00Z", "timeZone": "Mars/Olympus"}, {}, "clock.timeZone: unknown time zone"),
        (
            {"start": "2027-02-01T00:00:00Z"},
            {"renewal": "weekly", "anchor": "2027-01-01T00:00:00Z"},
            "budgets[0].anchor: only used with renewal: monthly",
        ),
        (
            {"start": "2027-02-01T00:00:00Z"},
            {"renewal": "monthly", "firstRenewalAt": "1d"},
            "budgets[0].firstRenewalAt: only used with a weekly or days renewal",
        ),
    ],
)
def test_given_bad_calendar_fields_then_the_error_names_the_field(clock, budget, error):
    with pytest.raises(ValidationError, match=re.escape(error)):
        run([], [{"localQueue": "a/main", "kind": "WallTime", "allocatedHours": 1, **budget}], **clock)
