"""Without a mouse, in a real Chromium: the skip link, the shortcuts, sorting the tree from the
keyboard, the glossary's definitions on focus; the navigation says where you are; dark mode
follows the system's colour scheme."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.e2e.test_dashboard_browser import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_cluster(history_hours=2)


def focused(page) -> str:
    return page.evaluate(
        "() => { const el = document.activeElement; return el ? (el.id || el.tagName + ':' + el.textContent.trim().slice(0, 40)) : ''; }"
    )


def test_given_a_keyboard_then_the_first_tab_offers_the_skip_link_and_it_lands_in_main(cluster, page):
    sign_in(page, "admin")
    page.goto(reverse("queues:queue-tree"))

    page.keyboard.press("Tab")
    assert focused(page) == "A:Skip to main content"
    assert page.locator(".skip-link").is_visible()
    page.keyboard.press("Enter")
    assert focused(page) == "main"


def test_given_the_tree_when_a_header_is_reached_by_tab_then_enter_sorts_and_enter_again_reverses(
    cluster, page, screenshot
):
    sign_in(page, "admin")
    page.goto(reverse("queues:queue-tree"))
    header = page.locator("th[data-sort]").nth(1)
    assert header.locator("dfn").text_content() == "Weight" and header.get_attribute("tabindex") == "0"

    header.focus()
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "descending"  # numbers: largest first
    page.keyboard.press(" ")
    assert header.get_attribute("aria-sort") == "ascending"
    weights = page.eval_on_selector_all(
        "tr.lvl-namespace td[data-v]:nth-child(2)", "cells => cells.map(c => parseFloat(c.getAttribute('data-v')))"
    )
    # namespaces sort among their siblings (under one ClusterQueue): each run of siblings ascends
    parents = page.eval_on_selector_all("tr.lvl-namespace", "rows => rows.map(r => r.getAttribute('data-parent'))")
    for parent in set(parents):
        run = [w for w, p in zip(weights, parents, strict=True) if p == parent]
        assert run == sorted(run)
    screenshot("keyboard-sorted-tree")


def test_given_shortcuts_then_slash_focuses_the_search_and_question_mark_shows_the_help(cluster, page):
    sign_in(page, "admin")
    page.goto(reverse("queues:queue-tree"))

    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.name") == "q"
    page.keyboard.type("team")  # typing in a field is never a shortcut
    assert page.input_value("input[name=q]") == "team"
    page.keyboard.press("Escape")
    page.evaluate("() => document.activeElement.blur()")

    page.keyboard.press("?")
    dialog = page.locator("dialog#shortcuts")
    assert dialog.is_visible() and "focus the page's search" in dialog.inner_text()
    page.keyboard.press("Escape")
    assert not dialog.is_visible()

    page.keyboard.press("g")
    page.keyboard.press("w")
    page.wait_for_url("**/workloads/")


def test_given_a_term_when_it_gets_focus_then_its_definition_shows_and_describes_it(cluster, page, screenshot):
    sign_in(page, "alice")
    page.goto(reverse("queues:local-queue", args=["team-a", "train"]))
    term = page.locator("dl.facts dfn.term", has_text="Usage score")
    shown = "(el) => getComputedStyle(el, '::after').content"
    assert term.evaluate(shown) == "none"
    assert term.inner_text() == "Usage score"  # the definition is no part of the label's text

    term.focus()
    assert "lowest goes first" in term.evaluate(shown)
    box = term.evaluate(
        "(el) => { const s = getComputedStyle(el, '::after'); return [s.position, s.display, s.maxWidth]; }"
    )
    assert box == ["fixed", "block", "308px"]  # out of any scrolling table, 22rem wide at most
    described = page.locator("#" + term.get_attribute("aria-describedby"))
    assert "lowest goes first" in described.text_content()
    screenshot("glossary-term-focused")
    page.keyboard.press("Escape")
    assert term.evaluate(shown) == "none"


def test_given_a_page_then_the_navigation_marks_it_current_and_the_zone_is_named(cluster, page):
    sign_in(page, "alice")
    page.goto(reverse("queues:workloads"))
    assert page.locator("nav.side-nav [aria-current=page]").inner_text() == "Workloads"
    page.goto(reverse("queues:local-queue", args=["team-a", "train"]))
    assert page.locator("nav.side-nav [aria-current]").inner_text() == "Queues"
    assert page.locator("footer").inner_text().startswith("Times are 24-hour, in UTC.")
    assert page.locator("[data-live-status] [aria-live=polite]").count() == 1
    assert page.locator("header nav, main, footer").count() == 3


def test_given_a_dark_system_scheme_then_the_pages_turn_dark(cluster, page, screenshot):
    sign_in(page, "admin")
    background = "() => getComputedStyle(document.querySelector('.card')).backgroundColor"
    page.goto(reverse("queues:home"))
    light = page.evaluate(background)

    page.emulate_media(color_scheme="dark")
    page.goto(reverse("queues:home"))
    dark = page.evaluate(background)

    def brightness(rgb: str) -> int:
        return sum(int(part) for part in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])

    assert brightness(light) > 600 and brightness(dark) < 150, (light, dark)
    screenshot("overview-dark")
