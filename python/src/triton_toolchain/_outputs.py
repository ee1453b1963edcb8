"""What trusted tools answered (``ptxas --version``, ``cc -v``), remembered across
processes so that activation at every ``import triton`` does not rerun them.

Guarantees: an answer is reused only for the same file, identified by its resolved
path, device, inode, size and modification time in nanoseconds, and the same
arguments: a replaced or rebuilt binary is asked again. Only successful answers are
kept. The cache is a plain JSON file in the user's cache directory
(``$XDG_CACHE_HOME/triton-toolchain/tool-output-v1.json``, default
``~/.cache/...``); a missing, unreadable, damaged or unwritable file only means the
tools are asked again. Security checks run before the cache is consulted.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from ._fs import real_path

CACHE_FILE = "tool-output-v1.json"
MAX_ENTRIES = 256
_LOCK = threading.Lock()
_LOADED: dict[Path, dict[str, str]] = {}


def cache_dir(environ: Mapping[str, str] | None) -> Path | None:
    """``$XDG_CACHE_HOME/triton-toolchain`` (absolute only), else ``$HOME/.cache/...``;
    ``None`` without either (a test's bare host: nothing is remembered)."""
    if environ is None:
        return None
    xdg = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "triton-toolchain"
    home = environ.get("HOME", "")
    return Path(home) / ".cache" / "triton-toolchain" if os.path.isabs(home) else None


def _key(path: Path, args: tuple[str, ...]) -> str | None:
    try:
        real = os.fspath(real_path(path))
        st = os.stat(real)
    except OSError:
        return None
    return json.dumps([real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, list(args)])


def _entries(directory: Path) -> dict[str, str]:
    if directory not in _LOADED:
        try:
            data = json.loads((directory / CACHE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        valid = isinstance(data, dict) and all(isinstance(v, str) for v in data.values())
        _LOADED[directory] = data if valid else {}
    return _LOADED[directory]


def recall(directory: Path | None, path: Path, args: tuple[str, ...]) -> str | None:
    """The remembered answer of ``path args``, or ``None``."""
    key = _key(path, args) if directory else None
    if directory is None or key is None:
        return None
    with _LOCK:
        return _entries(directory).get(key)


def remember(directory: Path | None, path: Path, args: tuple[str, ...], output: str) -> None:
    """Keep a successful answer (atomically replacing the file; errors are ignored)."""
    key = _key(path, args) if directory else None
    if directory is None or key is None:
        return
    with _LOCK:
        entries = _entries(directory)
        entries[key] = output
        while len(entries) > MAX_ENTRIES:
            entries.pop(next(iter(entries)))
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tool-output-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entries, f)
            os.replace(tmp, directory / CACHE_FILE)
        except OSError:
            pass
