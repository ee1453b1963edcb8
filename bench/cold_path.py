"""Where the time in the shim goes when ``import triton`` (or ``import torch``) finds
no activation record: the first process on a machine, or in a fresh container.

Cases as in ``bench/activation.py``: ``manifest-cold`` (a manifest from ``triton-toolchain
lock``, an empty cache) and ``miss`` (no manifest, an empty cache). Each run is a fresh
interpreter with the standard modules the import loads anyway loaded first, and an empty
home; the phases are timed by wrapping the shim's functions in it:

- ``shim``: the shim's modules the hook imports first (as on a hit);
- ``resolver``: the resolver's modules (``_plan`` and what it imports, ``_observe``),
  which the hook imports on a miss;
- ``lock``: taking the lock that lets one process of a cache resolve at a time;
- ``host``: what the resolution knows of this process (``Host.current``: the
  interpreter, the machine, Triton's and torch's versions, ``/proc/self/maps``);
- ``manifest``: finding and reading the manifest (``_manifest.load_for``);
- ``ask``: the tools asked at once before the search (``_resolve._ask_ahead``);
- one column per component group: judging its candidates (``_resolve._Cascade.run``):
  ``tools`` (the ptxas family), ``cc``, ``headers`` (Python's, CUDA's, libdevice),
  ``driver`` (``libcuda`` and its link directory), ``torch`` (torch's part, for ``import
  torch``);
- ``plan``: the plan made of the resolution (``_plan.plan_of``);
- ``store``: writing the activation record;
- ``load``: loading the driver by absolute path (where the machine has one);
- ``apply``: importing the adapter and applying to Triton or torch;
- ``total``: everything the hook did, the imports above included.

Usage: ``python bench/cold_path.py [--runs 9] [--module triton|torch]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from activation import make_cases, stdlib_loaded_by, user_environ
from fast_path import PRELUDE, phase_times

# Component -> the column it is timed in.
GROUPS = {
    "ptxas": "tools",
    "ptxas-blackwell": "tools",
    "cuobjdump": "tools",
    "nvdisasm": "tools",
    "cc": "cc",
    "python-headers": "headers",
    "cuda-headers": "headers",
    "cuda-crt-headers": "headers",
    "libdevice": "headers",
    "libcuda": "driver",
    "libcuda-link": "driver",
}
ORDER = ("shim", "resolver", "lock", "host", "manifest", "ask", "tools", "cc", "headers")
ORDER += ("driver", "torch", "plan", "store", "load", "apply", "total")

# The phases of a first process, after ``fast_path.PRELUDE``; ``module`` is imported last.
PHASES = r"""
start = clock()
import triton_toolchain.runtime._activate as activation
spent["shim"] = clock() - start
start = clock()
from triton_toolchain.resolver import _observe, _plan, _resolve
spent["resolver"] = clock() - start
groups = {groups!r}

for module, name, phase in [
    (_resolve, "_ask_ahead", "ask"), (_observe, "store", "store"),
    (_plan.Host, "current", "host"), (_resolve, "load_for", "manifest"),
    (_plan, "plan_of", "plan"),
    (activation, "preload_driver", "load"), (activation, "_apply_triton", "apply"),
    (activation, "_apply_torch", "apply"), (activation, "_notify", "total"),
]:
    timed(module, name, phase)

run = _resolve._Cascade.run
def cascade(self):
    began = clock()
    try:
        return run(self)
    finally:
        add(groups.get(self.spec.name, "torch"), began)
_resolve._Cascade.run = cascade

alone = _observe.resolving_alone
@contextlib.contextmanager
def resolving_alone(environ):
    began = clock()
    with alone(environ):
        add("lock", began)
        yield
_observe.resolving_alone = resolving_alone

spent["total"] = spent["shim"] + spent["resolver"]
import {module}
print(json.dumps({{k: v * 1000 for k, v in spent.items()}}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--module", choices=("triton", "torch"), default="triton")
    args = parser.parse_args()
    base = user_environ()
    preload = stdlib_loaded_by(args.module, {**base, "TRITON_TOOLCHAIN": "off"})
    with tempfile.TemporaryDirectory() as tmp:
        cases = {k: v for k, v in make_cases(tmp, base).items() if k in ("manifest-cold", "miss")}
        code = (PRELUDE + PHASES).format(preload=preload, module=args.module, groups=GROUPS)
        phases = phase_times(code, cases, args.runs, ORDER, cold=True)
    print(f"import {args.module}, an empty cache: median ms of {args.runs} fresh interpreters")
    print(f"  {'':13} " + " ".join(f"{p:>8}" for p in ORDER))
    for case in cases:
        row = " ".join(f"{statistics.median(phases[case][p]):8.2f}" for p in ORDER)
        print(f"  {case:13} {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
