"""Triton 3.9 moved Hopper to its CUDA 13 ptxas (``get_ptxas(arch)`` returns
ptxas-blackwell, 13.4, from sm_90: triton-lang/triton#11854). An H100 on a CUDA 12
driver (R535/R550/R570) cannot load those cubins: the shim stops the compile with
both versions and the remedies in order, never falling back to the CUDA 12 ptxas that
an advisory names at sm_90 (triton-lang/triton#11781); a forward-compatibility driver
installed under ``/usr/local/cuda-X.Y/compat`` is proposed first, and works once set.

A gcc-built stand-in driver reports the CUDA release; the compat one is a second
stand-in in a private mount namespace's ``/usr/local``. Triton's real ahead-of-time
compile is the judge; the bundled binaries log what runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import driver_standin
import pytest
from fit_compile import MARK
from fit_fixtures import installed_triton
from hostile import clean_env
from triton_layouts import Namespace, record_bundled_tools
from triton_toolchain.resolver._catalog import triton_release

pytestmark = pytest.mark.root  # /usr/local and Triton's bin replaced in a mount namespace

TESTS = Path(__file__).resolve().parent
ROW = triton_release(installed_triton())  # the sessions that run this file: 3.6 and 3.9
MOVED = ROW is not None and ROW.blackwell_from == 90


def _site(tmp_path: Path, *, compat: bool) -> tuple[Namespace, Path, Path]:
    """A namespace whose ``/usr/local`` holds only ``cuda-13.0/compat`` (a stand-in
    forward-compatibility driver of CUDA 13.0) where ``compat``, whose Triton binaries
    log to the returned log; and a CUDA 12.8 driver's directory."""
    namespace, log = Namespace(), tmp_path / "runs.log"
    record_bundled_tools(namespace, tmp_path, log)
    local = tmp_path / "usr-local"
    local.mkdir()
    if compat:
        driver_standin.driver(local / "cuda-13.0" / "compat", cuda_version=13000)
    namespace.bind(local, "/usr/local")
    driver = driver_standin.driver(tmp_path / "driver-570", cuda_version=12080).parent
    return namespace, log, driver


def _run(namespace: Namespace, argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(
        namespace.argv(argv), env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def _compile_90(namespace: Namespace, env: dict[str, str]) -> dict[str, object]:
    out = _run(namespace, [sys.executable, str(TESTS / "fit_compile.py"), "90"], env)
    (row,) = [json.loads(x[len(MARK) :]) for x in out.splitlines() if x.startswith(MARK)]
    return dict(row)


def _assembled(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [
        x.split(" ", 1)[0]
        for x in lines
        if "triton-toolchain-probe-" not in x and "--gpu-name=sm_90" in x
    ]


@pytest.mark.parametrize("compat", [False, True], ids=["no-compat", "compat"])
def test_a_cuda_12_driver_at_sm_90(tmp_path: Path, compat: bool) -> None:
    namespace, log, driver = _site(tmp_path, compat=compat)
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(driver))
    result = _compile_90(namespace, env)
    doctor = json.loads(
        _run(
            namespace,
            [sys.executable, "-m", "triton_toolchain", "doctor", "--arch", "90", "--json"],
            env,
        )
    )
    if not MOVED:  # 3.6-3.8 run their CUDA 12.9 ptxas for sm_90: it loads on 12.8
        assert result["ok"], result
        assert [Path(p).name for p in _assembled(log)] == ["ptxas"]
        assert doctor["runs"]["error"] is None
        return
    error = str(result["error"])
    assert error.startswith("MissingComponentError"), result
    assert _assembled(log) == []  # neither the 13.4 nor the CUDA 12.9 ptxas assembled
    remedies = [
        "install an NVIDIA driver of CUDA 13 or newer (release 580 or newer)",
        "use Triton 3.8 or older (its CUDA 12 ptxas there is named by triton-lang/triton#11781)",
    ]
    if compat:
        remedies.insert(
            0,
            "set TRITON_LIBCUDA_PATH=/usr/local/cuda-13.0/compat, the CUDA 13.0 "
            "forward-compatibility driver",
        )
    for words in ("supports CUDA 12.8", "CUDA 13.4 ptxas", *remedies):
        assert words in error, error
    positions = [error.index(r) for r in remedies]
    assert positions == sorted(positions), error
    first_line = error.split("\n", maxsplit=1)[0]
    assert doctor["runs"]["error"].split("\n", maxsplit=1)[0] == first_line
    assert doctor["goals"]["triton"]["ready"] is False, doctor["goals"]["triton"]
    if compat:  # the first remedy, followed: the compile runs the bundled 13.4 ptxas
        env["TRITON_LIBCUDA_PATH"] = "/usr/local/cuda-13.0/compat"
        result = _compile_90(namespace, env)
        assert result["ok"], result
        assert [Path(p).name for p in _assembled(log)] == ["ptxas-blackwell"]
