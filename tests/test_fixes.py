"""The fix of a wrong setting names what would work in that case: the ptxas discovery
finds when ``TRITON_PTXAS_PATH`` is mistyped, a CUDA 12 ptxas for sm_70 (CUDA 13 dropped
it), the compiler ``CC`` names (not another one). Real ptxas binaries (PyPI's wheels),
the real gcc, the real CUDA 13.0 toolkit; resolved as the shim does, and on ``doctor``'s
screen, and at Triton's real compile."""

from __future__ import annotations

from pathlib import Path

import pytest
from fit_fixtures import compile_archs, installed_triton, real_ptxas
from hostile import clean_env, cli
from tool_fixtures import REAL_CUDA, fake_host, wrapper
from triton_toolchain.resolver._catalog import (
    COMPONENT,
    component_fix,
    install_program,
    ptxas_for,
    triton_release,
)
from triton_toolchain.resolver._resolve import resolve_all

pytestmark = pytest.mark.network  # real ptxas releases from PyPI

RELEASE_ROW = triton_release(installed_triton())
GCC = Path("/usr/bin/gcc")
CU12_FIX = (
    "install a CUDA 12 ptxas (`pip install nvidia-cuda-nvcc-cu12`; CUDA 13 dropped sm_70) or "
    "set TRITON_PTXAS_PATH to an absolute CUDA 12.x ptxas path"
)


def test_a_mistyped_ptxas_path_names_the_ptxas_found_here(tmp_path: Path) -> None:
    """``TRITON_PTXAS_PATH`` one letter off, a toolkit in ``CUDA_HOME``: the fix names its
    ptxas and says nothing of installing a toolkit; with none anywhere, installing one is
    the fix."""
    home = tmp_path / "cuda"
    ptxas = wrapper(home / "bin" / "ptxas", real_ptxas("12.9"))
    typo = str(home / "bin" / "ptxs")
    env = {"PATH": str(tmp_path / "empty"), "CUDA_HOME": str(home), "TRITON_PTXAS_PATH": typo}
    error = resolve_all(None, host=fake_host(tmp_path, env))["ptxas"].error
    assert error == (
        f"TRITON_PTXAS_PATH={typo!r}: does not exist; fix: set TRITON_PTXAS_PATH to {ptxas} "
        "(found here, 12.9) or unset TRITON_PTXAS_PATH to let triton-toolchain use it"
    )
    del env["CUDA_HOME"]
    error = resolve_all(None, host=fake_host(tmp_path, env))["ptxas"].error
    assert error == (
        f"TRITON_PTXAS_PATH={typo!r}: does not exist; fix: {COMPONENT['ptxas'].fix}, or unset "
        "TRITON_PTXAS_PATH to let triton-toolchain look for it"
    )


def test_doctor_answers_a_mistyped_ptxas_path_with_the_ptxas_it_would_use(
    tmp_path: Path,
) -> None:
    """The real CUDA 13.0 toolkit and the installed Triton: ``doctor``'s fix names the
    ptxas discovery takes first, and no install command."""
    typo = str(REAL_CUDA / "bin" / "ptxs")
    env = clean_env(tmp_path / "home", CUDA_HOME=str(REAL_CUDA), TRITON_PTXAS_PATH=typo)
    done = cli("doctor", env=env)
    flat = " ".join(done.output.split())
    fix = flat.split(f"TRITON_PTXAS_PATH={typo!r}: does not exist fix: ", 1)[1]
    assert fix.startswith("set TRITON_PTXAS_PATH to /") and "(found here, " in fix, flat
    assert "install a CUDA toolkit" not in fix.split("let triton-toolchain use it")[0], flat
    assert done.returncode == 2


def test_a_cuda_13_ptxas_for_sm_70_is_answered_with_a_cuda_12_one(tmp_path: Path) -> None:
    """sm_70 and the user's ptxas 13.5: CUDA 13 dropped sm_70, so the fix is the CUDA 12
    wheel (the plain one installs 13.x), and the CUDA 12.9 ptxas found here where there
    is one."""
    mine = str(real_ptxas("13.5"))
    env = {"PATH": str(tmp_path / "empty"), "TRITON_PTXAS_PATH": mine}
    error = resolve_all(70, host=fake_host(tmp_path, env))["ptxas"].error
    assert error == (
        f"TRITON_PTXAS_PATH={mine!r}: release 13.5 cannot assemble sm_70, which CUDA dropped "
        f"after 12.9 (the target GPU); fix: {CU12_FIX}, or unset TRITON_PTXAS_PATH to let "
        "triton-toolchain look for it"
    )
    assert component_fix("ptxas", 70, RELEASE_ROW) == CU12_FIX
    home = tmp_path / "cuda-12.9"
    found = wrapper(home / "bin" / "ptxas", real_ptxas("12.9"))
    error = resolve_all(70, host=fake_host(tmp_path, {**env, "CUDA_HOME": str(home)}))[
        "ptxas"
    ].error
    assert error is not None and error.endswith(
        f"fix: {CU12_FIX}; or set TRITON_PTXAS_PATH to {found} (found here, 12.9) or unset "
        "TRITON_PTXAS_PATH to let triton-toolchain use it"
    )
    assert component_fix("ptxas", 80, RELEASE_ROW) == COMPONENT["ptxas"].fix


def test_a_cuda_13_ptxas_for_sm_70_stops_the_compile_with_the_cuda_12_fix(
    tmp_path: Path,
) -> None:
    """Triton's real compile for sm_70 with ``TRITON_PTXAS_PATH`` a 13.5 ptxas: stopped
    before Triton runs it, the fix naming the CUDA 12 wheel."""
    results, _err = compile_archs(
        tmp_path / "home", [70], TRITON_PTXAS_PATH=str(real_ptxas("13.5"))
    )
    error = str(results[70]["error"])
    assert not results[70]["ok"] and "cannot assemble sm_70" in error, results
    assert "`pip install nvidia-cuda-nvcc-cu12`; CUDA 13 dropped sm_70" in error, error
    assert ptxas_for(70, RELEASE_ROW) == "ptxas"


def test_cc_naming_an_absent_clang_is_answered_with_clang_or_the_gcc_found(
    tmp_path: Path,
) -> None:
    """``CC=clang`` and no clang: install clang (not gcc), or use the gcc found here;
    with no compiler at all, install clang or unset CC."""
    bindir = tmp_path / "bin"
    gcc = wrapper(bindir / "gcc", GCC)
    env = {"PATH": str(bindir), "CC": "clang"}
    error = resolve_all(None, host=fake_host(tmp_path, env))["cc"].error
    assert error is not None
    problem, fix = error.split("; fix: ", 1)
    assert problem == (
        "CC='clang': 'clang' was not found on the absolute entries of PATH: install it or give "
        "its absolute path"
    )
    assert fix.startswith(install_program("clang") + "; or set CC to " + f"{gcc} (found here, ")
    assert fix.endswith("or unset CC to let triton-toolchain use it")
    assert "apt install gcc" not in fix and "`apt install clang`" in fix
    gcc.unlink()
    error = resolve_all(None, host=fake_host(tmp_path, env))["cc"].error
    assert error == (
        "CC='clang': 'clang' was not found on the absolute entries of PATH: install it or give "
        "its absolute path; fix: install clang "
        "(Debian/Ubuntu: `apt install clang`; conda: `conda install -c conda-forge clang`), or "
        "unset CC to let triton-toolchain look for it"
    )
