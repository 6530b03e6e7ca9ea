"""A real fairportal (Django's live server, the demo loaded with an hour of replayed control
loop, then one admission pass, usage sample and budget accounting) scraped over HTTP:

* ``promtool check metrics`` on the scrape reports nothing but the deprecated ``*_hours`` aliases;
* a real Prometheus (Debian's binary) scraping it every second, with deploy/prometheus's rules
  loaded, evaluates every rule without error, and answers every Grafana panel's PromQL in
  deploy/grafana with series. A panel naming a template variable is run with the variable's real
  values (its own ``label_values`` query against that Prometheus): it must be a valid query for
  each, and return series for at least one (a ClusterQueue without evictions draws an empty
  eviction panel; one with none anywhere would fail).

One seeded database and one Prometheus for all of it: the seed is the slow part (about 10 s).
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.urls import reverse

from budgets.metrics import DEPRECATED_ALIASES
from tests.queues.interop.prometheus_server import binary, get_json, prometheus, wait_for

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "deploy" / "prometheus" / "fairportal.rules.yml"
DASHBOARDS = sorted((REPO / "deploy" / "grafana").glob("*.json"))
TOKEN = "live-scrape-token"
# Grafana's built-in interval variables, as a 1 s scrape needs them.
BUILTINS = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "5m"}
LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\)$")


@pytest.fixture
def live_demo(live_server, settings, transactional_db):
    from budgets.services import reconcile_all_budgets
    from queues.admission.passes import run_all_admission_passes
    from queues.demo import seed_demo
    from queues.services.usage import sample_usage

    settings.METRICS_TOKEN = TOKEN
    seed_demo(history_seconds=3600)  # replays passes in this process: admissions, evictions, waits
    run_all_admission_passes()
    sample_usage()
    reconcile_all_budgets()
    return live_server


def scrape(live_server) -> str:
    request = urllib.request.Request(live_server.url + reverse("metrics"), headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the loopback live server
        return response.read().decode()


def query(url: str, promql: str) -> dict[str, Any]:
    """The whole answer of an instant query (``status`` error included, not raised)."""
    request = f"{url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    try:
        return get_json(request)
    except urllib.error.HTTPError as error:  # 400/422: a bad query, with Prometheus's reason
        return json.load(error)


def targets(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """``(panel title, expr)`` of every target of every panel, rows' nested panels included."""
    found = []
    for panel in dashboard["panels"]:
        for inner in [panel, *panel.get("panels", [])]:
            found += [(inner["title"], target["expr"]) for target in inner.get("targets", [])]
    return found


def variable_values(url: str, dashboard: dict[str, Any]) -> dict[str, list[str]]:
    """Each query variable's values, from its ``label_values(selector, label)`` on Prometheus."""
    values = {}
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = LABEL_VALUES.match(variable["definition"])
        assert match, f"{variable['name']}: only label_values(selector, label) is used here"
        params = urllib.parse.urlencode({"match[]": match["selector"]})
        found = get_json(f"{url}/api/v1/label/{match['label']}/values?{params}")["data"]
        assert found, f"variable {variable['name']} has no values"
        values[variable["name"]] = found
    return values


def substitute(expr: str, variable: str | None, value: str | None) -> str:
    for name, replacement in BUILTINS.items():
        expr = expr.replace(name, replacement)
    if variable is not None and value is not None:
        for form in (f"${{{variable}}}", f"[[{variable}]]", f"${variable}"):
            expr = expr.replace(form, value)
    assert "$" not in expr, f"unsubstituted variable in {expr}"
    return expr


def test_given_live_demo_then_promtool_lints_the_scrape_and_every_dashboard_panel_returns_series(live_demo, tmp_path):
    # promtool check metrics, on the body a real scrape over HTTP returns
    body = scrape(live_demo)
    lint = subprocess.run(
        [binary("promtool"), "check", "metrics"], input=body, capture_output=True, text=True, timeout=60, check=False
    )
    problems = [line for line in (lint.stdout + lint.stderr).splitlines() if line.strip()]
    assert {line.split()[0] for line in problems} == set(DEPRECATED_ALIASES), problems
    assert all('use base unit "seconds" instead of "hours"' in line for line in problems), problems
    for alias in DEPRECATED_ALIASES:
        assert f"# HELP {alias} DEPRECATED, removed in the next release: use " in body

    # a real Prometheus scraping the same server, with the rules loaded
    host = live_demo.url.split("://", 1)[1]
    job = {
        "job_name": "fairportal",
        "metrics_path": reverse("metrics"),
        "authorization": {"type": "Bearer", "credentials": TOKEN},
        "static_configs": [{"targets": [host]}],
    }
    with prometheus(tmp_path, [job], rule_files=[RULES]) as url:
        assert wait_for(url, 'up{job="fairportal"} == 1'), "the scrape target never came up"
        # three scrapes for rate(), and the recording rules evaluated on them
        assert wait_for(url, "count_over_time(kueue_admission_attempts_total[1m]) >= 3")
        for group in yaml.safe_load(RULES.read_text())["groups"]:
            for record in [rule["record"] for rule in group["rules"] if "record" in rule]:
                assert wait_for(url, record), f"recording rule {record} never produced a series"
        rules = [rule for group in get_json(f"{url}/api/v1/rules")["data"]["groups"] for rule in group["rules"]]
        starved = query(url, 'ALERTS{alertname="FairportalTenantStarved"}')["data"]["result"]

        failures = []
        for path in DASHBOARDS:
            dashboard = json.loads(path.read_text())
            values = variable_values(url, dashboard)
            for title, expr in targets(dashboard):
                named = [name for name in values if f"${name}" in expr or f"${{{name}}}" in expr]
                assert len(named) <= 1, f"{path.name} {title}: one variable per query is what this test substitutes"
                tries = [(named[0], value) for value in values[named[0]]] if named else [(None, None)]
                answered = False
                for variable, value in tries:
                    answer = query(url, substitute(expr, variable, value))
                    if answer["status"] != "success":
                        failures.append(f"{path.name} / {title}: {answer.get('error')} in {expr}")
                        break
                    answered = answered or bool(answer["data"]["result"])
                else:
                    if not answered:
                        failures.append(f"{path.name} / {title}: no series for {expr}")

    assert len(DASHBOARDS) == 4
    assert not failures, "\n".join(failures)
    assert len(rules) == 14
    assert all(rule["health"] == "ok" for rule in rules), [(r["name"], r.get("lastError")) for r in rules]
    # the demo's starved tenants are what the alert waits on (pending: it needs 15 minutes)
    found = samples_named(body, "fairportal_namespace_starved")
    assert 1.0 in found.values() and 0.0 in found.values()  # the demo has starved and served tenants
    assert {series["metric"]["namespace"] for series in starved} == {ns for ns, v in found.items() if v == 1.0}
    assert {series["metric"]["alertstate"] for series in starved} == {"pending"}


def samples_named(body: str, name: str) -> dict[str, float]:
    """``{namespace: value}`` of one namespace-labelled family in a scrape body."""
    found = {}
    for line in body.splitlines():
        match = re.match(rf'^{name}\{{namespace="([^"]+)"\}} (\S+)$', line)
        if match:
            found[match[1]] = float(match[2])
    return found
