"""The chosen driver is the one every library in the process gets, whoever asks first.

A stand-in CUDA runtime (built with gcc, as torch's libcudart is: it ``dlopen``\\s
``libcuda.so.1`` by bare name at its first call) asks for the driver after the program
imports torch, Triton, both, or neither. The machine: the chosen driver stand-in named
by a manifest (marker ``chosen``), and a planted ``libcuda.so.1`` (marker ``planted``)
in the current directory, which an empty ``LD_LIBRARY_PATH`` entry makes the first
place a by-name load looks. Stock (``TRITON_TOOLCHAIN=off``), the planted one is loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import driver_standin
import pytest
from triton_layouts import SRC, make_layout, scenario_env

RUNTIME = r"""
#include <dlfcn.h>
const char *standin_runtime_driver(void) {
    void *driver = dlopen("libcuda.so.1", RTLD_NOW);
    if (!driver) return dlerror();
    typedef const char *(*marker_t)(void);
    marker_t marker = (marker_t)dlsym(driver, "triton_toolchain_standin_marker");
    return marker ? marker() : "a libcuda.so.1 without a marker";
}
"""
PROGRAM = """
import ctypes, json, sys
imports = sys.argv[2].split(",") if sys.argv[2] else []
if len(sys.argv) > 3:  # a driver loaded before any import, by its path
    ctypes.CDLL(sys.argv[3])
for name in imports:
    if name == "activate":
        import triton_toolchain
        triton_toolchain.activate()
    else:
        __import__(name)
runtime = ctypes.CDLL(sys.argv[1])
runtime.standin_runtime_driver.restype = ctypes.c_char_p
maps = open("/proc/self/maps").read().splitlines()
print(json.dumps({
    "driver": runtime.standin_runtime_driver().decode(),
    "mapped": sorted({l.split()[-1] for l in maps if "libcuda.so" in l}),
    "shim": "triton_toolchain" in sys.modules,
    "activation": (lambda a: a and {"driver": a.driver, "notes": list(a.notes)})(
        sys.modules["triton_toolchain.runtime._activate"].current()
        if "triton_toolchain.runtime._activate" in sys.modules else None
    ),
}))
"""


@pytest.fixture
def machine(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """The stand-in runtime, a clean environment with the manifest and ``LD_LIBRARY_PATH``
    holding an empty entry, and the working directory with the planted driver."""
    runtime = tmp_path / "libstandin_runtime.so"
    source = tmp_path / "runtime.c"
    source.write_text(RUNTIME)
    subprocess.run(
        [driver_standin.GCC, "-shared", "-fPIC", "-o", str(runtime), str(source), "-ldl"],
        check=True,
    )
    layout = make_layout(tmp_path / "layout")
    work = tmp_path / "work"
    driver_standin.driver(work, marker="planted")
    env = scenario_env(layout, LD_LIBRARY_PATH=f":{tmp_path / 'nothing'}")
    return runtime, env, work


def run(
    machine: tuple[Path, dict[str, str], Path],
    imports: str,
    *flags: str,
    preload: Path | None = None,
    **env: str,
) -> dict[str, Any]:
    runtime, base, work = machine
    first = [str(preload)] if preload else []
    done = subprocess.run(
        [sys.executable, *flags, "-c", PROGRAM, str(runtime), imports, *first],
        env={**base, **env},
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


WITH_TORCH = pytest.mark.torch


@pytest.mark.parametrize(
    "imports",
    [
        pytest.param("torch", marks=WITH_TORCH),
        "triton",
        pytest.param("torch,triton", marks=WITH_TORCH),
        pytest.param("triton,torch", marks=WITH_TORCH),
    ],
)
def test_the_chosen_driver_whoever_imports_first(machine: Any, imports: str) -> None:
    got = run(machine, imports)
    assert got["driver"] == "chosen", got
    assert len(got["mapped"]) == 1 and "/layout/driver/" in got["mapped"][0]
    stock = run(machine, imports, TRITON_TOOLCHAIN="off")
    assert stock["driver"] == "planted", stock


def test_neither_imported_the_shim_stays_out(machine: Any) -> None:
    """A program that imports neither: the shim is not even imported (it costs nothing),
    and the by-name load is what it would be without it."""
    got = run(machine, "")
    assert got["shim"] is False
    assert got["driver"] == "planted"


def test_explicit_activation_without_site_processing(machine: Any) -> None:
    """``python -S`` reads no .pth file: ``activate()`` loads the driver itself."""
    runtime, env, work = machine
    site = Path(
        subprocess.check_output(
            [
                sys.executable,
                "-c",
                "import triton, os; print(os.path.dirname(os.path.dirname(triton.__file__)))",
            ],
            text=True,
        ).strip()
    )
    env = {**env, "PYTHONPATH": os.pathsep.join([str(SRC), str(site)])}
    got = run((runtime, env, work), "activate,triton", "-S")
    assert got["driver"] == "chosen", got
    plain = run((runtime, env, work), "triton", "-S")
    assert plain["driver"] == "planted" and plain["shim"] is False


@pytest.mark.parametrize("by", ["libcuda.so.1", "libcuda.so.580.159.04", "stubs/libcuda.so"])
def test_a_driver_loaded_before_the_import_stays_the_only_one(
    machine: Any, tmp_path: Path, by: str
) -> None:
    """A driver the program loaded by its path before ``import triton`` (through its
    ``libcuda.so.1`` link, its real file, or a toolkit stub's ``libcuda.so``): the shim
    loads no second one, says so, and every by-name load gets that one; also where an
    earlier process's activation record names another driver (the record is not used,
    and the process's resolution is not kept)."""
    early = tmp_path / "early"
    driver_standin.driver(early, marker="early")
    driver_standin.stub(early, marker="early")
    runtime, env, work = machine
    env = {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    record = tmp_path / "cache" / "triton-toolchain" / "activation-v5.json"
    for warm in (False, True):
        if warm:  # a process without the early driver keeps its record first
            assert run((runtime, env, work), "triton")["driver"] == "chosen"
            assert record.is_file()
        kept = record.read_bytes() if warm else None
        got = run((runtime, env, work), "triton", preload=early / by)
        assert got["driver"] == "early", got
        assert got["mapped"] == [str((early / by).resolve())], got
        activation = got["activation"]
        assert Path(activation["driver"]).resolve() == (early / by).resolve(), got
        assert any("this process had already loaded" in n for n in activation["notes"]), got
        assert (record.read_bytes() if warm else None) == kept
        assert warm or not record.exists()
