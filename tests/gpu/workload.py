"""GPU workloads for ``tests/gpu/run.sh`` (the reference H200 host: torch 2.11, Triton 3.6).

``python workload.py full``   vector add (2^26 float32) and a matmul checked against torch,
                              their GB/s and TFLOP/s (``triton.testing.do_bench``),
                              ``torch.compile`` of a small model on the GPU and of a small
                              function on the CPU, each checked against eager;
``python workload.py quick``  the vector add, checked (for the emulated layouts);
``python workload.py torch-first`` torch alone, as most programs are: a model on the GPU
                              (torch loads the driver), then ``torch.compile`` forward
                              and backward (Inductor imports Triton), checked against
                              eager, and the step time;
``python workload.py cpu``    ``torch.compile`` on the CPU (Inductor's C++), checked;
``python workload.py first``  the first launch with a cold cache: seconds from before the
                              first kernel call to after the synchronisation, and from the
                              process start (``T0`` in the environment, set by the caller)
                              to the same point;
``python workload.py report OUT`` the JSON lines in ``OUT/runs.jsonl`` -> ``OUT/report.md``
                              and ``OUT/report.json`` (stdlib only).

Every mode prints one JSON line: ``{"ok": ..., "error": ..., ...}``. Triton is imported
right after torch, before CUDA is initialised, as the import hook expects.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def _shim() -> dict[str, Any]:
    """What the shim did in this process (``None`` when not installed or off)."""
    try:
        from triton_toolchain.runtime import _activate
    except ImportError:
        return {"installed": False}
    act = _activate.current()
    return {
        "installed": True,
        "mode": act.mode if act else None,
        "driver": act.driver if act else None,
        "ptxas": dict(act.applied).get("knobs.nvidia.ptxas") if act else None,
    }


def _vector_add(n: int, bench: bool) -> dict[str, Any]:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(
            out_ptr + offsets,
            tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
            mask=mask,
        )

    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    add[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    result: dict[str, Any] = {"vector_add_ok": bool(torch.equal(out, x + y))}
    if bench:
        ms = triton.testing.do_bench(lambda: add[grid](x, y, out, n, BLOCK=1024))
        result["vector_add_gbps"] = round(3 * n * 4 / (ms * 1e-3) / 1e9, 1)
    return result


def _matmul(size: int) -> dict[str, Any]:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # type: ignore[no-untyped-def]
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a_tile = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            b_tile = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a_tile, b_tile)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    grid = (size // 128, size // 128)

    def run() -> None:
        matmul[grid](a, b, c, size, size, size, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)

    run()
    torch.cuda.synchronize()
    ok = bool(torch.allclose(c.float(), (a @ b).float(), atol=1e-1, rtol=1e-2))
    ms = triton.testing.do_bench(run)
    return {"matmul_ok": ok, "matmul_tflops": round(2 * size**3 / (ms * 1e-3) / 1e12, 1)}


def _torch_compile() -> dict[str, Any]:
    import torch

    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64)
    ).cuda()
    x = torch.randn(128, 256, device="cuda")
    compiled = torch.compile(model)
    with torch.no_grad():
        ok = bool(torch.allclose(compiled(x), model(x), atol=1e-3, rtol=1e-3))
    return {"torch_compile_ok": ok}


def _mapped() -> list[str]:
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if "libcuda.so" in line})


def _torch_first() -> dict[str, Any]:
    """What the issue's NixOS report ran: CUDA through torch before anything imports
    Triton, then torch.compile forward and backward."""
    import torch

    torch.manual_seed(0)
    # No dropout: compiled and eager must compute the same function.
    layer = torch.nn.TransformerEncoderLayer(256, 4, 512, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 4).cuda()
    x = torch.randn(8, 64, 256, device="cuda")
    eager = model(x)
    compiled = torch.compile(model)
    out = compiled(x)
    out.sum().backward()
    torch.cuda.synchronize()
    ok = bool(torch.allclose(out, eager, atol=2e-2, rtol=2e-2))
    start = time.perf_counter()
    for _ in range(10):
        compiled(x).sum().backward()
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - start) / 10 * 1000
    return {"torch_first_ok": ok, "step_ms": round(step_ms, 2), "triton_loaded_by": "inductor"}


def _cpu_compile() -> dict[str, Any]:
    import torch

    def f(x: Any, y: Any) -> Any:
        return (x.sin() + y.cos()).sum(dim=-1) * 2

    x, y = torch.randn(64, 32), torch.randn(64, 32)
    ok = bool(torch.allclose(torch.compile(f)(x, y), f(x, y), atol=1e-5))
    return {"cpu_compile_ok": ok, "CXX": os.environ.get("CXX")}


def _first() -> dict[str, Any]:
    import torch
    import triton  # noqa: F401  (the hook activates here)

    torch.cuda.init()
    start = time.time()
    result = _vector_add(1 << 20, bench=False)
    torch.cuda.synchronize()
    end = time.time()
    result["first_launch_s"] = round(end - start, 3)
    t0 = os.environ.get("T0")
    if t0:
        result["from_process_start_s"] = round(end - float(t0), 3)
    return result


def main(mode: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "mode": mode,
        "ok": False,
        "layout": os.environ.get("LAYOUT", "stock"),
        "shim_label": os.environ.get("SHIM_LABEL", "?"),
    }
    try:
        started = time.perf_counter()
        import torch

        imported_torch = time.perf_counter()
        result["import_torch_s"] = round(imported_torch - started, 3)
        if mode in ("torch-first", "cpu"):
            result.update(_torch_first() if mode == "torch-first" else _cpu_compile())
            result["ok"] = all(v for k, v in result.items() if k.endswith("_ok"))
            result["mapped"] = _mapped()
            result["shim"] = _shim()
            return result
        import triton

        result["import_triton_s"] = round(time.perf_counter() - imported_torch, 3)

        result["triton"] = triton.__version__
        result["shim"] = _shim()
        if mode == "first":
            result.update(_first())
        else:
            result.update(_vector_add(1 << 26, bench=mode == "full"))
            if mode == "full":
                result.update(_matmul(4096))
                result.update(_torch_compile())
                result.update(_cpu_compile())
        result["device"] = torch.cuda.get_device_name()
        result["ok"] = all(v for k, v in result.items() if k.endswith("_ok"))
    except BaseException as exc:
        result["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"
        result["traceback_tail"] = traceback.format_exc().splitlines()[-6:]
    result["shim"] = result.get("shim") or _shim()
    result["mapped"] = _mapped()
    return result


def report(out: Path) -> None:
    runs = [
        json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()
    ]
    rows = [
        "| layout | shim | workload | outcome | GB/s | TFLOP/s | step ms | libcuda mapped |",
        "|---|---|---|---|---|---|---|---|",
    ]
    firsts: dict[str, list[float]] = {}
    starts: dict[str, list[float]] = {}
    imports: dict[str, list[float]] = {}
    for run in runs:
        if run.get("mode") == "first":
            if run.get("ok"):
                firsts.setdefault(run["shim_label"], []).append(run["first_launch_s"])
                if "from_process_start_s" in run:
                    starts.setdefault(run["shim_label"], []).append(run["from_process_start_s"])
                if "import_triton_s" in run:
                    imports.setdefault(run["shim_label"], []).append(run["import_triton_s"])
            continue
        outcome = "ok" if run.get("ok") else f"FAILED: {run.get('error', 'wrong result')}"
        rows.append(
            f"| {run['layout']} | {run['shim_label']} | {run['mode']} | {outcome} | "
            f"{run.get('vector_add_gbps', '')} | {run.get('matmul_tflops', '')} | "
            f"{run.get('step_ms', '')} | {', '.join(run.get('mapped', []))} |"
        )
    lines = [
        "# triton-toolchain on the GPU host",
        "",
        *rows,
        "",
        "## First launch, cold cache (median)",
        "",
    ]
    summary: dict[str, Any] = {"runs": runs, "first_launch": {}}
    for label, values in sorted(firsts.items()):
        med = statistics.median(values)
        from_start = statistics.median(starts[label]) if starts.get(label) else None
        summary["first_launch"][label] = {
            "median_s": med,
            "runs": values,
            "from_process_start_median_s": from_start,
            "from_process_start_runs": starts.get(label, []),
            "import_triton_runs": imports.get(label, []),
        }
        import_triton = statistics.median(imports[label]) if imports.get(label) else None
        lines.append(
            f"- {label}: {med:.3f} s first call to sync (runs {values}); "
            f"from process start {from_start} s (runs {starts.get(label, [])}); "
            f"`import triton` {import_triton} s (runs {imports.get(label, [])})"
        )
    (out / "report.md").write_text("\n".join(lines) + "\n")
    (out / "report.json").write_text(json.dumps(summary, indent=2))
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "report":
        report(Path(sys.argv[2]))
    else:
        print(json.dumps(main(sys.argv[1])))
