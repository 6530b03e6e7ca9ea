"""An import-linter contract that no module of the project takes part in an import cycle.

import-linter's own ``acyclic_siblings`` looks at packages as wholes; this one looks at modules,
so a function-level import that only hides a cycle still counts (grimp sees it), and a broken
contract names every cycle it found, module by module, with the line of each import.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def strongly_connected(modules: Iterable[str], graph: grimp.ImportGraph) -> list[list[str]]:
    """The groups of two or more modules that import each other, directly or through each other."""
    members = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(members):
        if root in index:
            continue
        # Tarjan's algorithm without recursion: (module, its remaining successors).
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & members)))]
        while work:
            module, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    imported = graph.find_modules_directly_imported_by(successor) & members
                    work.append((successor, iter(sorted(imported))))
                elif successor in on_stack:
                    low[module] = min(low[module], index[successor])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def one_cycle(group: list[str], graph: grimp.ImportGraph) -> list[str]:
    """A shortest cycle through the first module of a group: [a, b, ..., a]."""
    start = group[0]
    shortest: tuple[str, ...] | None = None
    for imported in sorted(graph.find_modules_directly_imported_by(start) & set(group)):
        chain = graph.find_shortest_chain(importer=imported, imported=start)
        if chain is not None and (shortest is None or len(chain) < len(shortest)):
            shortest = chain
    assert shortest is not None, group
    return [start, *shortest]


class AcyclicModulesContract(Contract):
    """``type = "acyclic_modules"``: no module under ``containers`` imports itself through others."""

    type_name = "acyclic_modules"

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        roots = tuple(self.containers)  # type: ignore[call-overload]  # a field until populated
        modules = [m for m in graph.modules if m in roots or m.startswith(tuple(f"{r}." for r in roots))]
        cycles = []
        for group in strongly_connected(modules, graph):
            cycle = one_cycle(group, graph)
            steps = []
            for importer, imported in pairwise(cycle):
                details = graph.get_import_details(importer=importer, imported=imported)
                line = details[0]["line_number"] if details else "?"
                steps.append(f"{importer}:{line} -> {imported}")
            cycles.append({"modules": group, "steps": steps})
        return ContractCheck(kept=not cycles, warnings=None, metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error(f"Import cycle among {', '.join(cycle['modules'])}:")
            for step in cycle["steps"]:
                output.print_error(f"  {step}")
            output.new_line()
