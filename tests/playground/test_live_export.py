"""Today's cluster as a scenario: the engine's loader accepts it and it reproduces the rows."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from fairshare.errors import ValidationError
from fairshare.quantities import parse_millis
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate
from playground.live_export import LiveOptions, export_live_state
from queues.models import (
    AdmissionMode,
    ClusterQueue,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
    UsageSample,
    Workload,
    WorkloadState,
)
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue

pytestmark = pytest.mark.django_db


def make_workload(
    lq: LocalQueue,
    name: str,
    *,
    state: str,
    queued: timedelta,
    admitted: timedelta | None = None,
    finished: timedelta | None = None,
    duration: int | None = None,
    cpu: str = "1",
    now=None,
) -> Workload:
    """A workload with explicit timestamps (ago = before ``now``)."""
    now = now or timezone.now()
    return Workload.objects.create(
        namespace=lq.namespace,
        local_queue=lq,
        name=name,
        state=state,
        pod_sets=[{"name": "main", "count": 2, "requests": {"cpu": parse_millis(cpu), "memory": parse_millis("1Gi")}}],
        queued_at=now - queued,
        created_at=now - queued,
        admitted_at=None if admitted is None else now - admitted,
        finished_at=None if finished is None else now - finished,
        cluster_queue=lq.cluster_queue if admitted is not None else None,
        duration_seconds=duration,
    )


def test_given_the_demo_when_exported_then_the_loader_accepts_it_and_it_reproduces_the_policy(demo):
    document = export_live_state(now=timezone.now(), options=LiveOptions(days=0))
    scenario = parse_scenario(document)

    assert {c.name: (c.parent, c.weight, c.admission_mode) for c in scenario.cohorts} == {
        c.name: (c.parent.name if c.parent else None, float(c.weight), c.admission_mode or None)
        for c in Cohort.objects.all()
    }
    queues = {q.name: q for q in scenario.cluster_queues}
    assert set(queues) == set(ClusterQueue.objects.values_list("name", flat=True))
    for row in ClusterQueue.objects.prefetch_related("quotas__flavor"):
        exported = queues[row.name]
        assert (exported.weight, exported.queueing_strategy, exported.admission_mode, exported.stop_policy) == (
            float(row.weight),
            row.queueing_strategy,
            row.admission_mode or None,
            row.stop_policy,
        )
        assert exported.preemption.reclaim_within_cohort == row.reclaim_within_cohort
        quotas = {(fq.flavor, r): q.nominal for fq in exported.quotas for r, q in fq.resources.items()}
        assert quotas == {(q.flavor.name, q.resource): q.nominal for q in row.quotas.all()}
    for quota in CohortQuota.objects.select_related("cohort", "flavor"):
        [cohort] = [c for c in scenario.cohorts if c.name == quota.cohort.name]
        assert {fq.flavor: fq.resources for fq in cohort.quotas}[quota.flavor.name][
            quota.resource
        ].nominal == quota.nominal
    assert {n.name: (n.weight, dict(n.quota)) for n in scenario.namespaces} == {
        n.name: (float(n.weight), {q.resource: q.hard for q in NamespaceQuota.objects.filter(namespace=n)})
        for n in Namespace.objects.all()
    }
    assert {lq.key: (lq.cluster_queue, lq.weight) for lq in scenario.local_queues} == {
        lq.key: (lq.cluster_queue.name, float(lq.weight))
        for lq in LocalQueue.objects.select_related("namespace", "cluster_queue")
    }
    live = Workload.objects.filter(state__in=(WorkloadState.PENDING, WorkloadState.ADMITTED)).count()
    assert len(scenario.workloads) == live > 0
    assert scenario.flavors == tuple(sorted(ResourceFlavor.objects.values_list("name", flat=True)))


def test_given_the_demo_when_a_day_is_replayed_then_finished_work_is_in_and_the_export_simulates(demo):
    now = timezone.now()
    document = export_live_state(now=now, options=LiveOptions(days=1, lookahead_seconds=3600))
    scenario = parse_scenario(document)
    finished_in_window = Workload.objects.filter(
        state__in=(WorkloadState.FINISHED, WorkloadState.FAILED), finished_at__gte=now - timedelta(days=1)
    ).count()
    live = Workload.objects.filter(state__in=(WorkloadState.PENDING, WorkloadState.ADMITTED)).count()
    assert finished_in_window > 0
    assert len(scenario.workloads) == finished_in_window + live
    assert scenario.clock.horizon_seconds == 86400 + 3600
    assert scenario.clock.horizon_seconds / scenario.clock.tick_seconds <= 600
    result = simulate(scenario)
    assert result["summary"]["workloads"]["total"] == len(scenario.workloads)


def test_given_known_timestamps_then_workloads_are_placed_on_the_replay_timeline():
    now = timezone.now()
    lq = make_local_queue("team-a", "main", make_cluster_queue("cq", cpu="8"))
    make_workload(
        lq,
        "done",
        state=WorkloadState.FINISHED,
        queued=timedelta(hours=10),
        admitted=timedelta(hours=9),
        finished=timedelta(hours=8),
        now=now,
    )
    make_workload(
        lq,
        "old-news",
        state=WorkloadState.FINISHED,
        queued=timedelta(days=3),
        admitted=timedelta(days=3),
        finished=timedelta(days=2),
        now=now,
    )
    make_workload(lq, "waiting", state=WorkloadState.PENDING, queued=timedelta(hours=2), duration=600, now=now)
    make_workload(lq, "open-ended", state=WorkloadState.PENDING, queued=timedelta(hours=1), now=now)
    make_workload(
        lq,
        "long-runner",
        state=WorkloadState.ADMITTED,
        queued=timedelta(hours=30),
        admitted=timedelta(hours=26),
        duration=30 * 3600,
        now=now,
    )

    document = export_live_state(now=now, options=LiveOptions(days=1, lookahead_seconds=7200))
    workloads = {w.name: w for w in parse_scenario(document).workloads}

    assert set(workloads) == {"team-a/done", "team-a/waiting", "team-a/open-ended", "team-a/long-runner"}
    done = workloads["team-a/done"]
    assert (done.submit_at, done.duration_seconds) == (14 * 3600, 3600)
    assert workloads["team-a/waiting"].submit_at == 22 * 3600 and workloads["team-a/waiting"].duration_seconds == 600
    assert workloads["team-a/open-ended"].duration_seconds is None  # runs until the horizon
    runner = workloads["team-a/long-runner"]
    assert (runner.submit_at, runner.created_at) == (0, -6 * 3600)
    assert runner.duration_seconds == 28 * 3600  # 30 h declared, 2 h of it before the window
    assert runner.requests == {"cpu": 2000, "memory": 2 * 2**30 * 1000}


def test_given_usage_samples_then_initial_usage_is_the_last_sample_at_the_window_start():
    now = timezone.now()
    lq = make_local_queue("team-a", "main", make_cluster_queue("cq", cpu="8"))
    for hours_ago, cpu in ((30, 1500.0), (25, 2500.4), (20, 9000.0)):
        UsageSample.objects.create(
            sampled_at=now - timedelta(hours=hours_ago),
            kind=UsageSample.Kind.LOCAL_QUEUE,
            object_id=lq.id,
            consumed={"cpu": cpu},
        )
    LocalQueue.objects.filter(pk=lq.pk).update(consumed_resources={"cpu": 7000.0})

    replay = parse_scenario(export_live_state(now=now, options=LiveOptions(days=1)))
    from_now = parse_scenario(export_live_state(now=now, options=LiveOptions(days=0)))

    assert replay.initial_usage == {"team-a/main": {"cpu": 2500}}
    assert from_now.initial_usage == {"team-a/main": {"cpu": 7000}}


def test_given_a_tenant_then_other_namespaces_are_renamed_everywhere():
    now = timezone.now()
    cohort = Cohort.objects.create(name="org", admission_mode=AdmissionMode.USAGE_BASED)
    cq = make_cluster_queue("shared", cpu="8", cohort=cohort)
    mine = make_local_queue("team-a", "main", cq, weight="2")
    theirs = make_local_queue("secret-lab", "nlp-training", cq, ns_quota="4")
    make_workload(mine, "my-job", state=WorkloadState.PENDING, queued=timedelta(minutes=5), duration=60, now=now)
    make_workload(
        theirs, "confidential-model", state=WorkloadState.PENDING, queued=timedelta(minutes=5), duration=60, now=now
    )

    document = export_live_state(now=now, options=LiveOptions(days=0), visible_namespaces={mine.namespace_id})
    text = json.dumps(document)
    scenario = parse_scenario(document)

    assert "secret-lab" not in text and "nlp-training" not in text and "confidential" not in text
    assert {lq.key for lq in scenario.local_queues} == {"team-a/main", "other-1/queue-1"}
    assert {w.name for w in scenario.workloads} == {"team-a/my-job", "other-1/w-1"}
    assert {n.name: dict(n.quota) for n in scenario.namespaces}["other-1"] == {"cpu": 4000}  # the load stays real
    assert [q.name for q in scenario.cluster_queues] == ["shared"]  # cluster-wide policy is not secret


def test_given_more_workloads_than_a_run_may_hold_then_the_days_are_named(monkeypatch):
    from playground import live_export

    monkeypatch.setattr(live_export, "MAX_WORKLOADS", 1)
    lq = make_local_queue("team-a", "main", make_cluster_queue("cq"))
    for name in ("a", "b"):
        make_workload(lq, name, state=WorkloadState.PENDING, queued=timedelta(minutes=1), duration=60)
    with pytest.raises(ValidationError, match="days: the window holds 2 workloads"):
        export_live_state(now=timezone.now(), options=LiveOptions(days=0))


@pytest.mark.parametrize("days", [-1, 31, float("nan")])
def test_options_out_of_range_name_the_field(days):
    with pytest.raises(ValidationError, match="days: must be between 0 and 30"):
        LiveOptions(days=days)


def test_weights_keep_their_decimals():
    lq = make_local_queue("team-a", "main", make_cluster_queue("cq"), weight="2.5")
    Namespace.objects.filter(pk=lq.namespace_id).update(weight=Decimal("0.25"))
    scenario = parse_scenario(export_live_state(now=timezone.now(), options=LiveOptions(days=0)))
    assert scenario.local_queues[0].weight == 2.5 and scenario.namespaces[0].weight == 0.25


def test_given_a_charged_budget_then_it_starts_the_replay_with_what_its_period_had_used():
    from budgets.models import Budget
    from tests.budgets.helpers import admission_pass, at, budget, cluster, finish, reconcile, submit

    cq, lq = cluster()
    weekly = budget(lq, hours="10", renewal=Budget.Renewal.DAYS, renewal_days=7)
    job = submit(lq, "job", cpu="1")
    admission_pass(cq, at(hours=1))
    finish(job, at(hours=4))
    reconcile(weekly, at(hours=5))

    from_now = export_live_state(now=at(hours=6), options=LiveOptions(days=0))
    three_hours_back = export_live_state(now=at(hours=6), options=LiveOptions(days=0.125))
    a_day_back = export_live_state(now=at(hours=6), options=LiveOptions(days=1))

    assert from_now["budgets"] == [
        {
            "name": "team-budget",
            "localQueue": "team-a/main",
            "kind": "WallTime",
            "allocatedHours": 10,
            "action": "Hold",
            "usedHours": 3,
            "renewal": "days",
            "renewalDays": 7,
            "firstRenewalAt": "6d18h",
        }
    ]
    assert three_hours_back["budgets"][0]["usedHours"] == 2  # 1h..3h; the last hour is replayed
    assert "usedHours" not in a_day_back["budgets"][0] and "renewal" not in a_day_back["budgets"][0]
    spec = parse_scenario(from_now).budgets[0]
    assert (spec.used_hours, spec.renewal_seconds, spec.first_renewal_seconds) == (3, 7 * 86400, 6 * 86400 + 18 * 3600)


def test_given_the_demo_then_its_budgets_are_exported_and_monthly_ones_renew_on_the_calendar(demo):
    from budgets.models import Budget

    document = export_live_state(now=timezone.now(), options=LiveOptions(days=0))
    budgets = {entry["name"]: entry for entry in document["budgets"]}
    assert set(budgets) == set(Budget.objects.values_list("name", flat=True))
    monthly = Budget.objects.filter(renewal=Budget.Renewal.MONTHLY).first()
    assert budgets[monthly.name]["renewal"] == "monthly"
    assert budgets[monthly.name]["anchor"] == monthly.anchor.isoformat()
    specs = {b.name: b for b in parse_scenario(document).budgets}
    assert set(specs) == set(budgets)
    assert specs[monthly.name].monthly_anchor == monthly.anchor  # renews on the calendar in the simulator


def test_given_a_tenant_then_budgets_of_other_namespaces_are_renamed():
    from tests.budgets.helpers import budget

    cq = make_cluster_queue("shared", cpu="8")
    mine = make_local_queue("team-a", "main", cq)
    theirs = make_local_queue("secret-lab", "nlp", cq)
    budget(mine, name="team-a-hours")
    budget(theirs, name="secret-lab-gpu-hours")
    document = export_live_state(
        now=timezone.now(), options=LiveOptions(days=0), visible_namespaces={mine.namespace_id}
    )
    assert [(b["name"], b["localQueue"]) for b in document["budgets"]] == [
        ("budget-1", "other-1/queue-1"),
        ("team-a-hours", "team-a/main"),
    ]


def test_a_workloads_priority_class_goes_into_the_live_export_and_its_scenario_parses(admin):
    """The scenario contract's optional ``priorityClass``: what-if evictions name the class too."""
    from django.utils import timezone as tz

    from fairshare.simulation.scenario import parse_scenario
    from playground.live_export import LiveOptions, export_live_state
    from queues.models import Workload
    from tests.playground.clusters import volcano_cluster
    from tests.queues.loop_fixtures import submit

    objects = volcano_cluster()
    job = submit(objects["ns1/jobs"], "classy")
    Workload.objects.filter(pk=job.pk).update(priority=100, priority_class="urgent")

    document = export_live_state(now=tz.now(), options=LiveOptions(days=0))

    entry = next(w for w in document["workloads"] if w["name"].endswith("classy"))
    assert (entry["priority"], entry["priorityClass"]) == (100, "urgent")
    spec = next(w for w in parse_scenario(document).workloads if w.name.endswith("classy"))
    assert spec.priority_class == "urgent"
