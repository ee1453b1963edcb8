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


# What a stand-in with a GPU answers: cuInit, cuDeviceGet of device 0, and the compute
# capability's two attributes (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR
# = 76 in cuda.h).
GPU_FUNCTIONS = ("cuInit", "cuDeviceGet", "cuDeviceGetAttribute")


def _gpu(capability: tuple[int, int]) -> list[str]:
    major, minor = capability
    return [
        "CUresult cuInit(unsigned int flags) { return 0; }",
        "CUresult cuDeviceGet(int *device, int ordinal) { *device = 0; return ordinal ? 101 : 0; }",
        "CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {",
        f"  *value = attribute == 75 ? {major} : attribute == 76 ? {minor} : 0;",
        "  return 0;",
        "}",
    ]


def _source(
    marker: str, cuda_version: int | None = None, capability: tuple[int, int] | None = None
) -> str:
    """The C source; ``cuda_version`` (e.g. 12080): ``cuDriverGetVersion`` reports it
    and succeeds, as a real driver does without ``cuInit``; ``capability`` (e.g. (9, 0)):
    a GPU of that compute capability answers (``GPU_FUNCTIONS``)."""
    body = [
        "typedef int CUresult;",
        f'const char *triton_toolchain_standin_marker(void) {{ return "{marker}"; }}',
        "CUresult cuGetErrorString(CUresult error, const char **text) {",
        '  if (text) *text = "CUDA_ERROR_NO_DEVICE (triton-toolchain driver stand-in)";',
        "  return 0;",
        "}",
    ]
    own = {"cuDriverGetVersion"} if cuda_version is not None else set()
    own |= set(GPU_FUNCTIONS) if capability is not None else set()
    symbols = [s for s in SYMBOLS if s not in own]
    body += [f"CUresult {s}(void) {{ return {CUDA_ERROR_NO_DEVICE}; }}" for s in symbols]
    if cuda_version is not None:
        body.append(f"CUresult cuDriverGetVersion(int *v) {{ *v = {cuda_version}; return 0; }}")
    if capability is not None:
        body += _gpu(capability)
    return "\n".join(body) + "\n"


def _compile(
    target: Path,
    marker: str,
    soname: str = "libcuda.so.1",
    cuda_version: int | None = None,
    capability: tuple[int, int] | None = None,
) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    source = target.parent / f".{target.name}.c"
    source.write_text(_source(marker, cuda_version, capability))
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
    capability: tuple[int, int] | None = None,
) -> Path:
    """A driver-style install in ``directory``; returns the ``libcuda.so.1`` link.
    ``cuda_version``: what ``cuDriverGetVersion`` reports (default: it fails);
    ``capability``: the compute capability of the one GPU it has (default: none)."""
    real = _compile(
        directory / f"libcuda.so.{version}",
        marker,
        cuda_version=cuda_version,
        capability=capability,
    )
    link = directory / "libcuda.so.1"
    link.symlink_to(real.name)
    return link


def stub(directory: Path, *, marker: str = "stub") -> Path:
    """A toolkit-style link stub ``directory/stubs/libcuda.so``; returns it."""
    return _compile(directory / "stubs" / "libcuda.so", marker)


def wrong_soname(directory: Path) -> Path:
    """A ``libcuda.so`` whose SONAME is ``libcuda.so`` (not something to link against)."""
    return _compile(directory / "libcuda.so", "wrong-soname", soname="libcuda.so")
