"""The platform package: one module per concern, imported in one direction only."""

from __future__ import annotations

import ast
from pathlib import Path

import commodel.platform

PACKAGE = Path(commodel.platform.__file__).parent


def _runtime_imports(path: Path) -> set[str]:
    """Sibling modules ``path`` imports at run time (not under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {
        id(node)
        for stmt in ast.walk(tree)
        if isinstance(stmt, ast.If) and ast.unparse(stmt.test) == "TYPE_CHECKING"
        for node in ast.walk(stmt)
    }
    siblings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and id(node) not in type_only:
            if node.module:
                siblings.add(node.module.split(".")[0])
            else:
                siblings.update(alias.name for alias in node.names)
    return siblings


def test_modules_import_each_other_in_one_direction() -> None:
    graph = {p.stem: _runtime_imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert set(graph) == {
        "fields",
        "network",
        "sections",
        "many_to_one",
        "engine_params",
        "loading",
        "yaml_limits",
    }
    order: list[str] = []
    while len(order) < len(graph):
        ready = sorted(m for m in graph if m not in order and graph[m] <= set(order))
        assert ready, f"import loop among {sorted(set(graph) - set(order))}: {graph}"
        order.extend(ready)
    assert order.index("fields") < order.index("network") < order.index("sections")


def test_one_network_validator_and_one_topology_list() -> None:
    from commodel.platform import SECTIONS, TOPOLOGIES, validate_network

    assert SECTIONS["network"] is validate_network
    assert TOPOLOGIES == ("binary-tree", "crossbar", "racks", "leaf-spine", "fat-tree")
    assert list(SECTIONS) == [
        "loggops",
        "plogp",
        "hockney",
        "network",
        "tcp",
        "lmo",
        "many_to_one",
        "cpu",
    ]
