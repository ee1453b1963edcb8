"""The one seam between discovery and the machine: filesystem root, environment,
interpreter and the installed packages that carry toolchain pieces.

Tests build a ``Host`` over a fake root in ``tmp_path``; ``Host.current()`` describes
this process. Only the fixed, well-known system locations (``/etc/ld.so.cache``,
``/run/opengl-driver/lib``, ``/usr/local/cuda``, ``/proc/driver/nvidia/version``...)
are taken under ``root``; paths that come from data (environment variables, the linker
cache's entries, a manifest) are used as they are.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import struct
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._fs import glob

# Interpreter architecture -> (ELF e_machine name as pyelftools spells it, ELF class).
ELF_MACHINES: dict[str, tuple[str, int]] = {
    "x86_64": ("EM_X86_64", 64),
    "i686": ("EM_386", 32),
    "aarch64": ("EM_AARCH64", 64),
    "ppc64le": ("EM_PPC64", 64),
}


@functools.cache
def interpreter_machine() -> str:
    """This interpreter's architecture, e.g. ``"x86_64"``; a 32-bit Python on a 64-bit
    kernel is ``"i686"``."""
    machine = os.uname().machine  # what platform.machine() reads, without importing it
    if machine in ("x86_64", "AMD64", "i386", "i586", "i686"):
        return "x86_64" if struct.calcsize("P") == 8 else "i686"
    return machine


@functools.cache
def python_include_dir() -> Path:
    """Where this interpreter's ``Python.h`` belongs, from ``sysconfig``. Debian's
    ``posix_local`` scheme points at /usr/local; its headers are in ``posix_prefix``'s
    include directory, as Triton itself assumes."""
    scheme = sysconfig.get_default_scheme()
    if scheme == "posix_local":
        scheme = "posix_prefix"
    return Path(sysconfig.get_paths(scheme=scheme)["include"])


@functools.cache
def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin and spec.origin not in ("namespace", "built-in"):
        return Path(spec.origin).parent
    return None


@functools.cache
def _namespace_dirs(name: str) -> tuple[Path, ...]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ()
    if spec is None or spec.submodule_search_locations is None:
        return ()
    return tuple(Path(p) for p in spec.submodule_search_locations)


@dataclass(frozen=True)
class Host:
    """The machine as discovery sees it.

    ``triton_dir``, ``torch_dir`` and ``nvidia_dirs`` are the installed ``triton``,
    ``torch`` and ``nvidia`` (pip CUDA wheels) package directories, found without
    importing them.
    """

    root: Path = Path("/")
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    machine: str = field(default_factory=interpreter_machine)
    python_version: tuple[int, int] = (sys.version_info[0], sys.version_info[1])
    python_include: Path | None = None  # None: this interpreter's, from sysconfig
    base_prefix: Path = Path(sys.base_prefix)
    prefix: Path = Path(sys.prefix)
    # Facts of this interpreter (architecture, sysconfig, where packages are) are read
    # once per process by Host.current(): installing a package into a running
    # interpreter is not followed.
    triton_dir: Path | None = None
    torch_dir: Path | None = None
    nvidia_dirs: tuple[Path, ...] = ()

    @classmethod
    def current(cls) -> Host:
        """This process: ``/``, ``os.environ``, ``sys``, and the packages on ``sys.path``."""
        return cls(
            triton_dir=_package_dir("triton"),
            torch_dir=_package_dir("torch"),
            nvidia_dirs=_namespace_dirs("nvidia"),
        )

    @property
    def include_dir(self) -> Path:
        """Where ``Python.h`` belongs: ``python_include``, else ``sysconfig``'s answer
        (read only when asked: resolving from a manifest does not need it)."""
        return self.python_include or python_include_dir()

    @property
    def output_cache(self) -> Path | None:
        """Where tools' answers are remembered (see ``_outputs``); ``None``: nowhere."""
        from ._outputs import cache_dir

        return cache_dir(self.environ)

    @property
    def elf_machine(self) -> str:
        return ELF_MACHINES.get(self.machine, ("EM_" + self.machine.upper(), 64))[0]

    @property
    def elf_class(self) -> int:
        return ELF_MACHINES.get(self.machine, ("", 64))[1]

    def at(self, path: str) -> Path:
        """A well-known absolute system path under this host's root:
        ``Host(root=Path("/tmp/r")).at("/etc/ld.so.cache")`` is ``/tmp/r/etc/ld.so.cache``."""
        return self.root / path.lstrip("/")

    def glob(self, pattern: str) -> list[Path]:
        """Sorted matches of an absolute glob pattern under the root, e.g. ``/opt/cuda*``."""
        return glob(self.root, pattern.lstrip("/"))
