"""The no-cycles contract (``tests/import_contracts.py``) finds every cycle and names one path of each."""

from __future__ import annotations

import grimp

from tests.import_contracts import one_cycle, strongly_connected


def graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    built = grimp.ImportGraph()
    for importer, imported in imports:
        built.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
    return built


def test_given_two_separate_cycles_then_each_is_a_group_and_a_chain_is_not():
    imports = graph(
        ("app.alerts", "app.tasks"),
        ("app.tasks", "app.services"),
        ("app.services", "app.alerts"),
        ("app.runs", "app.worker"),
        ("app.worker", "app.runs"),
        ("app.views", "app.services"),
        ("app.services", "app.models"),
    )

    groups = strongly_connected(imports.modules, imports)

    assert groups == [["app.alerts", "app.services", "app.tasks"], ["app.runs", "app.worker"]]
    assert one_cycle(groups[0], imports) == ["app.alerts", "app.tasks", "app.services", "app.alerts"]


def test_given_no_cycle_then_no_group():
    imports = graph(("app.views", "app.services"), ("app.services", "app.models"), ("app.views", "app.models"))

    assert strongly_connected(imports.modules, imports) == []
