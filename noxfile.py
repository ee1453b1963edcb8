"""Sessions: the tests against the latest Triton, the tests on the oldest Python and on
the newer ones, the tests that drive Triton against older releases and older torch
releases, lint and types. `nox` runs them all; CI runs exactly that, through
tools/test.sh (two sessions at a time, `tests` beside the others, on CI's two cores).

The Triton wheels are large (about 1 GB installed): sessions use uv when it is
installed, whose cache makes every install after the first a matter of links.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
# A session whose Python is missing fails where CI is set (nox's default there) and is
# skipped elsewhere.

PYTHON = "3.11"
OLDEST_PYTHON = "3.10"
# What the GPU host runs (3.12) and current distributions ship (3.13; Debian 13).
NEWER_PYTHONS = ("3.12", "3.13")


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
# The last patch release of every Triton minor before the latest: each gets the
# differential tests (tests/test_releases.py: the shim off and on, the same outcome;
# the catalog's row against the release's code).
ALL_TRITONS = ("3.0.0", "3.1.0", "3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0")
# Releases without triton.knobs (3.3, pinned by torch 2.7) and the one the reference
# GPU host runs (3.6, torch 2.11): every test that drives Triton runs against each.
OLDER_TRITONS = ("3.3.1", "3.6.0")
RELEASE_TESTS = ("tests/test_releases.py",)
TRITON_TESTS = (
    "tests/test_activate.py",
    "tests/test_catalog.py",
    "tests/test_build.py",
    "tests/test_layouts.py",
    "tests/test_screen.py",
    "tests/test_selftest.py",
)


# Tests that run only in `tests`: the Nix tests (the stand-in nixpkgs builds with the
# interpreter that runs them, whichever it is) and the arm64 tests (their interpreter is
# the arm64 root's, the same whichever Python runs pytest).
MAIN_SESSION_ONLY = ("--ignore=tests/nix", "--ignore=tests/test_arm64.py")

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
    # hypothesis: tests/test_fuzz.py (every reader of bytes read back, fuzzed).
    session.install("-e", "./python", "pytest", "hypothesis", f"triton=={triton}")
    if tuple(map(int, triton.split(".")[:2])) < (3, 3):  # 3.0-3.2 import it, unrequired
        session.install("setuptools")


# Real ptxas binaries of a few CUDA releases for the fit tests (tests/test_fit*.py), from
# PyPI's NVIDIA wheels, cached in ~/.cache/triton-toolchain/ptxas between runs. Fetched
# with nox's own interpreter (uv's virtual environments have no pip). Besides `tests`
# (3.9) and `tests-3.10` (3.6), they run against the oldest release (3.0: no get_ptxas,
# PTX 8.6 for a CUDA 12.6 ptxas, which rejects it).
FIT_TESTS = ("tests/test_fit.py", "tests/test_fit_matrix.py")
FIT_TRITONS = ("3.0.0",)
# What doctor and `which` say against what Triton's compile runs (tests/test_prediction.py):
# besides `tests` (3.9) and `tests-3.10` (3.6, whose catalog row 3.7 and 3.8 share), the
# releases whose lookups differ (3.0: `_path_to_binary`; 3.3: the hyphenated variable).
PREDICTION_TESTS = ("tests/test_prediction.py",)
PREDICTION_TRITONS = ("3.0.0", "3.3.1")


def _fetch_ptxas(session: nox.Session) -> None:
    session.run(sys.executable, "tools/fetch_ptxas.py", external=True)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Every test, with the latest Triton and torch's CPU build."""
    _install(session, LATEST_TRITON)
    # tests/nix: the stand-in nixpkgs builds the shim with this interpreter's pip and
    # hatchling (no build isolation, offline), and so does the test that pip-installs it.
    session.install("pip", "ninja", *PACKAGING)
    session.run("python", "-m", "pip", "install", "--quiet", f"torch=={TORCH}")
    _fetch_ptxas(session)
    session.run("pytest", "-ra", *session.posargs)


@nox.session(python=_interpreter(OLDEST_PYTHON), name=f"tests-{OLDEST_PYTHON}")
def oldest_python(session: nox.Session) -> None:
    """Every test but Nix's and arm64's, on the oldest Python supported, with Triton 3.6.

    Triton 3.9 publishes no wheel for Python 3.10; 3.6 (torch 2.11's) does. The Nix and
    arm64 tests run in `tests` (MAIN_SESSION_ONLY)."""
    _install(session, "3.6.0")
    _fetch_ptxas(session)
    session.install(*PACKAGING)
    # Tests marked `torch` run in `tests` (no local torch for Python 3.10: a download of GBs).
    session.run("pytest", "-ra", *MAIN_SESSION_ONLY, "-m", "not torch", *session.posargs)


SAME_TRITON_ONLY = (
    "test_fit_matrix",
    "test_prediction",
    "test_hopper_switch",
    "test_rocm",
    "test_rocm_lock",
    "test_caches",
    "test_hostile_round4_strict",
    "test_hostile_round4_later",
)


def newer_python(session: nox.Session) -> None:
    """Every test but Nix's, arm64's and torch's, on a newer Python, with the latest Triton.

    Triton 3.9 publishes cp312 and cp313 wheels. As in `tests-3.10`, the tests marked
    `torch` run in `tests` (torch for these Pythons would be a download of GBs, its CUDA
    build), and so do the Nix and arm64 tests (MAIN_SESSION_ONLY)."""
    _install(session, LATEST_TRITON)
    _fetch_ptxas(session)
    session.install(*PACKAGING)
    # What judges the same Triton's compiles in `tests` (the fit and prediction matrices,
    # the AMD layouts, the caches): not again per interpreter (CI's 30 minutes).
    same = [f"--ignore=tests/{name}.py" for name in SAME_TRITON_ONLY]
    session.run("pytest", "-ra", *MAIN_SESSION_ONLY, *same, "-m", "not torch", *session.posargs)


for _version in NEWER_PYTHONS:
    nox.session(python=_interpreter(_version), name=f"tests-{_version}")(newer_python)


@nox.session(python=PYTHON)
@nox.parametrize("triton", ALL_TRITONS)
def triton(session: nox.Session, triton: str) -> None:
    """The differential tests against an older release; for the releases in
    ``OLDER_TRITONS``, every test that drives Triton."""
    _install(session, triton)
    extra = TRITON_TESTS if triton in OLDER_TRITONS else ()
    if triton in FIT_TRITONS:
        _fetch_ptxas(session)
        extra += FIT_TESTS
    if triton in PREDICTION_TRITONS:
        extra += PREDICTION_TESTS
    session.run("pytest", "-ra", *RELEASE_TESTS, *extra, "-m", "not torch", *session.posargs)


# torch releases beside the latest (``tests``): those that pin Triton 3.4 and 3.5
# (2.8, 2.9) and the oldest the adapter supports (2.4, Triton 3.0). PyPI has only their
# CUDA builds (about 4 GB with NVIDIA's wheels, from uv's cache after the first run);
# they run on the CPU. Each runs torch.compile on the CPU, stock and with the shim.
OLDER_TORCHES = ("2.4.1", "2.8.0", "2.9.1")
TORCH_RELEASE_TESTS = (
    "tests/test_torch.py::test_stock_layout_keeps_working_with_the_resolved_compiler",
    "tests/test_torch.py::test_the_users_compiler_is_kept",
)


@nox.session(python=PYTHON, name="torch")
@nox.parametrize("torch", OLDER_TORCHES)
def older_torch(session: nox.Session, torch: str) -> None:
    """torch.compile on the CPU with an older torch and the Triton it pins."""
    session.install("-e", "./python", "pytest", "setuptools", f"torch=={torch}")
    session.run("pytest", "-ra", *TORCH_RELEASE_TESTS, *session.posargs)


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
