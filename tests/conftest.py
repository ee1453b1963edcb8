"""Shared test set-up. Tests never skip: a missing tool is a failure that says what to
install (the README's test command, tools/test.sh, installs everything).

Markers (pytest.ini): ``root``, ``network``, ``repo`` and ``torch``. In the unpacked sdist
the repository's other files are absent, and the tests marked ``repo`` are deselected,
and so are those marked ``torch`` where torch is not installed (a packager's sandbox
for this package has no reason to hold gigabytes of torch), with a line in the header
saying why; in a checkout every test runs (tools/test.sh installs torch)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
# A checkout has the package under python/; the sdist has it at its top.
IN_CHECKOUT = (ROOT / "python" / "pyproject.toml").is_file()
# The package's source, which the tests' child processes import.
SRC = ROOT / "python" / "src" if IN_CHECKOUT else ROOT / "src"


def require_tool(name: str, package: str) -> str:
    """The absolute path of ``name`` on PATH, or a failure naming the package to install."""
    found = shutil.which(name)
    assert found, f"{name} is not installed; install {package} (see README: the test command)"
    return found


def _installed(distribution: str) -> bool:
    """Whether ``distribution`` is installed, without importing it (an import of torch
    would start the shim in the test process)."""
    from importlib import metadata

    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


# What the unpacked sdist leaves out (in a checkout: nothing).
LEFT_OUT = () if IN_CHECKOUT else ("repo",) + (() if _installed("torch") else ("torch",))


# The test being run (``fit_fixtures.real_ptxas`` checks its markers).
RUNNING: list[pytest.Item] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    RUNNING.append(item)
    try:
        return (yield)
    finally:
        RUNNING.pop()


# Every test under tests/nix/ builds the repository's flake (nix/, flake.nix) into the
# system's Nix store: it needs the repository and root.
NIX_TESTS = ROOT / "tests" / "nix"


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by the markers added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the Nix tests; outside a checkout, deselect the tests that read the
    repository's other files, and those that need torch where it is not installed."""
    for item in items:
        if item.path.is_relative_to(NIX_TESTS):
            item.add_marker(pytest.mark.repo)
            item.add_marker(pytest.mark.root)
    left_out = [item for item in items if any(map(item.get_closest_marker, LEFT_OUT))]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        kept = set(items) - set(left_out)
        items[:] = [item for item in items if item in kept]


def pytest_report_header(config: pytest.Config) -> str | None:
    if IN_CHECKOUT:
        return None
    torch = "; and those marked `torch` (torch is not installed)" if "torch" in LEFT_OUT else ""
    return (
        f"{ROOT} is not a checkout: tests marked `repo` (they read bench/, nix/, tools/ "
        f"or the README) are deselected{torch}"
    )


# The environment pytest was started with, before any test module was imported.
ENVIRON = dict(os.environ)


def _restore_environ() -> None:
    """Back to ``ENVIRON``, but for pytest's own ``PYTEST_CURRENT_TEST``."""
    for name in set(os.environ) - set(ENVIRON) - {"PYTEST_CURRENT_TEST"}:
        del os.environ[name]
    for name, value in ENVIRON.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    """Each test starts and ends with the environment pytest started with: a test module
    that imports Triton in this process, with the shim active, has Triton copy each knob
    the shim assigns into ``os.environ`` (``knobs.propagate_env``), at collection
    already, and a later test's ``resolve()`` would read it as the user's setting."""
    _restore_environ()
    yield
    _restore_environ()
