"""The package's import graph against the layers that docs/design.md draws ("The rooms").

The table there is the one statement of the layers; this test reads it. Every module of
``python/src/triton_toolchain`` sits in exactly one layer; no import, at module level or
inside a function, goes from a lower layer to a higher one; and the module-level imports
have no cycle (Python runs a module's top-level imports while it is half built: a cycle
there is an import order that can break). A parent package is run before any of its
modules by Python itself, so a module's import of its own package's submodules
(``from . import _fs``) counts as an import of those submodules only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "python" / "src"
PACKAGE = "triton_toolchain"
DESIGN = ROOT / "docs" / "design.md"

# A row of the layers' table: "| 3 | `_discovery/` ... |".
_ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the package."""
    found = {}
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def layers(names: set[str]) -> dict[str, int]:
    """Module -> its layer, from the table in docs/design.md (higher: nearer the user).
    ``_x/`` names a package with all its modules; ``triton_toolchain`` the package."""
    layer_of: dict[str, int] = {}
    section = DESIGN.read_text().split("## The rooms", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        for named in re.findall(r"`([^`]+)`", row.group(2)):
            if named == PACKAGE:
                members = {PACKAGE}
            elif named.endswith("/"):
                prefix = f"{PACKAGE}.{named.rstrip('/').replace('/', '.')}"
                members = {n for n in names if n == prefix or n.startswith(prefix + ".")}
            else:
                members = {f"{PACKAGE}.{named.replace('/', '.')}"}
            for member in members:
                assert member not in layer_of, f"{member} is in two layers"
                layer_of[member] = int(row.group(1))
    return layer_of


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"


def imports(module: str, path: Path, names: set[str]) -> tuple[set[str], set[str]]:
    """The package's modules that ``module`` imports: (at module level, anywhere), the
    ``if TYPE_CHECKING:`` blocks left out (they never run)."""
    tree = ast.parse(path.read_text())
    top_level: set[str] = set()
    everywhere: set[str] = set()

    def visit(node: ast.AST, top: bool) -> None:
        if _type_checking_only(node):
            return
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, path.name == "__init__.py", node)
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in names]
            found = submodules or [base]
            if module.startswith(base + "."):  # its own package: run first by Python
                found = [n for n in found if n != base]
        for name in found:
            if name in names and name != module:
                everywhere.add(name)
                if top:
                    top_level.add(name)
        # A function's body runs when called; a class's body at import, as the module's.
        deferred = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, top and not deferred)

    for statement in tree.body:
        visit(statement, True)
    return top_level, everywhere


def graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    found = modules()
    names = set(found)
    top, anywhere = {}, {}
    for name, path in found.items():
        top[name], anywhere[name] = imports(name, path, names)
    return top, anywhere


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
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

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_every_module_is_in_one_layer_of_the_design() -> None:
    names = set(modules())
    placed = layers(names)
    assert sorted(names - set(placed)) == []
    assert sorted(set(placed) - names) == []


def test_no_import_climbs_from_a_lower_layer_to_a_higher_one() -> None:
    names = set(modules())
    layer_of = layers(names)
    _top, anywhere = graph()
    climbs = sorted(
        f"{m} (layer {layer_of[m]}) imports {d} (layer {layer_of[d]})"
        for m, deps in anywhere.items()
        for d in deps
        if layer_of[d] > layer_of[m]
    )
    assert climbs == []


def test_the_module_level_imports_have_no_cycle() -> None:
    top, _anywhere = graph()
    assert cycles(top) == []


def test_the_checks_see_a_cycle_and_a_climb(tmp_path: Path) -> None:
    """The readers above find what they look for: a cycle in a made-up graph, and the
    imports of a module written for it (a function-local one included)."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    source = tmp_path / "_x.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import _a, _b\n"
        "from ._c import thing\n"
        "if TYPE_CHECKING:\n"
        "    from ._d import Other\n"
        "def f():\n"
        "    from ._e import late\n"
    )
    names = {f"{PACKAGE}.{n}" for n in ("_a", "_b", "_c", "_d", "_e", "_x")}
    top, anywhere = imports(f"{PACKAGE}._x", source, names)
    assert top == {f"{PACKAGE}.{n}" for n in ("_a", "_b", "_c")}
    assert anywhere == top | {f"{PACKAGE}._e"}
