"""The launcher build: commands and modules built with gcc against the driver stand-in
(in this process), and Triton building and loading ``cuda_utils`` through the shim (in
fresh interpreters, against the installed Triton: 3.9 by default, 3.6 and 3.3 in nox)."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import driver_standin
import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from triton_layouts import make_layout, python_include, run_scenario, scenario_env, triton_version
from triton_toolchain.resolver import _build
from triton_toolchain.resolver._catalog import COMPONENT_NAMES
from triton_toolchain.resolver._model import Choice, Source, SourceKind, Toolchain
from triton_toolchain.runtime._errors import BuildError, MissingComponentError

SOURCE = Source(SourceKind.DISCOVERED, "test")
MODULE_C = """
#include <Python.h>
extern int cuInit(unsigned int);
static PyObject *init(PyObject *self, PyObject *args) { return PyLong_FromLong(cuInit(0)); }
static PyMethodDef methods[] = {{"init", init, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "probe", NULL, -1, methods};
PyMODINIT_FUNC PyInit_probe(void) { return PyModule_Create(&def); }
"""


def _toolchain(**paths: str | None) -> Toolchain:
    gcc = shutil.which("gcc")
    assert gcc, "gcc is not installed; install gcc (see README: the test command)"
    chosen = {"cc": gcc, "python-headers": python_include(), **paths}
    return Toolchain(
        {
            name: Choice(name, chosen.get(name), None, SOURCE if chosen.get(name) else None)
            for name in COMPONENT_NAMES
        }
    )


def _dynamic(path: str) -> dict[str, list[str]]:
    with open(path, "rb") as stream:
        elf = ELFFile(stream)
        tags: dict[str, list[str]] = {}
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    name = tag.entry.d_tag
                    if name == "DT_NEEDED":
                        tags.setdefault(name, []).append(tag.needed)
                    elif name in ("DT_RPATH", "DT_RUNPATH"):
                        tags.setdefault(name, []).append(
                            tag.rpath if name == "DT_RPATH" else tag.runpath
                        )
        return tags


def _source(tmp_path: Path) -> str:
    src = tmp_path / "probe.c"
    src.write_text(MODULE_C)
    return str(src)


def test_module_links_the_driver_by_path_with_an_rpath(tmp_path: Path) -> None:
    libcuda = driver_standin.driver(tmp_path / "driver")
    tc = _toolchain(**{"libcuda": str(libcuda), "libcuda-link": str(libcuda.parent)})
    out = tmp_path / "out"
    out.mkdir()
    plan = _build.make_plan(
        tc, "probe", _source(tmp_path), str(out), ["/nonexistent"], [], ["libcuda.so.1"]
    )
    assert str(libcuda) in plan.argv
    assert not any(a.startswith("-l") and "cuda" in a for a in plan.argv)
    assert plan.driver == str(libcuda)
    so = _build.run(plan, tc)
    assert so == str(out / f"probe{sysconfig.get_config_var('EXT_SUFFIX')}")
    tags = _dynamic(so)
    assert "libcuda.so.1" in tags["DT_NEEDED"]
    assert tags["DT_RPATH"] == [str(libcuda.parent)]
    assert "DT_RUNPATH" not in tags


def test_stub_is_linked_by_path_and_the_module_needs_libcuda_so_1(tmp_path: Path) -> None:
    stub = driver_standin.stub(tmp_path / "toolkit")
    tc = _toolchain(**{"libcuda-link": str(stub.parent)})
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(MissingComponentError, match="libcuda not found"):
        _build.make_plan(tc, "probe", _source(tmp_path), str(out), [], [], ["cuda"])
    plan = _build.make_plan(
        tc, "probe", _source(tmp_path), str(out), [], [], ["cuda"], require_driver=False
    )
    assert str(stub) in plan.argv
    tags = _dynamic(_build.run(plan, tc))
    assert "libcuda.so.1" in tags["DT_NEEDED"]
    assert "libcuda.so" not in tags["DT_NEEDED"]
    assert "DT_RPATH" not in tags and "DT_RUNPATH" not in tags


def test_a_link_library_with_another_soname_is_refused(tmp_path: Path) -> None:
    """A libcuda.so whose SONAME is not libcuda.so.1: a launcher linked against it would
    need a library no driver installs. The resolver's link check refuses it."""
    from tool_fixtures import fake_host
    from triton_toolchain.resolver._discovery._driver import LOCATORS
    from triton_toolchain.resolver._discovery._search import Context

    wrong = driver_standin.wrong_soname(tmp_path / "odd")
    verdict = LOCATORS["libcuda-link"].check(fake_host(tmp_path), wrong.parent, Context())
    assert verdict.problem is not None
    assert "its SONAME is 'libcuda.so', not 'libcuda.so.1'" in verdict.problem


def test_other_libraries_pass_through_like_triton(tmp_path: Path) -> None:
    tc = _toolchain()
    plan = _build.make_plan(
        tc, "m", "/src/m.c", str(tmp_path), ["/opt/lib"], ["/opt/inc"], ["amdhip64", "libfoo.so.2"]
    )
    assert "-lamdhip64" in plan.argv and "-l:libfoo.so.2" in plan.argv and "-L/opt/lib" in plan.argv
    assert (
        plan.argv.index("-I/opt/inc")
        < plan.argv.index(f"-I{tmp_path}")
        < plan.argv.index(f"-I{python_include()}")
    )
    assert plan.driver is None
    assert plan.argv[:8] == (
        tc["cc"].path,
        "/src/m.c",
        "-O3",
        "-shared",
        "-fPIC",
        "-Wno-psabi",
        "-o",
        f"{tmp_path}/m{sysconfig.get_config_var('EXT_SUFFIX')}",
    )


def test_compiler_failure_shows_command_output_and_fix(tmp_path: Path) -> None:
    """Python headers whose pyconfig.h is missing (a half-installed -dev package)."""
    broken = tmp_path / "include"
    broken.mkdir()
    for name in ("Python.h", "patchlevel.h"):
        shutil.copy(Path(python_include()) / name, broken / name)
    tc = _toolchain(**{"python-headers": str(broken)})
    plan = _build.make_plan(tc, "probe", _source(tmp_path), str(tmp_path), [], [], [])
    with pytest.raises(BuildError) as caught:
        _build.run(plan, tc)
    message = str(caught.value)
    assert plan.command in message
    assert "pyconfig.h: No such file" in message
    assert f"pyconfig.h is not in {broken}" in message


def test_a_compiler_that_cannot_run_is_a_build_error(tmp_path: Path) -> None:
    tc = _toolchain(cc=str(tmp_path / "no-such-cc"))
    plan = _build.make_plan(tc, "probe", _source(tmp_path), str(tmp_path), [], [], [])
    with pytest.raises(BuildError, match="cannot run the C compiler"):
        _build.run(plan, tc)


# --- Triton builds and loads its launcher through the shim ----------------------------------


def test_triton_builds_and_loads_against_the_chosen_driver(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    report = run_scenario(layout, "hook", ["cuda_utils"])
    result = report["results"]["cuda_utils"]
    assert result["ok"], result
    chosen = os.path.realpath(tmp_path / "driver" / "libcuda.so.1")
    assert report["drivers_mapped"] == [chosen]
    assert report["standin_markers"] == ["chosen"]
    assert report["environ"]["TRITON_LIBCUDA_PATH"] == str(tmp_path / "driver")
    tags = _dynamic(result["module"])
    assert "libcuda.so.1" in tags["DT_NEEDED"]
    assert tags["DT_RPATH"] == [str(tmp_path / "driver")]


def test_empty_ld_library_path_entry_cannot_bring_in_a_decoy(tmp_path: Path) -> None:
    """LD_LIBRARY_PATH=':' means the current directory, which holds a decoy libcuda.so.1:
    with the shim the chosen driver is the only one loaded (preloaded by path, matched by
    SONAME); stock Triton, with a fresh cache, turns the empty entries into a broken
    compiler command."""
    layout = make_layout(tmp_path / "layout")
    work = tmp_path / "work"
    driver_standin.driver(work, marker="decoy")
    actions = ["cuda_utils"] + (["is_active"] if triton_version() >= (3, 9) else [])
    env = scenario_env(layout, LD_LIBRARY_PATH=":")
    report = run_scenario(layout, "hook", actions, env=env, cwd=work)
    assert report["results"]["cuda_utils"]["ok"], report["results"]
    assert report["standin_markers"] == ["chosen"]
    assert report["drivers_mapped"] == [
        os.path.realpath(tmp_path / "layout" / "driver" / "libcuda.so.1")
    ]
    if triton_version() >= (3, 9):
        assert report["results"]["is_active"] == {"ok": True, "active": False}  # cuInit: 100

    fresh = {**env, "TRITON_CACHE_DIR": str(tmp_path / "stock-cache")}
    stock = run_scenario(layout, "none", ["cuda_utils"], env=fresh, cwd=work)
    # Stock Triton takes the empty entries as directories ("-L -L") and gcc fails.
    assert stock["results"]["cuda_utils"]["type"] == "CalledProcessError"


def test_stub_only_builds_nothing_and_explains(tmp_path: Path) -> None:
    layout = make_layout(tmp_path, driver=False, stub=True)
    report = run_scenario(layout, "hook", ["compile:90", "cuda_utils"])
    assert report["results"]["compile:90"]["ok"]
    result = report["results"]["cuda_utils"]
    assert result["type"] == "MissingComponentError", result
    assert "ToolchainError" in result["bases"]
    assert "libcuda not found" in result["message"] and "fix:" in result["message"]
    assert report["drivers_mapped"] == []


def test_no_driver_at_all_explains_instead_of_running_ldconfig(tmp_path: Path) -> None:
    layout = make_layout(tmp_path, driver=False)
    report = run_scenario(layout, "hook", ["cuda_utils"])
    result = report["results"]["cuda_utils"]
    assert result["type"] == "MissingComponentError", result
    assert "libcuda not found" in result["message"]
    assert any("libcuda_dirs" in key for key in report["activation"]["applied"])


def test_missing_python_headers_name_the_package(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    empty = tmp_path / "no-headers"
    empty.mkdir()
    layout.components["python-headers"] = str(empty)
    layout.write()
    report = run_scenario(layout, "hook", ["cuda_utils"])
    result = report["results"]["cuda_utils"]
    assert result["type"] == "MissingComponentError", result
    assert "Python.h" in result["message"] and "install" in result["message"]
