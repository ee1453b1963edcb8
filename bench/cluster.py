"""N workers at once on a fresh node: the time until all the workers of a ``torchrun``
job are ready, with the shim on and an empty cache, against ``TRITON_TOOLCHAIN=off``,
measured in the same run, interleaved.

Each run is one ``torchrun --nproc-per-node N --standalone`` job (torch's own launcher,
``torch.distributed.run``: the ``torchrun`` script next to the interpreter, else ``python
-m torch.distributed.run``) of ``bench/cluster_worker.py``: every worker imports torch
and Triton, joins the ``gloo`` process group and waits at a barrier. "Ready" is the
moment the first worker leaves the barrier (every worker has then imported both),
counted from the launch of ``torchrun``; the launcher imports torch too, so on an empty
cache the shim resolves there as well, before the workers start. Every run of both
cases gets a fresh ``HOME`` and ``XDG_CACHE_HOME``, shared by its workers (an empty
cache, as on a fresh node or in a fresh container); the cases alternate, after one
warm-up round of each (the page cache, the ``.pyc`` files), so that drift hits them
alike.

Printed: each run's time, each case's median, the ratio on/off, how many workers of the
``on`` runs resolved (the others reused a record a worker wrote before them), and the
time the workers' own imports took (medians over all workers and runs).

The target: ready within 10 % of ``TRITON_TOOLCHAIN=off`` (ratio of the
medians at most 1.10).

Usage: ``python bench/cluster.py [--runs 7] [--workers 8] [--kernel]``; ``--kernel``:
every worker also launches a small Triton kernel on a GPU before the barrier (a GPU
machine; ``tests/gpu/cluster.sh``). Exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.10
WORKER = Path(__file__).resolve().parent / "cluster_worker.py"
CASES = ("off", "on")


def launcher(python: str) -> list[str]:
    """torch's launcher for ``python``: its ``torchrun`` script, else the module."""
    script = Path(python).parent / "torchrun"
    return [str(script)] if script.exists() else [python, "-m", "torch.distributed.run"]


def job_environ(home: Path, case: str, kernel: bool) -> dict[str, str]:
    """This environment without the shim's settings and the cache's location (as
    ``bench/activation.py``); a fresh home and cache; gloo on the loopback interface
    (one node)."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TRITON") and k not in ("XDG_CACHE_HOME", "PYTHONDONTWRITEBYTECODE")
    }
    return {
        **keep,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TRITON_TOOLCHAIN": case,
        "GLOO_SOCKET_IFNAME": "lo",
        "TT_KERNEL": "1" if kernel else "0",
    }


def run_job(
    python: str, workers: int, case: str, kernel: bool, work: Path, timeout: float = 600
) -> tuple[float, list[dict[str, Any]]]:
    """One job on an empty cache: seconds from the launch until all workers were ready,
    and each worker's report (by rank)."""
    shutil.rmtree(work, ignore_errors=True)
    home, out = work / "home", work / "out"
    home.mkdir(parents=True)
    out.mkdir()
    command = [*launcher(python), f"--nproc-per-node={workers}", "--standalone"]
    start = time.time()
    done = subprocess.run(
        [*command, str(WORKER), str(out)],
        env=job_environ(home, case, kernel),
        cwd=work,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    reports = [json.loads(p.read_text()) for p in sorted(out.glob("rank-*.json"))]
    if done.returncode != 0 or len(reports) != workers:
        raise SystemExit(
            f"torchrun ({case}) exited {done.returncode} with {len(reports)} of {workers} "
            f"reports:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
        )
    reports.sort(key=lambda r: r["rank"])
    return min(r["ready"] for r in reports) - start, reports


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--kernel", action="store_true")
    parser.add_argument("--python", default=sys.executable, help="the workers' interpreter")
    args = parser.parse_args()
    ready: dict[str, list[float]] = {case: [] for case in CASES}
    imports: dict[str, list[float]] = {case: [] for case in CASES}
    resolved: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.runs + 1):  # the first round warms up
            for case in CASES:
                seconds, reports = run_job(
                    args.python, args.workers, case, args.kernel, Path(tmp, case)
                )
                if args.kernel and not all(r.get("kernel_ok") for r in reports):
                    raise SystemExit(f"a kernel was wrong ({case}): {reports}")
                if not round_:
                    continue
                ready[case].append(seconds)
                imports[case] += [r["imports"] for r in reports]
                if case == "on":
                    resolved.append(sum(r["resolved"] for r in reports))
    first = reports[0]
    kernel = ", a kernel each" if args.kernel else ""
    print(
        f"torchrun, {args.workers} workers, empty cache every run, {args.runs} interleaved "
        f"runs each (torch {first['torch']}, Triton {first['triton']}, "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs{kernel})"
    )
    for case in CASES:
        runs = " ".join(f"{s:.2f}" for s in ready[case])
        print(
            f"  {case:3} ready: median {statistics.median(ready[case]):.3f} s  (runs: {runs})  "
            f"workers' imports: median {statistics.median(imports[case]):.3f} s"
        )
    ratio = statistics.median(ready["on"]) / statistics.median(ready["off"])
    print(f"  workers that resolved, per on run: {' '.join(map(str, resolved))} of {args.workers}")
    met = ratio <= TARGET_RATIO
    print(
        f"  on/off: {ratio:.3f} ({100 * (ratio - 1):+.1f} %); target at most "
        f"{TARGET_RATIO:.2f}: {'met' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
