"""Quota fit: nominal quota, borrowing/lending limits, cohort-owned quota, flavor assignment."""

from __future__ import annotations

from fairshare.quota.quota import QuotaTree, flavor_amounts, resource_groups
from fairshare.types import ClusterQueue, Cohort, FlavorQuotas, ResourceQuota
from tests.fairshare.builders import CPU, quotas

FR = ("default", "cpu")


def tree(*queues: ClusterQueue, cohorts: tuple[Cohort, ...] = ()) -> QuotaTree:
    return QuotaTree(cohorts, queues)


def queue(
    name: str, nominal: int, borrowing: int | None = None, lending: int | None = None, cohort: str | None = "org"
) -> ClusterQueue:
    return ClusterQueue(name, cohort, quotas=quotas(cpu=(nominal, borrowing, lending)))


def test_a_queue_without_cohort_has_exactly_its_nominal_quota():
    t = tree(queue("solo", 4, cohort=None))
    assert t.available("solo", FR) == 4 * CPU
    t.add("solo", {FR: 3 * CPU})
    assert t.available("solo", FR) == 1 * CPU


def test_queues_in_a_cohort_borrow_each_others_unused_nominal_quota():
    t = tree(queue("a", 4), queue("b", 4))
    assert t.available("a", FR) == 8 * CPU
    t.add("b", {FR: 3 * CPU})
    assert t.available("a", FR) == 5 * CPU
    assert t.is_borrowing("a", FR) is False


def test_borrowing_limit_caps_what_a_queue_takes_beyond_its_nominal():
    t = tree(queue("a", 4, borrowing=1), queue("b", 10))
    assert t.available("a", FR) == 5 * CPU
    t.add("a", {FR: 5 * CPU})
    assert t.available("a", FR) == 0
    assert t.is_borrowing("a", FR)


def test_lending_limit_keeps_the_rest_of_nominal_for_the_owner():
    t = tree(queue("a", 4), queue("b", 6, lending=2))
    assert t.available("a", FR) == 4 * CPU + 2 * CPU  # b lends at most 2 of its 6
    t.add("a", {FR: 6 * CPU})
    assert t.available("b", FR) == 4 * CPU  # b's guaranteed 4 stays free for b
    assert t.available("a", FR) == 0


def test_cohort_owned_quota_is_shared_by_its_subtree():
    cohorts = (Cohort("org", quotas=quotas(cpu=10)),)
    t = tree(queue("a", 0), queue("b", 0), cohorts=cohorts)
    assert t.available("a", FR) == 10 * CPU
    t.add("a", {FR: 7 * CPU})
    assert t.available("b", FR) == 3 * CPU


def test_nested_cohorts_lend_up_and_the_parent_limits_what_a_child_cohort_borrows():
    cohorts = (
        Cohort("root", quotas=quotas(cpu=4)),
        Cohort("child", parent="root", quotas=quotas(cpu=(2, 1, None))),  # may borrow 1 from root
    )
    t = tree(queue("a", 2, cohort="child"), queue("z", 0, cohort="root"), cohorts=cohorts)
    # a: its 2 + child's own 2 + at most 1 borrowed from above
    assert t.available("a", FR) == 5 * CPU
    assert t.available("z", FR) == 8 * CPU  # root's 4 + child's lendable 4


def test_remove_usage_undoes_add_usage_exactly():
    t = tree(queue("a", 4, lending=1), queue("b", 4))
    before = (t.available("a", FR), t.available("b", FR))
    t.add("a", {FR: 6 * CPU})
    t.remove("a", {FR: 6 * CPU})
    assert (t.available("a", FR), t.available("b", FR)) == before


def test_flavors_are_tried_in_queue_order_and_the_first_that_fits_wins():
    flavors = (
        FlavorQuotas("on-demand", {"cpu": ResourceQuota(2 * CPU)}),
        FlavorQuotas("spot", {"cpu": ResourceQuota(8 * CPU)}),
    )
    t = tree(ClusterQueue("a", quotas=flavors))
    assert t.assign("a", {"cpu": 2 * CPU}) == ({"cpu": "on-demand"}, None)
    assert t.assign("a", {"cpu": 3 * CPU}) == ({"cpu": "spot"}, None)


def test_resources_covered_together_get_one_flavor():
    flavors = (
        FlavorQuotas("small", {"cpu": ResourceQuota(4 * CPU), "memory": ResourceQuota(1 * CPU)}),
        FlavorQuotas("big", {"cpu": ResourceQuota(4 * CPU), "memory": ResourceQuota(64 * CPU)}),
    )
    t = tree(ClusterQueue("a", quotas=flavors))
    assignment, failure = t.assign("a", {"cpu": 1 * CPU, "memory": 2 * CPU})
    assert failure is None
    assert assignment == {"cpu": "big", "memory": "big"}  # memory does not fit "small", so neither does cpu
    assert resource_groups(flavors) == [(("cpu", "memory"), ("small", "big"))]


def test_a_miss_names_the_closest_flavor_and_how_much_is_missing():
    t = tree(queue("a", 4, cohort=None))
    t.add("a", {FR: 3 * CPU})
    assignment, failure = t.assign("a", {"cpu": 3 * CPU})
    assert assignment is None
    assert (failure.resource, failure.flavor, failure.missing, failure.available, failure.ceiling) == (
        "cpu",
        "default",
        2 * CPU,
        1 * CPU,
        4 * CPU,
    )


def test_a_resource_the_queue_has_no_quota_for_never_fits():
    t = tree(queue("a", 4, cohort=None))
    assignment, failure = t.assign("a", {"cpu": CPU, "nvidia.com/gpu": 1000})
    assert assignment is None
    assert (failure.resource, failure.flavor) == ("nvidia.com/gpu", None)


def test_within_nominal_ignores_what_could_be_borrowed():
    t = tree(queue("a", 2), queue("b", 10))
    assert t.within_nominal("a", {"cpu": 2 * CPU})
    assert not t.within_nominal("a", {"cpu": 3 * CPU})
    assert t.assign("a", {"cpu": 3 * CPU})[0] is not None  # it fits by borrowing


def test_flavor_amounts_pair_each_request_with_its_flavor():
    assert flavor_amounts({"cpu": 5, "memory": 0}, {"cpu": "x", "memory": "x"}) == {("x", "cpu"): 5}
