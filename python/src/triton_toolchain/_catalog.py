"""What Triton needs, as data: one entry per component, and the CUDA releases per GPU
architecture. Every other module reads these tables; none repeats them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["tool", "file", "dir", "driver"]
Stage = Literal["compile", "launch"]


@dataclass(frozen=True)
class ComponentSpec:
    """One piece of Triton's toolchain.

    ``env`` is Triton's own variable for it (``None`` where Triton has none);
    ``stage`` says which step needs it (``None``: optional); ``knob`` is the attribute
    of ``triton.knobs`` (3.4+) that takes it; ``fix`` is the advice when it is missing.
    """

    name: str
    what: str
    kind: Kind
    env: str | None
    stage: Stage | None
    knob: str | None
    fix: str


SPECS_TUPLE: tuple[ComponentSpec, ...] = (
    ComponentSpec(
        "ptxas",
        "PTX assembler for architectures below Triton's Blackwell switch",
        "tool",
        "TRITON_PTXAS_PATH",
        "compile",
        "nvidia.ptxas",
        "install a CUDA toolkit (or `pip install nvidia-cuda-nvcc`) or set TRITON_PTXAS_PATH "
        "to an absolute ptxas path",
    ),
    ComponentSpec(
        "ptxas-blackwell",
        "PTX assembler Triton runs for newer architectures",
        "tool",
        "TRITON_PTXAS_BLACKWELL_PATH",
        "compile",
        "nvidia.ptxas_blackwell",
        "install CUDA 12.8 or newer or set TRITON_PTXAS_BLACKWELL_PATH to an absolute ptxas path",
    ),
    ComponentSpec(
        "cuobjdump",
        "cubin inspection tool (optional)",
        "tool",
        "TRITON_CUOBJDUMP_PATH",
        None,
        "nvidia.cuobjdump",
        "install the CUDA toolkit's cuobjdump or set TRITON_CUOBJDUMP_PATH",
    ),
    ComponentSpec(
        "nvdisasm",
        "SASS disassembler (optional)",
        "tool",
        "TRITON_NVDISASM_PATH",
        None,
        "nvidia.nvdisasm",
        "install the CUDA toolkit's nvdisasm or set TRITON_NVDISASM_PATH",
    ),
    ComponentSpec(
        "cc",
        "C compiler that builds Triton's launcher",
        "tool",
        "CC",
        "launch",
        "build.cc",
        "install gcc or clang (Debian/Ubuntu: `apt install gcc`; conda: "
        "`conda install -c conda-forge c-compiler`) or set CC to an absolute compiler path",
    ),
    ComponentSpec(
        "python-headers",
        "directory holding Python.h for this interpreter",
        "dir",
        None,
        "launch",
        None,
        "install this Python's development headers",
    ),
    ComponentSpec(
        "cuda-headers",
        "directory holding cuda.h",
        "dir",
        "TRITON_CUDART_PATH",
        "launch",
        "build.cudart_path",
        "install Triton's wheel (it bundles cuda.h), a CUDA toolkit, or set TRITON_CUDART_PATH "
        "to the directory holding cuda.h",
    ),
    ComponentSpec(
        "cuda-crt-headers",
        "directory holding crt/host_config.h (optional)",
        "dir",
        "TRITON_CUDACRT_PATH",
        None,
        "build.cudacrt_path",
        "set TRITON_CUDACRT_PATH to the CUDA include directory holding crt/",
    ),
    ComponentSpec(
        "libdevice",
        "libdevice.10.bc, CUDA's math library in LLVM bitcode",
        "file",
        "TRITON_LIBDEVICE_PATH",
        "compile",
        "nvidia.libdevice_path",
        "install Triton's wheel (it bundles libdevice), a CUDA toolkit, or set "
        "TRITON_LIBDEVICE_PATH to an absolute libdevice.10.bc path",
    ),
    ComponentSpec(
        "libcuda-link",
        "directory to link the launcher against (driver or toolkit stub)",
        "dir",
        "TRITON_LIBCUDA_PATH",
        "launch",
        None,
        "install the NVIDIA driver, or a CUDA toolkit's stubs for building without a GPU, "
        "or set TRITON_LIBCUDA_PATH to the directory holding libcuda.so.1",
    ),
    ComponentSpec(
        "libcuda",
        "the NVIDIA driver library libcuda.so.1 loaded at run time",
        "driver",
        "TRITON_LIBCUDA_PATH",
        "launch",
        "nvidia.libcuda_path",
        "install the NVIDIA driver (on NixOS: hardware.nvidia / hardware.graphics; in a "
        "container: run it with the NVIDIA container toolkit) or set TRITON_LIBCUDA_PATH to "
        "the directory holding the driver's libcuda.so.1",
    ),
)

SPECS: dict[str, ComponentSpec] = {s.name: s for s in SPECS_TUPLE}
COMPONENT_NAMES: tuple[str, ...] = tuple(SPECS)
MANIFEST_COMPONENTS: tuple[str, ...] = tuple(n for n in COMPONENT_NAMES if n != "libcuda")
TOOLS: tuple[str, ...] = tuple(s.name for s in SPECS_TUPLE if s.kind == "tool" and s.name != "cc")

# The binary name each ptxas-family component runs as, and its name inside Triton's
# package (``triton/backends/nvidia/bin/<name>``).
TOOL_BINARIES: dict[str, str] = {
    "ptxas": "ptxas",
    "ptxas-blackwell": "ptxas",
    "cuobjdump": "cuobjdump",
    "nvdisasm": "nvdisasm",
}
BUNDLED_NAMES: dict[str, str] = {
    "ptxas": "ptxas",
    "ptxas-blackwell": "ptxas-blackwell",
    "cuobjdump": "cuobjdump",
    "nvdisasm": "nvdisasm",
}

# Interpreter architecture -> the names CUDA toolkits give its ``targets/<dir>``
# (``/usr/local/cuda/targets/x86_64-linux/include``), most likely first: ``sbsa-linux``
# is server ARM, ``aarch64-linux`` is Jetson.
CUDA_TARGET_DIRS: dict[str, tuple[str, ...]] = {
    "x86_64": ("x86_64-linux",),
    "aarch64": ("sbsa-linux", "aarch64-linux"),
    "ppc64le": ("ppc64le-linux",),
}

# CUDA releases able to assemble each architecture (Triton targets sm_XXa from 90 on):
# arch -> (first release, last release or None). CUDA 13.0 dropped sm_50..sm_72 and
# renamed sm_101 to sm_110. Sources: the CUDA toolkit release notes of each release.
ARCH_RELEASES: dict[int, tuple[tuple[int, int], tuple[int, int] | None]] = {
    50: ((6, 0), (12, 9)),
    52: ((7, 0), (12, 9)),
    53: ((7, 0), (12, 9)),
    60: ((8, 0), (12, 9)),
    61: ((8, 0), (12, 9)),
    62: ((8, 0), (12, 9)),
    70: ((9, 0), (12, 9)),
    72: ((10, 0), (12, 9)),
    75: ((10, 0), None),
    80: ((11, 0), None),
    86: ((11, 1), None),
    87: ((11, 4), None),
    89: ((11, 8), None),
    90: ((12, 0), None),  # sm_90a
    100: ((12, 8), None),
    101: ((12, 8), (12, 9)),
    103: ((12, 9), None),
    110: ((13, 0), None),
    120: ((12, 8), None),
    121: ((12, 9), None),
}


def parse_release(text: str) -> tuple[int, int] | None:
    """``"12.8"`` -> ``(12, 8)``; anything else -> ``None``."""
    major, _, minor = text.partition(".")
    if major.isdigit() and minor.split(".")[0].isdigit():
        return int(major), int(minor.split(".")[0])
    return None


def arch_problem(arch: int, release: str | None) -> str | None:
    """Why a ptxas of ``release`` cannot assemble ``sm_<arch>``, or ``None`` if it can.

    >>> arch_problem(90, "11.4")
    'release 11.4 cannot assemble sm_90a, needs 12.0 or newer'
    """
    limits = ARCH_RELEASES.get(arch)
    version = parse_release(release) if release else None
    if limits is None or version is None:
        return None
    first, last = limits
    name = f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"
    if version < first:
        return f"release {release} cannot assemble {name}, needs {first[0]}.{first[1]} or newer"
    if last is not None and version > last:
        dropped = f"{last[0]}.{last[1]}"
        return f"release {release} cannot assemble {name}, which CUDA dropped after {dropped}"
    return None
