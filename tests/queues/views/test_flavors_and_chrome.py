"""The resource-flavor pages, and the page chrome: sign-in hint, favicon, API docs link."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_given_admin_when_flavors_opened_then_each_flavor_shows_capacity_and_use(cluster, login):
    response = login("admin").get(reverse("queues:flavors"))

    summaries = {s.flavor.name: s for s in response.context["flavors"]}
    assert response.status_code == 200 and summaries
    used = [cell for s in summaries.values() for cell in s.totals if cell.admitted]
    assert used, "the test cluster runs work on some flavor"


def test_given_a_flavor_when_opened_then_its_cluster_queues_and_totals_agree(cluster, login):
    flavor = login("admin").get(reverse("queues:flavors")).context["flavors"][0].flavor.name

    summary = login("admin").get(reverse("queues:flavor", args=[flavor])).context["summary"]

    for total in summary.totals:
        rows = [cell for queue in summary.queues for cell in queue.cells if cell.resource == total.resource]
        assert sum(cell.admitted for cell in rows) == total.admitted
        assert sum(cell.nominal for cell in rows) == total.nominal


def test_given_tenant_when_flavors_opened_then_only_the_cluster_queues_it_feeds_are_listed(cluster, login, client):
    admin_queues = {q.name for s in login("admin").get(reverse("queues:flavors")).context["flavors"] for q in s.queues}
    client.logout()

    seen = {q.name for s in login("bob").get(reverse("queues:flavors")).context["flavors"] for q in s.queues}

    assert "cq-cpu" in admin_queues
    assert seen == {"cq-gpu"}  # bob's team-b/train feeds cq-gpu only


def test_given_an_unknown_flavor_then_404(cluster, login):
    assert login("admin").get(reverse("queues:flavor", args=["no-such"])).status_code == 404


@pytest.mark.parametrize(("debug", "shown"), [(True, True), (False, False)])
def test_given_debug_when_sign_in_page_opened_then_demo_logins_are_hinted_only_in_debug(client, debug, shown):
    with override_settings(DEBUG=debug):
        body = client.get(reverse("login")).content.decode()

    assert ('id="demo-logins"' in body) is shown


def test_given_signed_in_when_any_page_opened_then_sidebar_links_api_docs_and_flavors(cluster, login):
    body = login("alice").get(reverse("queues:home")).content.decode()

    assert f'href="{reverse("api-docs")}"' in body and f'href="{reverse("queues:flavors")}"' in body
    assert 'rel="icon" href="/static/favicon.svg"' in body


def test_favicon_ico_points_at_the_svg(client):
    response = client.get("/favicon.ico")

    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
