"""``resolver/_guards``, against the installed Triton: its version as imported, its own
choice of ptxas per target, its own ``ptx_get_version``, the shapes its ``get_ptxas``
returns, and the errors raised instead of a ptxas failure, for plans resolved on this
machine with real ptxas binaries (the cached CUDA releases, ``tools/fetch_ptxas.py``)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest
import triton
from fit_fixtures import real_ptxas
from triton import knobs
from triton.backends.nvidia import compiler
from triton_toolchain.resolver._catalog import ARCH_RELEASES, major_minor
from triton_toolchain.resolver._discovery._host import Host, triton_version
from triton_toolchain.resolver._guards import (
    imported_triton_version,
    missing_driver,
    no_active_driver,
    no_ptxas,
    ptxas_error,
    runs_ptxas_blackwell,
    setting_error,
    tool_fields,
    usable_release,
)
from triton_toolchain.resolver._plan import Plan, plan_of
from triton_toolchain.resolver._resolve import resolve_all
from triton_toolchain.runtime import ORIGINAL
from triton_toolchain.runtime._errors import MissingComponentError, SettingError

NAMESPACE = vars(compiler)  # what the guarded ``get_ptxas`` is given: Triton's own
INSTALLED = major_minor(triton.__version__)


def _plan(tmp_path: Path, arch: int | None = None, **variables: str) -> Plan:
    """The plan resolved on this machine, for ``sm_<arch>``, in an environment of only
    ``PATH``, a private cache and ``variables``."""
    environ = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        **variables,
    }
    return plan_of(resolve_all(arch, host=Host.current(environ)))


def _chosen(plan: Plan, component: str) -> str:
    path = plan["toolchain"]["components"][component]["path"]
    assert isinstance(path, str), plan["toolchain"]["components"][component]
    return path


# ------------------------------------------------------------------- the installed Triton


def test_the_imported_version_is_the_installed_tritons() -> None:
    assert INSTALLED is not None
    assert imported_triton_version() == INSTALLED
    # The file reader, which does not import Triton, agrees.
    assert triton_version(Path(triton.__file__).parent) == INSTALLED


def test_no_version_where_triton_is_not_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "triton")
    assert imported_triton_version() is None
    assert not runs_ptxas_blackwell(100)


def _tritons_choice(arch: int) -> str:
    """What the installed Triton's own ``get_ptxas`` takes for ``sm_<arch>``: its code,
    run with knobs that stand for the two tools by name (no tool is looked up)."""
    names = types.SimpleNamespace(
        nvidia=types.SimpleNamespace(ptxas="ptxas", ptxas_blackwell="ptxas-blackwell")
    )
    tritons = compiler.get_ptxas
    while hasattr(tritons, ORIGINAL):  # the shim's guard, active in this process
        tritons = getattr(tritons, ORIGINAL)
    get_ptxas = types.FunctionType(tritons.__code__, {**tritons.__globals__, "knobs": names})
    choice: str = get_ptxas(arch)
    return choice


@pytest.mark.parametrize("arch", sorted(ARCH_RELEASES))
def test_ptxas_blackwell_is_run_where_the_installed_triton_runs_it(arch: int) -> None:
    assert runs_ptxas_blackwell(arch) == (_tritons_choice(arch) == "ptxas-blackwell")


def test_an_unknown_target_runs_no_ptxas_blackwell() -> None:
    assert not runs_ptxas_blackwell(None)


@pytest.mark.parametrize("release", ["12.4", "12.6", "13.1"])
def test_releases_the_installed_triton_knows_are_usable(release: str) -> None:
    compiler.ptx_get_version(release)  # Triton's own answer: it knows the release
    assert usable_release(release, NAMESPACE) is None


@pytest.mark.parametrize("release", ["9.2", "not-a-release"])
def test_a_release_tritons_ptx_get_version_refuses_is_named(release: str) -> None:
    with pytest.raises((RuntimeError, ValueError)):
        compiler.ptx_get_version(release)
    assert INSTALLED is not None
    assert usable_release(release, NAMESPACE) == (
        f"Triton {INSTALLED[0]}.{INSTALLED[1]} cannot use a CUDA {release} ptxas (it knows no "
        "PTX version for that release)"
    )


def test_a_triton_without_ptx_get_version_refuses_nothing() -> None:
    assert usable_release("9.2", {}) is None


@pytest.mark.network  # a real ptxas release from PyPI
def test_the_fields_of_what_get_ptxas_returns() -> None:
    """A ``knobs.NvidiaTool`` (3.4 on) and a ``(path, version)`` pair (3.0-3.3)."""
    path = str(real_ptxas("12.6"))
    assert tool_fields(knobs.NvidiaTool(path, "12.6")) == (path, "12.6")
    assert tool_fields((path, "12.6")) == (path, "12.6")
    assert tool_fields(None) == (None, None)
    assert tool_fields(("only one",)) == (None, None)


# ------------------------------------------------------------------------------ the errors


@pytest.mark.network  # a real ptxas release from PyPI
def test_a_ptxas_too_old_for_the_target_is_an_error_with_the_fix(tmp_path: Path) -> None:
    """A real CUDA 12.4 ptxas, about to assemble sm_100 (12.8 on can): Triton's choice for
    sm_100 names its variable in the fix, and doctor for that target."""
    old = str(real_ptxas("12.4"))
    plan = _plan(tmp_path)
    error = ptxas_error(100, knobs.NvidiaTool(old, "12.4"), plan, NAMESPACE)
    assert isinstance(error, MissingComponentError)
    text = str(error)
    assert f"Triton would run {old} (CUDA release 12.4) to assemble sm_100" in text
    assert "needs 12.8 or newer" in text
    variable = "TRITON_PTXAS_BLACKWELL_PATH" if runs_ptxas_blackwell(100) else "TRITON_PTXAS_PATH"
    assert f"set {variable}" in text and "`triton-toolchain doctor --arch 100`" in text


@pytest.mark.network  # a real ptxas release from PyPI
def test_the_users_own_setting_is_named_with_its_value(tmp_path: Path) -> None:
    """The user set TRITON_PTXAS_PATH to a real CUDA 12.4 ptxas (fine for the targets
    below the switch it must serve) and Triton runs it for sm_88, which only CUDA 13.0
    on assembles: the fix says to change or unset that setting, quoting it."""
    assert _tritons_choice(88) == "ptxas"
    old = str(real_ptxas("12.4"))
    plan = _plan(tmp_path, TRITON_PTXAS_PATH=old)
    assert _chosen(plan, "ptxas") == old
    error = ptxas_error(88, knobs.NvidiaTool(old, "12.4"), plan, NAMESPACE)
    assert error is not None
    assert f"TRITON_PTXAS_PATH is set to {old!r}, which Triton runs for sm_88" in str(error)
    assert "or unset it to let triton-toolchain choose" in str(error)


@pytest.mark.network  # a real ptxas release from PyPI
def test_the_chosen_ptxas_passes_and_a_fall_back_to_another_is_an_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    component = "ptxas-blackwell" if runs_ptxas_blackwell(90) else "ptxas"
    chosen = _chosen(plan, component)
    release = plan["toolchain"]["components"][component]["version"]
    assert ptxas_error(90, knobs.NvidiaTool(chosen, release), plan, NAMESPACE) is None
    other = str(real_ptxas("13.1"))
    error = ptxas_error(90, knobs.NvidiaTool(other, "13.1"), plan, NAMESPACE)
    assert isinstance(error, MissingComponentError)
    assert f"Triton fell back to {other} for sm_90: the chosen " in str(error)
    assert "did not run when Triton asked its version" in str(error)


def test_triton_finding_no_ptxas_names_the_variable_for_the_target() -> None:
    error = no_ptxas(100, RuntimeError("Cannot find ptxas-blackwell"))
    variable = "TRITON_PTXAS_BLACKWELL_PATH" if runs_ptxas_blackwell(100) else "TRITON_PTXAS_PATH"
    assert str(error).startswith("Triton found no ptxas for sm_100 (Cannot find ptxas-blackwell)")
    assert f"set {variable}" in str(error)
    # Where Triton passes no target (3.4, 3.5): the ptxas for every target.
    assert "set TRITON_PTXAS_PATH (ptxas, what this Triton runs for every target)" in str(
        no_ptxas(None, RuntimeError("none"))
    )


def test_a_wrong_setting_stops_the_step_that_uses_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ptxas"
    plan = _plan(tmp_path, TRITON_PTXAS_PATH=str(missing))
    error = setting_error(plan, "compile")
    assert isinstance(error, SettingError)
    assert f"TRITON_PTXAS_PATH={str(missing)!r}" in str(error)
    assert setting_error(plan, "build") is None  # the launcher's build does not use it


def test_no_driver_is_explained_where_triton_asks_for_it(tmp_path: Path) -> None:
    """This machine has no NVIDIA driver; the driver variable names an empty directory."""
    empty = tmp_path / "empty"
    empty.mkdir()
    plan = _plan(tmp_path, TRITON_LIBCUDA_PATH=str(empty))
    assert plan["drivers"]["nvidia"]["library"] is None
    error = missing_driver(plan)
    assert isinstance(error, MissingComponentError) and "libcuda" in str(error)
    said = "0 active drivers ([]). There should only be one."
    active = no_active_driver(plan, said)
    assert isinstance(active, RuntimeError)
    assert str(active).startswith(said + " triton-toolchain found no usable NVIDIA driver")
    assert "`triton-toolchain doctor`" in str(active)
