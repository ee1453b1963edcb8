"""Hostile corpus, planted files: nothing is run, loaded or believed from a place another
user can write, by the shim or by Triton on the shim's behalf.

Each case plants for real: a file owned by another user (written through ``setpriv``),
a directory everyone can write, a symbolic link from a safe place into an unsafe one.
Planted programs log every run (``hostile.Plant``); planted drivers are the stand-in,
and the scenario reports what ``/proc/self/maps`` holds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import driver_standin
import pytest
from elf_fixtures import write_ld_cache
from hostile import (
    OTHER_UID,
    Plant,
    clean_env,
    cli,
    mkdir_as,
    reachable,
    shared_dir,
    write_as,
)
from triton_layouts import Layout, Namespace, run_scenario, scenario_env, triton_version

# Triton 3.9 probes its driver by name (``_cuda_driver_is_active``); earlier releases ask
# torch, and load the driver by name only in the launcher (``cuda_utils``).
PROBE = ["is_active"] if triton_version() >= (3, 9) else []

# --------------------------------------------------------------------- planted manifests


def _doc(ptxas: Path) -> str:
    return json.dumps({"schema": 1, "components": {"ptxas": {"path": str(ptxas)}}})


def _safe_tool(tmp: Path, plant: Plant) -> Path:
    """A ptxas in a safe place: if a planted manifest were believed, it would be run."""
    return plant.ptxas(tmp / "safe" / "bin" / "ptxas")


def _file_writable_by_everyone(tmp: Path, text: str) -> tuple[Path, str]:
    path = tmp / "safe" / "manifest.json"
    path.write_text(text)
    path.chmod(0o666)
    return path, f"file {path} is writable by everyone"


def _file_writable_by_a_shared_group(tmp: Path, text: str) -> tuple[Path, str]:
    path = tmp / "safe" / "manifest.json"
    path.write_text(text)
    os.chown(path, 0, OTHER_UID)
    path.chmod(0o664)
    return path, f"file {path} is writable by its group (gid {OTHER_UID})"


def _file_of_another_user_in_tmp(tmp: Path, text: str) -> tuple[Path, str]:
    shared = shared_dir(tmp / "shared", sticky=True)
    reachable(shared)
    path = write_as(OTHER_UID, shared / "manifest.json", text)
    return path, f"file {path} is owned by uid {OTHER_UID}"


def _in_a_directory_everyone_can_write(tmp: Path, text: str) -> tuple[Path, str]:
    directory = shared_dir(tmp / "drop", sticky=False)
    path = directory / "manifest.json"
    path.write_text(text)
    return path, f"directory {directory} is writable by everyone"


def _below_a_directory_everyone_can_write(tmp: Path, text: str) -> tuple[Path, str]:
    top = shared_dir(tmp / "drop", sticky=False)
    path = top / "a" / "b" / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path, f"directory {top} is writable by everyone"


def _link_from_a_safe_place_into_an_unsafe_one(tmp: Path, text: str) -> tuple[Path, str]:
    directory = shared_dir(tmp / "drop", sticky=False)
    (directory / "real.json").write_text(text)
    path = tmp / "safe" / "manifest.json"
    path.symlink_to(directory / "real.json")
    return path, f"directory {directory} is writable by everyone"


def _in_a_directory_of_another_user(tmp: Path, text: str) -> tuple[Path, str]:
    directory = mkdir_as(OTHER_UID, tmp / "theirs")
    path = directory / "manifest.json"
    path.write_text(text)  # root may write there; the directory is still theirs
    return path, f"directory {directory} is owned by uid {OTHER_UID}"


def _link_of_another_user_in_tmp(tmp: Path, text: str) -> tuple[Path, str]:
    """A link in a sticky directory, owned by another user, to a safe manifest: they can
    point it elsewhere at any moment, so what it names is theirs to choose."""
    target = tmp / "safe" / "real.json"
    target.write_text(text)
    shared = shared_dir(tmp / "shared", sticky=True)
    reachable(shared)
    path = shared / "manifest.json"
    done = os.system(  # noqa: S605  setpriv with fixed arguments
        f"setpriv --reuid={OTHER_UID} --regid={OTHER_UID} --clear-groups ln -s {target} {path}"
    )
    assert done == 0
    return path, f"symbolic link {path} is owned by uid {OTHER_UID}"


def _owned_by_another_user_behind_a_safe_link(tmp: Path, text: str) -> tuple[Path, str]:
    real = tmp / "safe" / "real.json"
    real.write_text(text)
    os.chown(real, OTHER_UID, OTHER_UID)
    path = tmp / "safe" / "manifest.json"
    path.symlink_to(real)
    return path, f"file {real} is owned by uid {OTHER_UID}"


PLANTED: dict[str, Callable[[Path, str], tuple[Path, str]]] = {
    "file-writable-by-everyone": _file_writable_by_everyone,
    "file-writable-by-a-shared-group": _file_writable_by_a_shared_group,
    "file-of-another-user-in-tmp": _file_of_another_user_in_tmp,
    "in-a-directory-everyone-can-write": _in_a_directory_everyone_can_write,
    "below-a-directory-everyone-can-write": _below_a_directory_everyone_can_write,
    "safe-link-into-an-unsafe-directory": _link_from_a_safe_place_into_an_unsafe_one,
    "in-a-directory-of-another-user": _in_a_directory_of_another_user,
    "link-of-another-user-in-tmp": _link_of_another_user_in_tmp,
    "owned-by-another-user-behind-a-safe-link": _owned_by_another_user_behind_a_safe_link,
}


@pytest.mark.root
@pytest.mark.parametrize("command", ["check-manifest", "doctor", "lock"])
@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_planted_manifest_is_refused_and_nothing_it_names_runs(
    tmp_path: Path, case: str, command: str
) -> None:
    plant = Plant(tmp_path / "runs.log")
    manifest, why = PLANTED[case](tmp_path, _doc(_safe_tool(tmp_path, plant)))
    env = clean_env(tmp_path / "home")
    if command == "check-manifest":
        done = cli("check-manifest", str(manifest), env=env)
    else:
        env["TRITON_TOOLCHAIN_MANIFEST"] = str(manifest)
        done = cli(command, env=env)
    assert done.returncode == 2, done.output
    assert f"error: {manifest}: not trusted: " in done.stderr
    assert why in done.stderr
    assert "nobody but root and you can change it" in done.stderr  # the fix
    assert "chmod go-w" in done.stderr
    assert plant.runs() == []


def test_a_planted_manifest_in_the_users_config_directory_is_refused(tmp_path: Path) -> None:
    """The search location, not the variable: ``~/.config`` made writable by everyone."""
    plant = Plant(tmp_path / "runs.log")
    home = tmp_path / "home"
    config = shared_dir(home / ".config", sticky=False)
    manifest = config / "triton-toolchain" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text(_doc(_safe_tool(tmp_path, plant)))
    done = cli("doctor", env=clean_env(home))
    assert done.returncode == 2, done.output
    assert f"{manifest}: not trusted: directory {config} is writable by everyone" in done.stderr
    assert plant.runs() == []


def test_a_manifest_owned_by_root_in_a_sticky_directory_is_trusted(tmp_path: Path) -> None:
    """The control: /tmp's mode (sticky) lets others add files, not replace ours."""
    plant = Plant(tmp_path / "runs.log")
    shared = shared_dir(tmp_path / "shared", sticky=True)
    manifest = shared / "manifest.json"
    manifest.write_text(_doc(_safe_tool(tmp_path, plant)))
    done = cli("check-manifest", str(manifest), env=clean_env(tmp_path / "home"))
    assert done.returncode == 0, done.output
    assert len(plant.runs()) == 1  # --version, once


@pytest.mark.root
@pytest.mark.parametrize(
    "case", ["file-of-another-user-in-tmp", "in-a-directory-everyone-can-write"]
)
def test_import_triton_with_a_planted_manifest_warns_and_runs_nothing_planted(
    tmp_path: Path, case: str
) -> None:
    plant = Plant(tmp_path / "runs.log")
    manifest, why = PLANTED[case](tmp_path, _doc(_safe_tool(tmp_path, plant)))
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert "RuntimeWarning: triton-toolchain did not configure triton" in report["stderr"]
    assert f"{manifest}: not trusted" in report["stderr"] and why in report["stderr"]
    assert "Traceback" not in report["stderr"]
    assert report["results"]["compile:80"]["ok"] is True  # with Triton's own ptxas
    assert plant.runs() == []


# ------------------------------------------------------ trusted manifest, planted entries


def _entry_in_drop(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    drop = shared_dir(tmp / "drop", sticky=False)
    return "ptxas", plant.ptxas(drop / "ptxas"), f"directory {drop} is writable by everyone"


def _entry_owned_by_another_user(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    tool = plant.ptxas(tmp / "safe" / "other" / "ptxas")
    os.chown(tool, OTHER_UID, OTHER_UID)
    return "ptxas", tool, f"file {tool} is owned by uid {OTHER_UID}"


def _entry_writable_by_everyone(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    tool = plant.ptxas(tmp / "safe" / "open" / "ptxas", mode=0o777)
    return "ptxas", tool, f"file {tool} is writable by everyone"


def _entry_linked_into_drop(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    drop = shared_dir(tmp / "drop", sticky=False)
    plant.ptxas(drop / "ptxas")
    link = tmp / "safe" / "linked" / "ptxas"
    link.parent.mkdir(parents=True)
    link.symlink_to(drop / "ptxas")
    return "ptxas", link, f"directory {drop} is writable by everyone"


def _blackwell_in_drop(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    drop = shared_dir(tmp / "drop", sticky=False)
    tool = plant.ptxas(drop / "ptxas-blackwell", "13.0")
    return "ptxas-blackwell", tool, f"directory {drop} is writable by everyone"


def _cc_in_drop(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    drop = shared_dir(tmp / "drop", sticky=False)
    return "cc", plant.compiler(drop / "gcc"), f"directory {drop} is writable by everyone"


def _libdevice_writable_by_everyone(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    from tool_fixtures import libdevice

    path = libdevice(tmp / "safe" / "nvvm")
    path.chmod(0o666)
    return "libdevice", path, f"file {path} is writable by everyone"


def _headers_in_drop(tmp: Path, plant: Plant) -> tuple[str, Path, str]:
    from tool_fixtures import cuda_include

    drop = shared_dir(tmp / "drop", sticky=False)
    return (
        "cuda-headers",
        cuda_include(drop / "include"),
        f"directory {drop} is writable by everyone",
    )


ENTRIES: dict[str, Callable[[Path, Plant], tuple[str, Path, str]]] = {
    "ptxas-in-a-directory-everyone-can-write": _entry_in_drop,
    "ptxas-owned-by-another-user": _entry_owned_by_another_user,
    "ptxas-writable-by-everyone": _entry_writable_by_everyone,
    "ptxas-linked-into-an-unsafe-directory": _entry_linked_into_drop,
    "ptxas-blackwell-in-an-unsafe-directory": _blackwell_in_drop,
    "cc-in-a-directory-everyone-can-write": _cc_in_drop,
    "libdevice-writable-by-everyone": _libdevice_writable_by_everyone,
    "cuda-headers-in-a-directory-everyone-can-write": _headers_in_drop,
}


@pytest.mark.root
@pytest.mark.parametrize("command", ["check-manifest", "doctor"])
@pytest.mark.parametrize("case", sorted(ENTRIES))
def test_a_planted_entry_of_a_trusted_manifest_is_rejected_by_key(
    tmp_path: Path, case: str, command: str
) -> None:
    plant = Plant(tmp_path / "runs.log")
    (tmp_path / "safe").mkdir()
    name, path, why = ENTRIES[case](tmp_path, plant)
    manifest = tmp_path / "safe" / "manifest.json"
    manifest.write_text(json.dumps({"schema": 1, "components": {name: {"path": str(path)}}}))
    env = clean_env(tmp_path / "home")
    if command == "check-manifest":
        done = cli("check-manifest", str(manifest), env=env)
        assert done.returncode == 1, done.output
        assert f"REJECTED {name}" in done.stdout
        assert f"{manifest}: components.{name}" in done.stdout
    else:
        env["TRITON_TOOLCHAIN_MANIFEST"] = str(manifest)
        done = cli("doctor", env=env)
        assert done.returncode == 2, done.output
        assert f"{manifest}: components.{name}: {path} rejected" in done.output
    assert why in done.output
    assert plant.runs() == []


# ----------------------------------------------------------------- planted drivers


def _scenario(tmp: Path, **env: str) -> tuple[Layout, dict[str, str]]:
    layout = Layout(tmp, tmp / "ptxas.log")
    return layout, scenario_env(layout, manifest=False, **env)


@pytest.mark.root
def test_a_driver_in_the_linker_cache_from_an_unsafe_directory_is_never_mapped(
    tmp_path: Path,
) -> None:
    drop = shared_dir(tmp_path / "drop", sticky=False)
    driver_standin.driver(drop, marker="planted")
    cache = write_ld_cache(tmp_path / "ld.so.cache", [drop])
    layout, env = _scenario(tmp_path)
    namespace = Namespace().bind(cache, "/etc/ld.so.cache")
    report = run_scenario(layout, "hook", [*PROBE, "cuda_utils"], env=env, namespace=namespace)
    assert report["drivers_mapped"] == [], report["drivers_mapped"]
    if PROBE:
        assert report["results"]["is_active"] == {"ok": True, "active": False}
    rejected = report["activation"]["toolchain"]["components"]["libcuda"]["rejected"]
    reasons = {r["path"]: r["reason"] for r in rejected}
    assert f"directory {drop} is writable by everyone" in reasons[str(drop / "libcuda.so.1")]


@pytest.mark.parametrize("value", ["", ":", "::", "lib", ":/nonexistent", "/nonexistent::"])
def test_an_empty_or_relative_library_path_entry_never_maps_the_current_directory(
    tmp_path: Path, value: str
) -> None:
    """No driver on the machine, a ``libcuda.so.1`` in the current directory (and in its
    ``lib``), and Triton asked whether its driver is active: nothing is mapped."""
    cwd = tmp_path / "work"
    driver_standin.driver(cwd, marker="planted")
    driver_standin.driver(cwd / "lib", marker="planted")
    layout, env = _scenario(tmp_path, LD_LIBRARY_PATH=value)
    report = run_scenario(layout, "hook", [*PROBE, "cuda_utils"], env=env, cwd=cwd)
    assert report["drivers_mapped"] == []
    assert "standin" not in json.dumps(report["results"])
    if PROBE:
        assert report["results"]["is_active"] == {"ok": True, "active": False}
        applied = report["activation"]["applied"]
        assert any(k.endswith("._cuda_driver_is_active") for k in applied), applied


def test_a_driver_on_library_path_in_an_unsafe_directory_is_never_mapped(
    tmp_path: Path,
) -> None:
    drop = shared_dir(tmp_path / "drop", sticky=False)
    driver_standin.driver(drop, marker="planted")
    layout, env = _scenario(tmp_path, LD_LIBRARY_PATH=str(drop))
    report = run_scenario(layout, "hook", [*PROBE, "cuda_utils"], env=env)
    assert report["drivers_mapped"] == []
    rejected = report["activation"]["toolchain"]["components"]["libcuda"]["rejected"]
    assert any("writable by everyone" in r["reason"] for r in rejected), rejected


@pytest.mark.root
def test_a_driver_in_an_ld_so_conf_directory_of_another_user_is_never_mapped(
    tmp_path: Path,
) -> None:
    reachable(tmp_path)
    theirs = mkdir_as(OTHER_UID, tmp_path / "theirs")
    driver_standin.driver(theirs, marker="planted")
    conf = tmp_path / "ld.so.conf"
    conf.write_text(f"{theirs}\n")
    layout, env = _scenario(tmp_path)
    namespace = Namespace().bind(conf, "/etc/ld.so.conf")
    report = run_scenario(layout, "hook", [*PROBE, "cuda_utils"], env=env, namespace=namespace)
    assert report["drivers_mapped"] == []
    rejected = report["activation"]["toolchain"]["components"]["libcuda"]["rejected"]
    assert any(f"owned by uid {OTHER_UID}" in r["reason"] for r in rejected), rejected


# ----------------------------------------------------- planted tools, explicit or found


UNSAFE_SETTINGS = {
    "TRITON_PTXAS_PATH": "ptxas",
    "TRITON_PTXAS_BLACKWELL_PATH": "ptxas-blackwell",
    "TRITON_CUOBJDUMP_PATH": "cuobjdump",
    "CC": "gcc",
}


@pytest.mark.parametrize("variable", sorted(UNSAFE_SETTINGS))
def test_an_explicit_setting_naming_a_planted_tool_is_an_error_and_never_runs(
    tmp_path: Path, variable: str
) -> None:
    plant = Plant(tmp_path / "runs.log")
    drop = shared_dir(tmp_path / "drop", sticky=False)
    name = UNSAFE_SETTINGS[variable]
    tool = plant.compiler(drop / name) if variable == "CC" else plant.ptxas(drop / name)
    env = clean_env(tmp_path / "home", **{variable: str(tool)})
    done = cli("doctor", env=env)
    assert done.returncode == 2, done.output
    assert f"{variable}='{tool}'" in done.output
    assert f"not trusted: directory {drop} is writable by everyone" in done.output
    assert f"unset {variable}" in done.output
    assert plant.runs() == []


def test_a_planted_compiler_on_path_is_passed_over(tmp_path: Path) -> None:
    plant = Plant(tmp_path / "runs.log")
    drop = shared_dir(tmp_path / "drop", sticky=False)
    plant.compiler(drop / "gcc")
    env = clean_env(tmp_path / "home", PATH=f"{drop}:/usr/bin:/bin")
    done = cli("which", "cc", env=env)
    assert done.returncode == 0 and done.stdout.strip() == "/usr/bin/gcc", done.output
    assert plant.runs() == []


def test_a_compiler_in_the_current_directory_through_an_empty_path_entry_is_passed_over(
    tmp_path: Path,
) -> None:
    plant = Plant(tmp_path / "runs.log")
    plant.compiler(tmp_path / "work" / "gcc")
    env = clean_env(tmp_path / "home", PATH="::/usr/bin:/bin")
    done = cli("which", "cc", env=env, cwd=tmp_path / "work")
    assert done.stdout.strip() == "/usr/bin/gcc", done.output
    assert plant.runs() == []


def test_a_planted_toolkit_under_cuda_home_is_passed_over(tmp_path: Path) -> None:
    plant = Plant(tmp_path / "runs.log")
    drop = shared_dir(tmp_path / "drop", sticky=False)
    for name in ("ptxas", "cuobjdump", "nvdisasm"):
        plant.ptxas(drop / "cuda" / "bin" / name, "13.9")
    env = clean_env(tmp_path / "home", CUDA_HOME=str(drop / "cuda"))
    done = cli("doctor", "-v", env=env)
    assert "13.9" not in done.stdout.split("\n\n")[1], done.stdout  # not in the table
    assert plant.runs() == []


def test_import_triton_never_runs_a_planted_ptxas_named_by_the_user(tmp_path: Path) -> None:
    plant = Plant(tmp_path / "runs.log")
    drop = shared_dir(tmp_path / "drop", sticky=False)
    tool = plant.ptxas(drop / "ptxas", "12.8")
    layout, env = _scenario(tmp_path, TRITON_PTXAS_PATH=str(tool))
    report = run_scenario(layout, "hook", ["compile:80", "compile:80"], env=env)
    result = report["results"]["compile:80"]
    assert result["type"] == "SettingError", result
    assert f"TRITON_PTXAS_PATH='{tool}'" in result["message"]
    assert "writable by everyone" in result["message"]
    assert plant.runs() == []


# ------------------------------------------------------ driver directories, exports


def test_a_manifests_driver_directory_everyone_can_write_is_rejected_by_key(
    tmp_path: Path,
) -> None:
    drop = shared_dir(tmp_path / "drop", sticky=False)
    driver_standin.driver(drop, marker="planted")
    manifest = tmp_path / "safe" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"schema": 1, "driver_dirs": [str(drop)], "components": {}}))
    env = clean_env(tmp_path / "home")
    checked = cli("check-manifest", str(manifest), env=env)
    assert checked.returncode == 1
    assert f"REJECTED libcuda          {drop}/libcuda.so.1" in checked.stdout
    assert f"({manifest}: driver_dirs[0])" in checked.stdout
    doctor = cli("doctor", env={**env, "TRITON_TOOLCHAIN_MANIFEST": str(manifest)})
    assert doctor.returncode == 2
    assert f"{manifest}: driver_dirs[0]: {drop}/libcuda.so.1 rejected: not trusted" in doctor.stderr
    layout, scenario = _scenario(tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    report = run_scenario(layout, "hook", [*PROBE, "cuda_utils"], env=scenario)
    assert report["drivers_mapped"] == []


@pytest.mark.root
def test_exports_that_claim_a_planted_tool_came_from_a_manifest_are_not_believed(
    tmp_path: Path,
) -> None:
    """``TRITON_TOOLCHAIN_EXPORTS`` says where exported values came from; a planted value
    it vouches for is still judged, and refused."""
    plant = Plant(tmp_path / "runs.log")
    drop = shared_dir(tmp_path / "drop", sticky=False)
    tool = plant.ptxas(drop / "ptxas")
    exports = json.dumps({"TRITON_PTXAS_PATH": [str(tool), "manifest:/etc/triton-toolchain/m"]})
    env = clean_env(
        tmp_path / "home", TRITON_PTXAS_PATH=str(tool), TRITON_TOOLCHAIN_EXPORTS=exports
    )
    done = cli("doctor", "-v", env=env)
    flat = " ".join(done.stdout.split())  # -v's lines wrap at the screen's width
    assert f"{tool} (manifest:/etc/triton-toolchain/m): not trusted" in flat
    assert done.returncode == 2
    assert plant.runs() == []


@pytest.mark.parametrize(
    "value",
    ["[" * 60000, "{" + '"a": 1, ' * 9000 + "}", "9" * 5000, '{"TRITON_PTXAS_PATH": "\\ud800"}'],
    ids=["deep", "broken", "digits", "surrogate"],
)
def test_garbage_exports_count_as_none(tmp_path: Path, value: str) -> None:
    done = cli("doctor", env=clean_env(tmp_path / "home", TRITON_TOOLCHAIN_EXPORTS=value))
    assert done.returncode in (0, 1), done.output


ACTIVE_DRIVER = r"""
import json, site, sys
site.addsitedir(sys.argv[1])
import triton
try:
    triton.runtime.driver.active.get_current_target()
    outcome = "ok"
except Exception as exc:
    outcome = type(exc).__name__ + ": " + str(exc)[:300]
maps = open("/proc/self/maps").read().splitlines()
print(json.dumps({"outcome": outcome,
                  "mapped": sorted({l.split()[-1] for l in maps if "libcuda" in l})}))
"""


def test_triton_choosing_its_active_driver_maps_nothing_from_the_current_directory(
    tmp_path: Path,
) -> None:
    """``triton.runtime.driver.active`` asks every backend whether it is active: with an
    empty ``LD_LIBRARY_PATH`` entry and a ``libcuda.so.1`` in the current directory."""
    import sys

    from hostile import run
    from triton_layouts import pth_dir

    cwd = tmp_path / "work"
    driver_standin.driver(cwd, marker="planted")
    _layout, env = _scenario(tmp_path, LD_LIBRARY_PATH=":")
    argv = [sys.executable, "-c", ACTIVE_DRIVER, str(pth_dir(tmp_path))]
    done = run(argv, env, cwd=cwd).clean()
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["mapped"] == [], report
    assert report["outcome"].startswith("RuntimeError: 0 active drivers"), report


def test_a_manifests_driver_directory_this_machine_lacks_is_no_error(tmp_path: Path) -> None:
    """The control: ``driver_dirs`` may name directories a machine lacks (Nix's
    /run/opengl-driver/lib on Ubuntu); only a driver that is there and may not be used
    makes the manifest wrong."""
    manifest = tmp_path / "safe" / "manifest.json"
    manifest.parent.mkdir()
    absent = tmp_path / "no-such-dir"
    manifest.write_text(json.dumps({"schema": 1, "driver_dirs": [str(absent)], "components": {}}))
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    done = cli("doctor", "--json", env=env)
    assert done.returncode in (0, 1), done.output
    assert json.loads(done.stdout)["manifest_rejections"] == []
    assert cli("check-manifest", str(manifest), env=env).returncode == 0
