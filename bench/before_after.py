"""Two or more versions of the shim against each other, in one run: the time spent in
the shim by ``import triton`` on a warm hit (``bench/activation.py``'s "in the shim",
its ``manifest`` and ``discovery`` cases, loading the driver left out; with ``--cold``
also its ``manifest-cold`` and ``miss`` cases, an empty cache every run; with
``--resolve`` also ``resolve()`` from a manifest after ``import triton``, its imports
included, as ``bench/resolve.py`` times its target), each version
installed in its own interpreter's environment, every run of every version interleaved
so that the machine's drift hits them alike. Each figure is also scaled, as ``activation.py``
scales it, to the machine the targets were set on (``import triton`` with the shim off
in 122.5 ms, timed here with the first interpreter).

Usage: ``python bench/before_after.py [--runs 21] [--cold] [--resolve] NAME=PYTHON ...``, e.g.
``before=/tmp/old/bin/python after=.venv/bin/python``. An older layout of the package
(its hook in ``triton_toolchain._activate``) is found as well as this one's.
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

from activation import (
    COLD,
    INSIDE,
    ISSUE_OFF_MS,
    TIMED,
    last_line,
    stdlib_loaded_by,
    user_environ,
)
from resolve import AFTER_TRITON, driver_stand_in

HOOKS = ("triton_toolchain.runtime._activate", "triton_toolchain._activate")
FIND_HOOK = f"""
import importlib
for name in {HOOKS!r}:
    try:
        importlib.import_module(name)
    except ImportError:
        continue
    print(name)
    break
"""


Cases = dict[tuple[str, str], tuple[str, str, dict[str, str]]]


def cases_of(
    versions: list[list[str]], base: dict[str, str], tmp: str, cold: bool, resolve: bool
) -> Cases:
    """(version, case) -> (its interpreter, its hook's module, the case's environment)."""
    # resolve.py's setting for resolve(): a driver stand-in on LD_LIBRARY_PATH, locked.
    drivers = {"LD_LIBRARY_PATH": driver_stand_in(tmp)} if resolve else {}
    cases: Cases = {}
    for name, python in versions:
        home = os.path.join(tmp, name)
        manifest = os.path.join(home, "manifest.json")
        os.makedirs(home)
        lock = [python, "-m", "triton_toolchain", "lock", "-o"]
        # (``lock`` exits 1 where a component is missing, a driver on this machine,
        # and writes the manifest all the same.)
        env = {**base, "HOME": home}
        subprocess.run([*lock, manifest], env=env, check=False, capture_output=True)
        hook = last_line(FIND_HOOK, base, python)
        manifest_env = {**base, "HOME": f"{home}/m", "TRITON_TOOLCHAIN_MANIFEST": manifest}
        cases[name, "manifest"] = (python, hook, manifest_env)
        cases[name, "discovery"] = (python, hook, {**base, "HOME": f"{home}/d"})
        if cold:
            cases[name, "manifest-cold"] = (python, hook, {**manifest_env, "HOME": f"{home}/mc"})
            cases[name, "miss"] = (python, hook, {**base, "HOME": f"{home}/x"})
        if resolve:
            locked = os.path.join(home, "with-driver.json")
            env = {**base, **drivers, "HOME": f"{home}/r", "TRITON_TOOLCHAIN": "off"}
            subprocess.run([*lock, locked], env=env, check=True, capture_output=True)
            cases[name, "resolve"] = (python, hook, {**env, "TRITON_TOOLCHAIN_MANIFEST": locked})
    return cases


def once(case: str, python: str, hook: str, env: dict[str, str], preload: list[str]) -> float:
    """The ms one run of ``case`` spends in the shim."""
    if case == "resolve":
        return float(json.loads(last_line(AFTER_TRITON, env, python))["loaded"]) * 1000
    code = INSIDE.format(module="triton", preload=preload).replace(HOOKS[0], hook)
    spent, driver = last_line(code, env, python).split()
    return (float(spent) - float(driver)) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--cold", action="store_true", help="also the empty-cache cases")
    parser.add_argument("--resolve", action="store_true", help="also resolve() after Triton")
    parser.add_argument("versions", nargs="+", metavar="NAME=PYTHON")
    args = parser.parse_args()
    base = user_environ()
    versions = [v.split("=", 1) for v in args.versions]
    with tempfile.TemporaryDirectory() as tmp:
        cases = cases_of(versions, base, tmp, args.cold, args.resolve)
        preload = stdlib_loaded_by("triton", {**base, "TRITON_TOOLCHAIN": "off"})
        inside: dict[tuple[str, str], list[float]] = {key: [] for key in cases}
        off: list[float] = []
        for round_ in range(args.runs + 1):  # the first round writes the records
            for key, (python, hook, env) in cases.items():
                if key[1] in COLD:
                    shutil.rmtree(env["HOME"], ignore_errors=True)
                spent = once(key[1], python, hook, env, preload)
                if round_:
                    inside[key].append(spent)
            off_env = {**base, "TRITON_TOOLCHAIN": "off"}
            off_ms = float(last_line(TIMED.format(module="triton"), off_env, versions[0][1]))
            if round_:
                off.append(off_ms * 1000)
    scale = statistics.median(off) / ISSUE_OFF_MS
    print(
        f"import triton: median ms in the shim of {args.runs} interleaved runs "
        "(loading the driver left out, as activation.py leaves it; resolve: the call "
        "after `import triton`, its imports included; shim off "
        f"{statistics.median(off):.1f} ms, {scale:.2f} x the targets' machine)"
    )
    for name, python in versions:
        print(f"  {name}: {python} (its hook: {cases[name, 'manifest'][1]})")
    for (name, case), values in inside.items():
        median = statistics.median(values)
        low, _, high = statistics.quantiles(values) if len(values) > 1 else (median,) * 3
        print(
            f"  {name:12} {case:13} {median:6.2f} ms here, {median / scale:5.2f} ms there "
            f"(quartiles {low / scale:.2f}-{high / scale:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
