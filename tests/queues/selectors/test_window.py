"""The one window of a page's time charts: from the page's first sample (the data's span), never
longer than the range asked for (24 h by default), never empty; the wait buckets follow its span."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from queues.models import UsageSample
from queues.selectors import history

NOW = datetime(2026, 11, 28, 15, 0, tzinfo=UTC)
Kind = UsageSample.Kind


def test_given_six_hours_of_data_when_no_range_asked_then_the_window_is_the_data_span():
    first = NOW - timedelta(hours=6, minutes=12)

    window = history.fit_window(None, first, NOW)

    assert (window.name, window.start, window.end) == ("data", first, NOW)
    assert window.data_start == first
    assert window.bucket == timedelta(minutes=15)


def test_given_data_older_than_a_day_when_no_range_asked_then_the_window_is_capped_at_24_hours():
    window = history.fit_window("data", NOW - timedelta(days=3), NOW)

    assert window.start == NOW - timedelta(hours=24)
    assert window.data_start is None  # the data goes on before the window
    assert window.label == "last 24 h"
    assert window.bucket == timedelta(hours=1)


@pytest.mark.parametrize("name", ["24h", "7d", "30d"])
def test_given_a_range_longer_than_the_data_then_the_window_still_starts_where_the_data_starts(name):
    first = NOW - timedelta(hours=6)

    window = history.fit_window(name, first, NOW)

    assert (window.name, window.start) == (name, first)


def test_given_a_range_shorter_than_the_data_then_the_window_is_that_range():
    window = history.fit_window("6h", NOW - timedelta(days=2), NOW)

    assert window.start == NOW - timedelta(hours=6)
    assert window.label == "last 6 h"


def test_given_a_first_sample_just_after_the_range_start_then_the_range_is_kept_whole():
    # samples are minutes apart: the first one inside a 24 h range is "the whole range"
    window = history.fit_window("24h", NOW - timedelta(hours=24) + timedelta(minutes=1), NOW)

    assert window.start == NOW - timedelta(hours=24)


def test_given_no_data_then_the_window_is_the_range_asked_for():
    assert history.fit_window(None, None, NOW).start == NOW - timedelta(hours=24)
    assert history.fit_window("7d", None, NOW).start == NOW - timedelta(days=7)


def test_given_a_first_sample_seconds_old_then_the_window_is_at_least_the_minimum_span():
    window = history.fit_window(None, NOW - timedelta(seconds=20), NOW)

    assert window.span == history.MIN_SPAN
    assert window.start < window.end


def test_given_an_unknown_range_then_the_data_window_is_used():
    assert history.parse_range("1y") == "data"
    assert history.parse_range("<script>") == "data"
    assert history.fit_window("<script>", None, NOW).name == "data"


@pytest.mark.parametrize(
    ("span", "bucket"),
    [
        (timedelta(hours=6, minutes=5), timedelta(minutes=15)),
        (timedelta(hours=24), timedelta(hours=1)),
        (timedelta(days=7), timedelta(hours=6)),
        (timedelta(days=30), timedelta(days=1)),
    ],
)
def test_given_a_window_span_then_waits_are_bucketed_in_about_24_intervals(span, bucket):
    assert history.Window("data", NOW - span, NOW).bucket == bucket


def test_given_a_window_from_the_data_start_then_its_label_names_the_start_and_the_span():
    first = NOW - timedelta(hours=6, minutes=12)
    window = history.fit_window(None, first, NOW)

    assert window.label.startswith("since ")
    assert window.label.endswith("(6 h 12 min)")


@pytest.mark.django_db
def test_given_samples_of_two_queues_then_the_page_window_starts_at_the_first_sample_of_its_own_queues():
    def sample(kind: str, object_id: int, at: datetime) -> UsageSample:
        return UsageSample(kind=kind, object_id=object_id, sampled_at=at, allocated={}, consumed={}, capacity={})

    UsageSample.objects.bulk_create(
        [
            sample(Kind.LOCAL_QUEUE, 1, NOW - timedelta(hours=20)),  # another queue, older
            sample(Kind.LOCAL_QUEUE, 2, NOW - timedelta(hours=5)),
            sample(Kind.LOCAL_QUEUE, 2, NOW - timedelta(hours=1)),
            sample(Kind.NAMESPACE, 2, NOW - timedelta(hours=10)),  # same id, other kind
        ]
    )

    mine = history.page_window(None, [(Kind.LOCAL_QUEUE, 2)], NOW)
    both = history.page_window(None, [(Kind.LOCAL_QUEUE, 2), (Kind.LOCAL_QUEUE, 1)], NOW)
    nothing = history.page_window(None, [], NOW)

    assert mine.start == NOW - timedelta(hours=5)
    assert both.start == NOW - timedelta(hours=20)
    assert nothing.start == NOW - timedelta(hours=24)
