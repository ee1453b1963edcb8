"""Fit facts on a GPU host with stock Triton (no shim): the driver's CUDA version and the
GPU's architecture, then for every ptxas on the machine (``find / -xdev -name ptxas -o
-name ptxas-blackwell``, listed in the file given) the probe the shim runs (PTX of the
version this Triton writes for its release, for ``sm_<arch>a``), what NVIDIA's driver
rule predicts, and a vector add compiled with it (``TRITON_PTXAS_PATH`` and
``TRITON_PTXAS_BLACKWELL_PATH``) and launched, checked against torch.

Usage: ``python3 tests/gpu/fit_stock.py LIST`` (one JSON line per ptxas). docs/gpu.md
("Fit") has the command that ran it on the H200 host and what it printed.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL = """import torch, triton, triton.language as tl
@triton.jit
def k(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
n = 1 << 20
x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
o = torch.empty_like(x)
k[(n // 1024,)](x, y, o, n, B=1024)
torch.cuda.synchronize()
print("LAUNCH", bool(torch.equal(o, x + y)))
"""


def main() -> None:
    import torch
    from triton.backends.nvidia.compiler import ptx_get_version

    version = ctypes.c_int()
    ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version))
    major, minor = torch.cuda.get_device_capability()
    arch = major * 10 + minor
    target = f"sm_{arch}a"
    print("driver", version.value, "arch", arch, flush=True)
    kernel = Path(tempfile.mkdtemp()) / "k.py"  # @triton.jit needs a file
    kernel.write_text(KERNEL)
    for ptxas in Path(sys.argv[1]).read_text().split():
        banner = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=False)
        found = re.search(r"release (\d+\.\d+)", banner.stdout)
        if not found:
            continue
        release = found.group(1)
        try:
            ptx = ptx_get_version(release)
        except Exception as exc:
            print(ptxas, release, "triton refuses", exc)
            continue
        work = Path(tempfile.mkdtemp())
        (work / "p.ptx").write_text(
            f".version {ptx // 10}.{ptx % 10}\n.target {target}\n.address_size 64\n"
            ".visible .entry e(){ret;}\n"
        )
        probe = subprocess.run(
            [ptxas, f"--gpu-name={target}", str(work / "p.ptx"), "-o", str(work / "c")],
            capture_output=True,
            text=True,
            check=False,
        )
        env = {
            **os.environ,
            "TRITON_PTXAS_PATH": ptxas,
            "TRITON_PTXAS_BLACKWELL_PATH": ptxas,
            "TRITON_CACHE_DIR": tempfile.mkdtemp(),
        }
        run = subprocess.run(
            [sys.executable, str(kernel)],
            env=env,
            capture_output=True,
            text=True,
            timeout=200,
            check=False,
        )
        launched = [ln for ln in run.stdout.splitlines() if ln.startswith("LAUNCH")]
        row = {
            "ptxas": ptxas,
            "release": release,
            "ptx": ptx,
            "probe": probe.returncode == 0,
            "probe_err": probe.stderr[-200:],
            "rule_loads": version.value // 1000 >= int(release.split(".")[0]),
            "launch": launched[-1] if launched else run.stderr[-400:],
        }
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
