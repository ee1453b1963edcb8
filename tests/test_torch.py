"""TorchInductor's CPU toolchain and cpp_extension's CUDA home, with real torch (the CPU
build from PyPI) in fresh interpreters, at the real system paths of private mount
namespaces where a layout needs them; stock torch (``TRITON_TOOLCHAIN=off``) measured
beside the shim in the same test.

Layouts where stock torch fails and the shim works: the C++ compiler only in a conda
environment, only under a versioned name. Where both work, the shim keeps working (and
keeps what the user set). Where nothing can work (no ``Python.h``), the shim's error
names the missing piece instead of a compiler dump.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from triton_layouts import ROOT, SRC, Namespace, recording_tool

pytestmark = pytest.mark.torch
SCENARIO = ROOT / "tests" / "torch_scenario.py"
REAL_GXX = Path(os.path.realpath("/usr/bin/g++"))
# What gcc runs from PATH (the assembler, the linker) and what Inductor runs (openssl,
# from torch 2.8), without any C++ compiler.
HELPERS = ("as", "ld", "openssl")


def run_torch(
    tmp_path: Path,
    action: str,
    *,
    stock: bool = False,
    namespace: Namespace | None = None,
    **env: str,
) -> dict[str, Any]:
    """``torch_scenario.py action`` in a fresh interpreter (stock: the shim off), with a
    clean environment and fresh caches."""
    name = "stock" if stock else "shim"
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TRITON", "TORCH"))
        and k not in ("CC", "CXX", "CPATH", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "PYTHONPATH")
    }
    base.update(
        HOME=str(tmp_path / f"home-{name}"),
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / f"inductor-{name}"),
        TORCH_EXTENSIONS_DIR=str(tmp_path / f"extensions-{name}"),
        TT_BUILD_DIR=str(tmp_path / f"build-{name}"),
        TORCH_CUDA_ARCH_LIST="9.0",
        PYTHONPATH=str(SRC),
        TRITON_TOOLCHAIN="off" if stock else "on",
    )
    base.update(env)
    command = [sys.executable, str(SCENARIO), action]
    done = subprocess.run(
        namespace.argv(command) if namespace else command,
        env=base,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report["stderr"] = done.stderr
    return report


def helpers(directory: Path) -> Path:
    """A directory with the programs a build needs besides the compiler."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in HELPERS:
        (directory / name).symlink_to(Path("/usr/bin") / name)
    return directory


def _compiled(report: dict[str, Any]) -> None:
    assert report["result"] == {"ok": True, "matches_eager": True}, report["result"]


def test_stock_layout_keeps_working_with_the_resolved_compiler(tmp_path: Path) -> None:
    stock = run_torch(tmp_path, "compile", stock=True)
    shim = run_torch(tmp_path, "compile")
    _compiled(stock)
    _compiled(shim)
    assert stock["CXX"] is None and stock["applied"] is None
    assert Path(shim["CXX"]).resolve() == REAL_GXX
    assert shim["applied"]["env:CXX"] == shim["CXX"]
    # Inductor's C++ build is guarded where this torch has it: cpp_builder (2.5 and
    # newer) or codecache.compile_file (2.4).
    builds = ("cpp_builder._run_compile_cmd", "codecache.compile_file")
    assert any(f"patch:torch._inductor.{b}" in shim["applied"] for b in builds), shim["applied"]


def test_conda_compiler_only(tmp_path: Path) -> None:
    """conda's x86_64-conda-linux-gnu-c++ and no g++ on PATH: stock torch looks for g++
    and gives up; the shim finds conda's and torch builds with it."""
    prefix = tmp_path / "conda"
    log = tmp_path / "cxx.log"
    conda_cxx = recording_tool(prefix / "bin" / "x86_64-conda-linux-gnu-c++", REAL_GXX, log)
    path = f"{prefix / 'bin'}:{helpers(tmp_path / 'tools')}"
    env = {"PATH": path, "CONDA_PREFIX": str(prefix)}

    stock = run_torch(tmp_path, "compile", stock=True, **env)
    assert "InvalidCxxCompiler" in stock["result"]["message"], stock["result"]
    log.unlink(missing_ok=True)

    shim = run_torch(tmp_path, "compile", **env)
    _compiled(shim)
    assert shim["CXX"] == str(conda_cxx)
    builds = [line for line in log.read_text().splitlines() if " -shared" in line]
    assert builds, "torch never built with conda's compiler"


def test_versioned_compiler_only(tmp_path: Path) -> None:
    """Only g++-<N> (the distribution's gcc-N package without gcc): stock torch looks for
    g++; the shim takes the versioned name."""
    version = re.search(r"-(\d+)$", REAL_GXX.name)
    assert version, REAL_GXX
    tools = helpers(tmp_path / "tools")
    (tools / f"g++-{version.group(1)}").symlink_to(REAL_GXX)
    env = {"PATH": str(tools)}

    stock = run_torch(tmp_path, "compile", stock=True, **env)
    assert "InvalidCxxCompiler" in stock["result"]["message"], stock["result"]
    shim = run_torch(tmp_path, "compile", **env)
    _compiled(shim)
    assert shim["CXX"] == str(tools / f"g++-{version.group(1)}")


def test_the_users_compiler_is_kept(tmp_path: Path) -> None:
    log = tmp_path / "mine.log"
    mine = recording_tool(tmp_path / "mine" / "g++", REAL_GXX, log)
    shim = run_torch(tmp_path, "compile", CXX=str(mine))
    _compiled(shim)
    assert shim["CXX"] == str(mine)
    assert "env:CXX" not in shim["applied"]
    assert any(" -shared" in line for line in log.read_text().splitlines())


@pytest.mark.root
def test_missing_python_h_is_the_shims_error(tmp_path: Path) -> None:
    """The interpreter's include directory empty (no -dev package): stock torch dumps the
    compiler's command and output; the shim names Python.h, the directory and the fix."""
    include = sysconfig.get_paths()["include"]
    namespace = Namespace().tmpfs(include)
    stock = run_torch(tmp_path, "compile", stock=True, namespace=namespace)
    assert stock["result"]["ok"] is False
    assert "CppCompileError" in stock["result"]["message"]
    assert "fatal error: Python.h: No such file or directory" in stock["result"]["message"]

    shim = run_torch(tmp_path, "compile", namespace=namespace)
    result = shim["result"]
    assert result["ok"] is False
    assert "MissingComponentError" in result["message"], result
    assert (
        f"Python.h for Python {sys.version_info[0]}.{sys.version_info[1]} is missing from"
        in (result["message"])
    )
    assert "fix:" in result["message"]
    assert "Command:" not in result["message"]


def test_cuda_extension_objects_are_built_with_the_resolved_cuda_home(tmp_path: Path) -> None:
    """A CPU build of torch never guesses a CUDA home (cpp_extension.CUDA_HOME is None);
    with the shim, its .cu file is compiled by the resolved toolkit's nvcc and its .cpp
    by the resolved C++ compiler. (Linking needs torch's CUDA libraries, which a CPU
    build lacks: that step fails for both.)"""
    stock = run_torch(tmp_path, "extension", stock=True)
    assert stock["cuda_home"] is None
    assert stock["result"]["ok"] is False and stock["result"]["objects"] == []
    assert "CUDA_HOME" in stock["result"]["message"]

    shim = run_torch(tmp_path, "extension")
    home = shim["applied"]["torch.utils.cpp_extension.CUDA_HOME"]
    assert shim["cuda_home"] == home and Path(home, "bin", "nvcc").is_file()
    assert shim["result"]["objects"] == ["b.o", "k.cuda.o"], shim["result"]
    build = Path(tmp_path / "build-shim")
    commands = (build / "build.ninja").read_text()
    assert f"{home}/bin/nvcc" in commands
    assert (build / "k.cuda.o").read_bytes()[:4] == b"\x7fELF"
    # The link step is the only one that failed: torch's CUDA libraries are not there.
    assert "-ltorch_cuda" in shim["result"]["message"] or "c10_cuda" in shim["result"]["message"]
