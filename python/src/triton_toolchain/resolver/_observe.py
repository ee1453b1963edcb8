"""Recording what a resolution observes, and keeping it as an activation record
(``_record``): the side of the record that only a miss needs.

Every look at the machine that a resolution makes goes through ``observe`` (the
filesystem reads of ``_discovery._fs``, the package lookups of ``_discovery._host``) or
is reported by ``observed_env`` (every environment variable read); inside
``recording()`` each observation and its value become a fact. ``store`` keeps a result
with its facts: the newest first, at most ``_record.MAX_RECORDS``, in a directory this
user alone can write, written to a temporary file and renamed over, so a reader sees
the old file or the new one, never a torn one. Nothing here raises for a file it cannot
write: the record is then simply not kept. Processes that miss at once resolve one at a
time (``resolving_alone``): the first resolves and writes, the others then read its
record, as N workers of one job on a fresh node do.
"""

from __future__ import annotations

import contextvars
import fcntl
import json
import os
import re
import stat
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any

from ..runtime import _trust
from ..runtime._errors import printable
from ..runtime._record import (
    MAX_RECORD_BYTES,
    MAX_RECORDS,
    OPS,
    OTHERS_WRITE,
    RECORD_FILE,
    RECORD_FORMAT,
    _plain,
    cache_dir,
    decode,
    private_dir,
    read_private,
)


class Facts:
    """What one resolution observed, in order: ``(op, argument) -> value``. An
    observation made twice with different values makes the facts ``unstable``
    (something changed while resolving): such facts are never stored."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], Any] = {}
        self.unstable = False
        self.looks = _trust.Looks()

    def add(self, op: str, arg: str, value: Any) -> None:
        key = (op, arg)
        if key in self.values:
            self.unstable = self.unstable or self.values[key] != value
        else:
            self.values[key] = value

    def to_list(self) -> list[list[Any]]:
        """The facts in the order observed, the environment's first: a record made in
        another environment fails on them, before any file is looked at."""
        ordered = sorted(self.values.items(), key=lambda item: item[0][0] != "env")
        return [[op, arg, value] for (op, arg), value in ordered]


_ACTIVE: contextvars.ContextVar[Facts | None] = contextvars.ContextVar(
    "triton_toolchain_facts", default=None
)


@contextmanager
def recording() -> Iterator[Facts]:
    """Record every observation made in this context."""
    facts = Facts()
    token = _ACTIVE.set(facts)
    try:
        yield facts
    finally:
        _ACTIVE.reset(token)


def observe(op: str, arg: str) -> Any:
    """Make an observation (``OPS[op](arg)``), recording it when a recording is active
    (whose walks then share one view of the filesystem)."""
    facts = _ACTIVE.get()
    value = OPS[op](arg, facts.looks if facts is not None else _trust.Looks())
    if facts is not None:
        facts.add(op, arg, _plain(value))
    return value


def observed_env(name: str, value: str | None) -> None:
    """Record that the environment variable ``name`` was read as ``value``."""
    facts = _ACTIVE.get()
    if facts is not None:
        facts.add("env", name, value)


def make_private_dir(directory: str | None) -> str | None:
    """Create ``directory`` (mode 0700) where missing; the same answer as ``private_dir``.
    Nothing is created below a directory others can change (it would not be used)."""
    if directory is None:
        return None
    ancestor = directory
    while not os.path.lexists(ancestor) and os.path.dirname(ancestor) != ancestor:
        ancestor = os.path.dirname(ancestor)
    if ancestor != directory and _trust.untrusted(ancestor, container=True) is not None:
        return None
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except (OSError, ValueError):
        return None
    return private_dir(directory)


def write_new(path: str, data: bytes) -> None:
    """Write ``data`` to ``path``, a new file of mode 0600 (never an existing file or a
    link: ``O_EXCL | O_NOFOLLOW``), all of it; ``OSError`` otherwise."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_private(directory: str | None, name: str, data: bytes) -> bool:
    """Replace ``name`` in the private ``directory`` (created if needed) by ``data``:
    written to a temporary file of mode 0600, then renamed over. False when it could
    not be written; the old file then stays as it was."""
    directory = make_private_dir(directory)
    if directory is None:
        return False
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    try:
        write_new(tmp, data)
        os.replace(tmp, os.path.join(directory, name))
        return True
    except OSError:
        with suppress(OSError):
            os.unlink(tmp)
        return False


def encode(records: list[dict[str, Any]]) -> bytes:
    """The bytes of a record file holding ``records`` (``{"key", "facts", "result"}``, as
    ``_record.decode`` gives them); raises ``ValueError`` for a value JSON cannot store
    (``TypeError`` too: an object of another type)."""
    doc = {"format": RECORD_FORMAT, "records": records}
    return json.dumps(doc, allow_nan=False, separators=(",", ":")).encode()


def store(
    key: list[Any], facts: Facts, result: Mapping[str, Any], environ: Mapping[str, str]
) -> bool:
    """Keep ``result`` with its facts (the newest first, at most ``MAX_RECORDS``; a
    record of the same key and facts is replaced, one that cannot be read is dropped)."""
    if facts.unstable:
        return False
    directory = cache_dir(environ)
    record: dict[str, Any] = {"key": key, "facts": facts.to_list(), "result": result}
    old = read_private(directory, RECORD_FILE, MAX_RECORD_BYTES)
    kept = [
        r
        for r in (decode(old) if old is not None else [])
        if r["key"] != key or r["facts"] != record["facts"]
    ]
    try:
        data = encode([record, *kept][:MAX_RECORDS])
    except (TypeError, ValueError):
        return False
    return write_private(directory, RECORD_FILE, data)


LOCK_FILE = "activation.lock"
# Longer than a resolution whose tools answer (each tool has _run.TIMEOUT_S = 10 s, most
# answer in milliseconds and are asked at once); a holder that takes longer hangs.
LOCK_WAIT_S = 30.0
LOCK_POLL_S = 0.002
# After this long waiting, one warning says who holds the lock and for how long.
LOCK_NOTICE_S = 2.0


@contextmanager
def resolving_alone(environ: Mapping[str, str]) -> Iterator[bool]:
    """Hold the user's record lock (``LOCK_FILE`` in the private cache directory, an
    ``flock`` the kernel drops when its holder exits, however) while resolving and
    storing; yields whether another process held it first. Look the record up again
    once inside, waited or not: another process may have stored it and let go between
    this one's miss and its lock. Without a private cache directory, on a
    lock file that is not this user's own regular file, or after ``LOCK_WAIT_S`` seconds
    of waiting, yields ``False`` without the lock: waiting is a saving, never a
    condition, and nobody's lock makes a process fail or wait without end. The holder
    writes its pid and the time it took the lock into the file; a process that has
    waited ``LOCK_NOTICE_S`` says once who holds it and for how long (``_holder``)."""
    directory = make_private_dir(cache_dir(environ))
    fd = _lock_file(directory)
    waited = False
    try:
        if fd is not None:
            start = time.monotonic()
            deadline, notice = start + LOCK_WAIT_S, start + LOCK_NOTICE_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    with suppress(OSError):
                        os.ftruncate(fd, 0)
                        os.pwrite(fd, f"{os.getpid()} {int(time.time())}\n".encode(), 0)
                    break
                except BlockingIOError:
                    waited = True
                    now = time.monotonic()
                    if now > deadline:
                        os.close(fd)
                        fd, waited = None, False
                        break
                    if now > notice:
                        notice = deadline + 1  # once
                        _say_waiting(fd, os.path.join(str(directory), LOCK_FILE), now - start)
                    time.sleep(LOCK_POLL_S)
                except OSError:
                    os.close(fd)
                    fd, waited = None, False
                    break
        yield waited
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


_HOLDER = r"([0-9]{1,9}) ([0-9]{1,12})\n"


def _holder(fd: int) -> tuple[int | None, float | None]:
    """``(pid, since)`` of the process holding the lock on ``fd``: its pid as
    ``/proc/locks`` gives it, and the time it took the lock as it wrote them into the
    file (a file left by an earlier holder, or one that writes nothing, says another
    pid: its time is not believed); ``None`` for what neither says."""
    written: tuple[int, float] | None = None
    with suppress(OSError, UnicodeDecodeError):
        found = re.fullmatch(_HOLDER, os.pread(fd, 64, 0).decode("ascii"))
        written = (int(found.group(1)), float(found.group(2))) if found else None
    st = os.fstat(fd)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pid = None
    with suppress(OSError), open("/proc/locks", encoding="ascii", errors="replace") as locks:
        for line in locks:
            fields = line.split()
            # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; a waiter's has "->".
            if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == where:
                pid = int(fields[4]) if re.fullmatch("[0-9]{1,9}", fields[4]) else None
                break
    if written is not None and pid in (None, written[0]):
        return written
    return pid, None


def _say_waiting(fd: int, path: str, waited: float) -> None:
    """One warning: who holds the lock at ``path`` and for how long."""
    pid, since = _holder(fd)
    who = f"process {pid}" if pid is not None else "another process"
    held = time.time() - since if since is not None else waited
    warnings.warn(
        printable(
            f"triton-toolchain: {who} has held {path} for {held:.0f} s (resolving the "
            f"toolchain); waiting for it, at most {LOCK_WAIT_S:g} s in all, then going on "
            "without it"
        ),
        RuntimeWarning,
        stacklevel=4,
    )


def _lock_file(directory: str | None) -> int | None:
    """An open descriptor of ``directory``'s lock file (created 0600 where missing),
    or ``None`` when it is not a regular file of this user that nobody else can write."""
    if directory is None:
        return None
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(os.path.join(directory, LOCK_FILE), flags, 0o600)
    except OSError:
        return None
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & OTHERS_WRITE:
        return fd
    os.close(fd)
    return None
