"""Do no harm, on every Triton release: the same work with the shim off and on has the
same outcome, and ``doctor`` agrees with what happened.

Runs against the installed Triton: 3.9 in the ``tests`` session, and every other minor
release from 3.0 in its own ``triton-3.X`` nox session (``noxfile.ALL_TRITONS``). Each
case runs a fresh interpreter (``scenario.py``):

- ahead-of-time compiles for sm_80 and sm_90 (``GPUTarget``), where the shim finds the
  toolchain itself on this machine, as after a plain ``pip install``;
- Triton building and loading its ``cuda_utils`` launcher module against a stand-in
  driver that the user points to (``TRITON_LIBCUDA_PATH`` and ``LD_LIBRARY_PATH``);
- ``doctor --for compile`` (and ``--arch``): ready exactly where the compile worked.

Also the catalog's row of the installed release against its own code: how it finds
ptxas (``get_ptxas`` and its signature), its knobs, and from which architecture it runs
ptxas-blackwell. A check of the shim's that fails with anything but its own errors is
an ``AdapterBugWarning``, an error in every scenario here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import driver_standin
import pytest
from tool_fixtures import fake_ptxas
from triton_layouts import SRC, Layout, nvidia_dir, run_scenario, scenario_env, triton_version
from triton_toolchain.resolver._catalog import TRITON_RELEASES, triton_release

ARCHS = (80, 90)
COMPILES = [f"compile:{arch}" for arch in ARCHS]


def _outcome(result: dict[str, Any]) -> tuple[bool, str | None]:
    """What a user sees of an action: it worked, or the exception's type."""
    return bool(result["ok"]), None if result["ok"] else result["type"]


def _both(layout: Layout, actions: list[str], env: dict[str, str]) -> tuple[dict, dict]:
    """The scenario's report with the shim off (stock Triton) and on (the .pth hook),
    each with a Triton cache of its own: the second run compiles and builds itself,
    never loading what the first built."""
    off = run_scenario(
        layout, "none", actions, env={**env, "TRITON_CACHE_DIR": str(layout.root / "cache-off")}
    )
    on = run_scenario(
        layout, "hook", actions, env={**env, "TRITON_CACHE_DIR": str(layout.root / "cache-on")}
    )
    return off, on


def _discovery_env(root: Path) -> dict[str, str]:
    """No manifest and nothing set: the shim finds the toolchain on this machine."""
    layout = Layout(root, root / "ptxas.log")
    return scenario_env(layout, manifest=False)


def test_compiles_as_without_the_shim(tmp_path: Path) -> None:
    """Every ahead-of-time compile that works without the shim works with it, and the
    same cubin comes out (same ptxas, same PTX version), each run with its own cache."""
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    off, on = _both(layout, COMPILES, _discovery_env(tmp_path))
    for action in COMPILES:
        assert _outcome(on["results"][action]) == _outcome(off["results"][action]), (
            action,
            off["results"][action],
            on["results"][action],
        )
        assert on["results"][action]["ok"], on["results"][action]
        same = on["results"][action]["cubin_sha256"] == off["results"][action]["cubin_sha256"]
        assert same, (action, off["results"][action], on["results"][action])
    assert "AdapterBugWarning" not in on["stderr"], on["stderr"]
    assert on["activation"] is not None and on["activation"]["mode"] in ("knobs", "environ")


def test_builds_the_launcher_as_without_the_shim(tmp_path: Path) -> None:
    """Triton builds and loads ``cuda_utils`` against the driver the user named, with
    the shim as without it (the stand-in has the unversioned ``libcuda.so`` that
    ``-lcuda`` needs before Triton 3.9, as a driver's development files give)."""
    driver = driver_standin.driver(tmp_path / "driver", marker="user").parent
    (driver / "libcuda.so").symlink_to("libcuda.so.1")
    env = _discovery_env(tmp_path)
    env.update(TRITON_LIBCUDA_PATH=str(driver), LD_LIBRARY_PATH=str(driver))
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    off, on = _both(layout, ["cuda_utils"], env)
    assert _outcome(on["results"]["cuda_utils"]) == _outcome(off["results"]["cuda_utils"])
    assert on["results"]["cuda_utils"]["ok"], on["results"]["cuda_utils"]
    assert on["standin_markers"] == off["standin_markers"] == ["user"]
    assert "AdapterBugWarning" not in on["stderr"], on["stderr"]


def _doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--for", "compile", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("arch", [None, *ARCHS])
def test_doctor_says_ready_where_the_compile_works(tmp_path: Path, arch: int | None) -> None:
    """``doctor --for compile`` exits 0 exactly where Triton, with the shim, compiles
    (for every architecture tried, or the one asked), and names no component the
    installed release never runs."""
    env = _discovery_env(tmp_path)
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    actions = COMPILES if arch is None else [f"compile:{arch}"]
    on = run_scenario(layout, "hook", actions, env=env)
    compiled = all(on["results"][a]["ok"] for a in actions)
    done = _doctor(env, *(("--arch", str(arch)) if arch else ()))
    assert done.returncode == (0 if compiled else 1), (on["results"], done.stdout, done.stderr)
    row = triton_release(triton_version())
    assert row is not None
    if not row.uses("ptxas-blackwell"):
        verdict_line = done.stdout.splitlines()[3]
        assert "ptxas-blackwell" not in verdict_line, done.stdout


def test_doctor_json_judges_only_what_the_release_runs(tmp_path: Path) -> None:
    """``doctor --json``: the compile step is ready, and nothing this release never runs
    is among what Triton refuses."""
    env = _discovery_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    doc = json.loads(done.stdout)
    assert doc["goals"]["triton"]["steps"]["compile"] is True, doc["goals"]["triton"]
    row = triton_release(triton_version())
    assert row is not None
    refused = " ".join(doc["refused_by_triton"])
    assert row.uses("ptxas-blackwell") or "ptxas-blackwell" not in refused, refused


# ------------------------------------------------------------------ the catalog's row

ROW_PROBE = """
import inspect, json, os, sys
from triton.backends.nvidia import compiler
plain, blackwell = sys.argv[1], sys.argv[2]
report = {"knobs": None, "lookup": "_path_to_binary", "runs": {}, "blackwell_variable": None}
try:
    from triton import knobs
except ImportError:
    knobs = None
if knobs is not None and hasattr(knobs, "nvidia") and hasattr(knobs, "build"):
    report["knobs"] = sorted(k for c in type(knobs.nvidia).__mro__ for k in vars(c))
    report["impl"] = hasattr(knobs.build, "impl")
get_ptxas = getattr(compiler, "get_ptxas", None)
if get_ptxas is not None:
    params = list(inspect.signature(get_ptxas).parameters)
    report["lookup"] = "get_ptxas(arch)" if params == ["arch"] else f"get_ptxas({','.join(params)})"
for arch in (80, 90, 100, 120):
    if report["lookup"] == "get_ptxas(arch)":
        tool = get_ptxas(arch)
    elif report["lookup"] == "get_ptxas()":
        tool = get_ptxas()
    else:
        tool = compiler._path_to_binary("ptxas")
    path = tool[0] if isinstance(tool, tuple) else tool.path
    report["runs"][arch] = path
if knobs is not None and "ptxas_blackwell" in (report["knobs"] or []):
    report["blackwell_variable"] = type(knobs.nvidia).__dict__["ptxas_blackwell"].key
print(json.dumps(report))
"""


def test_the_catalog_row_is_what_the_installed_release_does(tmp_path: Path) -> None:
    """The row of ``TRITON_RELEASES`` for the installed Triton, against its code: the
    knobs, how it finds ptxas, from which target it runs ptxas-blackwell and the
    variable that names it (given distinct programs through each release's variables)."""
    row = triton_release(triton_version())
    assert row is not None and row in TRITON_RELEASES
    plain = fake_ptxas(tmp_path / "plain", "12.8")
    blackwell = fake_ptxas(tmp_path / "blackwell", "12.8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON")}
    env.update(TRITON_TOOLCHAIN="off", PYTHONPATH=str(SRC), TRITON_PTXAS_PATH=str(plain))
    if row.blackwell_variable:
        env[row.blackwell_variable] = str(blackwell)
    done = subprocess.run(
        [sys.executable, "-c", ROW_PROBE, str(plain), str(blackwell)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert (report["knobs"] is not None) == row.knobs, report
    assert report["lookup"] == row.ptxas_lookup, report
    for arch, path in report["runs"].items():
        switch = row.blackwell_from
        expected = blackwell if switch is not None and int(arch) >= switch else plain
        assert path == str(expected), (arch, path, row)
    if row.knobs:
        assert report["blackwell_variable"] == row.blackwell_variable, report
        for attr in ("ptxas", "cuobjdump", "nvdisasm", "libdevice_path", "libcuda_path"):
            assert attr in report["knobs"], (attr, report["knobs"])
    assert (nvidia_dir() / "bin" / "ptxas-blackwell").exists() == row.uses("ptxas-blackwell")


# ------------------------------------------------------------ a failing adapter


def test_a_failing_check_never_breaks_tritons_lookup() -> None:
    """The wrapper around ``get_ptxas``, whatever the signature Triton gives it, returns
    what Triton's own returns when a check of the shim's fails with something other than
    its own errors (here a plan without its keys): one ``AdapterBugWarning``, which the
    scenarios above turn into an error."""
    import warnings

    from triton_toolchain.runtime._errors import AdapterBugWarning
    from triton_toolchain.runtime._triton import guard_get_ptxas

    def broken_plan() -> dict[str, Any]:
        return {}

    def with_arch(arch: int) -> tuple[str, str]:
        return ("/triton/bin/ptxas", f"12.8 for {arch}")

    def without_arch() -> tuple[str, str]:
        return ("/triton/bin/ptxas", "12.8")

    for original, args in ((with_arch, (90,)), (without_arch, ())):
        guarded = guard_get_ptxas(original, broken_plan, {})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert guarded(*args) == original(*args)
        # One per check: the settings, the release (``_guards``), the fit (``_fit``).
        assert [w.category for w in caught] == [AdapterBugWarning] * 3
        with warnings.catch_warnings():
            warnings.simplefilter("error", AdapterBugWarning)
            with pytest.raises(AdapterBugWarning, match="KeyError"):
                guarded(*args)
