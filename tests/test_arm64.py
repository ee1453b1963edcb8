"""Discovery and ``doctor`` under an arm64 interpreter, on arm64 machine layouts.

The interpreter is Debian's arm64 python3 (tools/arm64-sysroot.sh prepares the root and
caches it), run by qemu-user through binfmt_misc. Each test builds a layout as a
directory tree of real arm64 ELF files (the driver and link stubs from gcc's cross
compiler; ptxas, ``cuda.h``, ``crt/``, libdevice and ``libcudart`` from NVIDIA's CUDA
12.8 aarch64 wheels), then, in a private mount namespace, stacks it over the Debian root
with overlayfs, runs the root's arm64 ``ldconfig`` where the machine has a linker cache,
and runs ``python3 -m triton_toolchain doctor`` (``--json``, then the screen; the shim's
source bound at /opt/triton-toolchain) in a ``chroot`` there: the shim sees the layout at
the real system paths, as on such a machine, and runs the arm64 ptxas it finds. Nothing
outside the namespace changes. No Triton or torch there: doctor judges the components.

Layouts: a GH200-style server (the driver in /usr/lib/aarch64-linux-gnu, an sbsa CUDA
toolkit), Jetson (JetPack 6/7's .../nvidia and L4T r32-r35's .../tegra, no ld.so.conf.d
entry), NixOS on aarch64, a container with the driver mounted, and an x86-64 library
planted where the arm64 driver is expected.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import elf_fixtures
import pytest
from triton_layouts import SRC, Namespace

# Registers qemu-aarch64 with binfmt_misc (root) and builds an arm64 root with
# tools/arm64-sysroot.sh, which downloads Debian's and NVIDIA's arm64 packages.
pytestmark = [pytest.mark.root, pytest.mark.network, pytest.mark.repo]

REPO = Path(__file__).resolve().parent.parent
SYSROOT_SCRIPT = REPO / "tools" / "arm64-sysroot.sh"
MULTIARCH = "usr/lib/aarch64-linux-gnu"
CUDA_RELEASE = "12.8"  # nvidia-cuda-nvcc-cu12 12.8.93, as the script fetches it
DOCTOR_TIMEOUT_S = 300


@dataclass(frozen=True)
class Arm64:
    """The prepared root and the arm64 CUDA pieces (``bin``, ``include``, ``nvvm``, ``lib``)."""

    root: Path
    toolkit: Path
    # Bytecode of the shim and the standard library (Debian's postinst compiles it; dpkg
    # -x does not), written once per session under emulation: 4 s less per doctor.
    pycache: Path


@pytest.fixture(scope="session")
def arm64(tmp_path_factory: pytest.TempPathFactory) -> Arm64:
    """The arm64 root, prepared (or found in the cache) by tools/arm64-sysroot.sh."""
    done = subprocess.run(
        [_host_tool("bash"), str(SYSROOT_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"tools/arm64-sysroot.sh failed:\n{done.stderr}"
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    pycache = tmp_path_factory.mktemp("arm64-pycache")
    return Arm64(Path(values["root"]), Path(values["toolkit"]), pycache)


def install_toolkit(arm64: Arm64, prefix: Path, *, target: str = "sbsa-linux") -> Path:
    """An arm64 CUDA toolkit laid out as NVIDIA's installer does, at
    ``<prefix>/cuda-12.8`` with the ``cuda`` link to it: ``bin/ptxas``, ``nvvm/libdevice``,
    ``targets/<target>/include`` and ``targets/<target>/lib`` (``libcudart``, and the arm64
    link stub in ``stubs``). Returns the ``cuda`` link."""
    toolkit = prefix / f"cuda-{CUDA_RELEASE}"
    for part in ("bin", "nvvm"):
        shutil.copytree(arm64.toolkit / part, toolkit / part)
    for part in ("include", "lib"):
        shutil.copytree(arm64.toolkit / part, toolkit / "targets" / target / part)
    elf_fixtures.install_stub(toolkit / "targets" / target / "lib" / "stubs", variant="aarch64")
    (prefix / "cuda").symlink_to(toolkit.name)
    return prefix / "cuda"


def install_jetson_driver(directory: Path) -> Path:
    """Install like L4T: ``libcuda.so.1.1`` with ``libcuda.so.1`` and ``libcuda.so`` links
    to it (blakeblackshear/frigate#6458 lists them). Returns the ``libcuda.so.1`` path."""
    directory.mkdir(parents=True)
    real = directory / "libcuda.so.1.1"
    shutil.copyfile(elf_fixtures.built("aarch64"), real)
    real.chmod(0o755)
    (directory / "libcuda.so.1").symlink_to(real.name)
    (directory / "libcuda.so").symlink_to(real.name)
    return directory / "libcuda.so.1"


def kernel_module(layout: Path, version: str) -> Path:
    """``/proc/driver/nvidia/version`` as the open kernel module prints it on arm64."""
    path = layout / "proc-driver/nvidia/version"
    path.parent.mkdir(parents=True)
    path.write_text(
        f"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  {version}  "
        "Release Build  (dvs-builder@U22-I3-AE18-09-1)  Thu Oct  9 2025\n"
        "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
    )
    return path.parent.parent


def doctor(
    arm64: Arm64,
    layout: Path,
    *,
    ldconfig: bool = True,
    proc_driver: Path | None = None,
    hide_ldconfig: bool = False,
    **env: str,
) -> dict[str, Any]:
    """``doctor --json`` under the arm64 interpreter with ``layout`` over the Debian root
    (see the module docstring); ``ldconfig``: write /etc/ld.so.cache with the root's arm64
    ldconfig first; ``proc_driver``: a directory shown at /proc/driver; ``hide_ldconfig``:
    no ldconfig at all (an empty /usr/sbin), as on NixOS. Returns the report, with the
    screen's text of a second run under ``"screen"``."""
    work = layout.parent / (layout.name + "-mnt")
    upper, scratch, merged = work / "upper", work / "work", work / "merged"
    for directory in (upper, scratch, merged):
        directory.mkdir(parents=True)
    for mount_point in ("opt/triton-toolchain", "var/cache/pycache"):
        (layout / mount_point).mkdir(parents=True, exist_ok=True)
    namespace = Namespace()
    overlay = f"lowerdir={layout}:{arm64.root},upperdir={upper},workdir={scratch}"
    namespace.mounts.append(["-t", "overlay", "overlay", "-o", overlay, str(merged)])
    namespace.mounts.append(["-t", "proc", "proc", str(merged / "proc")])
    namespace.bind("/dev", merged / "dev").bind(SRC, merged / "opt/triton-toolchain")
    namespace.bind(arm64.pycache, merged / "var/cache/pycache")
    if proc_driver is not None:
        namespace.bind(proc_driver, merged / "proc/driver")
    if hide_ldconfig:
        namespace.tmpfs(merged / "usr/sbin")
    environ = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "PYTHONPATH": "/opt/triton-toolchain",
        "PYTHONPYCACHEPREFIX": "/var/cache/pycache",
        **env,
    }
    chroot = f"{_host_tool('chroot')} {merged}"  # the host's: PATH is the machine's
    python = f"{chroot} /usr/bin/python3 -m triton_toolchain doctor"
    # doctor's exit status: 0 ready, 1 something not ready (here: no Triton, no torch).
    script = (
        (f"{chroot} /sbin/ldconfig\n" if ldconfig else "")
        + f"{python} --json > {work / 'doctor.json'} || [ $? = 1 ]\n"
        + f"{python} || [ $? = 1 ]\n"
    )
    command = [_host_tool("env"), "-i", *(f"{k}={v}" for k, v in environ.items())]
    command += [_host_tool("sh"), "-ec", script]
    done = subprocess.run(
        namespace.argv(command),
        capture_output=True,
        text=True,
        timeout=DOCTOR_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"doctor under arm64 failed:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    report: dict[str, Any] = json.loads((work / "doctor.json").read_text())
    report["screen"] = done.stdout
    return report


def _host_tool(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} is not installed; install coreutils"
    return found


def _reasons(component: dict[str, Any]) -> dict[str, str]:
    return {r["path"]: r["reason"] for r in component["rejected"]}


def _assert_toolkit(report: dict[str, Any], cuda: str, target: str, source: str) -> None:
    """ptxas is the toolkit's arm64 binary (its release read by running it), ``cuda.h``
    (of the same release) and ``crt/`` are under the target directory of this machine,
    libdevice is the toolkit's; the screen names them. No CUDA home: no ``nvcc``."""
    components = report["components"]
    _assert_ptxas(report, f"{cuda}/bin/ptxas", source)
    include = f"{cuda}/targets/{target}/include"
    for name in ("cuda-headers", "cuda-crt-headers"):
        assert (components[name]["path"], components[name]["source"]) == (include, source)
    assert components["cuda-headers"]["version"] == CUDA_RELEASE
    libdevice = components["libdevice"]
    assert libdevice["path"] == f"{cuda}/nvvm/libdevice/libdevice.10.bc", libdevice
    home = components["cuda-home"]
    assert home["path"] is None and _reasons(home)[cuda] == "bin/nvcc does not exist", home
    assert _screen_row(report, "cuda-headers")[:3] == ["cuda-headers", "ok", CUDA_RELEASE]


def _assert_ptxas(report: dict[str, Any], path: str, source: str) -> None:
    """ptxas (for every target: 12.8 assembles sm_100 too) is the arm64 binary at
    ``path``, its release read by running it under emulation; the screen says so."""
    for name in ("ptxas", "ptxas-blackwell"):
        ptxas = report["components"][name]
        assert (ptxas["path"], ptxas["source"], ptxas["version"]) == (path, source, CUDA_RELEASE)
    lines = report["screen"].splitlines()
    header = " ".join(" ".join(lines[:2]).split())  # doctor wraps at 100 columns
    assert "), aarch64" in header and header.startswith("triton-toolchain "), header
    assert _screen_row(report, "ptxas")[:3] == ["ptxas", "ok", CUDA_RELEASE]


def _screen_row(report: dict[str, Any], component: str) -> list[str]:
    """The words of the component's row in doctor's table."""
    rows = [row.split() for row in report["screen"].splitlines()]
    return next((row for row in rows if row[:1] == [component]), [])


def test_arm64_root_is_arm64(arm64: Arm64) -> None:
    """The interpreter the other tests use is an arm64 ELF file, run through qemu: the shim
    there sees machine aarch64."""
    python = (arm64.root / "usr/bin/python3").resolve()
    assert python.read_bytes()[18:20] == (183).to_bytes(2, "little")  # e_machine EM_AARCH64
    done = subprocess.run(
        [
            _host_tool("chroot"),
            str(arm64.root),
            "/usr/bin/python3",
            "-c",
            "import os; print(os.uname().machine)",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.strip() == "aarch64"


def test_gh200_server_driver_from_the_arm64_linker_cache(arm64: Arm64, tmp_path: Path) -> None:
    """GH200: the driver in /usr/lib/aarch64-linux-gnu, the arm64 ldconfig's cache names it,
    the open kernel module's version matches; CUDA 12.8 for sbsa at /usr/local/cuda."""
    layout = tmp_path / "gh200"
    driver = elf_fixtures.install_driver(layout / MULTIARCH, "580.95.05", variant="aarch64")
    install_toolkit(arm64, layout / "usr/local")
    proc_driver = kernel_module(layout, "580.95.05")

    report = doctor(arm64, layout, proc_driver=proc_driver)
    libcuda = report["components"]["libcuda"]
    # Debian's /etc/ld.so.conf.d/aarch64-linux-gnu.conf lists /lib/aarch64-linux-gnu before
    # /usr/lib/aarch64-linux-gnu, the same directory under a merged /usr: the cache names
    # the driver by the first.
    machine_path = "/" + str(driver.relative_to(layout / "usr"))
    assert (libcuda["path"], libcuda["source"]) == (machine_path, "discovered:ld.so.cache")
    assert libcuda["version"] == "580.95.05"
    assert report["components"]["libcuda-link"]["path"] == os.path.dirname(machine_path)
    _assert_toolkit(report, "/usr/local/cuda", "sbsa-linux", "discovered:/usr/local/cuda")


@pytest.mark.parametrize(
    ("where", "target"),
    [("nvidia", "sbsa-linux"), ("tegra", "aarch64-linux")],
    ids=["jetpack6-7", "l4t-r35"],
)
def test_jetson_driver_without_an_ld_so_conf_entry(
    arm64: Arm64, tmp_path: Path, where: str, target: str
) -> None:
    """Jetson: libcuda.so.1 -> libcuda.so.1.1 in .../nvidia (JetPack 6 and 7) or .../tegra
    (L4T r32-r35), with no ld.so.conf.d entry naming the directory and so nothing in the
    linker cache: found in the machine's known driver directories. CUDA's target
    directory: sbsa-linux on Thor (CUDA 13), aarch64-linux on older L4T."""
    layout = tmp_path / where
    driver = install_jetson_driver(layout / MULTIARCH / where)
    install_toolkit(arm64, layout / "usr/local", target=target)

    report = doctor(arm64, layout)
    libcuda = report["components"]["libcuda"]
    machine_path = "/" + str(driver.relative_to(layout))
    assert (libcuda["path"], libcuda["source"]) == (machine_path, "discovered:system")
    assert libcuda["version"] is None  # libcuda.so.1.1 carries none, as WSL's
    assert report["components"]["libcuda-link"]["path"] == os.path.dirname(machine_path)
    _assert_toolkit(report, "/usr/local/cuda", target, "discovered:/usr/local/cuda")


def test_nixos_aarch64_driver_link_and_ptxas_on_path(arm64: Arm64, tmp_path: Path) -> None:
    """NixOS on aarch64: the driver in /run/opengl-driver/lib, no ldconfig and an empty
    linker cache; ptxas from a store path on PATH (``nix shell`` of cuda_nvcc)."""
    layout = tmp_path / "nixos"
    elf_fixtures.install_driver(layout / "run/opengl-driver/lib", variant="aarch64")
    (layout / "etc").mkdir()
    (layout / "etc/ld.so.cache").write_bytes(b"")
    store = layout / "nix/store/0c8vy2dcxsyv6yjq6kyby5fzx2w0f1sn-cuda_nvcc-12.8.93"
    shutil.copytree(arm64.toolkit / "bin", store / "bin")
    bin_dir = "/" + str((store / "bin").relative_to(layout))

    report = doctor(
        arm64, layout, ldconfig=False, hide_ldconfig=True, PATH=f"{bin_dir}:/usr/bin:/bin"
    )
    libcuda = report["components"]["libcuda"]
    assert (libcuda["path"], libcuda["source"]) == (
        "/run/opengl-driver/lib/libcuda.so.1",
        "discovered:nixos",
    )
    assert report["components"]["libcuda-link"]["path"] == "/run/opengl-driver/lib"
    _assert_ptxas(report, f"{bin_dir}/ptxas", "discovered:PATH")


def test_container_with_the_driver_mounted(arm64: Arm64, tmp_path: Path) -> None:
    """An arm64 CUDA container: the NVIDIA container toolkit mounts the host's driver at
    /usr/local/nvidia/lib64, which the image's LD_LIBRARY_PATH names; the image's toolkit
    carries a link stub, which is not the driver."""
    layout = tmp_path / "container"
    elf_fixtures.install_driver(layout / "usr/local/nvidia/lib64", variant="aarch64")
    install_toolkit(arm64, layout / "usr/local")

    report = doctor(arm64, layout, LD_LIBRARY_PATH="/usr/local/nvidia/lib64")
    libcuda = report["components"]["libcuda"]
    assert (libcuda["path"], libcuda["source"]) == (
        "/usr/local/nvidia/lib64/libcuda.so.1",
        "discovered:LD_LIBRARY_PATH",
    )
    assert report["components"]["libcuda-link"]["path"] == "/usr/local/nvidia/lib64"
    _assert_toolkit(report, "/usr/local/cuda", "sbsa-linux", "discovered:/usr/local/cuda")


def test_x86_64_driver_planted_where_the_arm64_one_belongs(arm64: Arm64, tmp_path: Path) -> None:
    """An x86-64 libcuda.so.1 in /usr/lib/aarch64-linux-gnu (copied from an amd64 image),
    and nothing else but the toolkit's link stub: the planted file is rejected by its ELF
    machine, and the launcher would link against the arm64 stub. With the arm64 driver
    in .../nvidia (JetPack 6), that one is chosen."""
    layout = tmp_path / "planted"
    planted = elf_fixtures.install_driver(layout / MULTIARCH, variant="x86_64")
    install_toolkit(arm64, layout / "usr/local")
    stubs = "/usr/local/cuda/targets/sbsa-linux/lib/stubs"
    planted_path = "/" + str(planted.relative_to(layout / "usr"))  # as the linker cache names it
    wrong = "ELF64 x86-64, this Python is AArch64"

    report = doctor(arm64, layout)
    libcuda = report["components"]["libcuda"]
    assert libcuda["path"] is None, libcuda
    assert wrong in _reasons(libcuda).values(), libcuda
    assert planted_path in [r["path"] for r in libcuda["rejected"] if r["reason"] == wrong]
    assert report["components"]["libcuda-link"]["path"] == stubs
    assert _screen_row(report, "libcuda")[:2] == ["libcuda", "MISSING"]

    driver = install_jetson_driver(layout / MULTIARCH / "nvidia")
    shutil.rmtree(layout.parent / (layout.name + "-mnt"))
    report = doctor(arm64, layout)
    libcuda = report["components"]["libcuda"]
    assert libcuda["path"] == "/" + str(driver.relative_to(layout)), libcuda
    assert planted_path in [r["path"] for r in libcuda["rejected"] if r["reason"] == wrong]
    assert report["components"]["libcuda-link"]["path"] == os.path.dirname(libcuda["path"])
