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


def test_a_child_without_demand_changes_no_other_childs_division_to_the_last_bit():
    # ``fair_shares`` leaves children without demand out of ``divide`` (they are most of a
    # ClusterQueue's namespaces at any moment). That is exact only if ``divide`` gives such a
    # child 0 and every other child the same float as without it, whatever its weight,
    # deserved quota or usage, and wherever it sits: checked here against ``divide`` itself.
    rng = random.Random(2626)
    for _ in range(5000):
        count = rng.randint(1, 5)
        total = rng.choice((0.0, 1e-10, 448000.0, rng.uniform(0, 1e6)))
        weights = [rng.choice((0.0, 1.0, rng.uniform(0, 3))) for _ in range(count)]
        deserved = [rng.choice((0.0, 64000.0, rng.uniform(0, 5e5))) for _ in range(count)]
        demand = [rng.choice((1e-10, 128000.0, rng.uniform(0, 1e6))) for _ in range(count)]
        usage = [rng.choice((0.0, 5.0, rng.uniform(0, 3))) for _ in range(count)]
        k = rng.choice((0.0, 1.0, 10.0))
        expected = divide(total, weights, deserved, demand, usage, k)
        rows = list(zip(weights, deserved, demand, usage, strict=True))
        idle = rng.randint(1, 3)
        idle_at = sorted(rng.sample(range(count + idle), idle))  # their places in the longer list
        for position in idle_at:
            rows.insert(position, (rng.uniform(0, 3), rng.choice((0.0, 64000.0)), 0.0, rng.uniform(0, 3)))
        given = divide(total, *(list(column) for column in zip(*rows, strict=True)), k)
        assert [given[i] for i in idle_at] == [0.0] * len(idle_at)
        busy = [amount for i, amount in enumerate(given) if i not in idle_at]
        assert repr(busy) == repr(expected)


def _tree(rng: random.Random, name: str, depth: int, idle: bool) -> ShareNode:
    """A random share tree; ``idle``: every node without demand (a subtree nobody asks in)."""
    children = [_tree(rng, f"{name}.{i}", depth - 1, idle) for i in range(rng.randint(1, 3))] if depth else []
    demand = {} if idle else {"cpu": rng.choice((0.0, rng.uniform(0, 2e5))), "memory": rng.uniform(0, 1e6)}
    usage = {"cpu": rng.uniform(0, 1), "memory": rng.uniform(0, 1)}
    deserved = {"cpu": rng.choice((0, 30000))}
    return ShareNode(name, rng.choice((1.0, 2.0)), deserved, demand, usage, children)


def test_idle_subtrees_get_zero_and_leave_every_other_share_as_without_them():
    rng = random.Random(26)
    for _ in range(300):
        busy = [_tree(rng, f"busy{i}", rng.randint(0, 2), idle=False) for i in range(rng.randint(1, 4))]
        capacity = {"cpu": rng.choice((0, 448000)), "memory": 2_000_000, "gpu": rng.choice((0, 8000))}
        without = fair_shares(ShareNode("root", 1, {}, {}, {}, list(busy)), capacity, k=1)
        children = list(busy)
        for i in range(rng.randint(1, 3)):
            children.insert(rng.randint(0, len(children)), _tree(rng, f"idle{i}", rng.randint(0, 2), idle=True))
        shares = fair_shares(ShareNode("root", 1, {}, {}, {}, children), capacity, k=1)
        assert {node: shares[node] for node in without} == without
        zero = dict.fromkeys(sorted(capacity), 0)
        assert all(shares[node] == zero for node in shares.keys() - without.keys())
        # and a caller reading some nodes gets those, the same
        read = set(rng.sample(sorted(shares), 3))
        assert fair_shares(ShareNode("root", 1, {}, {}, {}, children), capacity, k=1, read=read) == {
            node: shares[node] for node in read
        }
