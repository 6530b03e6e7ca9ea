"""Every page through axe-core (npm, pinned in the Makefile's ``axe`` target) in a real Chromium,
as a platform admin and as a tenant, in the light and the dark colour scheme: no serious or
critical violation. A failure prints each violation with its rule, help and the offending nodes.

``PAGES`` is the one list of pages the audit visits, keyed by URL name; ``NOT_PAGES`` names the
routes that are not HTML pages (downloads, JSON, POST-only actions). A test walks the URL conf and
fails when a named route is in neither list, so a new page cannot skip the audit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from playground.presets import get_preset
from playground.services import runs, scenarios
from tests.e2e.test_dashboard_browser import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(django_settings.BASE_DIR) / "var" / "axe-node" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
SCHEMES = ("light", "dark")


@dataclass
class Site:
    """The objects the pages are about."""

    pending_workload: str
    scenario: str
    run: str


# URL name -> the arguments of one page to audit.
PAGES: dict[str, Callable[[Site], list[Any]]] = {
    "queues:home": lambda s: [],
    "queues:queue-tree": lambda s: [],
    "queues:flavors": lambda s: [],
    "queues:flavor": lambda s: ["a100"],
    "queues:clusters": lambda s: [],
    "queues:cluster": lambda s: ["default"],
    "queues:cohort": lambda s: ["org"],
    "queues:edit-cohort": lambda s: ["org"],
    "queues:cluster-queue": lambda s: ["cq-gpu"],
    "queues:edit-cluster-queue": lambda s: ["cq-gpu"],
    "queues:namespace": lambda s: ["team-a"],
    "queues:edit-namespace": lambda s: ["team-a"],
    "queues:local-queue": lambda s: ["team-a", "train"],
    "queues:edit-local-queue": lambda s: ["team-a", "train"],
    "queues:workloads": lambda s: [],
    "queues:workload": lambda s: ["team-a", s.pending_workload],
    "queues:audit-log": lambda s: [],
    "queues:glossary": lambda s: [],
    "budgets:list": lambda s: [],
    "budgets:detail": lambda s: ["a-gpu-hours"],
    "budgets:edit": lambda s: ["a-gpu-hours"],
    "playground:index": lambda s: [],
    "playground:scenario": lambda s: [s.scenario],
    "playground:run": lambda s: [s.run],
    "login": lambda s: [],
    # the admins' add, edit and delete pages (queues/ui/views/edit.py, budgets/ui/views.py)
    "queues:add-cohort": lambda s: [],
    "queues:add-cluster-queue": lambda s: [],
    "queues:add-namespace": lambda s: [],
    "queues:add-local-queue": lambda s: [],
    "queues:add-flavor": lambda s: [],
    "queues:edit-flavor": lambda s: ["a100"],
    "queues:add-cluster": lambda s: [],
    "queues:edit-cluster": lambda s: ["default"],
    "queues:delete-cluster": lambda s: ["default"],
    "queues:delete-cohort": lambda s: ["org"],
    "queues:delete-cluster-queue": lambda s: ["cq-gpu"],
    "queues:delete-namespace": lambda s: ["team-a"],
    "queues:delete-local-queue": lambda s: ["team-a", "train"],
    "queues:delete-flavor": lambda s: ["a100"],
    "budgets:add": lambda s: [],
    "budgets:delete": lambda s: ["a-gpu-hours"],
    # a tenant's submit and cancel (queues/ui/views/actions.py)
    "queues:submit-choose": lambda s: [],
    "queues:submit-workload": lambda s: ["team-a", "train"],
    "queues:cancel-workload": lambda s: ["team-a", s.pending_workload],
}

# Named routes that are not pages a person reads: why each is left out.
NOT_PAGES = {
    "admin": "the Django admin's own pages",
    "logout": "POST only",
    "oidc_authentication_init": "a redirect to the identity provider",
    "oidc_authentication_callback": "the identity provider's return",
    "metrics": "Prometheus text",
    "healthz": "JSON",
    "readyz": "JSON",
    "api-schema": "OpenAPI document",
    "api-docs": "Swagger UI, the API's documentation tool",
    "workload-estimate": "a fragment fetched into the workload page (audited there)",
    "playground:start": "POST only",
    "playground:scenario-yaml": "a download",
    "playground:run-status": "JSON",
    "playground:run-resend": "POST only",
    "playground:run-apply": "POST only",
    "playground:run-results": "JSON",
    "playground:run-csv": "a download",
    "playground:run-edited-yaml": "a download",
    "kueue": "Kueue manifests (YAML/JSON API)",
}


def named_routes() -> set[str]:
    """Every ``namespace:name`` (or ``name``) of the URL conf, the REST API's router left out."""
    found: set[str] = set()

    def walk(patterns: list[Any], prefix: str, route: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                here = route + str(pattern.pattern)
                if here.startswith("api/v1/") and not here.startswith("api/v1/kueue/"):
                    continue  # the REST API (its own docs and tests)
                if here.startswith("admin/"):
                    found.add("admin")
                    continue
                if here.startswith("api/v1/kueue/"):
                    found.add("kueue")
                    continue
                namespace = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
                walk(pattern.url_patterns, namespace, here)
            elif isinstance(pattern, URLPattern) and pattern.name:
                found.add(prefix + pattern.name)

    walk(get_resolver().url_patterns, "", "")
    return found


def test_every_named_route_is_audited_or_said_not_to_be_a_page():
    routes = named_routes()
    unlisted = routes - set(PAGES) - set(NOT_PAGES)
    assert not unlisted, f"add these routes to PAGES (or NOT_PAGES with why): {sorted(unlisted)}"
    stale = set(PAGES) - routes
    assert not stale, f"PAGES names routes that no longer exist: {sorted(stale)}"


@pytest.fixture
def site(transactional_db, quiet_broker, settings, monkeypatch) -> Site:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cluster = build_cluster(history_hours=3)
    pending = cluster.a_train.workloads.filter(state="Pending").order_by("id").first()
    # A playground scenario and a finished run, computed here instead of by a worker.
    monkeypatch.setattr(runs, "send_on_commit", lambda run: None)
    from django.contrib.auth import get_user_model

    admin = get_user_model().objects.get(username="admin")
    preset = get_preset("volcano-16cpu")
    scenario = scenarios.create_from_preset(preset.slug, owner=admin)
    run = runs.start_run(scenario, edits=list(preset.suggested_edits), owner=admin, title="audit")
    runs.execute_run(run.pk)
    return Site(pending_workload=pending.name, scenario=str(scenario.pk), run=str(run.pk))


def audit(page: Any, url: str) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on ``url``, once its charts are drawn."""
    page.goto(url)
    page.wait_for_load_state("networkidle")
    # Charts drawn (or the page has none with data): axe checks what a reader sees.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.chart[id], .pg-chart[id]')]"
        ".every(el => el.querySelector('.main-svg') || !document.getElementById('figure-data-' + el.id))",
        timeout=15_000,
    )
    if not page.evaluate("() => !!window.axe"):
        # Evaluated through the DevTools protocol: the page's Content-Security-Policy stays as it is.
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [v for v in result["violations"] if v["impact"] in BLOCKING]


def describe(found: dict[str, list[dict[str, Any]]]) -> str:
    lines = []
    for where, violations in found.items():
        for v in violations:
            lines.append(f"{where}: [{v['impact']}] {v['id']}: {v['help']} ({v['helpUrl']})")
            for node in v["nodes"][:5]:
                lines.append(f"    {json.dumps(node['target'])} {node['failureSummary'].splitlines()[-1].strip()}")
                lines.append(f"      {node['html'][:200]}")
            if len(v["nodes"]) > 5:
                lines.append(f"    ... and {len(v['nodes']) - 5} more nodes")
    return "\n".join(lines)


def audit_all(page: Any, site: Site, names: list[str]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        for name in names:
            url = reverse(name, args=PAGES[name](site))
            violations = audit(page, url)
            if violations:
                found[f"{scheme} {url}"] = violations
    return found


@pytest.fixture
def axe_installed() -> None:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: `make axe` installs axe-core from npm")


def test_given_an_admin_every_page_has_no_serious_accessibility_violation(site, axe_installed, page):
    sign_in(page, "admin")
    found = audit_all(page, site, [name for name in PAGES if name != "login"])
    assert not found, "axe-core found serious or critical violations:\n" + describe(found)


def test_given_a_tenant_every_page_it_can_open_has_no_serious_accessibility_violation(site, axe_installed, page):
    sign_in(page, "alice")
    # Pages a tenant may not open answer 404 (an error page, audited too); the playground's run
    # and scenario are the admin's, so the tenant's own view of the playground is its index.
    found = audit_all(page, site, [name for name in PAGES if name != "login"])
    assert not found, "axe-core found serious or critical violations:\n" + describe(found)


def test_the_sign_in_page_has_no_serious_accessibility_violation(site, axe_installed, page):
    found: dict[str, list[dict[str, Any]]] = {}
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        violations = audit(page, reverse("login"))
        if violations:
            found[scheme] = violations
    assert not found, "axe-core found serious or critical violations:\n" + describe(found)
