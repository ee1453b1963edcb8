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
import tempfile

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
RELEASE_TESTS = ("tests/test_releases.py",)


# torch's CPU build for TorchInductor's C++ kernels and cpp_extension (tests/test_torch.py),
# with ninja, which cpp_extension builds with. pip, not uv: pip finds a release already
# on this machine's disk where its configuration says so (a CPU build of 2.13.0 for
# Python 3.11 here); elsewhere it downloads torch 2.13.0 from PyPI (a CUDA build, which
# runs on the CPU as well).
TORCH = "2.13.0"


# What tests/test_package.py builds and checks the distributions with (hatchling: the
# build runs without isolation, offline; uv: the fresh venv the wheel is installed in).
PACKAGING = ("build", "twine", "check-wheel-contents", "hatchling>=1.27", "uv")


def _pytest(session: nox.Session, *args: str) -> None:
    """pytest with a base directory of the session's own. Sessions run two at a time, and
    pytest makes its shared one (``/tmp/pytest-of-<user>``) 0700 when it starts: that
    cut off another session's tests whose children run as other users below it
    (``tests/hostile.py``'s ``reachable`` opens it for them)."""
    name = "".join(c if c.isalnum() or c in ".-" else "_" for c in session.name)
    parent = os.path.join(tempfile.gettempdir(), "triton-toolchain-pytest")
    os.makedirs(parent, exist_ok=True)  # pytest makes the base itself, not its parent
    session.run("pytest", f"--basetemp={os.path.join(parent, name)}", *args)


def _install(session: nox.Session, triton: str) -> None:
    # hypothesis: tests/test_fuzz.py (every reader of bytes read back, fuzzed).
    session.install("-e", "./python", "pytest", "hypothesis", f"triton=={triton}")
    if tuple(map(int, triton.split(".")[:2])) < (3, 3):  # 3.0-3.2 import it, unrequired
        session.install("setuptools")


# Real ptxas binaries of a few CUDA releases for the fit tests (tests/test_fit*.py), from
# PyPI's NVIDIA wheels, cached in ~/.cache/triton-toolchain/ptxas between runs. Fetched
# with nox's own interpreter (uv's virtual environments have no pip).
def _fetch_ptxas(session: nox.Session) -> None:
    session.run(sys.executable, "tools/fetch_ptxas.py", external=True)


# CI's two cores run two sessions at a time, for 30 minutes at most: each test runs where
# it can find what nothing else finds. What every Python runs is the shim's own code in
# the process and its hook in a child (the activation, the record, the readers, the
# commands, the package's build); the rest runs once, against the latest Triton (`tests`
# and `matrices`), and what drives Triton also against the oldest Python's Triton 3.6
# (`tests-3.10`) and the older releases (`triton`).

# Against the latest Triton only, in `matrices` (beside `tests`, the longest, so that
# the two run at once): the fit and prediction matrices, the Hopper switch, the AMD
# layouts, the strict and late settings (each a compile per target and setting), the
# Nix tests (the stand-in nixpkgs builds with the interpreter that runs them) and the
# arm64 tests (their interpreter is the arm64 root's).
MATRICES = (
    "tests/test_fit_matrix.py",
    "tests/test_prediction.py",
    "tests/test_hopper_switch.py",
    "tests/test_rocm.py",
    "tests/test_rocm_lock.py",
    "tests/test_hostile_round4_strict.py",
    "tests/test_hostile_round4_later.py",
    "tests/nix",
    "tests/test_arm64.py",
)
# The same logic on the same files whichever Python runs it, with Triton 3.6 as with 3.9:
# the hostile suites, the fuzzer (derandomized: the same examples everywhere) and the
# benchmarks. In `tests` only.
ONCE = ("tests/test_hostile_*.py", "tests/test_fuzz.py", "tests/test_bench.py")
# On the newer Pythons, also what `tests-3.10` runs against Triton 3.6: the layouts,
# the fit, the differential and the cold-start tests, the shared installs, the caches.
ONCE_PER_TRITON = (
    "tests/test_layouts.py",
    "tests/test_fit.py",
    "tests/test_advisories.py",
    "tests/test_releases.py",
    "tests/test_shared_installs.py",
    "tests/test_cold.py",
    "tests/test_build.py",
)


def _ignore(*paths: str) -> list[str]:
    return [f"--ignore-glob={path}" for path in paths]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Every test but MATRICES, with the latest Triton and torch's CPU build."""
    _install(session, LATEST_TRITON)
    # The test that pip-installs the shim builds it with this interpreter's pip and
    # hatchling (no build isolation, offline).
    session.install("pip", "ninja", *PACKAGING)
    session.run("python", "-m", "pip", "install", "--quiet", f"torch=={TORCH}")
    _fetch_ptxas(session)
    _pytest(session, "-ra", *_ignore(*MATRICES), *session.posargs)


@nox.session(python=PYTHON)
def matrices(session: nox.Session) -> None:
    """MATRICES, with the latest Triton (none of them is marked ``torch``)."""
    _install(session, LATEST_TRITON)
    # tests/nix: the stand-in nixpkgs builds the shim with this interpreter's pip and
    # hatchling (no build isolation, offline).
    session.install("pip", *PACKAGING)
    _fetch_ptxas(session)
    _pytest(session, "-ra", *MATRICES, *session.posargs)


@nox.session(python=_interpreter(OLDEST_PYTHON), name=f"tests-{OLDEST_PYTHON}")
def oldest_python(session: nox.Session) -> None:
    """The oldest Python, with Triton 3.6: all but MATRICES, ONCE and torch's tests.

    Those marked ``torch`` run in `tests` (no local torch for Python 3.10: a download of
    GBs). Triton 3.9 publishes no wheel for Python 3.10; 3.6 (torch 2.11's) does."""
    _install(session, "3.6.0")
    _fetch_ptxas(session)
    session.install(*PACKAGING)
    skip = _ignore(*MATRICES, *ONCE)
    _pytest(session, "-ra", *skip, "-m", "not torch", *session.posargs)


def newer_python(session: nox.Session) -> None:
    """A newer Python, with the latest Triton: what every Python runs.

    Every test but ``MATRICES``, ``ONCE``, ``ONCE_PER_TRITON`` and those marked ``torch``
    (torch for these Pythons would be a download of GBs, its CUDA build). Triton 3.9
    publishes cp312 and cp313 wheels."""
    _install(session, LATEST_TRITON)
    _fetch_ptxas(session)
    session.install(*PACKAGING)
    skip = _ignore(*MATRICES, *ONCE, *ONCE_PER_TRITON)
    _pytest(session, "-ra", *skip, "-m", "not torch", *session.posargs)


for _version in NEWER_PYTHONS:
    nox.session(python=_interpreter(_version), name=f"tests-{_version}")(newer_python)


# Besides the differential tests, what a release's own code decides, against the
# releases where that code differs (`tests` has 3.9, `tests-3.10` 3.6 for every test
# but ``MATRICES`` and ``ONCE``):
# - 3.0: no get_ptxas (`_path_to_binary`), PTX 8.6 that a CUDA 12.6 ptxas rejects: the
#   fit tests and the prediction matrix;
# - 3.3 (torch 2.7's; no triton.knobs, the hyphenated variable): every test that drives
#   Triton, and the prediction matrix;
# - 3.6 (torch 2.11's, the reference GPU host's; its catalog row is 3.7's and 3.8's): the
#   fit and prediction matrices and the AMD layouts.
FIT_TESTS = ("tests/test_fit.py", "tests/test_fit_matrix.py")
PREDICTION_TESTS = ("tests/test_prediction.py",)
TRITON_TESTS = (
    "tests/test_activate.py",
    "tests/test_catalog.py",
    "tests/test_build.py",
    "tests/test_layouts.py",
    "tests/test_screen.py",
    "tests/test_selftest.py",
)
RELEASE_EXTRAS: dict[str, tuple[str, ...]] = {
    "3.0.0": (*FIT_TESTS, *PREDICTION_TESTS),
    "3.3.1": (*TRITON_TESTS, *PREDICTION_TESTS),
    "3.6.0": ("tests/test_fit_matrix.py", *PREDICTION_TESTS, "tests/test_rocm.py"),
}


@nox.session(python=PYTHON)
@nox.parametrize("triton", ALL_TRITONS)
def triton(session: nox.Session, triton: str) -> None:
    """An older Triton: the differential tests, and the release's RELEASE_EXTRAS."""
    _install(session, triton)
    extra = RELEASE_EXTRAS.get(triton, ())
    if any("fit" in path for path in extra):
        _fetch_ptxas(session)
    _pytest(session, "-ra", *RELEASE_TESTS, *extra, "-m", "not torch", *session.posargs)


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
    _pytest(session, "-ra", *TORCH_RELEASE_TESTS, *session.posargs)


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
