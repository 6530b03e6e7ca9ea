"""TimeAware fair share: deserved quota first, then weighted, usage-adjusted rounds."""

from __future__ import annotations

import random

import pytest

from fairshare.admission.time_aware import ShareNode, _divide_one, divide, fair_shares


def test_deserved_quota_comes_first_up_to_demand():
    # 10 to share; A deserves 6 but asks 4, B deserves 0 and asks 10
    given = divide(10, [1, 1], [6, 0], [4, 10], [0, 0], k=1)
    assert given == pytest.approx([4, 6])


def test_the_rest_is_split_by_weight_when_usage_is_equal():
    given = divide(12, [1, 3], [0, 0], [100, 100], [0, 0], k=1)
    assert given == pytest.approx([3, 9])


def test_k_zero_means_plain_weights_whatever_the_usage():
    given = divide(16, [1, 1], [0, 0], [16, 16], [0.9, 0.0], k=0)
    assert given == pytest.approx([8, 8])


def test_higher_past_usage_gets_a_smaller_over_quota_part():
    # W = 0.5 each; U_a = 0.5, U_b = 0: P_a = 0.5 + (0.5 - 0.5) = 0.5, P_b = 0.5 + 0.5 = 1.0
    given = divide(12, [1, 1], [0, 0], [100, 100], [0.5, 0.0], k=1)
    assert given == pytest.approx([4, 8])


def test_a_queue_that_used_everything_gets_nothing_over_quota_while_others_ask():
    given = divide(16, [1, 1], [0, 0], [16, 16], [1.0, 0.0], k=1)
    assert given == pytest.approx([0, 16])


def test_what_a_saturated_queue_leaves_goes_to_the_others_in_later_rounds():
    given = divide(12, [1, 1, 1], [0, 0, 0], [1, 100, 100], [0, 0, 0], k=1)
    assert given == pytest.approx([1, 5.5, 5.5])


def test_if_every_part_is_zero_the_round_falls_back_to_weights():
    given = divide(10, [1, 1], [0, 0], [10, 10], [5.0, 5.0], k=1)  # P = max(0, 0.5 + (0.5 - 5)) = 0
    assert given == pytest.approx([5, 5])


def test_over_committed_deserved_quota_is_scaled_down():
    given = divide(10, [1, 1], [10, 10], [10, 10], [0, 0], k=1)
    assert given == pytest.approx([5, 5])


def test_levels_are_divided_top_down_and_rounded_to_millis():
    leaves = [
        ShareNode("a", 1, {}, {"gpu": 16000}, {"gpu": 0.25}),
        ShareNode("b", 1, {}, {"gpu": 16000}, {"gpu": 0.25}),
    ]
    queue = ShareNode("q", 1, {}, {"gpu": 32000}, {"gpu": 0.5}, leaves)
    other = ShareNode("r", 1, {}, {"gpu": 32000}, {"gpu": 0.0})
    root = ShareNode("root", 1, {}, {"gpu": 64000}, {}, [queue, other])
    shares = fair_shares(root, {"gpu": 16000}, k=1)
    # top: P_q = 0.5 + (0.5 - 0.5) = 0.5, P_r = 1.0 -> q gets 16000 / 3
    assert shares["q"]["gpu"] == round(16000 / 3)
    assert shares["r"]["gpu"] == round(32000 / 3)
    # below q the leaves' usage is relative to q's share of the capacity; equal, so equal split
    assert shares["a"]["gpu"] == shares["b"]["gpu"] == round(16000 / 6)


def test_one_child_is_divided_as_divide_divides_it_to_the_last_bit():
    # ``_divide_one`` is the fast path for a node with one child: the same float, operation for
    # operation, as ``divide`` of a one-element list, on awkward inputs too (tiny totals and
    # demands around the epsilon, zero and negative weights, parts that fall back to weights).
    rng = random.Random(26)
    for _ in range(20000):
        total = rng.choice((0.0, 1e-10, 448000.0, rng.uniform(0, 1e6)))
        weight = rng.choice((0.0, -1.0, 1, 1.0, rng.uniform(0, 3)))
        deserved = rng.choice((0.0, 448000.0, rng.uniform(0, 1e6)))
        demand = rng.choice((0.0, 1e-10, 128000.0, rng.uniform(0, 1e6)))
        usage = rng.choice((0.0, 5.0, rng.uniform(0, 3)))
        k = rng.choice((0.0, 1.0, 10.0))
        expected = divide(total, [weight], [deserved], [demand], [usage], k)[0]
        assert repr(_divide_one(total, weight, deserved, demand, usage, k)) == repr(expected)


def test_below_a_node_with_no_share_every_node_gets_zero_of_every_resource_listed():
    # "idle" asks for nothing, so it gets 0 cpu and 0 memory; its namespace and LocalQueue below
    # get 0 of the same resources (and of what they list themselves), as dividing 0 would give
    leaf = ShareNode("idle-lq", 1, {}, {}, {"cpu": 0.9})
    idle = ShareNode("idle", 1, {}, {}, {"cpu": 0.9}, [ShareNode("idle-ns", 1, {}, {}, {}, [leaf])])
    busy = ShareNode("busy", 1, {}, {"cpu": 4000}, {})
    root = ShareNode("root", 1, {}, {"cpu": 4000}, {}, [idle, busy])
    shares = fair_shares(root, {"cpu": 8000, "memory": 1000}, k=1)
    assert shares["busy"] == {"cpu": 4000, "memory": 0}
    assert shares["idle"] == shares["idle-ns"] == shares["idle-lq"] == {"cpu": 0, "memory": 0}
