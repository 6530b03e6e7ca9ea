"""Pure helpers behind the pages: entitlement arithmetic, dominant shares, amounts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from queues.selectors.history import thin
from queues.selectors.reasons import sentence, title
from queues.selectors.shares import NO_SHARE, Share, dominant_share, jain_index, weighted_part
from queues.ui.display import amount, amounts, resource_order

GPU = "nvidia.com/gpu"


def test_given_weights_when_split_then_parts_are_proportional_and_zero_weight_gets_nothing():
    assert weighted_part({GPU: 9000}, 2, 3) == {GPU: 6000.0}
    assert weighted_part({GPU: 9000}, 0, 3) == {GPU: 0.0}
    assert weighted_part({GPU: 9000}, 1, 0) == {GPU: 0.0}


def test_given_amounts_when_dominant_share_taken_then_the_largest_ratio_and_its_resource_win():
    share = dominant_share({GPU: 3000, "cpu": 40000}, {GPU: 4000, "cpu": 32000})

    assert share == Share(1.25, "cpu")
    assert share.level == "over" and share.percent_capped == 62.5


def test_given_no_entitlement_when_dominant_share_taken_then_there_is_none():
    assert dominant_share({GPU: 1000}, {GPU: 0}) == NO_SHARE
    assert NO_SHARE.level == "none" and NO_SHARE.percent_capped == 0


@pytest.mark.parametrize(("ratio", "level"), [(0.5, "under"), (0.95, "at"), (1.1, "at"), (1.2, "over")])
def test_given_ratio_when_levelled_then_within_ten_percent_counts_as_at(ratio, level):
    assert Share(ratio, GPU).level == level


def test_given_values_when_jain_index_taken_then_it_matches_the_simulator_definition():
    assert jain_index([1, 1, 1]) == 1.0
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([]) == 1.0


@pytest.mark.parametrize(
    ("millis", "resource", "text"),
    [
        (12345.6, "cpu", "12.3 CPU"),
        (500, "cpu", "0.5 CPU"),
        (4000, GPU, "4 GPU"),
        (2**30 * 1000 * 1536, "memory", "1.5 Ti"),
        (2**20 * 1000 * 512, "memory", "512 Mi"),
        (0, "cpu", "0 CPU"),
        (None, "cpu", "—"),
        (3, "cpu", "<0.01 CPU"),
        (250_000, "cpu", "250 CPU"),
        (7000, "example.com/fpga", "7 fpga"),
    ],
)
def test_given_millis_when_shown_then_rounded_with_a_readable_unit(millis, resource, text):
    assert amount(millis, resource) == text


def test_given_resources_when_listed_then_accelerators_cpu_memory_then_the_rest():
    assert resource_order(["memory", "zzz", "cpu", GPU]) == [GPU, "cpu", "memory", "zzz"]
    assert amounts({"memory": 0, "cpu": 2000}) == ["2 CPU"]


def test_given_engine_message_when_made_a_sentence_then_capitalised_and_closed():
    assert sentence("InsufficientQuota", "insufficient quota for cpu") == "Insufficient quota for cpu."
    assert sentence("", "") == "Waiting for the next admission pass to evaluate it."
    assert title("WaitingForFairShare") == "Waiting for its fair share"
    assert title("Preempted") == "Preempted, waiting to run again"
    assert title("SomethingNew") == "SomethingNew"


def test_given_long_series_when_thinned_then_at_most_the_limit_and_the_last_point_is_kept():
    times = [datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=i) for i in range(1000)]

    kept = thin(times, 100)

    assert len(kept) <= 101 and times[-1] in kept and times[0] in kept
    assert thin(times[:50], 100) == set(times[:50])


def status(percent: float, **fields: object):
    from decimal import Decimal

    from budgets.status import BudgetStatus

    values = {
        "budget_id": 1,
        "name": "b",
        "unit": "hours",
        "measured": True,
        "as_of": None,
        "period_start": None,
        "period_end": None,
        "allocated_hours": Decimal(100),
        "used_hours": Decimal(percent),
        "remaining_hours": Decimal(100 - percent),
        "percent": percent,
        "exhausted": False,
        "exhausted_at": None,
        "burn_rate_per_hour": Decimal(0),
        "forecast_exhausted_at": None,
        "exhausts_before_reset": None,
        "held": False,
        "alert_crossed": 80.0 if percent >= 80 else None,
    }
    values.update(fields)
    return BudgetStatus(**values)


@pytest.mark.parametrize(
    ("percent", "fields", "level"),
    [
        (10, {}, "ok"),
        (85, {}, "ok"),  # past the 80% alert threshold but not forecast to run out: not at risk
        (
            10,
            {
                "as_of": datetime(2026, 1, 1, tzinfo=UTC),
                "forecast_exhausted_at": datetime(2026, 1, 2, tzinfo=UTC),
                "period_end": datetime(2026, 1, 3, tzinfo=UTC),
                "exhausts_before_reset": True,
            },
            "warn",
        ),
        (
            10,
            {
                "as_of": datetime(2026, 1, 1, tzinfo=UTC),
                "forecast_exhausted_at": datetime(2026, 1, 2, tzinfo=UTC),
                "period_end": datetime(2026, 1, 1, 12, tzinfo=UTC),
                "exhausts_before_reset": False,
            },
            "ok",
        ),
        (  # never resets: at risk only when it runs out within a week
            10,
            {
                "as_of": datetime(2026, 1, 1, tzinfo=UTC),
                "forecast_exhausted_at": datetime(2026, 3, 1, tzinfo=UTC),
                "exhausts_before_reset": True,
            },
            "ok",
        ),
        (100, {"exhausted": True}, "bad"),
        (50, {"held": True}, "bad"),
    ],
)
def test_given_budget_status_when_levelled_then_thresholds_forecast_and_holds_decide(percent, fields, level):
    from budgets.selectors.chips import BudgetChip

    chip = BudgetChip(
        1, "b", "WallTime", "100", "Hold", "hours", "LocalQueue a/b", status(percent, **fields), (80.0, 100.0)
    )

    assert chip.level == chip.status.level == level


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (45, "45 s"),
        (720, "12 min"),
        (15600, "4 h 20 min"),
        (105735, "1 d 5 h"),
        (86400, "1 d"),
        (-3600, "−1 h"),
        (None, "—"),
    ],
)
def test_given_seconds_when_shown_then_the_two_largest_units_are_used(seconds, text):
    from queues.ui.display import duration

    assert duration(seconds) == text


@pytest.mark.parametrize(("value", "text"), [(40.000, "40"), (2003.5, "2,003.5"), (0.166667, "0.17"), (2000, "2,000")])
def test_given_hours_when_shown_then_no_trailing_zeros_and_thousands_separated(value, text):
    from queues.ui.display import number

    assert number(value) == text


def test_given_a_workload_page_when_rendered_then_wall_time_reads_as_a_duration(cluster, login):
    from queues.models import Workload, WorkloadState

    # A finished workload: its wall time is the stored figure (a running one's is derived from admitted_at).
    workload = Workload.objects.select_related("namespace").first()
    Workload.objects.filter(pk=workload.pk).update(
        state=WorkloadState.FINISHED, wall_time_seconds=15000, accumulated_past_execution_seconds=600
    )

    body = login("admin").get(f"/namespaces/{workload.namespace.name}/workloads/{workload.name}/").content.decode()

    assert "wall time 4 h 20 min in total" in body and "15600 s" not in body
