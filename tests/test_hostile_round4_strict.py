"""Hostile suite, round 4, class 3: a strict manifest rules at compile time too. Its
ptxas is the one that runs, or the compile stops with an error naming the manifest, the
entry and the reason; never another binary found by discovery, which strict turns off.
Real ptxas releases, a gcc-built stand-in driver, Triton's real ahead-of-time compile;
a wrapper around each ptxas logs what Triton runs."""

from __future__ import annotations

import json
from pathlib import Path

import driver_standin
import pytest
from fit_fixtures import compile_archs, installed_triton, real_ptxas, triton_package
from tool_fixtures import gpu_names_run, wrapper
from triton_toolchain.resolver._catalog import ptxas_for, triton_release

TRITON = installed_triton()
ROW = triton_release(TRITON)  # the sessions that run this file: Triton 3.6 and 3.9
NVIDIA = triton_package() / "backends" / "nvidia"


def _strict_manifest(directory: Path, driver: Path, **tools: Path) -> Path:
    """A strict schema-2 manifest giving Triton's own libdevice, ``tools`` (component ->
    path) and Triton's bundled binary for every other ptxas of the family."""
    components = {
        name: {"path": str(NVIDIA / "bin" / name)}
        for name in ("ptxas", "ptxas-blackwell")
        if (NVIDIA / "bin" / name).exists()
    }
    components.update({name: {"path": str(path)} for name, path in tools.items()})
    components["libdevice"] = {"path": str(NVIDIA / "lib" / "libdevice.10.bc")}
    manifest = directory / "manifest.json"
    document = {"schema": 2, "strict": True, "driver_dirs": [str(driver)], "components": components}
    manifest.write_text(json.dumps(document))
    return manifest


@pytest.mark.network
@pytest.mark.network  # a real ptxas release from PyPI
def test_a_strict_manifests_ptxas_named_by_an_advisory_is_the_one_that_runs(
    tmp_path: Path,
) -> None:
    """The manifest gives a CUDA 13.1 ptxas for Blackwell, which pytorch/pytorch#181248
    names at sm_100. Without strict the shim would run another that fits; strict, the
    manifest's runs, with a warning naming the advisory and the manifest."""
    component = ptxas_for(100, ROW)
    log = tmp_path / "runs.log"
    mine = wrapper(tmp_path / "mine" / component, real_ptxas("13.1"), log=log)
    driver = driver_standin.driver(tmp_path / "drv", cuda_version=13010).parent
    manifest = _strict_manifest(tmp_path, driver, **{component: mine})
    results, _err = compile_archs(tmp_path / "home", [100], TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    assert results[100]["ok"], results
    assert gpu_names_run(log) == ["sm_100a"]
    (warning,) = results[100]["warnings"]
    assert "pytorch/pytorch#181248" in warning, warning
    assert f"the strict manifest {manifest} names it" in warning, warning


@pytest.mark.network
@pytest.mark.parametrize("arch", [90, 100])
@pytest.mark.network  # a real ptxas release from PyPI
def test_a_strict_manifests_ptxas_the_driver_cannot_load_stops_naming_the_entry(
    tmp_path: Path, arch: int
) -> None:
    """The manifest gives a CUDA 13.5 ptxas; the driver it names supports CUDA 12.8.
    Its cubins would not load: the compile stops with a ``SettingError`` naming the
    manifest, the entry and the reason. Triton's own ptxas, which would fit, is not run
    in its place (without strict it would be, with a warning)."""
    component = ptxas_for(arch, ROW)
    log = tmp_path / "runs.log"
    mine = wrapper(tmp_path / "mine" / component, real_ptxas("13.5"), log=log)
    bundled_log = tmp_path / "bundled.log"
    others = {
        name: wrapper(tmp_path / "bundled" / name, NVIDIA / "bin" / name, log=bundled_log)
        for name in ("ptxas", "ptxas-blackwell")
        if name != component and (NVIDIA / "bin" / name).exists()
    }
    driver = driver_standin.driver(tmp_path / "drv", cuda_version=12080).parent
    manifest = _strict_manifest(tmp_path, driver, **others, **{component: mine})
    results, _err = compile_archs(
        tmp_path / "home", [arch], TRITON_TOOLCHAIN_MANIFEST=str(manifest)
    )
    error = str(results[arch]["error"])
    assert error.startswith("SettingError"), results
    for words in (
        f"the strict manifest {manifest}",
        f"components.{component}",
        str(mine),
        "supports CUDA 12.8",
        'drop "strict"',
    ):
        assert words in error, error
    assert gpu_names_run(log) == [] and gpu_names_run(bundled_log) == []
