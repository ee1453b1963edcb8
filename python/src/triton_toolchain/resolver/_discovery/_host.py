"""The one seam between discovery and the machine: filesystem root, environment,
interpreter and the installed packages that carry toolchain pieces.

Tests build a ``Host`` over a fake root in ``tmp_path``; ``Host.current()`` describes
this process. Only the fixed, well-known system locations (``/etc/ld.so.cache``,
``/run/opengl-driver/lib``, ``/usr/local/cuda``, ``/proc/driver/nvidia/version``...)
are taken under ``root``; paths that come from data (environment variables, the linker
cache's entries, a manifest) are used as they are. Every variable read through
``environ`` is recorded as a fact (``_observe``), as is every package lookup.
"""

from __future__ import annotations

import functools
import os
import struct
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...runtime import MAPS, loaded_drivers
from ...runtime._record import cache_dir
from .._catalog import MACHINES, TritonRelease, assigned_version, major_minor, triton_release
from .._observe import observe, observed_env
from . import _fs


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


class RecordedEnviron(Mapping[str, str]):
    """A read-only view of an environment that records every variable read."""

    def __init__(self, data: Mapping[str, str]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> str:
        value = self._data.get(key)
        observed_env(key, value)
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: str, default: object = None) -> str | None:  # type: ignore[override]
        value = self._data.get(key)
        observed_env(key, value)
        return value if value is not None else default  # type: ignore[return-value]

    def __contains__(self, key: object) -> bool:
        return self.get(str(key)) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def for_child(self) -> dict[str, str]:
        """The whole environment, for a tool's process, without recording it: a tool's
        answer is remembered by its file (``_answers``), not by the environment it ran
        in, so the activation record does not rest on that either (a new ``PWD`` or
        ``SHLVL`` is no reason to resolve again)."""
        return dict(self._data)


def child_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for a tool's process (``RecordedEnviron.for_child``)."""
    return environ.for_child() if isinstance(environ, RecordedEnviron) else dict(environ)


def _package(name: str) -> tuple[Path, ...]:
    return tuple(Path(p) for p in observe("package", name))


def triton_version(triton_dir: Path | None) -> tuple[int, int] | None:
    """``(major, minor)`` of the Triton in ``triton_dir``, from its ``__init__.py``'s
    ``__version__`` (``_catalog.assigned_version``, ``major_minor``: Triton is not
    imported)."""
    if triton_dir is None:
        return None
    try:
        text = _fs.read_regular(triton_dir / "__init__.py", 1 << 20)
    except _fs.ReadProblem:
        return None
    version = assigned_version(text.decode("utf-8", "replace"))
    return major_minor(version) if version else None


_NO_PACKAGES: Mapping[str, tuple[Path, ...]] = {}


class Host:
    """The machine as discovery sees it (read-only; ``replace`` makes a changed copy).

    ``triton_dir``, ``torch_dir`` and ``nvidia_dirs`` are the installed ``triton``,
    ``torch`` and ``nvidia`` (pip CUDA wheels) package directories, found without
    importing them; ``triton`` is the Triton release's row of ``TRITON_RELEASES``.
    ``packages`` gives the directories of the others (none by default); ``None``: the
    import system's answer, looked up (and recorded as a fact) when first asked, so a
    resolution from a manifest, which never asks, does not rest on them.

    A plain class, not a dataclass: ``dataclasses`` and making the class cost the
    resolver's import a few milliseconds in every process that misses (issue 23).
    """

    root: Path
    environ: Mapping[str, str]
    machine: str
    python_version: tuple[int, int]
    python_include: Path | None  # None: this interpreter's, from sysconfig
    base_prefix: Path
    prefix: Path
    # Facts of this interpreter (architecture, sysconfig, where packages are) are read
    # once per Host (the packages other than Triton when first asked): installing a
    # package into a running interpreter is not followed by a Host already made.
    triton_dir: Path | None
    packages: Mapping[str, tuple[Path, ...]] | None
    triton: TritonRelease | None
    # Run the tools even where a manifest records their versions (doctor, lock).
    verify: bool
    # Drivers the shim itself loaded into this process: not "loaded by someone else".
    loaded_by_shim: frozenset[str]
    # The drivers mapped into this process as the caller has just read them
    # (``runtime.loaded_drivers``); ``None``: read when asked (``mapped_drivers``).
    mapped: tuple[str, ...] | None

    def __init__(
        self,
        *,
        root: Path = Path("/"),
        environ: Mapping[str, str] | None = None,  # None: os.environ, recorded
        machine: str | None = None,  # None: this interpreter's
        python_version: tuple[int, int] = (sys.version_info[0], sys.version_info[1]),
        python_include: Path | None = None,
        base_prefix: Path = Path(sys.base_prefix),
        prefix: Path = Path(sys.prefix),
        triton_dir: Path | None = None,
        packages: Mapping[str, tuple[Path, ...]] | None = _NO_PACKAGES,
        triton: TritonRelease | None = None,
        verify: bool = False,
        loaded_by_shim: frozenset[str] = frozenset(),
        mapped: tuple[str, ...] | None = None,
    ) -> None:
        self.__dict__.update(
            root=root,
            environ=RecordedEnviron(os.environ) if environ is None else environ,
            machine=interpreter_machine() if machine is None else machine,
            python_version=python_version,
            python_include=python_include,
            base_prefix=base_prefix,
            prefix=prefix,
            triton_dir=triton_dir,
            packages=packages,
            triton=triton,
            verify=verify,
            loaded_by_shim=loaded_by_shim,
            mapped=mapped,
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Host is read-only: {name}; use Host.replace")

    def replace(self, **changes: Any) -> Host:
        """A copy with ``changes`` (keyword arguments of ``Host``)."""
        fields = {k: v for k, v in self.__dict__.items() if k in Host.__annotations__}
        return Host(**{**fields, **changes})

    def __repr__(self) -> str:
        return f"Host(root={str(self.root)!r}, machine={self.machine!r}, verify={self.verify})"

    @classmethod
    def current(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        verify: bool = False,
        mapped: tuple[str, ...] | None = None,
    ) -> Host:
        """This process: ``/``, ``environ`` (default ``os.environ``), ``sys``, and the
        packages the import system finds; ``mapped``: the drivers mapped into it, as the
        caller has just read them (``None``: read when asked)."""
        triton_dir = next(iter(_package("triton")), None)
        return cls(
            environ=RecordedEnviron(os.environ if environ is None else environ),
            triton_dir=triton_dir,
            packages=None,
            triton=triton_release(triton_version(triton_dir)),
            verify=verify,
            mapped=mapped,
        )

    @functools.cached_property
    def torch_dir(self) -> Path | None:
        if self.packages is None:
            return next(iter(_package("torch")), None)
        return next(iter(self.packages.get("torch", ())), None)

    @functools.cached_property
    def rocm_sdk_dirs(self) -> tuple[Path, ...]:
        """TheRock's ``rocm_sdk`` package, which Triton's AMD backend asks first."""
        return _package("rocm_sdk") if self.packages is None else self.packages.get("rocm_sdk", ())

    @functools.cached_property
    def nvidia_dirs(self) -> tuple[Path, ...]:
        return _package("nvidia") if self.packages is None else self.packages.get("nvidia", ())

    @property
    def include_dir(self) -> Path:
        """Where ``Python.h`` belongs: ``python_include``, else ``sysconfig``'s answer
        (read only when asked: resolving from a manifest does not need it)."""
        return self.python_include or python_include_dir()

    @property
    def answers(self) -> Path | None:
        """Where tools' answers are remembered (``_answers``); ``None``: nowhere."""
        directory = cache_dir(self.environ)
        return Path(directory) if directory else None

    @property
    def elf_machine(self) -> str:
        facts = MACHINES.get(self.machine)
        return facts.elf_machine if facts else "EM_" + self.machine.upper()

    @property
    def elf_class(self) -> int:
        facts = MACHINES.get(self.machine)
        return facts.elf_class if facts else 64

    @property
    def cuda_targets(self) -> tuple[str, ...]:
        facts = MACHINES.get(self.machine)
        return facts.cuda_targets if facts else ()

    def mapped_drivers(self) -> list[str]:
        """The ``libcuda.so*`` files mapped into this process, from ``/proc/self/maps``
        under the root (a test's fake root may hold one). Not recorded as a fact: what
        one process loaded is no fact of the machine, and a resolution made with a
        driver mapped is never kept as an activation record (``_activate``). ``mapped``
        where the caller gave it: the activation reads the file once, and the resolution
        it keeps rests on what it read (no driver)."""
        if self.mapped is not None:
            return list(self.mapped)
        return loaded_drivers(str(self.at(MAPS)))

    def at(self, path: str) -> Path:
        """A well-known absolute system path under this host's root:
        ``Host(root=Path("/tmp/r")).at("/etc/ld.so.cache")`` is ``/tmp/r/etc/ld.so.cache``."""
        return self.root / path.lstrip("/")

    def glob(self, pattern: str) -> list[Path]:
        """Sorted matches of an absolute glob pattern under the root, e.g. ``/opt/cuda*``."""
        return _fs.glob(self.at(pattern))
