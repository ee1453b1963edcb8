"""One torch scenario, run by the tests in a fresh interpreter: ``python torch_scenario.py
ACTION``. The shim activates as it does for users (the installed ``.pth`` hook, when
``torch`` starts importing), unless ``TRITON_TOOLCHAIN=off`` (stock torch).

Actions:

- ``compile``: ``torch.compile`` of a small function on the CPU (TorchInductor's C++
  kernels), compared with eager;
- ``extension``: ``torch.utils.cpp_extension.load`` of a CUDA extension (a ``.cu``
  kernel and a ``.cpp`` binding) into ``$TT_BUILD_DIR``: the object files are built
  with ``CUDA_HOME``'s nvcc (a CPU build of torch cannot link CUDA extensions).

The last line of the output is a JSON report: ``ok``, or the exception's type (its
chain of causes included) and message; the C++ compiler torch used and
``cpp_extension.CUDA_HOME``; what the shim applied.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

KERNEL = r"""
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" void launch_axpy(float a, const float* x, float* y, int n) {
  axpy<<<(n + 255) / 256, 256>>>(a, x, y, n);
}
"""
BINDING = r"""
#include <torch/extension.h>
extern "C" void launch_axpy(float a, const float* x, float* y, int n);
int answer() { return 42; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("answer", &answer); }
"""


def _error(exc: BaseException) -> dict[str, Any]:
    chain, seen = [], exc
    while seen is not None:
        chain.append(type(seen).__name__)
        seen = seen.__cause__ or seen.__context__
    return {"ok": False, "types": chain, "message": str(exc)}


def compile_and_compare() -> dict[str, Any]:
    import torch

    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x.sin() + y.cos()).sum(dim=-1) * 2

    x, y = torch.randn(64, 32), torch.randn(64, 32)
    got = torch.compile(f)(x, y)
    return {"ok": True, "matches_eager": bool(torch.allclose(got, f(x, y), atol=1e-5))}


def build_extension() -> dict[str, Any]:
    import torch.utils.cpp_extension as ext

    build = os.environ["TT_BUILD_DIR"]
    os.makedirs(build, exist_ok=True)
    for name, text in (("k.cu", KERNEL), ("b.cpp", BINDING)):
        with open(os.path.join(build, name), "w") as f:
            f.write(text)
    sources = [os.path.join(build, n) for n in ("b.cpp", "k.cu")]
    result: dict[str, Any]
    try:
        ext.load("tt_extension", sources, build_directory=build)
        result = {"ok": True}
    except Exception as exc:
        result = _error(exc)
    result["objects"] = sorted(n for n in os.listdir(build) if n.endswith(".o"))
    return result


def main(action: str) -> dict[str, Any]:
    try:
        result = compile_and_compare() if action == "compile" else build_extension()
    except Exception as exc:
        result = _error(exc)
    report: dict[str, Any] = {"result": result, "CXX": os.environ.get("CXX")}
    ext = sys.modules.get("torch.utils.cpp_extension")
    report["cuda_home"] = getattr(ext, "CUDA_HOME", "(not imported)")
    activation = None
    if "triton_toolchain.runtime._activate" in sys.modules:
        from triton_toolchain.runtime import _activate

        current = _activate.current()
        activation = dict(current.applied) if current else None
    report["applied"] = activation
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
