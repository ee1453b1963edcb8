"""What the trust checks cost: resolution from a manifest, from remembered answers and
from the activation record, against Triton's own lookups, measured in the same run.

Every path the shim runs, loads or reads is walked component by component for its
owner and mode (``_trust``), files are opened without blocking and read with a bound,
and remembered answers are keyed by the file's change time. This script measures, in
fresh interpreters interleaved round by round (so that drift hits every row alike):

- Triton's own lookups (``libcuda_dirs()``: ``/sbin/ldconfig -p``; the four tool knobs,
  each running ``--version``; its compiler lookup): the baseline;
- ``resolve()`` from a manifest with recorded versions (no process, no ELF reader),
  its modules loaded before the clock starts (``import triton_toolchain`` loads none of
  them; ``bench/resolve.py`` times that load);
- ``resolve()`` by discovery with the tools' answers remembered (every process after
  the first);
- the activation record's hit (what ``import triton`` pays when nothing changed: every
  recorded fact, trust walks included, observed again);

and, inside each of ours, the time spent in the trust walks and how many were made.

Usage: python bench/hardening.py [--runs N]   (needs triton and triton_toolchain)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from activation import user_environ

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resolve import TRITON, driver_stand_in, median_ms, once

TIMED = r"""
import json, sys, time
from triton_toolchain.runtime import _record
walks = [0, 0.0]
trust = _record.OPS["trust"]
def timed(path, looks=None):
    t = time.perf_counter()
    try:
        return trust(path, looks)
    finally:
        walks[0] += 1
        walks[1] += time.perf_counter() - t
_record.OPS["trust"] = timed
"""

RESOLVE = (
    TIMED
    + r"""
import triton_toolchain, triton_toolchain.resolver._resolve  # the resolver, loaded on first use
t = time.perf_counter(); tc = triton_toolchain.resolve(); cold = time.perf_counter() - t
print(json.dumps({"cold": cold, "walks": walks[0], "walk_s": walks[1],
                  "manifest": tc.manifest}))
"""
)

RECORD = (
    TIMED
    + r"""
from triton_toolchain import runtime
from triton_toolchain.runtime import _activate
t = time.perf_counter(); plan = _activate.resolved_plan(None); cold = time.perf_counter() - t
hit = _record.lookup(_record.identity(None), runtime.user_environ()) is not None
print(json.dumps({"cold": cold, "walks": walks[0], "walk_s": walks[1], "hit": hit}))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = user_environ()  # byte code written, as users' interpreters write it
    with tempfile.TemporaryDirectory() as tmp:
        env["LD_LIBRARY_PATH"] = driver_stand_in(tmp)
        env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        off = {**env, "TRITON_TOOLCHAIN": "off"}
        manifest = os.path.join(tmp, "manifest.json")
        subprocess.run(
            [sys.executable, "-m", "triton_toolchain", "lock", "-o", manifest],
            env=off,
            capture_output=True,
            check=True,
        )
        with_manifest = {**off, "TRITON_TOOLCHAIN_MANIFEST": manifest}
        once(RESOLVE, off)  # the tools' answers are remembered from here on
        once(RECORD, env)  # the activation record is written
        rows: dict[str, list[dict[str, object]]] = {
            "Triton's own lookups": [],
            "manifest, recorded versions": [],
            "discovery, answers remembered": [],
            "activation record hit": [],
        }
        for _ in range(args.runs):
            rows["Triton's own lookups"].append(once(TRITON, off))
            rows["manifest, recorded versions"].append(once(RESOLVE, with_manifest))
            rows["discovery, answers remembered"].append(once(RESOLVE, off))
            rows["activation record hit"].append(once(RECORD, env))
    assert all(r["hit"] for r in rows["activation record hit"]), "the record was not used"
    base = median_ms(rows["Triton's own lookups"], "cold")
    print(f"median of {args.runs} fresh interpreters each, interleaved; ratio = row / Triton's")
    print(f"{'':32} {'ms':>8} {'ratio':>7} {'trust walks':>12} {'walk ms':>9} {'share':>7}")
    for name, results in rows.items():
        ms = median_ms(results, "cold")
        if "walks" in results[0]:
            walks = statistics.median(int(r["walks"]) for r in results)  # type: ignore[call-overload]
            walk_ms = median_ms(results, "walk_s")
            extra = f"{walks:12.0f} {walk_ms:9.2f} {walk_ms / ms:7.0%}"
        else:
            extra = ""
        print(f"{name:32} {ms:8.2f} {ms / base:7.2f} {extra}")


if __name__ == "__main__":
    main()
