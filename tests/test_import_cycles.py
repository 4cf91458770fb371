"""No import circles in the Python package, counting every import: at module level, inside
functions, and under ``if TYPE_CHECKING``.

A circle (a imports b, b imports a, directly or through others) means neither module can be
read, tested or changed without the other; one that only works because an import sits in a
function breaks when someone moves it up. The graph is read from the source with ``ast``
(nothing is imported). An edge goes from a module to each module of ``commodel`` it names:
``from .x import y`` names ``x`` (and ``x.y`` when that is a module), ``from . import y``
names ``y`` when it is a module, else the package. A package's ``__init__`` is only a node
when it is named: importing ``commodel.fit.plogp`` does not count as an edge to
``commodel.fit`` (that would tie every module to its package). The two modules that import
by name at run time (``importlib``) get the edges they would follow: the command
(``cli/main.py``) to every subcommand module, the registry of measurements to every fit
module it binds.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "commodel"


def module_name(path: Path) -> str:
    parts = ["commodel", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_module(name: str, known: dict[str, Path]) -> bool:
    return name in known or name == "commodel._engine"


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``commodel`` that ``name`` (at ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("commodel"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("commodel"):
                target = node.module
            else:
                continue
            subs = [f"{target}.{a.name}" for a in node.names]
            if any(_is_module(s, known) for s in subs):
                out.update(s for s in subs if _is_module(s, known))
                if node.module:  # `from .x import sub` imports x too
                    out.add(target)
            else:
                out.add(target)
    out.discard(name)
    return {m for m in out if _is_module(m, known)}


def import_graph() -> dict[str, set[str]]:
    from commodel.cli.main import SUBCOMMANDS
    from commodel.measure.registry import UNITS

    known = modules()
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    graph["commodel.cli.main"] |= {f"commodel.cli.{name}" for name in SUBCOMMANDS}
    graph["commodel.measure.registry"] |= {f"commodel.fit.{u.fit}" for u in UNITS if u.fit}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_graph_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    graph = import_graph()
    # cli/fit.py imports fit/assemble.py inside run(); the engine parameters are converted
    # by engine_params.py, which loading.py imports at module level
    assert "commodel.fit.assemble" in graph["commodel.cli.fit"]
    assert "commodel.platform.engine_params" in graph["commodel.platform.loading"]
    assert "commodel._engine" in graph["commodel.prediction"]
    assert "commodel.fit.tree" in graph["commodel.measure.registry"]  # by importlib
    # a circle of two modules is found, whichever way round
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import circles (each a set of modules that import each other): " + (
        "; ".join(" <-> ".join(c) for c in found)
    )
