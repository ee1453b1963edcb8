"""Fit on the GPU host (run by tests/gpu/fit.sh with the shim's venv).

1. The GPU's architecture (torch) and the driver's CUDA version: ``cuDriverGetVersion``
   read by the shim from the chosen ``libcuda`` in a child process, and by ctypes here.
2. Every ptxas the machine has (Triton's bundled ptxas and ptxas-blackwell, the CUDA
   toolkit's, those carried in) judged for sm_<arch> by the shim (``_fit.judge``: the
   probe, and NVIDIA's driver rule).
3. For each, in a child with TRITON_PTXAS_PATH and TRITON_PTXAS_BLACKWELL_PATH naming
   it and a fresh Triton cache: a vector add compiled and launched, checked against
   torch; with the shim (``TRITON_TOOLCHAIN`` unset) and without (``off``), so that a
   ptxas the shim refuses shows what the launch itself does.

Usage: ``python fit.py OUT.json [EXTRA_PTXAS...]``.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, torch, triton, triton.language as tl

@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

try:
    n = 1 << 20
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    add[(n // 1024,)](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    print("fit-launch: " + json.dumps({"ok": bool(torch.equal(out, x + y)), "error": None}))
except BaseException as exc:
    error = f"{type(exc).__name__}: {exc}"[:1500]
    print("fit-launch: " + json.dumps({"ok": False, "error": error}))
"""


def launch(ptxas: str, shim: bool) -> dict[str, object]:
    env = dict(os.environ)
    env.update(TRITON_PTXAS_PATH=ptxas, TRITON_PTXAS_BLACKWELL_PATH=ptxas)
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    if not shim:
        env["TRITON_TOOLCHAIN"] = "off"
    # @triton.jit reads the kernel's source: the child is a file, not `python -c`.
    child = Path(env["TRITON_CACHE_DIR"]) / "fit_child.py"
    child.write_text(CHILD)
    done = subprocess.run(
        [sys.executable, str(child)],
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("fit-launch: ")]
    result = (
        json.loads(lines[-1][len("fit-launch: ") :])
        if lines
        else {"ok": False, "error": (done.stderr or done.stdout)[-1500:]}
    )
    result["warnings"] = [ln for ln in done.stderr.splitlines() if "triton-toolchain" in ln][:3]
    return result


def main() -> None:
    import torch
    from triton.backends.nvidia import compiler
    from triton_toolchain.resolver._discovery._host import Host
    from triton_toolchain.resolver._discovery._probe import driver_cuda
    from triton_toolchain.resolver._discovery._tools import tool_release
    from triton_toolchain.resolver._fit import judge
    from triton_toolchain.resolver._resolve import resolve_all

    out, extra = Path(sys.argv[1]), sys.argv[2:]
    major, minor = torch.cuda.get_device_capability()
    arch = major * 10 + minor
    tc = resolve_all(arch)
    libcuda = tc["libcuda"].path
    read, problem = driver_cuda(Path(libcuda)) if libcuda else (None, "no driver")
    lib = ctypes.CDLL(libcuda or "libcuda.so.1")
    version = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(version))
    report: dict[str, object] = {
        "arch": arch,
        "libcuda": libcuda,
        "driver_cuda_read_by_shim": read,
        "driver_cuda_problem": problem,
        "driver_cuda_ctypes": version.value,
        "ptxas": [],
    }
    bindir = Path(compiler.__file__).parent / "bin"
    candidates = [bindir / "ptxas", bindir / "ptxas-blackwell", Path("/usr/local/cuda/bin/ptxas")]
    candidates += [Path(p) for p in extra]
    for path in candidates:
        if not path.exists():
            continue
        release, why = tool_release(path, Host())
        verdict = judge(str(path), release, arch, vars(compiler), libcuda) if release else (why, "")
        row = {
            "path": str(path),
            "release": release,
            "fits": verdict is None,
            "why_not": verdict[0] if verdict else None,
            "with_shim": launch(str(path), shim=True),
            "stock": launch(str(path), shim=False),
        }
        report["ptxas"].append(row)  # type: ignore[union-attr]
        print(json.dumps(row), flush=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps({k: v for k, v in report.items() if k != "ptxas"}), flush=True)


if __name__ == "__main__":
    main()
