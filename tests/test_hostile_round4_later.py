"""Hostile suite, round 4, class 4: settings the process makes after ``import triton``.
torch's and vLLM's helpers set ``TRITON_PTXAS_PATH`` in ``os.environ`` after Triton is
imported and before the first compile; stock Triton reads it then. A setting is judged
the same whenever it is made: the user's wins over the knob the shim assigned, a wrong
one is the shim's error, and an advisory holds whichever variable names the tool.
Triton's real ahead-of-time compile; a wrapper around each ptxas logs what runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fit_fixtures import compile_archs, installed_triton, real_ptxas, triton_package
from tool_fixtures import gpu_names_run, wrapper
from triton_toolchain.resolver._catalog import ptxas_for, triton_release

ROW = triton_release(installed_triton())  # the sessions that run this file: Triton 3.6 and 3.9
BUNDLED = triton_package() / "backends" / "nvidia" / "bin"


@pytest.mark.parametrize("shim", [True, False], ids=["shim", "stock"])
def test_a_ptxas_set_after_import_is_the_one_that_runs(tmp_path: Path, shim: bool) -> None:
    """``TRITON_PTXAS_PATH`` set after ``import triton``: stock Triton runs it, and so
    does Triton with the shim (the knob the shim assigned at the import gives way)."""
    log = tmp_path / "runs.log"
    mine = wrapper(tmp_path / "mine" / "ptxas", BUNDLED / ptxas_for(80, ROW), log=log)
    results, _err = compile_archs(
        tmp_path / "home", [80], shim=shim, after_import={"TRITON_PTXAS_PATH": str(mine)}
    )
    assert results[80]["ok"], results
    assert gpu_names_run(log) == ["sm_80"]


def test_a_wrong_ptxas_set_after_import_is_the_shims_error(tmp_path: Path) -> None:
    """``TRITON_PTXAS_PATH=/nonexistent`` set after the import is refused at the compile
    as it is when set before: a ``SettingError`` naming the variable and the value."""
    before, _ = compile_archs(tmp_path / "a", [80], TRITON_PTXAS_PATH="/nonexistent")
    after, _ = compile_archs(
        tmp_path / "b", [80], after_import={"TRITON_PTXAS_PATH": "/nonexistent"}
    )
    for results in (before, after):
        error = str(results[80]["error"])
        assert error.startswith("SettingError"), results
        assert "TRITON_PTXAS_PATH='/nonexistent'" in error, error
    assert str(before[80]["error"]).split("\n")[0] == str(after[80]["error"]).split("\n")[0]


@pytest.mark.network
@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.network  # a real ptxas release from PyPI
def test_an_advisory_holds_for_a_ptxas_given_as_triton_ptxas_path(
    tmp_path: Path, when: str
) -> None:
    """Only ``TRITON_PTXAS_PATH`` set, to a CUDA 13.1 ptxas (pytorch/pytorch#181248 at
    sm_100), before or after the import: for sm_100 Triton runs ptxas-blackwell, and
    the shim does not route the compile to the user's ptxas that the advisory names;
    Triton's choice stands and the warning says why."""
    assert ptxas_for(100, ROW) == "ptxas-blackwell"
    log = tmp_path / "runs.log"
    mine = wrapper(tmp_path / "mine" / "ptxas", real_ptxas("13.1"), log=log)
    setting = {"TRITON_PTXAS_PATH": str(mine)}
    if when == "before":
        results, _err = compile_archs(tmp_path / "home", [100], **setting)
    else:
        results, _err = compile_archs(tmp_path / "home", [100], after_import=setting)
    assert results[100]["ok"], results
    assert gpu_names_run(log) == []
    warning = next(w for w in results[100]["warnings"] if "TRITON_PTXAS_PATH" in w)
    assert "pytorch/pytorch#181248" in warning and "Triton's choice stands" in warning
