"""The examples in the package's docstrings (``>>>``) run and hold: every module's."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

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


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
