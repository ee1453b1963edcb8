"""Sessions: the tests against the latest Triton, the tests on the oldest Python, the
tests that drive Triton against older releases, lint and types. `nox` runs them all;
CI runs exactly that, through tools/test.sh.

The Triton wheels are large (about 1 GB installed): sessions use uv when it is
installed, whose cache makes every install after the first a matter of links.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
# A session whose Python is missing fails where CI is set (nox's default there) and is
# skipped elsewhere.

PYTHON = "3.11"
OLDEST_PYTHON = "3.10"


def _interpreter(version: str) -> str:
    """`pythonX.Y` when one on PATH runs, else pyenv's (Debian 12 and 13 ship no 3.10;
    the CI image's pyenv has one, though not on PATH), else the bare version, which nox
    reports missing."""
    name = f"python{version}"
    on_path = shutil.which(name)  # a pyenv shim is on PATH but fails for an inactive version
    if (
        on_path
        and subprocess.run([on_path, "-V"], capture_output=True, check=False).returncode == 0
    ):
        return name
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = sorted(glob.glob(f"{root}/versions/{version}.*/bin/{name}"))
    return found[-1] if found else version


LATEST_TRITON = "3.9.0"
# Releases without triton.knobs (3.3, pinned by torch 2.7) and the one the reference
# GPU host runs (3.6, torch 2.11): the tests that drive Triton run against each.
OLDER_TRITONS = ("3.3.1", "3.6.0")
TRITON_TESTS = (
    "tests/test_activate.py",
    "tests/test_catalog.py",
    "tests/test_build.py",
    "tests/test_layouts.py",
    "tests/test_screen.py",
    "tests/test_selftest.py",
)


# torch's CPU build for TorchInductor's C++ kernels and cpp_extension (tests/test_torch.py),
# with ninja, which cpp_extension builds with. pip, not uv: pip finds a release already
# on this machine's disk where its configuration says so (a CPU build of 2.13.0 for
# Python 3.11 here); elsewhere it downloads torch 2.13.0 from PyPI (a CUDA build, which
# runs on the CPU as well).
TORCH = "2.13.0"


# What tests/test_package.py builds and checks the distributions with (hatchling: the
# build runs without isolation, offline; uv: the fresh venv the wheel is installed in).
PACKAGING = ("build", "twine", "check-wheel-contents", "hatchling>=1.27", "uv")


def _install(session: nox.Session, triton: str) -> None:
    session.install("-e", "./python", "pytest", f"triton=={triton}")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Every test, with the latest Triton and torch's CPU build."""
    _install(session, LATEST_TRITON)
    # tests/nix: the stand-in nixpkgs builds the shim with this interpreter's pip and
    # hatchling (no build isolation, offline), and so does the test that pip-installs it.
    session.install("pip", "ninja", *PACKAGING)
    session.run("python", "-m", "pip", "install", "--quiet", f"torch=={TORCH}")
    # The other Debian release's Nix too (tools/other-nix.sh), besides the system's.
    session.run("pytest", "-ra", *session.posargs, env={"TT_MODERN_NIX": "1"})


@nox.session(python=_interpreter(OLDEST_PYTHON), name=f"tests-{OLDEST_PYTHON}")
def oldest_python(session: nox.Session) -> None:
    """Every test but Nix's, on the oldest Python supported, with Triton 3.6.

    Triton 3.9 publishes no wheel for Python 3.10; 3.6 (torch 2.11's) does. The Nix
    tests' stand-in nixpkgs builds with whichever interpreter runs them: `tests` covers
    them."""
    _install(session, "3.6.0")
    session.install(*PACKAGING)
    # Tests marked `torch` run in `tests` (no local torch for Python 3.10: a download of GBs).
    session.run("pytest", "-ra", "--ignore=tests/nix", "-m", "not torch", *session.posargs)


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
