"""TimeAware fair share: deserved quota first, then weighted, usage-adjusted rounds."""

from __future__ import annotations

import pytest

from fairshare.admission.time_aware import ShareNode, divide, fair_shares


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
