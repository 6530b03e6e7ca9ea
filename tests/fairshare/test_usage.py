"""Usage accounting: KEP-4136 decay, reset, entry penalty, scores; KAI windowed usage."""

from __future__ import annotations

import math

import pytest

from fairshare.policy import FairSharingPolicy
from fairshare.types import Cohort, UsageState
from fairshare.usage.accounting import node_paths, path_nodes
from fairshare.usage.usage import (
    add_penalty,
    decay_alpha,
    entry_penalty,
    prune_samples,
    sample,
    score_of,
    score_sort_key,
    usage_score,
    window_start,
    windowed_share,
    windowed_usage,
)
from tests.fairshare.builders import cq, lq, snapshot

HOUR = 3600
POLICY = FairSharingPolicy(usage_half_life_seconds=HOUR, usage_sampling_interval_seconds=300)


def test_alpha_is_one_minus_half_to_the_elapsed_half_lives():
    assert decay_alpha(HOUR, HOUR) == pytest.approx(0.5)
    assert decay_alpha(2 * HOUR, HOUR) == pytest.approx(0.75)
    assert decay_alpha(0, HOUR) == 0.0


@pytest.mark.parametrize("half_lives, expected", [(1, 1.0), (2, 1.5), (3, 1.75)])
def test_given_2_cpu_in_use_from_zero_when_sampled_each_half_life_then_usage_reaches_1_15_175(half_lives, expected):
    state = UsageState(last_update=0.0)
    for step in range(1, half_lives + 1):
        state = sample(state, {"cpu": 2000}, step * HOUR, POLICY)
    assert state.consumed["cpu"] / 1000 == pytest.approx(expected)


def test_given_a_late_sample_then_alpha_comes_from_the_real_elapsed_time():
    state = sample(UsageState(last_update=0.0), {"cpu": 2000}, 3 * HOUR, POLICY)  # one sample, 3 half-lives
    assert state.consumed["cpu"] / 1000 == pytest.approx(1.75)
    assert state.last_update == 3 * HOUR


def test_given_no_load_then_usage_halves_every_half_life():
    state = UsageState({"cpu": 8000.0}, last_update=0.0)
    state = sample(state, {}, 2 * HOUR, POLICY)
    assert state.consumed["cpu"] == pytest.approx(2000.0)


def test_given_inactivity_longer_than_reset_period_then_usage_restarts_from_zero():
    policy = FairSharingPolicy(usage_half_life_seconds=HOUR, reset_inactivity_seconds=2 * HOUR)
    state = UsageState({"cpu": 10_000.0}, last_update=0.0)
    after_gap = sample(state, {"cpu": 2000}, 3 * HOUR, policy)
    # restarted from 0, then decayed towards 2 CPU over 3 half-lives: 1.75
    assert after_gap.consumed["cpu"] / 1000 == pytest.approx(1.75)


def test_given_reset_period_zero_then_usage_never_resets():
    policy = FairSharingPolicy(usage_half_life_seconds=HOUR, reset_inactivity_seconds=0)
    state = sample(UsageState({"cpu": 8000.0}, last_update=0.0), {}, 100 * HOUR, policy)
    assert state.consumed.get("cpu", 0.0) == pytest.approx(8000.0 * 0.5**100)


def test_given_a_state_never_sampled_then_the_first_sample_only_stamps_it():
    state = sample(UsageState({"cpu": 500.0}), {"cpu": 9000}, 42.0, POLICY)
    assert state.consumed["cpu"] == 500.0
    assert state.last_update == 42.0


def test_entry_penalty_is_sampling_alpha_times_requests():
    penalty = entry_penalty({"cpu": 4000, "memory": 0}, POLICY)
    alpha_s = 1 - 0.5 ** (300 / HOUR)
    assert penalty == {"cpu": pytest.approx(alpha_s * 4000)}


def test_given_a_penalty_then_the_score_rises_at_once_and_the_next_sample_folds_it():
    state = UsageState({"cpu": 1000.0}, last_update=0.0)
    with_penalty = add_penalty(state, {"cpu": 200.0})
    assert usage_score(with_penalty, 1.0, POLICY) == pytest.approx(1200.0)
    folded = sample(with_penalty, {"cpu": 1000}, 300.0, POLICY)
    assert folded.penalty == {}
    assert folded.consumed["cpu"] == pytest.approx(1000.0)  # the admitted usage now counts instead


def test_score_divides_weighted_usage_by_the_queue_weight():
    state = UsageState({"cpu": 3000.0}, {"cpu": 1000.0})
    assert usage_score(state, 2.0, POLICY) == pytest.approx(2000.0)


def test_resource_weights_scale_each_resource_and_unlisted_weigh_one():
    policy = FairSharingPolicy(resource_weights={"nvidia.com/gpu": 10.0})
    state = UsageState({"cpu": 4000.0, "nvidia.com/gpu": 1000.0, "memory": 5.0})
    assert usage_score(state, 1.0, policy) == pytest.approx(4000 + 10_000 + 5)


@pytest.mark.parametrize("weight", [0.0, -1.0, math.nan])
def test_given_weight_not_positive_then_score_is_infinite_even_with_no_usage(weight):
    assert score_of(0.0, weight) == math.inf
    assert score_of(5.0, weight) == math.inf


def test_infinite_scores_sort_after_every_finite_score_deterministically():
    scores = [math.inf, 3.0, math.inf, 0.0]
    assert sorted(scores, key=score_sort_key) == [0.0, 3.0, math.inf, math.inf]


# --- TimeAware windowed usage ------------------------------------------------------------------


def test_kai_normalisation_example_24_gpu_hours_of_100_is_0_24():
    usage = [(0.0, 8.0), (3 * HOUR, 0.0)]  # 8 GPUs for 3 hours
    capacity = [(0.0, 10.0)]
    assert windowed_share(usage, capacity, 10 * HOUR, 10 * HOUR) == pytest.approx(0.24)


def test_sliding_window_drops_usage_older_than_the_window():
    usage = [(0.0, 4.0), (HOUR, 0.0)]
    assert windowed_usage(usage, 2 * HOUR, 2 * HOUR) == pytest.approx(4 * HOUR)
    assert windowed_usage(usage, 3 * HOUR, 2 * HOUR) == pytest.approx(0.0)
    assert windowed_usage(usage, 2.5 * HOUR, 2 * HOUR) == pytest.approx(4 * 0.5 * HOUR)


def test_tumbling_window_starts_at_the_current_bucket():
    assert window_start(5 * HOUR, 2 * HOUR, "tumbling") == 4 * HOUR
    usage = [(0.0, 1.0)]
    assert windowed_usage(usage, 5 * HOUR, 2 * HOUR, "tumbling") == pytest.approx(HOUR)


def test_half_life_weights_older_usage_less():
    recent = [(HOUR, 1.0)]  # used during the last hour
    old = [(0.0, 1.0), (HOUR, 0.0)]  # used during the hour before
    now = 2 * HOUR
    assert windowed_usage(recent, now, 10 * HOUR, half_life_seconds=HOUR) == pytest.approx(
        2 * windowed_usage(old, now, 10 * HOUR, half_life_seconds=HOUR)
    )
    # exact integral of 0.5 ** (age / h) over the last hour
    assert windowed_usage(recent, now, 10 * HOUR, half_life_seconds=HOUR) == pytest.approx(HOUR / (2 * math.log(2)))


def test_given_no_capacity_then_the_share_is_zero():
    assert windowed_share([(0.0, 1.0)], [], HOUR, HOUR) == 0.0


def test_pruning_keeps_the_sample_covering_the_window_start():
    samples = [(0.0, 1.0), (10.0, 2.0), (20.0, 3.0), (30.0, 4.0)]
    before = windowed_usage(list(samples), 40.0, 15.0)
    prune_samples(samples, 40.0, 15.0, "sliding")
    assert samples == [(20.0, 3.0), (30.0, 4.0)]
    assert windowed_usage(samples, 40.0, 15.0) == pytest.approx(before)


# --- accounting over a snapshot -----------------------------------------------------------------


def test_node_paths_run_from_the_local_queue_to_the_root_cohort():
    s = snapshot(
        [cq("cq", cohort="team-org")],
        [lq("team/a", "cq")],
        [],
        cohorts=[Cohort("team-org", parent="org"), Cohort("org")],
    )
    assert node_paths(s) == {
        "team/a": ("localQueue:team/a", "namespace:team", "clusterQueue:cq", "cohort:team-org", "cohort:org")
    }
    assert path_nodes(7, 3, 2, (5, 1)) == (
        ("localQueue", 7),
        ("namespace", 3),
        ("clusterQueue", 2),
        ("cohort", 5),
        ("cohort", 1),
    )
