"""Discovery on the machine layouts it was written for, against the installed Triton (3.9
by default; the nox sessions run this file against 3.6 and 3.3).

No manifest: each scenario runs ``scenario.py`` in a fresh interpreter inside a private
mount namespace (``triton_layouts.Namespace``) whose bind mounts put the layout at the
real system paths (``/etc/ld.so.cache``, ``/run/opengl-driver/lib``,
``/proc/driver/nvidia/version``, Triton's ``backends/nvidia/bin``), so the shim's
discovery finds it where it would on such a machine. Each scenario compiles for sm_80,
sm_90 and sm_100 (recording wrappers prove which ptxas ran for which target), then
Triton builds and loads its ``cuda_utils`` module against a driver stand-in, or fails
with the shim's explanation. The layouts where nothing can work (no driver, no
``Python.h``, a ptxas too old) are in test_build.py and test_activate.py.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import driver_standin
import elf_fixtures
import pytest
from triton_layouts import (
    Layout,
    Namespace,
    assembler_runs,
    blackwell_from,
    nvidia_dir,
    record_bundled_tools,
    recording_tool,
    run_scenario,
    scenario_env,
)
from triton_toolchain.resolver._discovery._driver import STUB_REASON

# Lays out NixOS, WSL2, container and GPU-machine roots at the real system paths, in
# private mount namespaces (unshare -m): root.
pytestmark = pytest.mark.root

ARCHS = (80, 90, 100)
GPU_NAMES = {80: "sm_80", 90: "sm_90a", 100: "sm_100a"}
COMPILE = [f"compile:{arch}" for arch in ARCHS]
ALL = [*COMPILE, "cuda_utils"]


def _layout(root: Path) -> Layout:
    """A layout with no manifest: only the log of the recording wrappers."""
    return Layout(root, root / "ptxas.log")


def _run(
    layout: Layout,
    namespace: Namespace,
    actions: list[str],
    *,
    stock: bool = False,
    **env: str,
) -> dict[str, Any]:
    """The scenario through the hook (``stock``: Triton alone, with its own cache)."""
    environ = scenario_env(layout, manifest=False, **env)
    assert "TRITON_TOOLCHAIN_MANIFEST" not in environ
    if stock:
        environ["TRITON_CACHE_DIR"] = str(layout.root / "stock-cache")
    return run_scenario(
        layout, "none" if stock else "hook", actions, env=environ, namespace=namespace
    )


def _components(report: dict[str, Any]) -> dict[str, Any]:
    """The resolved components, after checking that discovery, not a manifest, ran."""
    toolchain = report["activation"]["toolchain"]
    assert toolchain["manifest"] is None and not toolchain["strict"], toolchain
    components: dict[str, Any] = toolchain["components"]
    return components


def _assert_compiled_with(report: dict[str, Any], log: Path, tools: dict[int, str]) -> None:
    """Every target compiled, each assembled by ``tools[arch]`` (the path Triton ran),
    which is what the shim chose for the component Triton's ``get_ptxas`` takes there."""
    for action in COMPILE:
        assert report["results"][action]["ok"], report["results"][action]
    assert assembler_runs(log) == [(tools[arch], GPU_NAMES[arch]) for arch in ARCHS]
    components = _components(report)
    for arch in ARCHS:
        component = "ptxas-blackwell" if arch >= blackwell_from() else "ptxas"
        assert components[component]["path"] == tools[arch], (arch, components[component])


def _bundled_by_arch(bundled_bin: Path) -> dict[int, str]:
    """The bundled binary Triton's ``get_ptxas`` runs for each target."""
    return {
        arch: str(bundled_bin / ("ptxas-blackwell" if arch >= blackwell_from() else "ptxas"))
        for arch in ARCHS
    }


def _assert_loaded(
    report: dict[str, Any], libcuda: str, source: str, marker: str, *, mapped: str | None = None
) -> None:
    """``cuda_utils`` was built and loaded, and the one driver mapped is ``libcuda``'s
    file (``mapped``: its path as seen inside the namespace)."""
    assert report["results"]["cuda_utils"]["ok"], report["results"]["cuda_utils"]
    chosen = _components(report)["libcuda"]
    assert (chosen["path"], chosen["source"]) == (libcuda, source), chosen
    assert report["drivers_mapped"] == [mapped or os.path.realpath(libcuda)]
    assert report["standin_markers"] == [marker]


def _reasons(choice: dict[str, Any]) -> dict[str, str]:
    return {r["path"]: r["reason"] for r in choice["rejected"]}


def test_debian_multiarch_takes_the_x86_64_driver_from_the_linker_cache(tmp_path: Path) -> None:
    """i386 and x86-64 drivers in a real linker cache at /etc/ld.so.cache, no
    LD_LIBRARY_PATH: the i386 one is rejected by its ELF header, the x86-64 one loaded."""
    layout, namespace = _layout(tmp_path), Namespace()
    i386 = elf_fixtures.install_driver(tmp_path / "usr/lib/i386-linux-gnu", variant="i386")
    x86_64 = driver_standin.driver(tmp_path / "usr/lib/x86_64-linux-gnu", marker="x86_64")
    cache = elf_fixtures.write_ld_cache(tmp_path / "ld.so.cache", [i386.parent, x86_64.parent])
    namespace.bind(cache, "/etc/ld.so.cache")
    bundled = record_bundled_tools(namespace, tmp_path, layout.log)

    report = _run(layout, namespace, ALL)
    _assert_compiled_with(report, layout.log, _bundled_by_arch(bundled))
    _assert_loaded(report, str(x86_64), "discovered:ld.so.cache", "x86_64")
    libcuda = _components(report)["libcuda"]
    assert _reasons(libcuda)[str(i386)] == "ELF32 i386, this Python is x86-64"
    assert _components(report)["libcuda-link"]["path"] == str(x86_64.parent)


def test_nixos_driver_link_works_where_stock_triton_cannot_run_ldconfig(tmp_path: Path) -> None:
    """/run/opengl-driver/lib holds the driver, /sbin/ldconfig does not exist and
    /etc/ld.so.cache is empty, as on NixOS."""
    layout, namespace = _layout(tmp_path), Namespace()
    run = tmp_path / "run"
    driver_standin.driver(run / "opengl-driver" / "lib", marker="nixos")
    empty_cache = tmp_path / "empty-ld.so.cache"
    empty_cache.write_bytes(b"")
    sbin = Path("/sbin/ldconfig").resolve().parent  # /usr/sbin where /sbin is a link
    namespace.bind(run, "/run").bind(empty_cache, "/etc/ld.so.cache").tmpfs(sbin)
    bundled = record_bundled_tools(namespace, tmp_path, layout.log)

    report = _run(layout, namespace, ALL)
    _assert_compiled_with(report, layout.log, _bundled_by_arch(bundled))
    nixos = "/run/opengl-driver/lib/"
    _assert_loaded(
        report,
        nixos + "libcuda.so.1",
        "discovered:nixos",
        "nixos",
        mapped=nixos + f"libcuda.so.{elf_fixtures.REAL_VERSION}",
    )

    stock = _run(layout, namespace, ["cuda_utils"], stock=True)
    result = stock["results"]["cuda_utils"]
    assert result["type"] == "FileNotFoundError", result
    assert "/sbin/ldconfig" in result["message"]
    assert stock["drivers_mapped"] == []


def test_container_driver_on_ld_library_path(tmp_path: Path) -> None:
    """The driver only on LD_LIBRARY_PATH (the NVIDIA container toolkit's directory)."""
    layout, namespace = _layout(tmp_path), Namespace()
    driver = driver_standin.driver(tmp_path / "usr/local/nvidia/lib64", marker="container")
    bundled = record_bundled_tools(namespace, tmp_path, layout.log)

    report = _run(layout, namespace, ALL, LD_LIBRARY_PATH=str(driver.parent))
    _assert_compiled_with(report, layout.log, _bundled_by_arch(bundled))
    _assert_loaded(report, str(driver), "discovered:LD_LIBRARY_PATH", "container")


def test_gpu_host_loads_the_driver_of_the_kernel_modules_version(tmp_path: Path) -> None:
    """The reference GPU host: the kernel module is 580.159.04; LD_LIBRARY_PATH puts an
    older CUDA compat copy and a toolkit stub (with the libcuda.so.1 link Docker recipes
    make) before the real driver. Both are rejected; stock Triton loads the compat copy."""
    layout, namespace = _layout(tmp_path), Namespace()
    real = driver_standin.driver(tmp_path / "nvidia/lib64", marker="real")
    compat = driver_standin.driver(
        tmp_path / "cuda/compat", marker="compat", version=elf_fixtures.COMPAT_VERSION
    )
    stub = driver_standin.stub(tmp_path / "cuda/lib64")
    (stub.parent / "libcuda.so.1").symlink_to(stub.name)
    elf_fixtures.kernel_module(tmp_path, elf_fixtures.REAL_VERSION)
    namespace.bind(tmp_path / "proc/driver", "/proc/driver")
    bundled = record_bundled_tools(namespace, tmp_path, layout.log)
    env = {
        "LD_LIBRARY_PATH": os.pathsep.join(str(p.parent) for p in (compat, stub, real)),
        "CUDA_HOME": str(tmp_path / "cuda"),
    }

    report = _run(layout, namespace, ALL, **env)
    _assert_compiled_with(report, layout.log, _bundled_by_arch(bundled))
    _assert_loaded(report, str(real), "discovered:LD_LIBRARY_PATH", "real")
    libcuda = _components(report)["libcuda"]
    assert libcuda["version"] == elf_fixtures.REAL_VERSION
    reasons = _reasons(libcuda)
    assert reasons[str(compat)] == (
        f"libcuda {elf_fixtures.COMPAT_VERSION} (CUDA compat) does not match kernel module "
        f"{elf_fixtures.REAL_VERSION}"
    )
    assert reasons[str(stub.parent / "libcuda.so.1")] == STUB_REASON

    stock = _run(layout, namespace, ["cuda_utils"], stock=True, **env)
    assert stock["results"]["cuda_utils"]["ok"], stock["results"]
    assert stock["standin_markers"] == ["compat"]


def test_unbundled_ptxas_from_cuda_home(tmp_path: Path) -> None:
    """Triton's backends/nvidia/bin is empty (a distribution package without NVIDIA's
    binaries); $CUDA_HOME/bin/ptxas (Triton's own ptxas-blackwell, copied) assembles
    every target. Stock Triton finds no ptxas."""
    layout, namespace = _layout(tmp_path), Namespace()
    copy = tmp_path / "ptxas-copy" / "ptxas"
    copy.parent.mkdir()
    shutil.copy2(nvidia_dir() / "bin" / "ptxas-blackwell", copy)
    cuda_ptxas = recording_tool(tmp_path / "cuda/bin/ptxas", copy, layout.log)
    driver = driver_standin.driver(tmp_path / "driver", marker="driver")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    namespace.bind(empty, nvidia_dir() / "bin")
    env = {"CUDA_HOME": str(tmp_path / "cuda"), "LD_LIBRARY_PATH": str(driver.parent)}

    report = _run(layout, namespace, ALL, **env)
    _assert_compiled_with(report, layout.log, dict.fromkeys(ARCHS, str(cuda_ptxas)))
    components = _components(report)
    for name in ("ptxas", "ptxas-blackwell"):
        chosen = components[name]
        assert (chosen["path"], chosen["source"]) == (str(cuda_ptxas), "discovered:CUDA_HOME")
    _assert_loaded(report, str(driver), "discovered:LD_LIBRARY_PATH", "driver")

    stock = _run(layout, namespace, ["compile:80"], stock=True, **env)
    result = stock["results"]["compile:80"]
    assert (result["type"], result["message"]) == ("RuntimeError", "Cannot find ptxas")
    assert assembler_runs(layout.log) == [(str(cuda_ptxas), GPU_NAMES[a]) for a in ARCHS]


def test_conda_compiler_and_stub_without_a_driver(tmp_path: Path) -> None:
    """An active conda environment with conda's compiler and CUDA's link stub, no gcc on
    PATH and no driver: kernels compile, and the launcher's build stops with the shim's
    explanation instead of a linker error."""
    layout, namespace = _layout(tmp_path), Namespace()
    prefix = tmp_path / "conda"
    cc_log = tmp_path / "cc.log"
    conda_cc = recording_tool(
        prefix / "bin" / "x86_64-conda-linux-gnu-cc", Path(driver_standin.GCC), cc_log
    )
    stub = driver_standin.stub(prefix / "lib")
    bundled = record_bundled_tools(namespace, tmp_path, layout.log)
    env = {"CONDA_PREFIX": str(prefix), "PATH": str(prefix / "bin")}

    report = _run(layout, namespace, ALL, **env)
    _assert_compiled_with(report, layout.log, _bundled_by_arch(bundled))
    components = _components(report)
    assert (components["cc"]["path"], components["cc"]["source"]) == (
        str(conda_cc),
        "discovered:CONDA_PREFIX",
    )
    assert cc_log.read_text().split() == [str(conda_cc), "-v"]  # judged, never asked to build
    assert components["libcuda-link"]["path"] == str(stub.parent)
    result = report["results"]["cuda_utils"]
    assert result["type"] == "MissingComponentError", result
    assert "ToolchainError" in result["bases"]
    assert "libcuda not found" in result["message"] and "fix:" in result["message"]
    assert "nothing can be launched" in result["message"]
    assert f"link stub in {stub.parent}" in components["libcuda-link"]["notes"][0]
    assert report["drivers_mapped"] == []
