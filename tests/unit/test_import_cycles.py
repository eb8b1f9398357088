"""No import cycles between the modules of ``mocks/`` and ``oidc/`` (ARCHITECTURE "Layout":
``mocks/core`` exists to break the cycles; one protocol, one folder).

import-linter's ``acyclic_siblings`` contract compares whole sibling packages (``mocks.api``
-> ``mocks.engine`` and ``mocks.engine`` -> ``mocks.protocols`` make a sibling cycle with no
module importing itself back), so the module-level rule is this test: it builds the import
graph with grimp (import-linter's own graph library; imports inside functions and under
``TYPE_CHECKING`` count) and asserts that no module reaches itself.
"""
from __future__ import annotations

import grimp
import pytest

PACKAGES = ("mocks", "oidc")
#: Everything they may import, so that the graph is whole.
ROOTS = ("mocks", "oidc", "tables", "chaos", "proxy", "recordings", "mockd_project")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*ROOTS, cache_dir=None)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_of_package_import_no_cycle(graph, package):
    modules = {name for name in graph.modules if name.split(".")[0] == package}
    edges = {name: graph.find_modules_directly_imported_by(name) & modules for name in modules}
    assert _cycles(edges) == []


def test_cycle_finder_reports_a_two_module_cycle():
    edges = {"a": {"b"}, "b": {"a", "c"}, "c": set()}
    assert _cycles(edges) == [["a", "b"]]
