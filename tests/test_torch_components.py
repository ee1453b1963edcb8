"""The components of torch.compile's toolchain: ``cuda-home`` (fake toolkits laid out
as NVIDIA's and conda's, with real scripts for nvcc), ``openmp`` (the real g++ and its
real omp.h, and compilers that cannot build with it), and what ``run``/``env`` export."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tool_fixtures import REAL_GCC, RELEASE_LINE, fake_host, locate, write_script
from triton_toolchain.resolver._discovery._cudahome import LOCATORS as CUDA_HOME
from triton_toolchain.resolver._discovery._openmp import LOCATORS as OPENMP
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._exports import merged_env
from triton_toolchain.resolver._model import Choice, Source, SourceKind
from triton_toolchain.resolver._resolve import resolve_all

REAL_GXX = Path(os.path.realpath("/usr/bin/g++"))
NVCC = f"""echo "$0 $*" >> "{{log}}"
[ "$1" = --version ] || exit 1
echo "{RELEASE_LINE}"
"""


def toolkit(root: Path, release: str = "13.0", *, header: str | None = None, log: Path) -> Path:
    """A CUDA toolkit as NVIDIA lays it out: bin/nvcc, include/cuda.h, lib64/libcudart.so."""
    write_script(root / "bin/nvcc", NVCC.format(log=log, release=release))
    major, minor = (header or release).split(".")
    (root / "include").mkdir(parents=True)
    (root / "include/cuda.h").write_text(
        f"#define CUDA_VERSION {int(major) * 1000 + int(minor) * 10}\n"
    )
    (root / "lib64").mkdir()
    (root / "lib64/libcudart.so").write_bytes(b"\x7fELF")
    return root


def test_cuda_home_toolkits_newest_first_and_checked(tmp_path: Path) -> None:
    log = tmp_path / "nvcc.log"
    old = toolkit(tmp_path / "usr/local/cuda-12.8", "12.8", log=log)
    new = toolkit(tmp_path / "usr/local/cuda-13.0", "13.0", header="12.9", log=log)
    choice = locate(CUDA_HOME, "cuda-home", fake_host(tmp_path))
    assert (choice.path, choice.version) == (str(old), "12.8")
    (rejection,) = choice.rejected
    assert rejection.path == str(new)
    assert rejection.reason == f"nvcc is CUDA 13.0 but {new}/include/cuda.h is CUDA 12.9"


def test_cuda_home_needs_cudart_and_a_trusted_nvcc(tmp_path: Path) -> None:
    root = toolkit(tmp_path / "opt/cuda", log=tmp_path / "log")
    (root / "lib64/libcudart.so").unlink()
    choice = locate(CUDA_HOME, "cuda-home", fake_host(tmp_path))
    assert choice.path is None
    assert choice.rejected[0].reason == "has no libcudart.so in lib64, lib or targets/<triple>/lib"


def test_cuda_home_from_nvcc_on_path(tmp_path: Path) -> None:
    root = toolkit(tmp_path / "somewhere/cuda", log=tmp_path / "log")
    host = fake_host(tmp_path, {"PATH": f"::{root / 'bin'}"})
    choice = locate(CUDA_HOME, "cuda-home", host)
    assert (choice.path, str(choice.source)) == (str(root), "discovered:PATH")


@pytest.mark.parametrize("variable", ["CUDA_HOME", "CUDA_PATH"])
def test_a_wrong_cuda_home_or_path_is_the_users_error(tmp_path: Path, variable: str) -> None:
    toolkit(tmp_path / "usr/local/cuda", log=tmp_path / "log")
    tc = resolve_all(host=fake_host(tmp_path, {variable: str(tmp_path / "nope")}))
    error = tc["cuda-home"].error
    assert error is not None and error.startswith(f"{variable}=") and "does not exist" in error
    assert f"or unset {variable}" in error


def test_cuda_home_wins_over_cuda_path_as_in_torch(tmp_path: Path) -> None:
    first = toolkit(tmp_path / "a", log=tmp_path / "log")
    second = toolkit(tmp_path / "b", log=tmp_path / "log")
    host = fake_host(tmp_path, {"CUDA_HOME": str(first), "CUDA_PATH": str(second)})
    assert resolve_all(host=host)["cuda-home"].path == str(first)
    only_path = host.replace(environ={"CUDA_PATH": str(second)})
    cuda = resolve_all(host=only_path)["cuda-home"]
    assert (cuda.path, str(cuda.source)) == (str(second), "env:CUDA_PATH")


def test_run_exports_no_cuda_home_over_the_users_cuda_path(tmp_path: Path) -> None:
    root = toolkit(tmp_path / "usr/local/cuda", log=tmp_path / "log")
    tc = resolve_all(host=fake_host(tmp_path))
    assert tc["cuda-home"].path == str(root)
    assert merged_env(tc, {})["CUDA_HOME"] == str(root)
    assert "CUDA_HOME" not in merged_env(tc, {"CUDA_PATH": "/opt/mine"})


def _with_cxx(command: str) -> Context:
    source = Source(SourceKind.DISCOVERED, "PATH")
    return Context(chosen={"cxx": Choice("cxx", command, None, source)})


def test_openmp_of_the_real_gcc(tmp_path: Path) -> None:
    host = fake_host(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    choice = locate(OPENMP, "openmp", host, _with_cxx(str(REAL_GXX)))
    own = subprocess.run(
        [str(REAL_GXX), "-print-file-name=include/omp.h"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert (choice.path, str(choice.source)) == (str(Path(own).parent), "discovered:compiler")


def test_openmp_that_the_compiler_cannot_build_with_is_rejected(tmp_path: Path) -> None:
    """An omp.h in conda's include directory, a compiler that fails with -fopenmp."""
    prefix = tmp_path / "conda"
    (prefix / "include").mkdir(parents=True)
    (prefix / "include/omp.h").write_text("#error not an OpenMP header\n")
    # A g++ that keeps its own omp.h to itself (it answers no -print-... question).
    cxx = write_script(
        tmp_path / "bin/g++", f'case "$1" in -print-*) exit 0;; esac\nexec {REAL_GXX} "$@"\n'
    )
    host = fake_host(tmp_path, {"CONDA_PREFIX": str(prefix)})
    choice = locate(OPENMP, "openmp", host, _with_cxx(str(cxx)))
    rejected = {r.path: r.reason for r in choice.rejected}
    assert choice.path is None
    assert "the C++ compiler cannot build with it" in rejected[str(prefix / "include")]
    assert "not an OpenMP header" in rejected[str(prefix / "include")]


def test_openmp_without_a_cxx_says_so(tmp_path: Path) -> None:
    verdict = OPENMP["openmp"].check(
        fake_host(tmp_path), Path(os.path.dirname(REAL_GCC)), Context()
    )
    assert verdict.problem is not None
