"""Where the time in the shim goes when ``import triton`` (or ``import torch``) finds a
valid activation record: each phase of the fast path, and the record's facts by kind.

Cases as in ``bench/activation.py``: ``manifest`` (a manifest from ``triton-toolchain
lock``) and ``discovery`` (no manifest; the record of an earlier process). Each run is
a fresh interpreter with the standard modules the import loads anyway loaded first;
the phases are timed by wrapping the shim's functions in it:

- ``import``: the shim's modules the hook imports first (the package and ``_activate``,
  with ``runtime``, ``_record`` and ``_trust``);
- ``maps``: reading ``/proc/self/maps`` for a driver already mapped;
- ``record``: reading the record file and decoding its entries;
- ``verify``: observing every fact of the matching record again;
- ``driver``: loading the driver by absolute path (where the machine has one);
- ``apply``: importing the adapter and applying to Triton or torch;
- ``total``: everything the hook did, all of the above included.

Then, in one more interpreter (the import made first, the shim off), each fact of the
record is observed once more, alone, and the time is summed by kind (``stat``, ``trust``
walks, ``package`` lookups, ...).

Usage: ``python bench/fast_path.py [--runs 15] [--module triton|torch]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from activation import last_line, make_cases, stdlib_loaded_by, user_environ

# What a phase script starts with: the standard modules the import loads anyway, then
# ``spent`` (phase -> seconds), ``add`` and ``timed`` (a function of a module, wrapped to
# add its time to a phase). A ``str.format`` template of ``preload`` (shared with
# ``bench/cold_path.py``).
PRELUDE = r"""
import contextlib, importlib, json, sys, time
for name in {preload!r}:
    try:
        importlib.import_module(name)
    except Exception:
        pass
clock = time.perf_counter
spent = {{}}

def add(phase, began):
    spent[phase] = spent.get(phase, 0.0) + clock() - began

def timed(module, name, phase):
    original = getattr(module, name)
    def wrapper(*args, **kwargs):
        began = clock()
        try:
            return original(*args, **kwargs)
        finally:
            add(phase, began)
    setattr(module, name, wrapper)
"""
# The phases of a hit, after ``PRELUDE``; ``module`` is imported last.
PHASES = r"""
start = clock()
import triton_toolchain.runtime._activate as activation
from triton_toolchain.runtime import _record
spent["import"] = clock() - start

for module, name, phase in [
    (activation, "loaded_drivers", "maps"), (_record, "stored", "record"),
    (_record, "verify", "verify"), (activation, "preload_driver", "driver"),
    (activation, "_apply_triton", "apply"), (activation, "_apply_torch", "apply"),
    (activation, "_notify", "total"),
]:
    timed(module, name, phase)
spent["total"] = spent["import"]
import {module}
print(json.dumps({{k: v * 1000 for k, v in spent.items()}}))
"""

BY_KIND = r"""
import json, os, sys, time
import {module}  # with the shim off: the import system's caches as on the hit path
import triton_toolchain.runtime._activate as activation
from triton_toolchain.runtime import _record, _trust
environ = activation.user_environ()
parts = activation.AT_TORCH if "{module}" == "torch" else activation.AT_TRITON
key = _record.identity(None, " ".join(parts))
facts = next(r["facts"] for r in _record.stored(environ) if r["key"] == key)
looks, spent, count = _trust.Looks(), {{}}, {{}}
for op, arg, value in facts:
    began = time.perf_counter()
    now = environ.get(arg) if op == "env" else _record._plain(_record.OPS[op](arg, looks))
    spent[op] = spent.get(op, 0.0) + time.perf_counter() - began
    count[op] = count.get(op, 0) + 1
    assert now == value, (op, arg)
print(json.dumps({{op: [count[op], spent[op] * 1000] for op in spent}}))
"""

ORDER = ("import", "maps", "record", "verify", "driver", "apply", "total")


def phase_times(
    code: str, cases: dict[str, dict[str, str]], runs: int, order: tuple[str, ...], *, cold: bool
) -> dict[str, dict[str, list[float]]]:
    """Each case's milliseconds per phase (``order``) printed by ``code`` (a phase script)
    in ``runs`` fresh interpreters, the cases interleaved, after a round that warms up
    (and, unless ``cold``, writes the record); ``cold``: the case's home emptied first."""
    phases: dict[str, dict[str, list[float]]] = {case: {} for case in cases}
    for round_ in range(runs + 1):
        for case, env in cases.items():
            if cold:
                shutil.rmtree(env["HOME"], ignore_errors=True)
            seen = json.loads(last_line(code, env))
            for phase in order:
                if round_:
                    phases[case].setdefault(phase, []).append(seen.get(phase, 0.0))
    return phases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--module", choices=("triton", "torch"), default="triton")
    args = parser.parse_args()
    base = user_environ()
    preload = stdlib_loaded_by(args.module, {**base, "TRITON_TOOLCHAIN": "off"})
    with tempfile.TemporaryDirectory() as tmp:
        cases = {k: v for k, v in make_cases(tmp, base).items() if k in ("manifest", "discovery")}
        code = (PRELUDE + PHASES).format(preload=preload, module=args.module)
        phases = phase_times(code, cases, args.runs, ORDER, cold=False)
        print(f"import {args.module}, a record hit: median ms of {args.runs} fresh interpreters")
        print(f"  {'':9} " + " ".join(f"{p:>7}" for p in ORDER))
        for case in cases:
            row = " ".join(f"{statistics.median(phases[case][p]):7.2f}" for p in ORDER)
            print(f"  {case:9} {row}")
        for case, env in cases.items():
            by_kind = BY_KIND.format(module=args.module)
            kinds = json.loads(last_line(by_kind, {**env, "TRITON_TOOLCHAIN": "off"}))
            facts = sum(n for n, _ in kinds.values())
            print(f"  {case} record: {facts} facts, observed again one by one:")
            for op, (n, ms) in sorted(kinds.items(), key=lambda item: -item[1][1]):
                print(f"    {op:10} {n:4d} facts {ms:7.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
