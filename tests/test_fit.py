"""Fit, not just find (issue 21): real ptxas binaries of several releases asked whether
they assemble what this Triton writes, a gcc-built stand-in driver asked its CUDA
version, and Triton's real compile with the shim choosing per architecture."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import driver_standin
import pytest
from fit_fixtures import compile_archs, installed_triton, real_ptxas, triton_package
from tool_fixtures import fake_host, locate, wrapper
from triton_toolchain.resolver._catalog import (
    ADVISORIES,
    PTX_RULES,
    advisories_for,
    ptxas_for,
    triton_ptx_version,
    triton_release,
)
from triton_toolchain.resolver._discovery import LOCATORS, _answers
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._discovery._tools import check_tool
from triton_toolchain.resolver._resolve import resolve_all

TRITON = installed_triton()
RELEASE_ROW = triton_release(TRITON)


def fit_warnings(warnings: list[str]) -> list[str]:
    """The compile's warnings less the advisories' (a release's own ptxas named by an
    advisory, Triton 3.6's at sm_90 and sm_100, is warned of at its first compile by
    design; tests/test_advisories.py counts those)."""
    return [w for w in warnings if not any(a.reference in w for a in ADVISORIES)]


def _triton_tree(root: Path, version: str = "3.9.0") -> Path:
    pkg = root / "site-packages" / "triton"
    (pkg / "backends" / "nvidia" / "bin").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'__version__ = "{version}"\n')
    return pkg


@pytest.fixture(autouse=True)
def _fresh_answers() -> None:
    _answers.forget_loaded()


# ------------------------------------------------------------------ the PTX version table


def test_the_ptx_table_is_the_installed_tritons_own_ptx_get_version() -> None:
    """``_catalog.PTX_RULES`` answers what this Triton's ``ptx_get_version`` answers, for
    every CUDA release from 10.0 to 14.9 (a refusal is ``None`` on both sides), asked in
    a child with the shim off (Triton is not imported into the test process)."""
    import json
    import subprocess

    releases = [f"{major}.{minor}" for major in (10, 11, 12, 13, 14) for minor in range(10)]
    code = (
        "import json, sys\n"
        "from triton.backends.nvidia.compiler import ptx_get_version\n"
        "def ask(r):\n"
        "    try:\n"
        "        return ptx_get_version(r)\n"
        "    except (RuntimeError, AssertionError):\n"
        "        return None\n"
        "print(json.dumps([ask(r) for r in sys.argv[1:]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *releases],
        env={**os.environ, "TRITON_TOOLCHAIN": "off"},
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout.splitlines()[-1])
    ours = [triton_ptx_version(TRITON, r) for r in releases]
    assert ours == theirs, list(zip(releases, ours, theirs, strict=True))
    assert len(releases) == 50 and PTX_RULES


# ------------------------------------------------------------------ discovery with a target


@pytest.mark.network
def test_a_discovered_ptxas_that_fails_the_probe_is_rejected_and_the_next_tried(
    tmp_path: Path,
) -> None:
    """Triton 3.0 with a 12.6 ptxas bundled and a 12.4 one in CUDA_HOME: for sm_80 the
    12.6 one is rejected with ptxas's own words, the 12.4 one chosen."""
    triton = _triton_tree(tmp_path, "3.0.0")
    bundled = wrapper(triton / "backends/nvidia/bin/ptxas", real_ptxas("12.6"))
    home = tmp_path / "cuda-12.4"
    wrapper(home / "bin" / "ptxas", real_ptxas("12.4"))
    host = fake_host(
        tmp_path,
        {"PATH": str(tmp_path / "empty"), "CUDA_HOME": str(home)},
        triton_dir=triton,
        triton=triton_release((3, 0)),
    )
    choice = locate(LOCATORS, "ptxas", host, Context(arch=80))
    assert choice.path == str(home / "bin" / "ptxas") and choice.version == "12.4"
    reasons = {r.path: r.reason for r in choice.rejected}
    assert (
        "cannot assemble PTX 8.6 for sm_80, what Triton 3.0 writes with a CUDA 12.6"
        in (reasons[str(bundled)])
    )
    assert "Unsupported .version 8.6" in reasons[str(bundled)]
    # Without a target (the import path) nothing is run but --version: the 12.6 one stays.
    assert locate(LOCATORS, "ptxas", host).path == str(bundled)


@pytest.mark.network
def test_an_explicit_ptxas_that_fails_the_probe_is_a_setting_error(tmp_path: Path) -> None:
    triton = _triton_tree(tmp_path, "3.0.0")
    tool = wrapper(tmp_path / "mine" / "ptxas", real_ptxas("12.6"))
    host = fake_host(
        tmp_path,
        {"PATH": str(tmp_path / "empty"), "TRITON_PTXAS_PATH": str(tool)},
        triton_dir=triton,
        triton=triton_release((3, 0)),
    )
    error = resolve_all(80, host=host)["ptxas"].error
    assert error is not None and error.startswith(f"TRITON_PTXAS_PATH={str(tool)!r}")
    assert "PTX 8.6" in error and "CUDA 12.6" in error and "Unsupported .version" in error


@pytest.mark.network
def test_discovery_prefers_against_an_advisory(tmp_path: Path) -> None:
    """Triton bundles a 13.1 ptxas-blackwell (3.7's did) and CUDA_HOME has a 13.5: for
    sm_100 the 13.1 one is passed over (pytorch/pytorch#181248); for sm_120, which no
    advisory names, it is kept."""
    triton = _triton_tree(tmp_path, "3.7.1")
    bundled = wrapper(triton / "backends/nvidia/bin/ptxas-blackwell", real_ptxas("13.1"))
    home = tmp_path / "cuda-13.5"
    other = wrapper(home / "bin" / "ptxas", real_ptxas("13.5"))
    host = fake_host(
        tmp_path,
        {"PATH": str(tmp_path / "empty"), "CUDA_HOME": str(home)},
        triton_dir=triton,
        triton=triton_release((3, 7)),
    )
    assert advisories_for("ptxas-blackwell", "13.1", 100, host.triton)
    assert locate(LOCATORS, "ptxas-blackwell", host, Context(arch=100)).path == str(other)
    kept = locate(LOCATORS, "ptxas-blackwell", host, Context(arch=120))
    assert kept.path == str(bundled)
    alone = fake_host(
        tmp_path, {"PATH": str(tmp_path / "empty")}, triton_dir=triton, triton=host.triton
    )
    only = locate(LOCATORS, "ptxas-blackwell", alone, Context(arch=100))
    assert only.path == str(bundled)  # nothing else fits: taken, with the advisory noted
    assert any("pytorch/pytorch#181248" in n for n in only.notes)
    verdict = check_tool("ptxas-blackwell", alone, bundled, Context(arch=100, named=True))
    assert verdict.problem is None and not verdict.advised_against and verdict.note


# ------------------------------------------------------------------ at compile time
# Each test works out what the installed release does (its table row, its own
# ptx_get_version, the release of its bundled binary) and asserts that: the same test
# runs against 3.9 (`tests`), 3.6 (`tests-3.10`) and 3.0 (`triton-3.0.0`).


def _bundled(component: str) -> tuple[Path, str]:
    """The binary Triton bundles for ``component`` and its CUDA release."""
    from triton_toolchain.resolver._discovery._host import Host
    from triton_toolchain.resolver._discovery._tools import tool_release

    bindir = triton_package() / "backends" / "nvidia" / "bin"
    path = bindir / component if (bindir / component).exists() else bindir / "ptxas"
    release, problem = tool_release(path, Host())
    assert release is not None, problem
    return path, release


def _variable(component: str) -> str:
    if component == "ptxas-blackwell" and RELEASE_ROW and RELEASE_ROW.blackwell_variable:
        return RELEASE_ROW.blackwell_variable
    return "TRITON_PTXAS_PATH"


@pytest.mark.network
def test_a_ptxas_newer_than_the_driver_is_refused_with_both_versions(tmp_path: Path) -> None:
    """An 11.8 driver and the user's 12.4 ptxas for sm_80: its cubins would not load
    (another major release). Stopped at compile time, naming both releases and both
    fixes, before Triton runs anything."""
    lib = driver_standin.driver(tmp_path / "drv", cuda_version=11080)
    results, _err = compile_archs(
        tmp_path / "home",
        [80],
        TRITON_LIBCUDA_PATH=str(lib.parent),
        TRITON_PTXAS_PATH=str(real_ptxas("12.4")),
    )
    error = results[80]["error"]
    assert error is not None and error.startswith("SettingError"), results
    for words in (
        "supports CUDA 11.8",
        "CUDA 12.4 ptxas",
        "driver of CUDA 12",
        "CUDA 11.x or older",
    ):
        assert words in error, error


def test_a_discovered_ptxas_newer_than_the_driver_gives_way_to_one_that_fits(
    tmp_path: Path,
) -> None:
    """A 12.8 driver (a 570 one) and no setting: for sm_120 (sm_90 before 3.6) the shim
    keeps Triton's own ptxas where its cubins load (a 12.x one), and where they do not
    (3.9's bundled ptxas-blackwell is 13.4) runs the next candidate that fits and that no advisory
    names there (the bundled 12.9 ptxas), and says so. (At sm_90 and sm_100 advisories
    name that one: tests/test_hopper_switch.py.)"""
    from triton_toolchain.resolver._catalog import driver_loads, parse_release

    arch = 120 if RELEASE_ROW and RELEASE_ROW.blackwell_from else 90  # 3.0-3.5: no sm_120
    lib = driver_standin.driver(tmp_path / "drv", cuda_version=12080)
    path, release = _bundled(ptxas_for(arch, RELEASE_ROW))
    results, _err = compile_archs(tmp_path / "home", [arch], TRITON_LIBCUDA_PATH=str(lib.parent))
    assert results[arch]["ok"], results
    version = parse_release(release)
    assert version is not None
    if driver_loads(version, (12, 8)):
        assert fit_warnings(results[arch]["warnings"]) == []
        return
    (warning,) = fit_warnings(results[arch]["warnings"])
    assert f"{path} (CUDA {release}) does not fit sm_{arch}a" in warning
    assert "supports CUDA 12.8" in warning and "which does" in warning


@pytest.mark.network
def test_only_triton_ptxas_path_set_warns_once_and_is_honoured_where_it_fits(
    tmp_path: Path,
) -> None:
    """TRITON_PTXAS_PATH names the user's ptxas, the Blackwell variable is unset. Where
    the release runs ptxas-blackwell for Blackwell targets: one warning naming both
    variables, and the user's ptxas runs where it fits. Where it has none (3.0-3.2,
    3.4, 3.5): no warning, the user's ptxas runs for every target."""
    blackwell = RELEASE_ROW is not None and RELEASE_ROW.blackwell_from is not None
    release = "13.5" if triton_ptx_version(TRITON, "13.5") else "12.4"
    archs = [100, 120] if blackwell else [80, 90]
    log = tmp_path / "runs.log"
    mine = wrapper(tmp_path / "mine" / "ptxas", real_ptxas(release), log=log)
    results, _err = compile_archs(tmp_path / "home", archs, TRITON_PTXAS_PATH=str(mine))
    warnings = fit_warnings([w for a in archs for w in results[a]["warnings"]])
    assert all(results[a]["ok"] for a in archs), results
    if blackwell:
        assert len(warnings) == 1, warnings
        assert "TRITON_PTXAS_PATH" in warnings[0] and "PTXAS_BLACKWELL_PATH" in warnings[0]
        assert all(ptxas_for(a, RELEASE_ROW) == "ptxas-blackwell" for a in archs)
    else:
        assert warnings == []
    gpu_names = {
        a.split("=", 1)[1]
        for line in log.read_text().splitlines()
        if "triton-toolchain-probe-" not in line
        for a in line.split()
        if a.startswith("--gpu-name=")
    }
    assert gpu_names == {f"sm_{a}a" if a >= 90 else f"sm_{a}" for a in archs}


@pytest.mark.network
def test_an_explicit_ptxas_with_an_advisory_is_used_with_a_warning(tmp_path: Path) -> None:
    """The user's 13.1 ptxas for sm_100 (pytorch/pytorch#181248): used, with a warning
    citing the advisory; a release that knows no CUDA 13 stops with the shim's error."""
    component = ptxas_for(100, RELEASE_ROW)
    results, _err = compile_archs(
        tmp_path / "home", [100], **{_variable(component): str(real_ptxas("13.1"))}
    )
    if triton_ptx_version(TRITON, "13.1") is None:
        error = str(results[100]["error"])
        assert error.startswith(("SettingError", "MissingComponentError")), results
        assert "13.1" in error
        return
    assert results[100]["ok"], results
    (warning,) = results[100]["warnings"]
    assert "ptxas 13.1" in warning and "pytorch/pytorch#181248" in warning


@pytest.mark.network
def test_doctor_shows_the_advisory(tmp_path: Path) -> None:
    """``doctor --arch 100 -v`` with the user's 13.1 ptxas notes the advisory (a release
    that knows no CUDA 13 refuses the setting instead)."""
    import subprocess

    from hostile import clean_env

    component = ptxas_for(100, RELEASE_ROW)
    env = clean_env(tmp_path / "home", **{_variable(component): str(real_ptxas("13.1"))})
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--arch", "100", "-v"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    if triton_ptx_version(TRITON, "13.1") is None:
        assert done.returncode == 2 and "knows no PTX version for CUDA 13.1" in out, out
        return
    assert "pytorch/pytorch#181248" in out, out


def test_doctor_shows_a_ptxas_the_driver_cannot_load(tmp_path: Path) -> None:
    """An 11.8 driver: Triton's own ptxas (12.x or 13.x) makes cubins it cannot load."""
    import subprocess

    from hostile import clean_env

    lib = driver_standin.driver(tmp_path / "drv", cuda_version=11080)
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(lib.parent))
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    out = done.stdout + done.stderr
    flat = " ".join(out.split())  # doctor wraps its lines at 100 columns
    _path, release = _bundled("ptxas")
    assert done.returncode == 1, out
    assert "supports CUDA 11.8" in flat and f"CUDA {release} ptxas" in flat, out
    assert "Traceback" not in out


@pytest.mark.parametrize("capability", [(9, 0), (12, 1), None])
def test_doctor_reads_the_gpus_architecture(
    tmp_path: Path, capability: tuple[int, int] | None
) -> None:
    """With a driver that sees a GPU, ``doctor`` (no ``--arch``) judges the ptxas for
    that GPU's architecture, as the driver reports it (``cuInit``, in a child); without
    one, for any architecture."""
    import subprocess

    from hostile import clean_env

    lib = driver_standin.driver(tmp_path / "drv", cuda_version=13000, capability=capability)
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(lib.parent))
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    doc = json.loads(done.stdout)
    arch = capability[0] * 10 + capability[1] if capability else None
    assert doc["arch"] == arch, (doc["arch"], done.stderr)
    notes = " ".join(doc.get("notes", []))
    assert (f"target sm_{arch}: the GPU's" in notes) == (arch is not None), notes


@pytest.mark.network
def test_a_refusal_of_the_users_ptxas_says_it_was_set(tmp_path: Path) -> None:
    """The user's TRITON_PTXAS_PATH names a CUDA 12.4 ptxas and the target is sm_88,
    which only CUDA 13.0 on assembles (every release runs ptxas below sm_90). The fix
    names the setting and its value, instead of "set TRITON_PTXAS_PATH"."""
    assert ptxas_for(88, RELEASE_ROW) == "ptxas"
    tool = str(real_ptxas("12.4"))
    results, _err = compile_archs(tmp_path / "home", [88], TRITON_PTXAS_PATH=tool)
    error = str(results[88]["error"])
    assert error.startswith("MissingComponentError"), results
    assert "CUDA release 12.4" in error and "sm_88" in error
    assert f"TRITON_PTXAS_PATH is set to {tool!r}" in error, error


@pytest.mark.network
def test_only_triton_ptxas_path_set_that_does_not_fit_keeps_tritons_choice(
    tmp_path: Path,
) -> None:
    """TRITON_PTXAS_PATH names a 12.4 ptxas, which knows no sm_100a. Where the release
    runs ptxas-blackwell for sm_100: one warning naming both variables, and Triton's own
    ptxas-blackwell assembles it. Where it runs ptxas for every target: the shim's error."""
    tool = str(real_ptxas("12.4"))
    results, _err = compile_archs(tmp_path / "home", [100], TRITON_PTXAS_PATH=tool)
    if ptxas_for(100, RELEASE_ROW) == "ptxas":
        error = str(results[100]["error"])
        assert error.startswith("MissingComponentError") and "12.4" in error, results
        return
    assert results[100]["ok"], results
    (warning,) = fit_warnings(results[100]["warnings"])
    assert "TRITON_PTXAS_PATH is set but" in warning and "PTXAS_BLACKWELL_PATH" in warning
    assert "does not fit sm_100a" in warning and "Triton's choice stands" in warning
