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

Every path is written as it is, so only paths of plain characters (``SAFE``) can be
said: pkg-config splits ``Cflags`` at spaces and expands ``$``.
"""

from __future__ import annotations

import os
import re

from .. import __version__
from ..resolver._catalog import DRIVER_SONAME
from ..resolver._model import Toolchain

FILE_NAME = "triton-toolchain.pc"
# Characters a path may have to be written into a .pc file unquoted.
# (\Z, not $: a path ending in a newline would be a line of its own.)
SAFE = re.compile(r"/[A-Za-z0-9_./+@%,=:~-]*\Z")
# (variable, component, what it is), in the file's order.
VARIABLES = (
    ("python_include", "python-headers", "Python.h's directory"),
    ("cuda_include", "cuda-headers", "cuda.h's directory"),
    ("libcuda_link", "libcuda-link", "the directory to link libcuda against"),
    ("libcuda", "libcuda", "the NVIDIA driver loaded at run time"),
)


class Unsayable(ValueError):
    """A path that a .pc file cannot hold; the message names the component and path."""


def missing(tc: Toolchain) -> list[str]:
    """The components of ``VARIABLES`` the resolution did not find."""
    return [component for _, component, _ in VARIABLES if tc[component].path is None]


def pc_text(tc: Toolchain) -> str:
    """The ``triton-toolchain.pc`` of ``tc``; raises ``Unsayable`` for a path with
    characters pkg-config would split or expand."""
    values: dict[str, str] = {}
    for variable, component, _ in VARIABLES:
        path = tc[component].path
        if path is None:
            continue
        if not SAFE.match(path):
            raise Unsayable(
                f"{component}: {path!r} has characters a .pc file cannot hold unquoted "
                "(spaces, $, quotes, non-ASCII); fix: install it under a plain path or set "
                "its variable to one (`triton-toolchain doctor` names it)"
            )
        values[variable] = path
    cflags = [f"-I${{{v}}}" for v in ("python_include", "cuda_include") if v in values]
    libs = []
    if "libcuda_link" in values:
        stub = os.path.lexists(os.path.join(values["libcuda_link"], "libcuda.so"))
        libs = ["-L${libcuda_link}", "-lcuda" if stub else f"-l:{DRIVER_SONAME}"]
    lines = [
        f"# Written by `triton-toolchain pkg-config` ({__version__}) from this machine's",
        "# resolution: run it again when the toolchain changes.",
        *(f"# {variable}: {what}" for variable, _, what in VARIABLES),
    ]
    lines += [f"{v}={values[v]}" for v, _, _ in VARIABLES if v in values]
    absent = missing(tc)
    if absent:
        lines.append(f"missing={','.join(absent)}")
    lines += [
        "",
        "Name: triton-toolchain",
        "Description: The toolchain OpenAI Triton uses here: Python.h, cuda.h, the NVIDIA "
        "driver's link directory",
        f"Version: {__version__}",
        f"Cflags: {' '.join(cflags)}",
        f"Libs: {' '.join(libs)}",
    ]
    return "\n".join(lines) + "\n"
