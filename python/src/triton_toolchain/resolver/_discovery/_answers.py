"""What trusted tools answered (``ptxas --version``, ``cc -v``) and what files were found
to be (an ELF's facts, a complete bitcode file), remembered across processes so that a
later process does not run or parse them again.

Guarantees:

- An answer is reused only for the same file: its resolved path, device, inode, size,
  modification and change times (the change time cannot be set by anyone, so ``cp -p``
  or the Nix store's constant modification time does not preserve an entry), and the
  same question. Failures are remembered like answers ("did not answer within 10 s"),
  so a hanging tool costs its timeout once, not in every process.
- The file lives in the user's cache directory
  (``$XDG_CACHE_HOME/triton-toolchain/answers-v4.json``, default ``~/.cache/...``) only
  when that directory belongs to this user and nobody else can change it (``_trust``);
  otherwise nothing is read or written there, and what this process learns is kept in
  its memory only (asked once per process). A missing, damaged, oversized or special
  file (a FIFO, a link to ``/dev/zero``), one others can write, or one whose content is
  not exactly answers (``parse``) only means asking again; it is replaced by a temporary
  file renamed over it.
- Stored as JSON, decoded by ``_record.load`` (the one decoder of what the shim keeps:
  strict, what it refuses is no answers at all).
- Within ``written_once()`` (one resolution), answers are written to the file once, on
  leaving, not once each: a resolution on an empty cache asks several tools and reads
  several files. A failure is still written at once (a tool that hangs costs its timeout
  once, even when the process is killed before the resolution ends).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...runtime._record import load, read_private
from .._observe import write_private
from . import _fs

ANSWERS_FILE = "answers-v4.json"
ANSWERS_FORMAT = "triton-toolchain answers 4"
MAX_ENTRIES = 512
MAX_BYTES = 4 << 20
_LOCK = threading.Lock()
_LOADED: dict[Path, dict[str, Any]] = {}
# What this process learnt where no directory may keep it: a tool that hangs still costs
# its timeout once per process, not at every question.
_UNKEPT: dict[str, Any] = {}
# Within ``written_once``: how deep, and the directories whose file is to be written.
_HELD: list[int] = [0]
_UNWRITTEN: set[Path] = set()


def _key(path: Path, question: tuple[str, ...]) -> str | None:
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    # ``repr`` of strings and integers: one text for one value, and back (every string
    # quoted, its quotes and backslashes escaped).
    return repr((real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, question))


def version_of(path: Path) -> str:
    """The version of a file that an answer depends on, as part of a question:
    ``"(/usr/bin/gcc-12: dev ino size mtime ctime)"``."""
    try:
        st = _fs.stat(path)
    except OSError:
        return f"({path}: absent)"
    return f"({path}: {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns})"


def parse(data: bytes | None) -> dict[str, Any]:
    """The answers in the bytes of an answers file: ``{key: [ok, text]}`` (at most
    ``MAX_ENTRIES``, ``ok`` a boolean, ``text`` a string), or none at all for bytes that
    are not exactly that (``{"format": ANSWERS_FORMAT, "answers": {...}}``, as
    ``_record.load`` decodes it). Never raises."""
    doc = load(data) if data is not None else None
    if type(doc) is not dict or doc.keys() != {"format", "answers"}:
        return {}
    found = doc["answers"]
    valid = (
        doc["format"] == ANSWERS_FORMAT
        and type(found) is dict
        and len(found) <= MAX_ENTRIES
        and all(
            type(v) is list and len(v) == 2 and type(v[0]) is bool and type(v[1]) is str
            for v in found.values()
        )
    )
    return found if valid else {}


def encode(entries: dict[str, Any]) -> bytes:
    """The bytes of an answers file holding ``entries`` (``parse``'s shape)."""
    doc = {"format": ANSWERS_FORMAT, "answers": entries}
    return json.dumps(doc, allow_nan=False, separators=(",", ":")).encode()


def _entries(directory: Path) -> dict[str, Any]:
    if directory not in _LOADED:
        _LOADED[directory] = parse(read_private(str(directory), ANSWERS_FILE, MAX_BYTES))
    return _LOADED[directory]


def recall(
    directory: Path | None, path: Path, question: tuple[str, ...]
) -> tuple[bool, str] | None:
    """``(ok, text)`` remembered for asking ``path`` ``question``, or ``None``: ``ok`` is
    whether it answered, ``text`` the answer or what went wrong."""
    key = _key(path, question)
    if key is None:
        return None
    with _LOCK:
        found = _UNKEPT.get(key) if directory is None else _entries(directory).get(key)
    return (bool(found[0]), found[1]) if found else None


def remember(
    directory: Path | None, path: Path, question: tuple[str, ...], ok: bool, text: str
) -> None:
    """Keep an answer (``ok``) or a failure; errors writing it are ignored."""
    key = _key(path, question)
    if key is None:
        return
    with _LOCK:
        if directory is None:
            _UNKEPT[key] = [ok, text]
            return
        entries = _entries(directory)
        entries[key] = [ok, text]
        while len(entries) > MAX_ENTRIES:
            entries.pop(next(iter(entries)))
        if _HELD[0] and ok:
            _UNWRITTEN.add(directory)
        else:
            _write(directory)


def _write(directory: Path) -> None:
    _UNWRITTEN.discard(directory)
    write_private(str(directory), ANSWERS_FILE, encode(_entries(directory)))


@contextmanager
def written_once() -> Iterator[None]:
    """Within: answers are kept in memory and written to their file once, on leaving
    (the outermost ``with``), whatever ends it; failures at once (see the module
    docstring)."""
    with _LOCK:
        _HELD[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _HELD[0] -= 1
            if not _HELD[0]:
                for directory in sorted(_UNWRITTEN):
                    _write(directory)


def forget_loaded() -> None:
    """Drop what this process read of the file (a test changes it behind our back)."""
    with _LOCK:
        _LOADED.clear()
        _UNKEPT.clear()
        _UNWRITTEN.clear()
