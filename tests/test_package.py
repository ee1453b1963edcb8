"""The package as an index would get it: `python -m build` makes a wheel and an sdist
that `twine check --strict` and `check-wheel-contents` accept; the wheel, installed
into a fresh venv with Triton from PyPI, answers `--version` and `doctor`, and its
`.pth` hook configures `import triton`. The version is written once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import triton_toolchain
from conftest import ROOT, require_tool

# Builds the distributions from python/ of a checkout.
pytestmark = pytest.mark.repo

PYTHON_DIR = ROOT / "python"


def _run(*cmd: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, check=False, **kwargs
    )  # type: ignore[call-overload,no-any-return]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the sdist, built by `python -m build` (without isolation: the
    session has hatchling, and the build needs no network)."""
    out = tmp_path_factory.mktemp("dist")
    done = _run(sys.executable, "-m", "build", "--no-isolation", "-o", out, PYTHON_DIR)
    assert done.returncode == 0, done.stdout + done.stderr
    wheel = next(out.glob("*.whl"))
    sdist = next(out.glob("*.tar.gz"))
    return {"wheel": wheel, "sdist": sdist}


def test_the_version_is_written_once_and_answered_by_the_command() -> None:
    init = (PYTHON_DIR / "src/triton_toolchain/__init__.py").read_text()
    assert re.findall(r'^__version__ = "([^"]+)"', init, re.M) == [triton_toolchain.__version__]
    pyproject = (PYTHON_DIR / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert not re.search(r"^version\s*=", pyproject, re.M)
    done = _run(sys.executable, "-m", "triton_toolchain", "--version")
    assert (done.returncode, done.stdout) == (
        0,
        f"triton-toolchain {triton_toolchain.__version__}\n",
    )
    # Reading the version costs `import triton_toolchain` nothing: no importlib.metadata.
    done = _run(
        sys.executable,
        "-c",
        "import sys, triton_toolchain; print(triton_toolchain.__version__, "
        "'importlib.metadata' in sys.modules)",
    )
    assert done.stdout.split() == [triton_toolchain.__version__, "False"], done.stderr


def test_the_licence_is_in_the_repository_and_the_package_directory() -> None:
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License\n")
    assert (PYTHON_DIR / "LICENSE").read_text() == licence


def test_the_index_page_stands_on_its_own() -> None:
    """python/README.md is the index page: no links relative to a checkout."""
    text = (PYTHON_DIR / "README.md").read_text()
    assert "one directory up" not in text
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert all(link.startswith("https://") for link in links), links


def test_build_twine_and_check_wheel_contents_accept_the_distributions(
    dist: dict[str, Path],
) -> None:
    twine = _run(sys.executable, "-m", "twine", "check", "--strict", *dist.values())
    assert twine.returncode == 0, twine.stdout + twine.stderr
    assert twine.stdout.count("PASSED") == 2, twine.stdout
    contents = _run(sys.executable, "-m", "check_wheel_contents", dist["wheel"])
    assert contents.returncode == 0, contents.stdout + contents.stderr
    version = triton_toolchain.__version__
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
        info = f"triton_toolchain-{version}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        assert wheel.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert {"triton_toolchain.pth", "triton_toolchain/py.typed"} <= names
    assert "triton_toolchain/variables.json" in names  # nix/wrap.nix's table
    assert f"\nVersion: {version}\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata
    assert "Project-URL: Homepage, https://" in metadata
    assert "Classifier: Operating System :: POSIX :: Linux" in metadata
    assert "Classifier: Topic :: " in metadata
    with tarfile.open(dist["sdist"]) as sdist:
        top = f"triton_toolchain-{version}"
        members = set(sdist.getnames())
        licence = sdist.extractfile(f"{top}/LICENSE")
        assert licence is not None and licence.read() == (ROOT / "LICENSE").read_bytes()
    # What the tests that run in the unpacked sdist read (`-m "not root and not network"`).
    shipped = ("docs/design.md", "tools/fetch_ptxas.py")
    for path in (
        "CHANGELOG.md",
        "tests/conftest.py",
        "tests/test_package.py",
        "pytest.ini",
        *shipped,
    ):
        assert f"{top}/{path}" in members, path


def test_the_wheel_in_a_fresh_venv_answers_version_doctor_and_configures_triton(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    """A fresh venv (uv: Triton's wheel comes from its cache), the built wheel and
    the Triton release of this session's environment installed into it."""
    from importlib import metadata

    triton_version = metadata.version("triton")  # not imported: that would activate the shim here
    uv = require_tool("uv", "uv (`pip install uv`)")
    venv = tmp_path / "venv"
    done = _run(uv, "venv", "-q", "-p", sys.executable, venv)
    assert done.returncode == 0, done.stderr
    python = venv / "bin/python"
    done = _run(
        uv, "pip", "install", "-q", "--python", python, dist["wheel"], f"triton=={triton_version}"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("PYTHONPATH", None)
    command = venv / "bin/triton-toolchain"
    version = _run(command, "--version", env=env)
    assert version.stdout == f"triton-toolchain {triton_toolchain.__version__}\n", version.stderr
    doctor = _run(command, "doctor", env=env)
    assert doctor.returncode in (0, 1), doctor.stdout + doctor.stderr  # 1: no driver here
    assert doctor.stdout.startswith(
        f"triton-toolchain {triton_toolchain.__version__}: Triton {triton_version}"
    )
    assert doctor.stderr == ""
    # The installed .pth hook: `import triton` alone configures it, from this venv's shim.
    probe = (
        "import sys, triton, triton_toolchain; "
        "print(triton_toolchain.__file__); print(triton_toolchain.activate().mode)"
    )
    done = _run(python, "-c", probe, env=env)
    assert done.returncode == 0, done.stderr
    shim, mode = done.stdout.split()
    assert Path(shim).is_relative_to(venv)
    assert mode in ("knobs", "environ"), done.stdout


def test_the_projects_address_is_one_setting_and_the_changelog_follows_it() -> None:
    """pyproject.toml's Homepage is the one place a first publisher changes: the
    CHANGELOG's link references start with it, the latest release is this version, and
    no other document repeats the address (the Nix side reads it from pyproject.toml)."""
    # Read as text: tomllib is not in Python 3.10, the oldest supported.
    pyproject = (PYTHON_DIR / "pyproject.toml").read_text()
    found = re.findall(r'^Homepage = "([^"]+)"$', pyproject, re.M)
    assert len(found) == 1, found
    home = found[0]
    assert home.startswith("https://")
    changelog = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", changelog, re.M)
    assert releases and releases[0][0] == triton_toolchain.__version__, releases
    references = dict(re.findall(r"^\[([^\]]+)\]: (\S+)$", changelog, re.M))
    assert set(references) == {"Unreleased", *(version for version, _ in releases)} | {"0.1.0"}, (
        references
    )
    assert all(url.startswith(f"{home}/") for url in references.values()), references
    documents = [ROOT / "README.md", PYTHON_DIR / "README.md", *ROOT.glob("docs/*.md")]
    assert [d.name for d in documents if home in d.read_text()] == []
