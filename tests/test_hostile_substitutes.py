"""Hostile corpus, silent substitutes: an explicit setting that fails its check stops
Triton's step with the shim's error at every compile (never Triton's bundled binary in
its place), and ``TRITON_TOOLCHAIN`` with a value the shim does not know is named, with
the values it knows.

Each case runs ``import triton`` in a fresh interpreter through the installed ``.pth``
hook, then compiles (or builds the launcher) several times for several targets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hostile import Plant, run
from triton_layouts import Layout, nvidia_dir, pth_dir, scenario_env

COMPILE = r"""
import json, site, sys
site.addsitedir(sys.argv[1])
import triton
if sys.argv[3] == "after":
    import triton_toolchain
    triton_toolchain.activate()
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton_toolchain.cli import _kernel
results = []
for step in json.loads(sys.argv[2]):
    try:
        if step == "launcher":
            from triton.backends.nvidia.driver import CudaUtils
            CudaUtils()
        else:
            src = ASTSource(_kernel.add_kernel, _kernel.SIGNATURE, constexprs=_kernel.CONSTEXPRS)
            triton.compile(src, target=GPUTarget("cuda", step, 32))
        results.append({"step": step, "ok": True})
    except Exception as exc:
        results.append({"step": step, "ok": False, "type": type(exc).__name__,
                        "message": str(exc)})
print(json.dumps(results))
"""


def _steps(
    tmp: Path, steps: list[object], *, when: str = "hook", **settings: str
) -> tuple[list[dict[str, object]], str]:
    layout = Layout(tmp, tmp / "ptxas.log")
    env = scenario_env(layout, manifest=False, **settings)
    argv = [sys.executable, "-c", COMPILE, str(pth_dir(tmp)), json.dumps(steps), when]
    done = run(argv, env, cwd=tmp, timeout=300)
    assert done.returncode == 0, done.output
    results: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results, done.stderr


def _bundled_runs_logged(tmp: Path) -> Plant:
    return Plant(tmp / "runs.log")


def _old_ptxas(tmp: Path, plant: Plant) -> str:
    return str(plant.ptxas(tmp / "tools" / "ptxas", "12.4"))


def _failing_ptxas(tmp: Path, plant: Plant) -> str:
    path = tmp / "tools" / "ptxas"
    path.parent.mkdir(parents=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {plant.log}\necho "libfoo missing" >&2\nexit 1\n')
    path.chmod(0o755)
    return str(path)


SETTINGS = {
    "blackwell-missing": ("TRITON_PTXAS_BLACKWELL_PATH", lambda t, p: "/nonexistent/ptxas"),
    "blackwell-relative": ("TRITON_PTXAS_BLACKWELL_PATH", lambda t, p: "bin/ptxas"),
    "blackwell-too-old": ("TRITON_PTXAS_BLACKWELL_PATH", _old_ptxas),
    "blackwell-exits-1": ("TRITON_PTXAS_BLACKWELL_PATH", _failing_ptxas),
    "ptxas-missing": ("TRITON_PTXAS_PATH", lambda t, p: "/nonexistent/ptxas"),
    "ptxas-exits-1": ("TRITON_PTXAS_PATH", _failing_ptxas),
    "ptxas-a-directory": ("TRITON_PTXAS_PATH", lambda t, p: str(t)),
    "libdevice-missing": ("TRITON_LIBDEVICE_PATH", lambda t, p: "/nonexistent/libdevice.10.bc"),
    "libdevice-not-bitcode": ("TRITON_LIBDEVICE_PATH", lambda t, p: sys.executable),
    "cuobjdump-missing": ("TRITON_CUOBJDUMP_PATH", lambda t, p: "/nonexistent/cuobjdump"),
}


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_a_wrong_compile_setting_stops_every_compile_with_the_shims_error(
    tmp_path: Path, case: str
) -> None:
    variable, make = SETTINGS[case]
    plant = _bundled_runs_logged(tmp_path)
    value = make(tmp_path, plant)  # type: ignore[no-untyped-call]
    results, stderr = _steps(tmp_path, [100, 90, 80, 100, 80], **{variable: value})
    for result in results:
        assert result["type"] == "SettingError", result
        message = str(result["message"])
        assert message.startswith(f"{variable}={value!r}: "), message
        assert f"unset {variable}" in message
    assert f"triton-toolchain: {variable}={value!r}" in stderr  # warned at import too
    assert [line for line in plant.runs() if "--version" not in line] == []


@pytest.mark.parametrize("when", ["hook", "after"])
def test_the_issues_case_blackwell_nonexistent_never_falls_back(tmp_path: Path, when: str) -> None:
    """``TRITON_PTXAS_BLACKWELL_PATH=/nonexistent/ptxas``: activation warned, then the
    kernel compiled with Triton's bundled ptxas-blackwell. Now every compile stops."""
    bundled = nvidia_dir() / "bin" / "ptxas-blackwell"
    assert bundled.exists()
    results, _ = _steps(
        tmp_path, [100, 100], when=when, TRITON_PTXAS_BLACKWELL_PATH="/nonexistent/ptxas"
    )
    assert [r["type"] for r in results] == ["SettingError", "SettingError"], results


@pytest.mark.parametrize(
    ("variable", "value"),
    [("CC", "/nonexistent/cc"), ("CC", "relative-cc"), ("TRITON_LIBCUDA_PATH", "/nonexistent")],
)
def test_a_wrong_build_setting_stops_every_launcher_build(
    tmp_path: Path, variable: str, value: str
) -> None:
    results, _ = _steps(tmp_path, ["launcher", "launcher"], **{variable: value})
    for result in results:
        assert result["type"] == "SettingError", result
        assert str(result["message"]).startswith(f"{variable}={value!r}: ")


def test_a_right_setting_for_one_component_leaves_others_compiling(tmp_path: Path) -> None:
    """The control: the same compile with the settings right succeeds."""
    ptxas = nvidia_dir() / "bin" / "ptxas"
    results, stderr = _steps(tmp_path, [80], TRITON_PTXAS_PATH=str(ptxas))
    assert results == [{"step": 80, "ok": True}], results
    assert "SettingError" not in stderr


# --------------------------------------------------------------- TRITON_TOOLCHAIN


SWITCH = r"""
import json, site, sys, warnings
warnings.simplefilter("always")
site.addsitedir(sys.argv[1])
import triton
from triton_toolchain.runtime import _activate
act = _activate.current()
print(json.dumps({"mode": act.mode if act else None}))
"""


@pytest.mark.parametrize(
    ("value", "mode", "warned"),
    [
        ("garbage", "knobs", True),
        ("enable", "knobs", True),
        ("2", "knobs", True),
        ("of", "knobs", True),
        ("\u00f6ff", "knobs", True),
        ("ON", "knobs", False),
        (" yes ", "knobs", False),
        ("1", "knobs", False),
        (" OFF ", None, False),
        ("No", None, False),
        ("0", None, False),
    ],
)
def test_triton_toolchain_values_are_named_or_obeyed(
    tmp_path: Path, value: str, mode: str | None, warned: bool
) -> None:
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False, TRITON_TOOLCHAIN=value)
    done = run([sys.executable, "-c", SWITCH, str(pth_dir(tmp_path))], env, timeout=120).clean()
    assert done.returncode == 0, done.output
    assert json.loads(done.stdout)["mode"] == mode
    named = "is not one of on, 1, true, yes (on) or off, 0, false, no (off)"
    assert (named in done.stderr) is warned, done.stderr
    if warned:
        assert f"TRITON_TOOLCHAIN={value.strip().lower()!r}" in done.stderr
        assert "the shim stays on" in done.stderr
