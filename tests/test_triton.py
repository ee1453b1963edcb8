"""The Triton adapter (``runtime/_triton.py``) on the installed Triton (3.4 and newer,
which have knobs; ``test_activate`` runs the older ones):
a plan resolved on this machine applied by hand, in a fresh interpreter with the hook off
(``TRITON_TOOLCHAIN=off``), so that only what the test applies is applied. The knobs of
each backend of ``runtime.BACKENDS`` present, a user's knob and variable kept, a second
application not fooled by what the first wrote, the driver's lookups per backend."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hostile import clean_env, run
from triton_layouts import nvidia_dir
from triton_toolchain.runtime import BACKENDS

PRELUDE = """
import json, os, sys
import triton
import triton.backends.nvidia.compiler, triton.backends.nvidia.driver
from triton_toolchain.resolver._plan import plan_of
from triton_toolchain.resolver._resolve import resolve_all
from triton_toolchain.runtime import _triton
from triton_toolchain.runtime import Report

knobs = triton.knobs
plan = plan_of(resolve_all())
state, env = _triton.TritonState(), {}

def apply(plan=plan):
    report = Report()
    mode = _triton.apply(lambda: plan, state, env, report)
    return {"mode": mode, "applied": report.applied, "kept": report.kept}

def assigned(group):
    return {k: v for k, v in vars(getattr(knobs, group)).items() if not k.startswith("_")}
"""


def _run(tmp_path: Path, code: str, *argv: str, **extra: str) -> dict[str, Any]:
    """``code`` after ``PRELUDE`` in a fresh interpreter with the hook off: its JSON."""
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN="off", **extra)
    done = run([sys.executable, "-c", PRELUDE + code, *argv], env).clean()
    assert done.returncode == 0, done.output
    got: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return got


APPLIED = """
amd_before = assigned("amd")
first = apply()
print(json.dumps({
    "first": first, "settings": plan["settings"], "nvidia": assigned("nvidia"),
    "amd": [amd_before, assigned("amd")], "impl": repr(knobs.build.impl),
    "environ": dict(os.environ), "env": env,
    "compiler": [w for w, _ in _triton.namespaces("compiler")],
}))
"""


def test_the_knobs_of_the_backend_present_are_applied(tmp_path: Path) -> None:
    got = _run(tmp_path, APPLIED)
    assert got["first"]["mode"] == "knobs"
    given = [s for s in got["settings"] if s["knob"] and s["value"] and not s["user"]]
    # The plan made at the import holds NVIDIA's knobs; the AMD backend's HIP runtime
    # is resolved at its own lookup (``_triton.hip_lookup``), never at the import.
    assert {s["knob"].partition(".")[0] for s in given} == {"nvidia"}
    assert set(BACKENDS) == {"nvidia", "amd"}
    for s in given:
        attr = s["knob"].partition(".")[2]
        assert got["nvidia"][attr] == s["value"], s
        assert got["first"]["applied"][f"knobs.{s['knob']}"] == s["value"], s
        assert got["environ"][s["variable"]] == got["env"][s["variable"]] == s["value"], s
    # Triton's AMD backend is installed too: its knobs untouched, its lookup replaced.
    assert got["amd"][0] == got["amd"][1]
    lookup = "patch:triton.backends.amd.driver._get_path_to_hip_runtime_dylib"
    assert lookup in got["first"]["applied"]
    assert got["impl"] == "<triton_toolchain launcher build>"
    assert got["first"]["applied"]["knobs.build.impl"] == got["impl"]
    assert got["compiler"] == ["triton.backends.nvidia.compiler", "triton.backends.amd.compiler"]
    assert "patch:triton.backends.nvidia.compiler.get_ptxas" in got["first"]["applied"]


KEPT = """
knobs.nvidia.ptxas = sys.argv[1]
first = apply()
print(json.dumps({
    "first": first, "nvidia": assigned("nvidia"),
    "libdevice": os.environ.get("TRITON_LIBDEVICE_PATH"), "env": env,
}))
"""


def test_a_users_knob_and_variable_are_kept(tmp_path: Path) -> None:
    libdevice = tmp_path / "mine/libdevice.10.bc"
    libdevice.parent.mkdir()
    libdevice.write_bytes((nvidia_dir() / "lib/libdevice.10.bc").read_bytes())
    mine = str(tmp_path / "my-ptxas")
    got = _run(tmp_path, KEPT, mine, TRITON_LIBDEVICE_PATH=str(libdevice))
    kept = got["first"]["kept"]
    assert kept["knobs.nvidia.ptxas"] == "assigned by the user"
    assert got["nvidia"]["ptxas"] == mine
    assert kept["knobs.nvidia.libdevice_path"] == "TRITON_LIBDEVICE_PATH set by the user"
    assert "libdevice_path" not in got["nvidia"]  # Triton reads the user's variable
    assert got["libdevice"] == str(libdevice) and "TRITON_LIBDEVICE_PATH" not in got["env"]
    assert "knobs.nvidia.ptxas" not in got["first"]["applied"]


AGAIN = """
first = apply()
second = apply()
knobs.nvidia.ptxas = sys.argv[1]
third = apply()
print(json.dumps({"runs": [first, second, third], "nvidia": assigned("nvidia"),
                  "ours": sorted(state.knobs)}))
"""


def test_a_second_application_is_not_fooled(tmp_path: Path) -> None:
    """The knobs the first application assigned are its own to the second (applied
    again, not kept as the user's); one the user assigns after is kept by the third."""
    mine = str(tmp_path / "my-ptxas")
    got = _run(tmp_path, AGAIN, mine)
    first, second, third = got["runs"]
    assert "knobs.nvidia.ptxas" in first["applied"]
    assert second["applied"] == first["applied"]
    assert not any(k.startswith("knobs.") for k in second["kept"]), second
    assert third["kept"]["knobs.nvidia.ptxas"] == "assigned by the user"
    assert got["nvidia"]["ptxas"] == mine and "nvidia.ptxas" not in got["ours"]


DRIVERS = """
module = triton.backends.nvidia.driver
has = hasattr(module, "_cuda_driver_is_active")  # not in every release (3.6 has none)
original = getattr(module, "_cuda_driver_is_active", None)
none = {**plan, "drivers": {"nvidia": {"library": None, "link": None, "user": False}}}
without = apply(none)
probe = module._cuda_driver_is_active() if has else None
patched = has and module._cuda_driver_is_active is not original
found = {**plan, "drivers": {"nvidia": {"library": sys.argv[1], "link": None, "user": False}}}
with_one = apply(found)
restored = getattr(module, "_cuda_driver_is_active", None) is original
print(json.dumps({"has": has, "without": without, "probe": probe, "patched": patched,
                  "restored": restored, "with": with_one}))
"""


def test_a_backend_without_a_driver_gets_the_explaining_lookups(tmp_path: Path) -> None:
    """No driver for the backend (``plan["drivers"]``): its by-name probe answers no
    and ``libcuda_dirs`` explains; a driver found puts Triton's own back."""
    got = _run(tmp_path, DRIVERS, str(tmp_path / "libcuda.so.1"))
    where = "patch:triton.backends.nvidia.driver"
    if got["has"]:  # the release probes the driver by bare name: answered no
        assert got["without"]["applied"][f"{where}._cuda_driver_is_active"] == (
            "no driver found: nothing loads libcuda.so.1 by bare name"
        )
        assert got["patched"] is True and got["probe"] is False
    else:  # nothing to patch where the release has no such probe
        assert f"{where}._cuda_driver_is_active" not in got["without"]["applied"]
    assert f"{where}.libcuda_dirs" in got["without"]["applied"]
    assert got["restored"] is True
    assert f"{where}._cuda_driver_is_active" not in got["with"]["applied"]
    assert f"{where}.libcuda_dirs" not in got["with"]["applied"]
