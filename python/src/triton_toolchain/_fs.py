"""Resolving symlinks once per resolution, and globbing without exceptions.

``real_path`` remembers its answers until ``forget_real_paths()``, which ``resolve()``
calls at its start: within one resolution each path is resolved once (a resolution
checks one file from several angles: safety, stub layout, version in its name).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.lru_cache(maxsize=512)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def real_path(path: Path | str) -> Path:
    """``path`` with every symlink resolved, remembered until ``forget_real_paths()``
    (``resolve()`` forgets at its start, so one resolution sees one state of the
    filesystem and resolves each path once). A symlink loop raises ``OSError``."""
    return Path(_realpath(os.fspath(path)))


def glob(directory: Path, pattern: str) -> list[Path]:
    """Sorted matches of ``pattern`` in ``directory``; none where the directory cannot be
    read (a path too long, or, on Python before 3.12, one that is not searchable): a
    directory named by a variable must not end a resolution with a traceback."""
    try:
        return sorted(directory.glob(pattern))
    except OSError:
        return []


def forget_real_paths() -> None:
    """Forget remembered ``real_path`` answers (the filesystem may have changed)."""
    _realpath.cache_clear()
