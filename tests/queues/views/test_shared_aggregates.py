"""Cluster-wide aggregates are shared for a few seconds; narrowed ones are always fresh."""

from __future__ import annotations

import pytest

from queues.selectors import live

pytestmark = pytest.mark.django_db


def test_given_shared_aggregate_when_read_twice_within_its_lifetime_then_second_read_costs_no_query(
    cluster, settings, django_assert_num_queries
):
    settings.DASHBOARD_AGGREGATE_CACHE_SECONDS = 60
    first = live.admitted_usage()

    counts = live.counts_by_local_queue()

    with django_assert_num_queries(0):
        again = live.admitted_usage()
        counts_again = live.counts_by_local_queue()

    assert again.by_local_queue() == first.by_local_queue()
    assert counts_again == counts


def test_given_cache_turned_off_when_read_then_every_read_queries(cluster, settings, django_assert_num_queries):
    settings.DASHBOARD_AGGREGATE_CACHE_SECONDS = 0
    live.counts_by_local_queue()

    with django_assert_num_queries(1):
        live.counts_by_local_queue()


def test_given_narrowed_read_when_repeated_then_it_is_never_cached(cluster, settings, django_assert_num_queries):
    settings.DASHBOARD_AGGREGATE_CACHE_SECONDS = 60
    live.admitted_usage(namespace_ids=[cluster.team_a.id])

    with django_assert_num_queries(1):
        usage = live.admitted_usage(namespace_ids=[cluster.team_a.id]).by_local_queue()

    assert set(usage) == {cluster.a_train.id}
