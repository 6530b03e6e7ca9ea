"""deploy/grafana: the dashboards are well-formed Grafana JSON that imports into any instance
(its Prometheus chosen through the ``datasource`` variable, never a fixed uid), each panel on
the 24-column grid, every query variable used and every variable a query uses defined. That every
panel's PromQL returns series from a live fairportal is tests/queues/interop/test_metrics_live.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DASHBOARDS = sorted((Path(__file__).resolve().parents[2] / "deploy" / "grafana").glob("*.json"))
VARIABLE = re.compile(r"\$\{?(\w+)\}?")
BUILTINS = {"__rate_interval", "__interval", "__range"}


def test_given_the_dashboards_then_the_four_views_are_there_with_unique_uids():
    uids = [json.loads(path.read_text())["uid"] for path in DASHBOARDS]

    assert sorted(uids) == [
        "fairportal-budgets",
        "fairportal-cluster-queue",
        "fairportal-overview",
        "fairportal-tenant",
    ]


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_given_a_dashboard_then_panels_targets_and_variables_are_consistent(path: Path):
    dashboard = json.loads(path.read_text())
    variables = {variable["name"]: variable for variable in dashboard["templating"]["list"]}
    panels = dashboard["panels"]

    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert len({panel["id"] for panel in panels}) == len(panels)
    used: set[str] = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["w"] > 0 and grid["h"] > 0, panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"], f"{panel['title']} has no query"
        refs = [target["refId"] for target in panel["targets"]]
        assert len(set(refs)) == len(refs), panel["title"]
        for target in panel["targets"]:
            names = set(VARIABLE.findall(target["expr"])) - BUILTINS
            assert names <= set(variables), f"{panel['title']}: undefined {names - set(variables)}"
            used |= names
    queries = {name for name, variable in variables.items() if variable["type"] == "query"}
    assert queries <= used, f"unused variables {queries - used}"
    # no two panels overlap on the grid
    cells = set()
    for panel in panels:
        grid = panel["gridPos"]
        mine = {
            (x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not cells & mine, f"{panel['title']} overlaps another panel"
        cells |= mine
