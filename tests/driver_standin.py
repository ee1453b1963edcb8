"""A stand-in for the NVIDIA driver library, built with gcc by the tests.

It exports every ``cu*`` function that Triton 3.3, 3.6 and 3.9 link (``driver.c``,
the generated launchers) or look up with ``dlsym``/``ctypes`` (``cuLaunchKernelEx``,
``cuTensorMapEncode*``, ``cuOccupancyMaxActiveClusters``, ``cuInit``,
``cuDeviceGetCount``), read from each release's ``backends/nvidia/driver.{c,py}``.
Each returns ``CUDA_ERROR_NO_DEVICE`` (100); ``cuGetErrorString`` sets a string. A
marker function, ``triton_toolchain_standin_marker()``, returns the marker the test
chose, so a test can tell copies apart.

Layouts (``version`` defaults to the reference host's 580.159.04)::

    driver(dir)  ->  dir/libcuda.so.580.159.04   (SONAME libcuda.so.1)
                     dir/libcuda.so.1 -> libcuda.so.580.159.04
    stub(dir)    ->  dir/stubs/libcuda.so        (SONAME libcuda.so.1, as CUDA's stubs)
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

CUDA_ERROR_NO_DEVICE = 100
GCC = shutil.which("gcc") or "/usr/bin/gcc"
SYMBOLS: tuple[str, ...] = (
    "cuCtxGetCurrent",
    "cuCtxGetDevice",
    "cuCtxGetLimit",
    "cuCtxSetCurrent",
    "cuCtxSetLimit",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetCount",
    "cuDevicePrimaryCtxRetain",
    "cuDriverGetVersion",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuFuncSetCacheConfig",
    "cuInit",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuModuleGetFunction",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuOccupancyMaxActiveClusters",
    "cuPointerGetAttribute",
    "cuPointerGetAttributes",
    "cuStreamIsCapturing",
    "cuTensorMapEncodeIm2col",
    "cuTensorMapEncodeTiled",
)
SYMBOL_PATTERN = re.compile(r"\bcu[A-Z][A-Za-z0-9]*\b")


def triton_symbols(nvidia_dir: Path) -> set[str]:
    """The ``cu*`` functions named in an installed Triton's ``driver.c``/``driver.py``
    (types such as ``cuLaunchKernelEx_t`` excluded)."""
    names: set[str] = set()
    for name in ("driver.c", "driver.py"):
        source = nvidia_dir / name
        if source.exists():
            names |= set(SYMBOL_PATTERN.findall(source.read_text(errors="replace")))
    return names


def _source(marker: str, cuda_version: int | None = None) -> str:
    """The C source; ``cuda_version`` (e.g. 12080): ``cuDriverGetVersion`` reports it
    and succeeds, as a real driver does without ``cuInit``."""
    body = [
        "typedef int CUresult;",
        f'const char *triton_toolchain_standin_marker(void) {{ return "{marker}"; }}',
        "CUresult cuGetErrorString(CUresult error, const char **text) {",
        '  if (text) *text = "CUDA_ERROR_NO_DEVICE (triton-toolchain driver stand-in)";',
        "  return 0;",
        "}",
    ]
    symbols = [s for s in SYMBOLS if cuda_version is None or s != "cuDriverGetVersion"]
    body += [f"CUresult {s}(void) {{ return {CUDA_ERROR_NO_DEVICE}; }}" for s in symbols]
    if cuda_version is not None:
        body.append(f"CUresult cuDriverGetVersion(int *v) {{ *v = {cuda_version}; return 0; }}")
    return "\n".join(body) + "\n"


def _compile(
    target: Path, marker: str, soname: str = "libcuda.so.1", cuda_version: int | None = None
) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    source = target.parent / f".{target.name}.c"
    source.write_text(_source(marker, cuda_version))
    subprocess.run(
        [GCC, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target), str(source)],
        check=True,
    )
    source.unlink()
    return target


def driver(
    directory: Path,
    *,
    marker: str = "driver",
    version: str = "580.159.04",
    cuda_version: int | None = None,
) -> Path:
    """A driver-style install in ``directory``; returns the ``libcuda.so.1`` link.
    ``cuda_version``: what ``cuDriverGetVersion`` reports (default: it fails)."""
    real = _compile(directory / f"libcuda.so.{version}", marker, cuda_version=cuda_version)
    link = directory / "libcuda.so.1"
    link.symlink_to(real.name)
    return link


def stub(directory: Path, *, marker: str = "stub") -> Path:
    """A toolkit-style link stub ``directory/stubs/libcuda.so``; returns it."""
    return _compile(directory / "stubs" / "libcuda.so", marker)


def wrong_soname(directory: Path) -> Path:
    """A ``libcuda.so`` whose SONAME is ``libcuda.so`` (not something to link against)."""
    return _compile(directory / "libcuda.so", "wrong-soname", soname="libcuda.so")
