"""Dominant share (KEP-752, DRF) and TimeAware's allocation-to-fair-share ratio."""

from __future__ import annotations

import math

from fairshare.admission.ranking import dominant_share, fair_share_ratio


def test_dominant_share_is_the_largest_fraction_of_any_resource():
    assert dominant_share({"cpu": 3000, "memory": 12}, {"cpu": 9000, "memory": 18}) == 12 / 18


def test_nothing_allocated_is_a_share_of_zero():
    assert dominant_share({}, {"cpu": 1}) == 0.0
    assert dominant_share({"cpu": 0}, {"cpu": 1}) == 0.0


def test_allocation_of_a_resource_without_capacity_is_infinite():
    assert dominant_share({"gpu": 1}, {"cpu": 1}) == math.inf


def test_fair_share_ratio_is_the_worst_resource():
    assert fair_share_ratio({"cpu": 4, "gpu": 1}, {"cpu": 8, "gpu": 1}, {}) == 1.0
    assert fair_share_ratio({"cpu": 2}, {"cpu": 8}, {"cpu": 10}) == 0.25


def test_a_wanted_resource_without_fair_share_counts_as_at_share_until_allocated():
    assert fair_share_ratio({}, {}, {"gpu": 16}) == 1.0
    assert fair_share_ratio({"gpu": 16}, {}, {"gpu": 16}) == math.inf
    assert fair_share_ratio({}, {"gpu": 8}, {"gpu": 16}) == 0.0  # starved: served first
