"""``triton-toolchain doctor --run``: prove the toolchain with Triton itself.

Steps, each reported as ok, failed (with the error) or skipped (with the reason):

1. activate the resolution in this process (imports Triton);
2. compile a vector-add kernel ahead of time for the resolution's architecture (sm_90
   when none was given), in a fresh temporary Triton cache, so ptxas really runs;
3. build and load Triton's launcher module (``CudaUtils``); without a driver, build it
   against the link stub only (it cannot be loaded) and say so;
4. with ``launch`` and a GPU: run the kernel on 4097 floats and compare. Triton 3.9 and
   newer launch without torch (device memory through the driver's ``cuMemAlloc``);
   older releases launch through torch (their ``GPUDriver.__init__`` imports it) and,
   without torch, the cubin is launched with ``cuLaunchKernel`` directly. Without a GPU
   the test stops after step 3 and says so.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..resolver import _build
from ..resolver._catalog import DRIVER_SONAME
from ..resolver._model import Toolchain
from ..runtime import loaded_drivers
from ..runtime._activate import activate

N = 4097


class _Skipped(Exception):
    """A step that cannot run here (no GPU, no torch): reported, not failed."""


@dataclass(frozen=True)
class Step:
    """One step: ``ok`` is ``True``, ``False`` (failed) or ``None`` (skipped)."""

    name: str
    ok: bool | None
    detail: str


@dataclass(frozen=True)
class SelfTestReport:
    steps: tuple[Step, ...]

    @property
    def ok(self) -> bool:
        """No step failed (skipped steps are fine: no GPU is not an error)."""
        return all(step.ok is not False for step in self.steps)

    @property
    def text(self) -> str:
        marks = {True: "ok     ", False: "FAILED ", None: "skipped"}
        lines = ["self-test:"]
        for step in self.steps:
            # A detail of several lines (an error's "looked at" block) stays under its step.
            detail = step.detail.replace("\n", "\n" + " " * 11)
            lines.append(f"  {marks[step.ok]}  {step.name}: {detail}")
        return "\n".join(lines)


@contextlib.contextmanager
def _fresh_cache() -> Iterator[str]:
    previous = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="triton-toolchain-selftest-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            yield cache
        finally:
            if previous is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = previous


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def self_test(tc: Toolchain | None = None, *, launch: bool = True) -> SelfTestReport:
    """Run the steps of the module docstring with ``tc`` (default: resolve now)."""
    steps: list[Step] = []
    try:
        import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

        activation = activate(arch=tc.arch if tc else None, toolchain=tc)
        tc = activation.toolchain
        steps.append(Step("activate", True, f"Triton {triton.__version__}, {activation.mode}"))
    except Exception as exc:
        steps.append(Step("activate", False, _error(exc)))
        return SelfTestReport(tuple(steps))
    assert tc is not None  # noqa: S101  activate() returns a toolchain unless off
    arch = tc.arch or 90
    with _fresh_cache():
        steps.append(_step(f"compile sm_{arch}", lambda: _compile(arch)))
        built = _step("build launcher", lambda: _build_launcher(tc))
        steps.append(built)
        if not launch:
            steps.append(Step("launch", None, "not asked for"))
        elif built.ok is not True or not tc["libcuda"].path:
            steps.append(Step("launch", None, "no NVIDIA driver: stopped after the build"))
        else:
            steps.append(_step("launch", _launch))
    return SelfTestReport(tuple(steps))


def _step(name: str, action: Callable[[], str]) -> Step:
    try:
        return Step(name, True, action())
    except _Skipped as skipped:
        return Step(name, None, str(skipped))
    except Exception as exc:
        return Step(name, False, _error(exc))


def _source() -> Any:
    from . import _kernel  # noqa: PLC0415  imports Triton

    return _kernel.ast_source()


def _compile(arch: int) -> str:
    import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs
    from triton.backends.compiler import GPUTarget  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

    kernel = triton.compile(_source(), target=GPUTarget("cuda", arch, 32))
    return f"{len(kernel.asm['cubin'])}-byte cubin"


def _nvidia_dir() -> Path:
    import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

    return Path(triton.__file__).parent / "backends" / "nvidia"


def _build_launcher(tc: Toolchain) -> str:
    if tc["libcuda"].path:
        from triton.backends.nvidia.driver import CudaUtils  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

        CudaUtils()
        return f"built and loaded; driver {', '.join(loaded_drivers())}"
    nvidia = _nvidia_dir()
    with tempfile.TemporaryDirectory() as out:
        build_plan = _build.make_plan(
            tc,
            "cuda_utils",
            str(nvidia / "driver.c"),
            out,
            [],
            [str(nvidia / "include")],
            [DRIVER_SONAME],
            require_driver=False,
        )
        _build.run(build_plan, tc)
    return (
        f"built against the link stub in {tc['libcuda-link'].path}; not loaded (no NVIDIA driver)"
    )


def _launch() -> str:
    from triton.backends.nvidia.driver import CudaDriver  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs
    from triton.runtime import driver  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

    torch_free = hasattr(CudaDriver, "_get_current_stream") and "torch" not in sys.modules
    if not torch_free:
        try:
            return _launch_with_torch()
        except _NoTorch:
            return _launch_through_the_driver()
    try:
        target = driver.active.get_current_target()
    except RuntimeError as exc:
        raise _Skipped(f"no usable GPU ({exc}): stopped after the build") from exc
    return _launch_torch_free(target)


def _launch_with_torch() -> str:
    try:
        import torch  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs
    except ImportError as exc:
        raise _NoTorch from exc

    from . import _kernel  # noqa: PLC0415  imports Triton

    if not torch.cuda.is_available():
        raise _Skipped("torch sees no GPU: stopped after the build")
    x = torch.rand(N, device="cuda")
    y = torch.rand(N, device="cuda")
    out = torch.empty_like(x)
    grid = (triton_cdiv(N, _kernel.BLOCK),)
    _kernel.add_kernel[grid](x, y, out, N, BLOCK=_kernel.BLOCK)
    torch.cuda.synchronize()
    if not torch.equal(out, x + y):
        raise AssertionError("the kernel computed a wrong sum")
    return f"vector add of {N} floats on {torch.cuda.get_device_name()} is correct (torch)"


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


class _Cuda:
    """The few driver calls a torch-free launch needs, on the driver this process loaded
    (by its path: nothing here loads ``libcuda.so.1`` by bare name)."""

    def __init__(self) -> None:
        loaded = loaded_drivers()
        if not loaded:
            raise _Skipped("no NVIDIA driver is loaded in this process: stopped after the build")
        self.lib = ctypes.CDLL(loaded[0])

    def __call__(self, name: str, *args: Any) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            raise RuntimeError(f"{name} failed with CUresult {status}")


class _NoTorch(Exception):
    """This Triton launches through torch, and torch is not installed."""


# CUdevice_attribute values (cuda.h): the compute capability's major and minor numbers.
_CC_MAJOR, _CC_MINOR = 75, 76
_PTX_ENTRY = r"\.entry\s+{name}\s*\((.*?)\)"


def ptx_param_count(ptx: str, name: str) -> int:
    """How many parameters the PTX entry ``name`` takes: the kernel's own arguments plus
    the scratch pointers that newer Tritons append (3.3 adds one, 3.5 another)."""
    match = re.search(_PTX_ENTRY.format(name=re.escape(name)), ptx, re.DOTALL)
    if match is None:
        raise RuntimeError(f"the PTX has no entry {name!r}")
    return match.group(1).count(".param")


def _current_device(cuda: _Cuda) -> ctypes.c_int:
    """Initialise the driver and make device 0's primary context current; no usable GPU
    stops the launch as skipped."""
    device, context = ctypes.c_int(), ctypes.c_void_p()
    try:
        cuda("cuInit", 0)
        cuda("cuDeviceGet", ctypes.byref(device), 0)
    except RuntimeError as exc:
        raise _Skipped(f"no usable GPU ({exc}): stopped after the build") from exc
    cuda("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    cuda("cuCtxSetCurrent", context)
    return device


def _add_on_device(cuda: _Cuda, launch: Callable[[list[ctypes.c_uint64]], None]) -> None:
    """Copy two vectors of ``N`` floats to the GPU, ``launch(pointers)`` the kernel on
    ``x, y, out``, and check ``out == x + y``; device memory is freed in every case."""
    x = array.array("f", (float(i) for i in range(N)))
    y = array.array("f", (0.5 * i for i in range(N)))
    size = N * x.itemsize
    pointers = [ctypes.c_uint64() for _ in range(3)]
    out = array.array("f", bytes(size))
    try:
        for p in pointers:
            cuda("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(size))
        for p, host in zip(pointers, (x, y), strict=False):
            address = host.buffer_info()[0]
            cuda("cuMemcpyHtoD_v2", p, ctypes.c_void_p(address), ctypes.c_size_t(size))
        launch(pointers)
        cuda("cuCtxSynchronize")
        address = out.buffer_info()[0]
        cuda("cuMemcpyDtoH_v2", ctypes.c_void_p(address), pointers[2], ctypes.c_size_t(size))
    finally:
        for p in pointers:
            if p.value:
                cuda("cuMemFree_v2", p)
    if list(out) != [a + b for a, b in zip(x, y, strict=True)]:
        raise AssertionError("the kernel computed a wrong sum")


def _launch_through_the_driver() -> str:
    """Compile for this GPU and launch the cubin with ``cuLaunchKernel`` directly: for
    Tritons whose own launcher needs torch, when torch is not installed. The toolchain
    is the same (Triton's compiler and ptxas, the loaded driver); only the launch
    differs from Triton's."""
    import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs
    from triton.backends.compiler import GPUTarget  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

    from . import _kernel  # noqa: PLC0415  imports Triton

    cuda = _Cuda()
    device = _current_device(cuda)
    major, minor = ctypes.c_int(), ctypes.c_int()
    cuda("cuDeviceGetAttribute", ctypes.byref(major), _CC_MAJOR, device)
    cuda("cuDeviceGetAttribute", ctypes.byref(minor), _CC_MINOR, device)
    arch = major.value * 10 + minor.value
    kernel = triton.compile(_source(), target=GPUTarget("cuda", arch, 32))
    meta = kernel.metadata
    if getattr(meta, "global_scratch_size", 0):
        raise _Skipped("this kernel needs Triton's global scratch memory: not launched")
    count = ptx_param_count(kernel.asm["ptx"], meta.name)
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    cuda("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(kernel.asm["cubin"]))

    def launch(pointers: list[ctypes.c_uint64]) -> None:
        values: list[Any] = [*pointers, ctypes.c_int32(N)]
        values += [ctypes.c_uint64(0) for _ in range(count - len(values))]  # no scratch
        params = (ctypes.c_void_p * count)(
            *(ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values)
        )
        grid = triton_cdiv(N, _kernel.BLOCK)
        threads = 32 * meta.num_warps
        cuda("cuLaunchKernel", function, grid, 1, 1, threads, 1, 1, meta.shared, None, params, None)

    try:
        cuda("cuModuleGetFunction", ctypes.byref(function), module, meta.name.encode())
        _add_on_device(cuda, launch)
    finally:
        cuda("cuModuleUnload", module)
    return (
        f"vector add of {N} floats on sm_{arch} is correct (launched with cuLaunchKernel: "
        f"this Triton's launcher needs torch, which is not installed)"
    )


def _launch_torch_free(target: Any) -> str:
    import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]  # noqa: PLC0415  Triton, torch: optional; when a step runs

    from . import _kernel  # noqa: PLC0415  imports Triton

    cuda = _Cuda()
    _current_device(cuda)
    kernel = triton.compile(_source(), target=target)
    grid = (triton_cdiv(N, _kernel.BLOCK), 1, 1)
    _add_on_device(cuda, lambda pointers: kernel[grid](*(p.value for p in pointers), N))
    return f"vector add of {N} floats on sm_{target.arch} is correct (torch-free)"
