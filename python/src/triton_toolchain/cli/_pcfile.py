"""``triton-toolchain.pc``: the resolution as pkg-config says it, for CMake
(``pkg_check_modules``), Meson (``dependency('triton-toolchain')``) and any build that
runs ``pkg-config --cflags --libs triton-toolchain``.

Variables ``python_include`` (``Python.h``'s directory), ``cuda_include`` (``cuda.h``'s),
``libcuda_link`` (the directory the launcher links against: the driver's, or a toolkit
stub) and ``libcuda`` (the run-time driver); ``Cflags`` has the two include directories,
``Libs`` the link directory and the driver library: ``-lcuda`` where the directory has
the unversioned ``libcuda.so``, else ``-l:libcuda.so.1`` (driver-only images lack
``libcuda.so``; Triton links so since triton-lang/triton#8668). A component not found
is left out and named by ``missing``.

For the AMD backend (``pkg-config --arch gfx942``, ``AMD``): ``python_include``,
``hip_include`` (``hip/hip_runtime.h``'s directory: the one Triton's AMD launcher
compiles against, its wheel's ``backends/amd/include``), ``libhip_link`` (the HIP
runtime's directory) and ``libamdhip64`` (the runtime); ``Cflags`` adds
``-D__HIP_PLATFORM_AMD__``, which the HIP headers require of a C compiler (Triton's
``driver.c`` defines it), and ``Libs`` is ``-lamdhip64`` where the directory has the
unversioned ``libamdhip64.so``, else the runtime's own file name (Debian's
``libamdhip64-5`` has only ``libamdhip64.so.5``).

Every path is written as it is, so only paths of plain characters (``SAFE``) can be
said: pkg-config splits ``Cflags`` at spaces and expands ``$``.
"""

import os
import re
from collections.abc import Mapping
from typing import NamedTuple

from .. import __version__
from ..resolver._catalog import DRIVER_SONAME

FILE_NAME = "triton-toolchain.pc"
# Characters a path may have to be written into a .pc file unquoted.
# (\Z, not $: a path ending in a newline would be a line of its own.)
SAFE = re.compile(r"/[A-Za-z0-9_./+@%,=:~-]*\Z")


class Backend(NamedTuple):
    """One backend's file: ``variables`` (variable, component, what it is) in the file's
    order, the variables ``Cflags`` includes, the link directory's variable, the
    library's, its unversioned name (``-l<name>`` where the directory has it), the
    name linked otherwise (``None``: the library's own file name) and its
    ``Description``."""

    variables: tuple[tuple[str, str, str], ...]
    includes: tuple[str, ...]
    defines: tuple[str, ...]
    link_dir: str
    library: str
    unversioned: str
    soname: str | None
    description: str


NVIDIA = Backend(
    variables=(
        ("python_include", "python-headers", "Python.h's directory"),
        ("cuda_include", "cuda-headers", "cuda.h's directory"),
        ("libcuda_link", "libcuda-link", "the directory to link libcuda against"),
        ("libcuda", "libcuda", "the NVIDIA driver loaded at run time"),
    ),
    includes=("python_include", "cuda_include"),
    defines=(),
    link_dir="libcuda_link",
    library="libcuda",
    unversioned="libcuda.so",
    soname=DRIVER_SONAME,
    description="Python.h, cuda.h, the NVIDIA driver's link directory",
)
AMD = Backend(
    variables=(
        ("python_include", "python-headers", "Python.h's directory"),
        ("hip_include", "hip-headers", "hip/hip_runtime.h's directory (Triton's launcher's)"),
        ("libhip_link", "libhip-link", "the HIP runtime's directory, to link against"),
        ("libamdhip64", "libamdhip64", "the HIP runtime loaded at run time"),
    ),
    includes=("python_include", "hip_include"),
    defines=("-D__HIP_PLATFORM_AMD__",),
    link_dir="libhip_link",
    library="libamdhip64",
    unversioned="libamdhip64.so",
    soname=None,
    description="Python.h, the HIP headers, the HIP runtime's link directory",
)
BACKENDS = {"nvidia": NVIDIA, "amd": AMD}


class Unsayable(ValueError):
    """A path that a .pc file cannot hold; the message names the component and path."""


def missing(paths: Mapping[str, str | None], backend: Backend = NVIDIA) -> list[str]:
    """The components of ``backend.variables`` without a path in ``paths``."""
    return [component for _, component, _ in backend.variables if not paths.get(component)]


def pc_text(paths: Mapping[str, str | None], backend: Backend = NVIDIA) -> str:
    """The ``triton-toolchain.pc`` of ``paths`` (component -> chosen path) for
    ``backend``; raises ``Unsayable`` for a path with characters pkg-config would split
    or expand."""
    values: dict[str, str] = {}
    for variable, component, _ in backend.variables:
        path = paths.get(component)
        if path is None:
            continue
        if not SAFE.match(path):
            raise Unsayable(
                f"{component}: {path!r} has characters a .pc file cannot hold unquoted "
                "(spaces, $, quotes, non-ASCII); fix: install it under a plain path or set "
                "its variable to one (`triton-toolchain doctor` names it)"
            )
        values[variable] = path
    cflags = [f"-I${{{v}}}" for v in backend.includes if v in values]
    cflags += list(backend.defines) if "hip_include" in values else []
    libs = []
    if backend.link_dir in values:
        link = values[backend.link_dir]
        unversioned = os.path.lexists(os.path.join(link, backend.unversioned))
        name = backend.unversioned[3:].partition(".so")[0]  # libcuda.so -> cuda
        versioned = backend.soname or os.path.basename(values[backend.library])
        libs = [f"-L${{{backend.link_dir}}}", f"-l{name}" if unversioned else f"-l:{versioned}"]
    lines = [
        f"# Written by `triton-toolchain pkg-config` ({__version__}) from this machine's",
        "# resolution: run it again when the toolchain changes.",
        *(f"# {variable}: {what}" for variable, _, what in backend.variables),
    ]
    lines += [f"{v}={values[v]}" for v, _, _ in backend.variables if v in values]
    absent = missing(paths, backend)
    if absent:
        lines.append(f"missing={','.join(absent)}")
    lines += [
        "",
        "Name: triton-toolchain",
        f"Description: The toolchain OpenAI Triton uses here: {backend.description}",
        f"Version: {__version__}",
        f"Cflags: {' '.join(cflags)}",
        f"Libs: {' '.join(libs)}",
    ]
    return "\n".join(lines) + "\n"
