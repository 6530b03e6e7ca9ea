"""Budget events: the ``since`` filter takes any valid ISO 8601 time and refuses the rest with a 400."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest

pytestmark = pytest.mark.django_db

EVENTS = "/api/v1/budget-events/"


def test_given_an_offset_postgres_cannot_store_when_filtering_since_then_it_is_converted_not_a_500(world, clients):
    # +16:00 is valid ISO 8601 and Python reads it; PostgreSQL refuses offsets beyond 15:59.
    plus_16 = timezone(timedelta(hours=16))
    before = (world.event_a.at - timedelta(minutes=1)).astimezone(plus_16).isoformat()
    after = (world.event_a.at + timedelta(minutes=1)).astimezone(plus_16).isoformat()

    included = clients["admin"].get(EVENTS, {"since": before})
    excluded = clients["admin"].get(EVENTS, {"since": after})

    assert before.endswith("+16:00")
    assert (included.status_code, excluded.status_code) == (200, 200), included.content
    assert [row["id"] for row in included.json()["results"]] == [world.event_a.pk]
    assert excluded.json()["results"] == []


@pytest.mark.parametrize(
    "since",
    [
        "2026-11-01T00:00:00 16:00",  # a '+' decoded as a space by a careless client
        "2026-13-01T00:00:00Z",
        "yesterday",
        "0001-01-01T00:00:00+23:59",  # before year 1 in UTC
    ],
)
def test_given_a_bad_since_when_listing_events_then_400_names_since(clients, since):
    response = clients["viewer_a"].get(EVENTS, {"since": since})

    assert response.status_code == 400, response.content
    assert list(response.json()) == ["since"]
