"""The package's import graph against the rooms that docs/design.md draws ("The rooms").

The package is laid out by when its code runs: ``runtime/`` is what every process that
imports Triton or torch pays (standard library only), ``resolver/`` what runs on a miss,
in a command or at a compile, ``cli/`` what a person reads. The rules, read from the
table in docs/design.md and checked on the import graph (parsed, not run):

- every module sits in exactly one room;
- a room imports only the rooms it may use, at module level: ``runtime`` itself;
  ``resolver`` itself and ``runtime``; ``cli`` any of the three; the package's
  ``__init__`` and ``__main__`` (room ``package``) any;
- inside a function, ``runtime`` may reach ``resolver`` too (the plan crosses from one to
  the other: a miss resolves, a compile checks); nothing below ``cli`` reaches ``cli``;
- ``runtime`` imports nothing but the standard library;
- the module-level imports have no cycle (Python runs a module's top-level imports while
  it is half built: a cycle there is an import order that can break).

A parent package is run before any of its modules by Python itself, so a module's
import of its own package's submodules (``from . import _fs``) counts as an import of
those submodules only.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from conftest import SRC  # python/src in a checkout, src in the unpacked sdist

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "triton_toolchain"
DESIGN = ROOT / "docs" / "design.md"

# A row of the rooms' table: "| `runtime/` | module level: `runtime/` | ... |".
_ROW = re.compile(r"^\|\s*`([a-z_]+)/?`\s*\|([^|]*)\|([^|]*)\|")


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the package."""
    found = {}
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def room_of(module: str) -> str:
    """``runtime``, ``resolver``, ``cli`` or ``package`` (the package's ``__init__``);
    ``__main__`` is the command's, ``cli``."""
    if module == f"{PACKAGE}.__main__":
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS_SEEN else "package"


ROOMS_SEEN = frozenset(
    p.name for p in (SRC / PACKAGE).iterdir() if p.is_dir() and (p / "__init__.py").is_file()
)


def allowed() -> dict[str, tuple[set[str], set[str]]]:
    """Room -> (the rooms it may import at module level, inside a function), from the
    table in docs/design.md."""
    rules: dict[str, tuple[set[str], set[str]]] = {}
    section = DESIGN.read_text().split("## The rooms", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        top = {n.rstrip("/") for n in re.findall(r"`([^`]+)`", row.group(2))}
        late = {n.rstrip("/") for n in re.findall(r"`([^`]+)`", row.group(3))}
        rules[row.group(1)] = (top, top | late)
    return rules


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


def test_every_module_is_in_a_room_of_the_design() -> None:
    rules = allowed()
    assert sorted(rules) == ["cli", "package", "resolver", "runtime"]
    assert {"cli", "resolver", "runtime"} == ROOMS_SEEN
    assert {room_of(m) for m in modules()} == set(rules)


def test_no_import_enters_a_room_it_may_not() -> None:
    rules = allowed()
    top, anywhere = graph()
    wrong = sorted(
        f"{m} ({room_of(m)}) imports {d} ({room_of(d)}){'' if d in top[m] else ' in a function'}"
        for m, deps in anywhere.items()
        for d in deps
        if room_of(d) not in rules[room_of(m)][0 if d in top[m] else 1]
    )
    assert wrong == []


def _third_party(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        found |= {n.split(".")[0] for n in names}
    return found - set(sys.stdlib_module_names) - {PACKAGE, "__future__"}


def test_the_runtime_is_standard_library_only() -> None:
    """What every process pays imports nothing outside the standard library (Triton and
    torch are reached through ``sys.modules``, never imported by the runtime)."""
    outside = {
        name: sorted(found)
        for name, path in modules().items()
        if room_of(name) == "runtime" and (found := _third_party(path))
    }
    assert outside == {}


def _defers_annotations(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )


def _named_tuples(tree: ast.Module) -> list[str]:
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "NamedTuple" for b in node.bases)
    ]


def test_a_module_with_named_tuples_evaluates_its_annotations() -> None:
    """``typing.NamedTuple`` turns each deferred (string) field annotation into a
    ``ForwardRef`` that it compiles when the class is made: a module that defines one
    does not use ``from __future__ import annotations`` (docs/design.md, "A cheap
    resolver to import")."""
    deferred = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        if _defers_annotations(tree) and (classes := _named_tuples(tree)):
            deferred[name] = classes
    assert deferred == {}
    # The check sees what it looks for.
    made = ast.parse("from __future__ import annotations\nclass A(NamedTuple):\n    x: int\n")
    assert _defers_annotations(made) and _named_tuples(made) == ["A"]


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
