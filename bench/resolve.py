"""Resolution speed against Triton's own lookups, measured in the same run.

Triton's lookups: ``libcuda_dirs()`` (``/sbin/ldconfig -p``), the four tool knobs
(each runs ``--version``) and its compiler lookup. Ours: ``resolve()`` by discovery,
and ``resolve()`` from a manifest with recorded versions (which must start no process
and not import pyelftools). "cold" is the first call in a fresh interpreter (median
of several interpreters), the resolver's modules loaded before (that load, which
``import triton_toolchain`` leaves to the first ``resolve()``, is printed apart);
"warm" is a repeated call in the same interpreter. Discovery
is measured with an empty cache of tools' answers (every tool is run) and with the
answers remembered from an earlier process (what every process after the first sees).

The binding target, ``resolve()`` from a manifest after ``import triton`` in 10 ms, is
judged at the speed of the machine the targets were set on, as ``activation.py`` judges
its own: each run of it is interleaved with an ``import triton`` without the shim, whose
median scales it. Exit status 1 when it is missed.

Usage: python bench/resolve.py [--runs N]   (needs triton and triton_toolchain importable)
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

from activation import ISSUE_OFF_MS, TIMED, last_line, user_environ

TRITON = r"""
import json, os, sys, time
import triton
from triton import knobs
from triton.backends.nvidia import driver
from triton.runtime import build

def lookups():
    try:
        driver.libcuda_dirs()
    except (AssertionError, OSError, subprocess.CalledProcessError):
        pass
    for name in ("ptxas", "ptxas_blackwell", "cuobjdump", "nvdisasm"):
        try:
            getattr(knobs.nvidia, name)
        except (RuntimeError, AttributeError):
            pass
    finder = getattr(build, "_find_compiler", None)
    if finder is not None:
        try:
            finder("c")
        except Exception:
            pass

import subprocess
t = time.perf_counter(); lookups(); cold = time.perf_counter() - t
t = time.perf_counter(); lookups(); warm = time.perf_counter() - t
print(json.dumps({"cold": cold, "warm": warm}))
"""

# (``json`` is imported at the end, for the output only: imported first, it would load
# ``re``, ``enum`` and ``collections`` for the shim, hiding their cost.)
OURS = r"""
import sys, time
spawned = []
def audit(event, args):
    if event == "subprocess.Popen":
        spawned.append(args[0])
sys.addaudithook(audit)
t = time.perf_counter()
import triton_toolchain
imported = time.perf_counter() - t
t = time.perf_counter()
import triton_toolchain.resolver._resolve  # what the first resolve() loads
loaded = time.perf_counter() - t
t = time.perf_counter(); tc = triton_toolchain.resolve(); cold = time.perf_counter() - t
t = time.perf_counter(); triton_toolchain.resolve(); warm = time.perf_counter() - t
import json
print(json.dumps({"cold": cold, "warm": warm, "import": imported, "loaded": loaded,
                  "processes": len(spawned),
                  "elftools": "elftools" in sys.modules, "manifest": tc.manifest,
                  "missing": [c.component for c in tc.missing()]}))
"""

# ``resolve()`` from a manifest in a process that has imported Triton (the only place it
# runs in a Triton process), its imports included: the binding target.
AFTER_TRITON = r"""
import json, time
import triton
t = time.perf_counter()
import triton_toolchain
tc = triton_toolchain.resolve()
print(json.dumps({"loaded": time.perf_counter() - t, "manifest": tc.manifest}))
"""


# The binding target, in ms: resolve() from a manifest, its imports included, in a
# process that has imported Triton, at the speed of the machine the targets were set on
# (scaled as activation.py scales its targets, by this run's `import triton` with the shim
# off). (Importing the resolver and resolving in a bare interpreter are printed, with no
# target: nobody resolves there.)
MANIFEST_AFTER_TRITON_MS = 10.0


def driver_stand_in(tmp: str) -> str:
    """A real x86-64 ``libcuda.so.1`` named like the driver, built with the C compiler."""
    directory = os.path.join(tmp, "driver")
    os.mkdir(directory)
    source = os.path.join(tmp, "cuda.c")
    with open(source, "w", encoding="utf-8") as f:
        f.write("int cuInit(unsigned int flags) { return 100; }\n")
    real = os.path.join(directory, "libcuda.so.580.159.04")
    subprocess.run(
        [
            shutil.which("cc") or "/usr/bin/cc",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            real,
            source,
        ],
        check=True,
    )
    os.symlink("libcuda.so.580.159.04", os.path.join(directory, "libcuda.so.1"))
    return directory


def once(code: str, env: dict[str, str]) -> dict[str, object]:
    """The JSON object ``code`` prints last, run in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure(
    code: str, runs: int, env: dict[str, str], fresh_cache: str | None = None
) -> list[dict[str, object]]:
    """Run ``code`` in ``runs`` fresh interpreters; with ``fresh_cache`` (a directory),
    each gets an empty cache of tool answers of its own there."""
    results = []
    for i in range(runs):
        run_env = dict(env)
        if fresh_cache is not None:
            run_env["XDG_CACHE_HOME"] = os.path.join(fresh_cache, str(i))
        results.append(once(code, run_env))
    return results


def median_ms(results: list[dict[str, object]], key: str) -> float:
    return statistics.median(float(r[key]) for r in results) * 1000  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    env = user_environ()  # byte code written, as users' interpreters write it
    env["TRITON_TOOLCHAIN"] = "off"
    with tempfile.TemporaryDirectory() as tmp:
        # Everyone finds the same driver stand-in through LD_LIBRARY_PATH, as in a container
        # (this machine may have no driver; Triton's lookup would stop at an assertion).
        env["LD_LIBRARY_PATH"] = driver_stand_in(tmp)
        triton = measure(TRITON, args.runs, env)
        discovery = measure(OURS, args.runs, env, fresh_cache=os.path.join(tmp, "fresh"))
        env["XDG_CACHE_HOME"] = os.path.join(tmp, "shared")
        remembered = measure(OURS, args.runs + 1, env)[1:]  # the first run fills the cache
        manifest = os.path.join(tmp, "manifest.json")
        subprocess.run(
            [sys.executable, "-m", "triton_toolchain", "lock", "-o", manifest],
            env=env,
            capture_output=True,
            check=True,
        )
        with_manifest = {**env, "TRITON_TOOLCHAIN_MANIFEST": manifest}
        from_manifest = measure(OURS, args.runs, with_manifest)
        after_triton, off = [], []  # interleaved: the machine's drift hits both alike
        for _ in range(args.runs):
            after_triton.append(once(AFTER_TRITON, with_manifest))
            off.append(float(last_line(TIMED.format(module="triton"), env)))
    scale = statistics.median(off) * 1000 / ISSUE_OFF_MS

    rows = [
        ("Triton's own lookups", triton),
        ("triton-toolchain, discovery", discovery),
        ("  ... tools' answers remembered", remembered),
        ("triton-toolchain, manifest", from_manifest),
    ]
    base_cold, base_warm = median_ms(triton, "cold"), median_ms(triton, "warm")
    print(f"median of {args.runs} fresh interpreters each; ratio = ours / Triton's")
    print(f"{'':32} {'cold ms':>9} {'ratio':>7} {'warm ms':>9} {'ratio':>8}")
    for name, res in rows:
        cold, warm = median_ms(res, "cold"), median_ms(res, "warm")
        print(
            f"{name:32} {cold:9.2f} {cold / base_cold:7.2f} {warm:9.3f} "
            f"{warm / base_warm if base_warm else float('nan'):8.1f}"
        )
    print(
        f"import triton_toolchain (once per process): {median_ms(discovery, 'import'):.1f} ms; "
        f"the resolver's modules (loaded by the first resolve()): "
        f"{median_ms(discovery, 'loaded'):.1f} ms"
    )
    parts = ("import", "loaded", "cold")
    whole = 1000 * statistics.median(sum(float(r[k]) for k in parts) for r in from_manifest)  # type: ignore[arg-type]
    print(f"resolve() from a manifest in a bare interpreter, its imports included: {whole:.1f} ms")
    took = median_ms(after_triton, "loaded")
    verdict = "met" if took <= MANIFEST_AFTER_TRITON_MS * scale else "MISSED"
    print(
        f"resolve() from a manifest after `import triton`, its imports included: {took:.1f} ms "
        f"here, {took / scale:.1f} ms at the targets' machine (this one: import triton off "
        f"{statistics.median(off) * 1000:.1f} ms, {scale:.2f} x; target "
        f"{MANIFEST_AFTER_TRITON_MS:g} ms there: {verdict}; manifest "
        f"{after_triton[-1]['manifest']})"
    )
    last = from_manifest[-1]
    print(
        f"manifest resolution: processes started {last['processes']}, "
        f"pyelftools imported: {last['elftools']}, manifest {last['manifest']}"
    )
    print(
        f"discovery: processes started {discovery[-1]['processes']}, "
        f"missing {discovery[-1]['missing']}"
    )
    if verdict != "met":
        sys.exit(1)


if __name__ == "__main__":
    main()
