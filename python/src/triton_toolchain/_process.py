"""What the shim does to this process: the NVIDIA driver it loads by absolute path
(and which driver libraries are mapped already, from ``/proc/self/maps``), the
functions it replaces in other packages' modules, and the report of what it applied.

Each replacement is recorded with the original, made once, and never made over a
replacement someone else installed after ours (``Patches.patch``); the replacement
carries the original in ``ORIGINAL``.

Pure standard library, plain classes (no dataclasses): this is on the activation fast
path, where every module and class costs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

MAPS = "/proc/self/maps"
MAPS_LIMIT = 64 << 20
MAPS_CHUNK = 1 << 16  # a larger buffer costs more to allocate than the reads it saves


def loaded_drivers() -> list[str]:
    """Paths of the ``libcuda.so*`` files mapped into this process, in the order they
    appear; none where ``/proc/self/maps`` cannot be read."""
    try:
        fd = os.open(MAPS, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
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
    text = b"".join(chunks)
    if b"/libcuda.so" not in text:
        return []
    found: dict[str, None] = {}
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        fields = line.split(None, 5)
        path = fields[5] if len(fields) == 6 else ""
        if os.path.basename(path).startswith("libcuda.so"):
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
    import ctypes

    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


ORIGINAL = "__triton_toolchain_original__"
Namespace = dict[str, Any]


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
