"""Sessions: the tests against the latest Triton, the tests that drive Triton against
older releases, lint and types. `nox` runs them all; CI runs exactly that.

The Triton wheels are large (about 1 GB installed): sessions use uv when it is
installed, whose cache makes every install after the first a matter of links.
"""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

PYTHON = "3.11"
LATEST_TRITON = "3.9.0"
# Releases without triton.knobs (3.3, pinned by torch 2.7) and the one the reference
# GPU host runs (3.6, torch 2.11): the tests that drive Triton run against each.
OLDER_TRITONS = ("3.3.1", "3.6.0")
TRITON_TESTS = (
    "tests/test_activate.py",
    "tests/test_build.py",
    "tests/test_layouts.py",
    "tests/test_selftest.py",
)


def _install(session: nox.Session, triton: str) -> None:
    session.install("-e", "./python", "pytest", f"triton=={triton}")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Every test, with the latest Triton."""
    _install(session, LATEST_TRITON)
    # tests/nix: the stand-in nixpkgs builds the shim with this interpreter's pip and
    # hatchling (no build isolation, offline), and so does the test that pip-installs it.
    session.install("pip", "hatchling")
    # Nix 2.26 (Debian 13's) too, through shared/tools/modern-nix.sh, besides the system Nix.
    session.run("pytest", "-ra", *session.posargs, env={"TT_MODERN_NIX": "1"})


@nox.session(python=PYTHON)
@nox.parametrize("triton", OLDER_TRITONS)
def triton(session: nox.Session, triton: str) -> None:
    """The tests that drive Triton, against an older release."""
    _install(session, triton)
    session.run("pytest", "-ra", *TRITON_TESTS, *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting."""
    session.install("ruff")
    config = ("--config", "python/pyproject.toml")
    paths = ("python/src", "tests", "bench", "noxfile.py")
    session.run("ruff", "check", *config, *paths)
    session.run("ruff", "format", "--check", *config, *paths)


@nox.session(python=PYTHON)
def types(session: nox.Session) -> None:
    """mypy --strict on the package."""
    session.install("-e", "./python", "mypy")
    session.run("mypy", "--strict", "python/src/triton_toolchain", env={"MYPYPATH": os.devnull})
