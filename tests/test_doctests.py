"""The examples in the package's docstrings (``>>>``) run and hold: every module's."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest
import triton_toolchain

# _kernel defines a Triton kernel at import; __main__ runs the command line.
NOT_IMPORTED = {"triton_toolchain.cli._kernel", "triton_toolchain.__main__"}
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(triton_toolchain.__path__, "triton_toolchain.")
    if m.name not in NOT_IMPORTED
)


def test_every_module_is_found() -> None:
    assert {
        "triton_toolchain.resolver._catalog",
        "triton_toolchain.resolver._discovery._layouts",
    } <= set(MODULES)


def _examples(name: str) -> int:
    """The ``>>>`` lines of a module's source: the examples doctest must run, all of them."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    text = Path(spec.origin).read_text(encoding="utf-8")
    return sum(1 for line in text.splitlines() if line.lstrip().startswith(">>> "))


# Only the modules that have examples are a test each: one without passes nothing.
WITH_EXAMPLES = [name for name in MODULES if _examples(name)]


def test_the_modules_with_examples_are_found() -> None:
    assert "triton_toolchain.resolver._catalog" in WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
    # Every example in the source ran (none hidden where doctest does not look).
    assert result.attempted == _examples(name), (name, result.attempted, _examples(name))
