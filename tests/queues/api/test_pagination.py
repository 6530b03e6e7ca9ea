"""Paging is strict where the schema is: a page size that is not a whole number of at least 1 is a
400 naming page_size, not a silent fallback; an empty value means "not given"."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("size", ["abc", "0", "-5", "null", "1.5", "١٢"])
def test_given_a_page_size_that_is_not_a_whole_number_then_400_names_it(clients, size):
    response = clients["admin"].get("/api/v1/namespaces/", {"page_size": size})

    assert response.status_code == 400, response.content
    assert list(response.json()) == ["page_size"]


def test_given_an_empty_or_huge_page_size_then_the_default_or_the_maximum(clients):
    empty = clients["admin"].get("/api/v1/namespaces/", {"page_size": "", "page": ""})
    huge = clients["admin"].get("/api/v1/namespaces/", {"page_size": "9" * 40})

    assert (empty.status_code, huge.status_code) == (200, 200)
    assert empty.json()["count"] == huge.json()["count"] == len(huge.json()["results"])


def test_given_page_last_then_it_is_not_a_page_number(clients):
    assert clients["admin"].get("/api/v1/namespaces/", {"page": "last"}).status_code == 404


def test_given_a_weight_with_more_decimals_than_stored_then_it_is_rounded_not_refused(world, clients):
    response = clients["admin"].patch(f"/api/v1/namespaces/{world.ns_b.pk}/", {"weight": 1.23456789}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["weight"] == 1.2346


def test_given_a_fractional_priority_filter_then_400_names_it(clients):
    response = clients["admin"].get("/api/v1/workloads/", {"priority_max": "2.5"})

    assert response.status_code == 400
    assert list(response.json()) == ["priority_max"]
