"""Add two vectors on the GPU with Triton and check the result.

Run as `nix run .#vector-add`. Triton compiles the kernel with the toolchain's
ptxas and builds its launcher with the toolchain's compiler, headers and driver.
Buffers come from torch when it is installed, otherwise from the CUDA driver
API through ctypes (Triton 3.9 and newer launch without torch; older releases
import torch in their CUDA driver: then the shim's self-test launches the
compiled kernel through the driver API).
"""

import ctypes
import sys
from array import array

import triton
import triton.language as tl

N = 98432
BLOCK = 1024


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def run_with_torch(torch):
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    y = 2 * x
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(N, BLOCK),)](x, y, out, N, BLOCK=BLOCK)
    return torch.equal(out, 3 * x)


class DeviceBuffer:
    """What Triton needs of a pointer argument: data_ptr() and a dtype."""

    dtype = "float32"

    def __init__(self, cuda, nbytes):
        self.ptr = ctypes.c_uint64()
        check(cuda.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(nbytes)), "cuMemAlloc")

    def data_ptr(self):
        return self.ptr.value


def check(status, what):
    if status != 0:
        raise SystemExit(f"vector-add: {what} failed with CUDA error {status}")


def run_with_driver_api():
    # Let Triton (and the toolchain shim) pick and load the driver first; the
    # name below then refers to the library already loaded.
    triton.runtime.driver.active.get_current_device()
    cuda = ctypes.CDLL("libcuda.so.1")
    check(cuda.cuInit(0), "cuInit")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    x, y = array("f", range(N)), array("f", (2 * i for i in range(N)))
    nbytes = N * x.itemsize
    bx, by, bout = (DeviceBuffer(cuda, nbytes) for _ in range(3))
    for buf, host in ((bx, x), (by, y)):
        address, _ = host.buffer_info()
        check(cuda.cuMemcpyHtoD_v2(ctypes.c_uint64(buf.ptr.value), ctypes.c_void_p(address), ctypes.c_size_t(nbytes)), "cuMemcpyHtoD")
    add_kernel[(triton.cdiv(N, BLOCK),)](bx, by, bout, N, BLOCK=BLOCK)
    check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
    out = array("f", bytes(nbytes))
    address, _ = out.buffer_info()
    check(cuda.cuMemcpyDtoH_v2(ctypes.c_void_p(address), ctypes.c_uint64(bout.ptr.value), ctypes.c_size_t(nbytes)), "cuMemcpyDtoH")
    return all(o == 3 * i for i, o in enumerate(out))


def triton_launches_without_torch():
    """Triton 3.9 and newer; older releases' CUDA driver imports torch."""
    from triton.backends.nvidia.driver import CudaDriver

    return hasattr(CudaDriver, "_get_current_stream")


def main():
    try:
        import torch
    except ImportError:
        if not triton_launches_without_torch():
            # This Triton's launcher needs torch: the shim's self-test compiles the
            # same kind of kernel with the same toolchain, builds and loads Triton's
            # launcher, and launches the cubin through the driver API itself.
            from triton_toolchain import self_test

            report = self_test()
            print(report.text)
            return 0 if report.ok else 1
        ok = run_with_driver_api()
    else:
        ok = run_with_torch(torch)
    print(f"vector-add: Triton {triton.__version__}, {N} elements:", "OK" if ok else "WRONG RESULT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
