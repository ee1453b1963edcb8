"""What every layer of the shim needs of this process: Triton's GPU backends
(``BACKENDS``), the replacements made in it (``Patches``, each replacement carrying the
original as ``ORIGINAL``), what one
application did (``Report``), the GPU drivers mapped into it (``loaded_drivers``)
and loading one by its absolute path (``preload_driver``), and the user's own
environment (``user_environ``: ``os.environ`` without the values the shim wrote).

The bottom of the package: the adapters, discovery, the plan and the activation take
these from here, and this module imports none of the package's (``tests/
test_architecture.py``). Pure standard library and plain classes: it is on the
activation fast path, which every process that imports Triton or torch pays for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

Namespace = dict[str, Any]  # a module's globals, as Triton's functions see them

# ------------------------------------------------------------------ Triton's GPU backends
# What the runtime needs of each backend before any resolution (the driver's SONAME, to
# see it mapped into the process; Triton's backend package, to find the modules to apply
# to), as data: one row per backend. The catalog's components name their backend
# (``_catalog.Component.backend``) and take the driver's SONAME from here. A backend's
# name is also Triton's: its knob group (``triton.knobs.nvidia``) and its key in
# ``triton.backends.backends``.


class Backend:
    """``driver_soname``: the name Triton, torch and the launcher load the driver by
    (``libcuda.so.1``); ``triton_package``: Triton's package of the backend, whose
    ``compiler`` and ``driver`` modules the adapter applies to. (A plain class: this is
    on every process's import path, where a ``NamedTuple`` costs a compile.)"""

    __slots__ = ("driver_soname", "triton_package")

    def __init__(self, *, driver_soname: str, triton_package: str) -> None:
        self.driver_soname = driver_soname
        self.triton_package = triton_package

    @property
    def driver_stem(self) -> str:
        """The driver's file name up to ``.so`` (``libcuda.so``), which every file of the
        driver's starts with (``libcuda.so.1``, ``libcuda.so.580.159.04``, a stub's
        ``libcuda.so``)."""
        return self.driver_soname.partition(".so")[0] + ".so"


BACKENDS: dict[str, Backend] = {
    "nvidia": Backend(driver_soname="libcuda.so.1", triton_package="triton.backends.nvidia"),
    # Triton's AMD backend loads the HIP runtime by the unversioned name in every place it
    # looks but ``ldconfig -p`` (3.9 ``backends/amd/driver.py``,
    # ``_get_path_to_hip_runtime_dylib``); the library's own SONAME is versioned
    # (``libamdhip64.so.6``), which ``TRITON_LIBHIP_PATH`` accepts.
    "amd": Backend(driver_soname="libamdhip64.so", triton_package="triton.backends.amd"),
}


# -------------------------------------------------------- what the shim did to the process


class Shim:
    """What the shim did to this process (one, ``SHIM``, under ``LOCK``): the
    environment variables it wrote (``env``: name -> value) and the driver it loaded,
    or found mapped already (``driver``)."""

    __slots__ = ("driver", "env")

    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.driver: str | None = None


LOCK = threading.RLock()  # this process's activation (``_activate``) and ``SHIM``
SHIM = Shim()


def user_environ() -> dict[str, str]:
    """``os.environ`` without the values the shim wrote: what the user set."""
    with LOCK:
        return {k: v for k, v in os.environ.items() if SHIM.env.get(k) != v}


def loaded_by_shim() -> frozenset[str]:
    """The driver the shim loaded into the process (not someone else's), resolved."""
    with LOCK:
        return frozenset({os.path.realpath(SHIM.driver)} if SHIM.driver else ())


# ------------------------------------------------------------ the driver in this process

MAPS = "/proc/self/maps"
MAPS_LIMIT = 64 << 20
MAPS_CHUNK = 1 << 16  # a larger buffer costs more to allocate than the reads it saves


def loaded_drivers(maps: str = MAPS, stems: tuple[str, ...] | None = None) -> list[str]:
    """Paths of the drivers' files (``libcuda.so*``: ``drivers_in``) mapped into this
    process, in the order they
    appear in ``maps`` (``/proc/self/maps``; discovery reads it under its host's root,
    ``Host.mapped_drivers``); none where it cannot be read."""
    try:
        fd = os.open(maps, os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return []
    chunks, size = [], 0
    try:
        while size < MAPS_LIMIT:
            chunk = os.read(fd, MAPS_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return []
    finally:
        os.close(fd)
    return drivers_in(b"".join(chunks), stems or DRIVER_STEMS)


# What every file of the driver the activation loads is named from
# (``Backend.driver_stem``): NVIDIA's only. The HIP runtime is never loaded by the shim
# (Triton's AMD backend opens it itself, by the path the shim names), so a mapped
# ``libamdhip64`` says nothing about ``libcuda``; ``drivers_in(text, (AMD_STEM,))`` finds it.
DRIVER_STEMS = (BACKENDS["nvidia"].driver_stem,)
AMD_STEM = BACKENDS["amd"].driver_stem


def drivers_in(text: bytes, stems: tuple[str, ...] = DRIVER_STEMS) -> list[str]:
    """The paths of the drivers' files in the bytes of a ``/proc/PID/maps`` file (those
    whose name starts with one of ``stems``, each backend's: ``libcuda.so*``), in order,
    each once (any bytes: a path may hold any byte but NUL and newline)."""
    if not any(f"/{stem}".encode() in text for stem in stems):
        return []
    found: dict[str, None] = {}
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        fields = line.split(None, 5)
        path = fields[5] if len(fields) == 6 else ""
        if os.path.basename(path).startswith(stems):
            found[path] = None
    return list(found)


def preload_driver(path: str, loaded: list[str] | None = None) -> str:
    """Load the driver ``path`` (absolute) with ``RTLD_GLOBAL`` unless a ``libcuda.so*``
    is already mapped into this process; return the path of the driver now loaded.

    Afterwards ``dlopen("libcuda.so.1")`` by bare name, from torch's CUDA runtime,
    Triton's ``ctypes`` probe or ``driver.c``, returns this library (the dynamic loader
    matches loaded objects by SONAME before it searches ``LD_LIBRARY_PATH``, whose empty
    entries mean the current directory). A driver already loaded is kept: two drivers
    in one process cannot work; the resolver reports that one as found in the process.
    ``loaded``: ``loaded_drivers()`` as the caller has just read it.
    """
    if loaded is None:
        loaded = loaded_drivers()
    if loaded:
        return loaded[0]
    if not os.path.isabs(path):
        raise ValueError(f"the driver must be loaded by its absolute path, not {path!r}")
    import ctypes  # noqa: PLC0415  only where a driver is loaded (ctypes: ~1 ms)

    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


# ---------------------------------------------------------------- patches and the report

ORIGINAL = "__triton_toolchain_original__"


class Report:
    """What one application did: settings made (``"knobs.nvidia.ptxas"``, ``"env:CC"``,
    ``"patch:...get_ptxas"`` -> value) and left alone (-> why)."""

    def __init__(self) -> None:
        self.applied: dict[str, str] = {}
        self.kept: dict[str, str] = {}
        self.notes: list[str] = []


class Patches:
    """The replacements made in this process: ``(namespace, name) -> (original, ours)``."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, str], tuple[object, object]] = {}

    def patch(
        self, where: str, namespace: Namespace, attr: str, make: Callable[[Any], object]
    ) -> bool:
        """Replace ``namespace[attr]`` by ``make(original)`` unless it is absent or someone
        replaced ours since. True when ours is in place."""
        if attr not in namespace:
            return False
        key = (where, attr)
        present = namespace[attr]
        if key in self.made:
            original, ours = self.made[key]
            if present is ours:
                return True
            if present is not original:
                return False
        replacement = make(present)
        self.made[key] = (present, replacement)
        namespace[attr] = replacement
        return True

    def unpatch(self, where: str, namespace: Namespace, attr: str) -> None:
        """Put the original back, if ours is still in place."""
        key = (where, attr)
        if key in self.made:
            original, ours = self.made.pop(key)
            if namespace.get(attr) is ours:
                namespace[attr] = original
