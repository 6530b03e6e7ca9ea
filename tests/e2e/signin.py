"""Signing in through the dashboard's own login form, as a person does (the browser tests' one copy)."""

from __future__ import annotations

from django.urls import reverse

from tests.queues.views.cluster import PASSWORD


def sign_in(page, username: str, password: str = PASSWORD) -> None:
    """Fill the login form and wait for the overview it leads to."""
    page.goto(reverse("login"))
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/")
