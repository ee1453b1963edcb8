"""Which NVIDIA driver libraries this process has mapped (``/proc/self/maps``).

Pure standard library: the activation fast path asks it before reusing a record.
"""

from __future__ import annotations

import os

MAPS = "/proc/self/maps"
MAPS_LIMIT = 64 << 20


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
            chunk = os.read(fd, 1 << 20)
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


def preload_driver(path: str) -> str:
    """Load the driver ``path`` (absolute) with ``RTLD_GLOBAL`` unless a ``libcuda.so*``
    is already mapped into this process; return the path of the driver now loaded.

    Afterwards ``dlopen("libcuda.so.1")`` by bare name, from torch's CUDA runtime,
    Triton's ``ctypes`` probe or ``driver.c``, returns this library (the dynamic loader
    matches loaded objects by SONAME before it searches ``LD_LIBRARY_PATH``, whose empty
    entries mean the current directory). A driver already loaded is kept: two drivers
    in one process cannot work; the resolver reports that one as found in the process.
    """
    loaded = loaded_drivers()
    if loaded:
        return loaded[0]
    if not os.path.isabs(path):
        raise ValueError(f"the driver must be loaded by its absolute path, not {path!r}")
    import ctypes

    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path
