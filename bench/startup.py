"""What the .pth hook adds to interpreter start-up: ``python -c pass`` in two fresh
virtual environments made in the same run, one with the hook (``triton_toolchain.pth``
and the package on its path), one without, timed alternately (hyperfine-style: warm-up
runs, then N runs each, interleaved so that drift hits both alike).

Usage: ``python bench/startup.py [--runs 200]``. Prints the medians, the difference in
milliseconds, the ratio, and ``python -X importtime`` lines that mention the hook.
Exit status 1 when the median difference is 1 ms or more.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "python" / "src"
LIMIT_MS = 1.0


def make_venv(where: Path, *, hook: bool) -> Path:
    """A venv without pip; with ``hook`` its site-packages holds the package's .pth (the
    stub it installs imports nothing for ``python -c pass``, so the package itself need
    not be there)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if hook:
        site_packages = Path(purelib)
        (site_packages / "triton_toolchain.pth").write_text(
            (SRC / "triton_toolchain.pth").read_text()
        )
    return python


def run_once(python: Path) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], check=True)
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain = make_venv(Path(tmp) / "plain", hook=False)
        hooked = make_venv(Path(tmp) / "hooked", hook=True)
        for _ in range(10):  # warm-up: page cache, .pyc files
            run_once(plain)
            run_once(hooked)
        times: dict[str, list[float]] = {"plain": [], "hooked": []}
        for _ in range(args.runs):
            times["plain"].append(run_once(plain))
            times["hooked"].append(run_once(hooked))
        importtime = subprocess.run(
            [str(hooked), "-X", "importtime", "-c", "pass"],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        meta_path = subprocess.run(
            [str(hooked), "-c", "import sys; print([type(f).__name__ for f in sys.meta_path])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    plain_ms = statistics.median(times["plain"])
    hooked_ms = statistics.median(times["hooked"])
    delta = hooked_ms - plain_ms
    print(f"python {sys.version.split()[0]} ({sysconfig.get_platform()}), {args.runs} runs each")
    print(f"median without hook: {plain_ms:.3f} ms (stdev {statistics.stdev(times['plain']):.3f})")
    print(
        f"median with hook:    {hooked_ms:.3f} ms (stdev {statistics.stdev(times['hooked']):.3f})"
    )
    print(f"difference: {delta:+.3f} ms, ratio {hooked_ms / plain_ms:.4f}")
    print(f"meta_path with hook: {meta_path}")
    line = (SRC / "triton_toolchain.pth").read_text().strip()
    saved = list(sys.meta_path)

    def exec_line() -> None:
        exec(line)  # noqa: S102  exactly what site.addpackage does with the line
        sys.meta_path[:] = saved

    print(
        f"exec of the .pth line alone: {timeit.timeit(exec_line, number=2000) / 2000 * 1e6:.0f} us"
    )
    hook_lines = [ln for ln in importtime.splitlines() if "triton" in ln]
    print("importtime lines mentioning triton:", hook_lines or "none (the hook imports nothing)")
    return 0 if delta < LIMIT_MS else 1


if __name__ == "__main__":
    sys.exit(main())
