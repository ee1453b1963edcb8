"""activate() and the import hook, against the installed Triton (3.9 by default; the nox
sessions run this file against 3.6 and 3.3). Every scenario runs in a fresh interpreter
(``scenario.py``), so no activation leaks from one to the next."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from triton_layouts import (
    PTH,
    ROOT,
    blackwell_from,
    make_layout,
    nvidia_dir,
    old_ptxas,
    recording_tool,
    run_scenario,
    scenario_env,
    triton_version,
)
from triton_toolchain.runtime import _activate

KNOBS = triton_version() >= (3, 4)
EXPECTED_MODE = "knobs" if KNOBS else "environ"


def _wrapper_for(arch: int) -> str:
    return "bin-blackwell" if arch >= blackwell_from() else "bin-ptxas"


def test_pth_file_is_the_hook_line() -> None:
    assert PTH.read_text() == _activate.PTH_LINE + "\n"
    assert len(PTH.read_text().splitlines()) == 1


def test_hook_compiles_with_the_chosen_ptxas_for_each_target(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    report = run_scenario(layout, "hook", ["compile:80", "compile:90", "compile:100"])
    # The .pth installs a stub finder only; the package waits for `import triton`.
    assert report["meta_path"][0] == "_TritonToolchainStub"
    assert report["package_imported_before_triton"] is False
    assert report["activation"]["mode"] == EXPECTED_MODE
    for arch in (80, 90, 100):
        assert report["results"][f"compile:{arch}"]["ok"], report["results"]
    gpu_names = {80: "sm_80", 90: "sm_90a", 100: "sm_100a"}
    assert layout.ptxas_runs() == [(_wrapper_for(a), gpu_names[a]) for a in (80, 90, 100)]
    assert report["environ"]["TRITON_PTXAS_PATH"] == layout.components["ptxas"]
    if KNOBS:
        assert report["knobs"]["ptxas"] == layout.components["ptxas"]
        assert report["activation"]["applied"]["knobs.build.impl"]
    else:
        assert (
            report["activation"]["applied"]["env:TRITON_PTXAS-BLACKWELL_PATH"]
            == (layout.components["ptxas-blackwell"])
        )


def test_hook_leaves_triton_its_own_loader(tmp_path: Path) -> None:
    report = run_scenario(make_layout(tmp_path), "hook", [])
    assert report["loaders"] == ["SourceFileLoader", "SourceFileLoader"]
    assert report["meta_path"][0] == "_TritonToolchainStub"


def test_a_broken_manifest_warns_but_never_breaks_import_triton(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    layout.manifest.write_text('{"schema": 7, "components": {}}')
    report = run_scenario(layout, "hook", ["compile:80"])
    assert "RuntimeWarning" in report["stderr"] and "ManifestError" in report["stderr"]
    assert report["activation"] is None
    assert report["results"]["compile:80"]["ok"]


def test_stock_triton_ignores_the_manifest(tmp_path: Path) -> None:
    """The contrast: without the shim, Triton runs its bundled ptxas, not the wrapper."""
    layout = make_layout(tmp_path)
    report = run_scenario(layout, "none", ["compile:80"])
    assert report["results"]["compile:80"]["ok"]
    assert report["activation"] is None
    assert layout.ptxas_runs() == []


def test_explicit_activation_before_import_waits_for_triton(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    report = run_scenario(layout, "explicit-before", ["compile:90"])
    assert report["triton_imported_by_activate"] is False
    assert report["activation"]["mode"] == EXPECTED_MODE
    assert layout.ptxas_runs() == [(_wrapper_for(90), "sm_90a")]


def test_explicit_activation_after_import(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    report = run_scenario(layout, "explicit-after", ["compile:100"])
    assert report["activation"]["mode"] == EXPECTED_MODE
    assert layout.ptxas_runs() == [("bin-blackwell", "sm_100a")]


def test_second_activation_is_not_fooled_by_its_own_variables(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    report = run_scenario(layout, "hook", ["activate-again"])
    first = report["activation"]
    second = report["results"]["activate-again"]["activation"]
    assert first["kept"] == {} and second["kept"] == {}
    # The hook leaves the launcher's part (the C compiler, Python.h) to the first build;
    # activate() resolves it (and leaves ptxas-blackwell and the SASS tools to when
    # Triton takes them, as the hook does): the second adds that part's variable where
    # the release reads it from the environment (CC on 3.0-3.3), and changes nothing else.
    same = {k: v for k, v in second["applied"].items() if k in first["applied"]}
    assert same == first["applied"]
    assert set(second["applied"]) - set(first["applied"]) <= {"env:CC"}


def test_variable_set_by_the_user_is_kept(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    bundled = nvidia_dir() / "bin" / "ptxas"
    mine = recording_tool(tmp_path / "bin-mine" / "ptxas", bundled, layout.log)
    env = scenario_env(layout, TRITON_PTXAS_PATH=str(mine))
    report = run_scenario(layout, "hook", ["compile:80", "activate-again"], env=env)
    kept = report["activation"]["kept"]
    assert ("knobs.nvidia.ptxas" if KNOBS else "env:TRITON_PTXAS_PATH") in kept
    assert report["results"]["activate-again"]["activation"]["kept"] == kept
    assert layout.ptxas_runs() == [("bin-mine", "sm_80")]
    assert report["environ"]["TRITON_PTXAS_PATH"] == str(mine)


def test_off_switch_disables_the_hook(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    env = scenario_env(layout, TRITON_TOOLCHAIN="off")
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert "_TritonToolchainStub" not in report["meta_path"]
    assert report["activation"] is None
    assert report["results"]["compile:80"]["ok"]
    assert layout.ptxas_runs() == []


@pytest.mark.parametrize("arch", [90, 100])
def test_too_old_ptxas_is_the_shims_error(tmp_path: Path, arch: int) -> None:
    """A strict manifest whose ptxas family is CUDA 11.8: the resolver rejects it, and
    Triton's silent fall-back to its bundled ptxas is refused with the explanation."""
    layout = make_layout(tmp_path)
    for name in ("ptxas", "ptxas-blackwell"):
        layout.components[name] = str(old_ptxas(tmp_path / f"old-{name}" / "ptxas", layout.log))
    layout.write()
    report = run_scenario(layout, "hook", [f"compile:{arch}"])
    result = report["results"][f"compile:{arch}"]
    assert result["type"] == "MissingComponentError", result
    assert "ToolchainError" in result["bases"]
    assert "release 11.8" in result["message"] and f"sm_{arch}" in result["message"]
    if arch >= blackwell_from():
        # Rejected by the resolver (ptxas-blackwell must reach sm_100a): Triton's fallback
        # to its bundled binary is refused because the manifest is strict.
        assert "strict manifest" in result["message"]
    else:
        # Accepted without a target (arch=None); refused when Triton asks for sm_90a.
        assert f"cannot assemble sm_{arch}a" in result["message"]
    assert not [run for run in layout.ptxas_runs() if run[0].startswith("old-")]


def test_too_old_ptxas_set_by_the_user_is_refused_before_llvm(tmp_path: Path) -> None:
    """The user's TRITON_PTXAS(_BLACKWELL)_PATH names a CUDA 11.8 ptxas: activation warns
    (the setting is wrong), and Triton's compile stops with the shim's error naming the
    setting, every time, instead of falling back to its bundled ptxas."""
    layout = make_layout(tmp_path)
    old = old_ptxas(tmp_path / "old" / "ptxas", layout.log)
    variables = {"TRITON_PTXAS_PATH": str(old), "TRITON_PTXAS_BLACKWELL_PATH": str(old)}
    if not KNOBS:
        variables["TRITON_PTXAS-BLACKWELL_PATH"] = str(old)
    env = scenario_env(layout, **variables)
    report = run_scenario(layout, "hook", ["compile:90", "compile:80"], env=env)
    assert "RuntimeWarning" in report["stderr"]
    assert "TRITON_PTXAS_BLACKWELL_PATH=" in report["stderr"]
    for arch in (90, 80):
        result = report["results"][f"compile:{arch}"]
        assert result["type"] == "SettingError", result
        assert "ToolchainError" in result["bases"]
        assert "release 11.8 cannot assemble sm_100a" in result["message"]
    assert layout.ptxas_runs() == []


def test_activation_without_site_processing(tmp_path: Path) -> None:
    """``python -S`` reads no .pth file; an explicit activate() still works."""
    layout = make_layout(tmp_path)
    site_packages = Path(_triton_site_packages())
    env = scenario_env(layout)
    env["PYTHONPATH"] += os.pathsep + str(site_packages)
    report = run_scenario(layout, "explicit-before", ["compile:80"], env=env, python_flags=("-S",))
    assert report["activation"]["mode"] == EXPECTED_MODE
    assert layout.ptxas_runs() == [("bin-ptxas", "sm_80")]


def _triton_site_packages() -> str:
    import importlib.util

    spec = importlib.util.find_spec("triton")
    assert spec is not None and spec.origin is not None
    return str(Path(spec.origin).parent.parent)


def test_activate_honours_the_off_switch_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton_toolchain.runtime import _activate

    monkeypatch.setenv("TRITON_TOOLCHAIN", "off")
    activation = _activate.activate()
    assert activation.mode == "off"
    assert activation.toolchain is None


def test_run_with_toolchain_exports_without_overriding(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    env = scenario_env(layout, CC="gcc")
    code = (
        "import sys; from triton_toolchain.cli._main import run_with_toolchain; "
        "sys.exit(run_with_toolchain(['env']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    exported = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert exported["TRITON_PTXAS_PATH"] == layout.components["ptxas"]
    assert exported["TRITON_LIBCUDA_PATH"] == str(tmp_path / "driver")
    assert exported["CC"] == "gcc"


def test_run_with_toolchain_reports_a_missing_program(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    code = (
        "import sys; from triton_toolchain.cli._main import run_with_toolchain; "
        "sys.exit(run_with_toolchain(['no-such-program-here']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=scenario_env(layout, PATH="::/usr/bin"),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 127
    assert "command not found" in done.stderr


def test_doctor_names_a_ptxas_this_triton_cannot_use(tmp_path: Path) -> None:
    """Triton 3.3 knows no PTX version for CUDA 13 (its own ``ptx_get_version`` raises);
    3.6 and newer know it. doctor asks the installed Triton and says so."""
    from tool_fixtures import fake_ptxas

    cuda13 = fake_ptxas(tmp_path / "cuda-13/bin", "13.0")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_") and k != "CC"}
    env.update(
        TRITON_PTXAS_PATH=str(cuda13),
        TRITON_PTXAS_BLACKWELL_PATH=str(cuda13),
        TRITON_TOOLCHAIN="off",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--for", "compile"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    refuses = triton_version() < (3, 6)
    screen = " ".join(done.stdout.split())  # doctor wraps its lines at 100 columns
    assert ("refused by Triton: ptxas " in screen) is refuses, done.stdout
    assert ("cannot use a CUDA 13.0 ptxas" in screen) is refuses
    assert done.returncode == (1 if refuses else 0), done.stdout + done.stderr
