"""Every look discovery takes at the filesystem: status, links, listings, trust and
bounded reads of regular files, each recorded as a fact (``_observe.observe``) so that
an activation record can prove a later process would see the same.

Guarantees: no function here blocks on a special file or reads without a bound
(``read_regular`` opens with ``O_NONBLOCK``, accepts only regular files, and reads at
most ``limit`` bytes); none raises for a path that cannot be used except where it says
so (``stat``/``lstat`` raise ``OSError`` as ``os.stat`` does). Resolver modules read
the filesystem through here only (``tests/test_structure.py`` checks).
"""

import errno
import os
import stat as _stat
from pathlib import Path
from typing import NamedTuple

from .._observe import observe

PathLike = Path | str


class Status(NamedTuple):
    """What ``stat`` keeps of ``os.stat_result`` (the fields a fact records)."""

    st_mode: int
    st_uid: int
    st_gid: int
    st_dev: int
    st_ino: int
    st_size: int
    st_mtime_ns: int
    st_ctime_ns: int


def _raise(status: list[int], path: PathLike) -> Status:
    if status[0] == -1:
        code = status[1]
        raise OSError(code, os.strerror(code) if code else "invalid path", os.fspath(path))
    return Status(*status)


def stat(path: PathLike) -> Status:
    """``os.stat`` (follows links), recorded. Only the mode, owner, group, device,
    inode, size and the modification and change times are kept."""
    return _raise(observe("stat", os.fspath(path)), path)


def lstat(path: PathLike) -> Status:
    """``os.lstat`` (the link itself), recorded."""
    return _raise(observe("lstat", os.fspath(path)), path)


def lexists(path: PathLike) -> bool:
    """Something (a link too, even a dangling one) is at ``path``."""
    status: list[int] = observe("lstat", os.fspath(path))
    return status[0] != -1


def is_file(path: PathLike) -> bool:
    """A regular file is at ``path`` (after links)."""
    status = observe("stat", os.fspath(path))
    return status[0] != -1 and _stat.S_ISREG(status[0])


def is_dir(path: PathLike) -> bool:
    """A directory is at ``path`` (after links)."""
    status = observe("stat", os.fspath(path))
    return status[0] != -1 and _stat.S_ISDIR(status[0])


def is_link(path: PathLike) -> bool:
    status = observe("lstat", os.fspath(path))
    return status[0] != -1 and _stat.S_ISLNK(status[0])


def may_execute(path: PathLike) -> bool:
    """This user may execute ``path`` (``os.access(X_OK)``)."""
    return bool(observe("executable", os.fspath(path)))


def real_path(path: PathLike) -> Path:
    """``path`` with every link resolved (``os.path.realpath``), recorded."""
    return Path(observe("realpath", os.fspath(path)))


def glob(pattern: PathLike) -> list[Path]:
    """Sorted matches of an absolute pattern whose wildcards fill whole components
    (``/usr/local/cuda-*``); none where a directory cannot be read."""
    return [Path(p) for p in observe("glob", os.fspath(pattern))]


def untrusted(path: PathLike) -> str | None:
    """Why someone other than root and this user could change ``path`` (``_trust``)."""
    reason: str | None = observe("trust", os.fspath(path))
    return reason


def kind_of(mode: int) -> str:
    """``"a FIFO"``, ``"a character device"``...: what a non-regular file is."""
    for test, name in (
        (_stat.S_ISDIR, "a directory"),
        (_stat.S_ISFIFO, "a FIFO"),
        (_stat.S_ISCHR, "a character device"),
        (_stat.S_ISBLK, "a block device"),
        (_stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return f"not a regular file (mode {mode:o})"


class ReadProblem(Exception):
    """A file that cannot be read as asked; the message says why (no path in it)."""


def read_regular(path: PathLike, limit: int, *, first: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (after links); with ``first``, only its
    first ``first`` bytes (all of a shorter file), the file's size still judged against
    ``limit``.

    Raises ``ReadProblem`` ("is a FIFO, not a regular file", "is larger than 1048576
    bytes", "does not exist", "cannot be read: Permission denied"). Files under
    ``/proc`` and ``/sys`` are recorded by their content, others by their status.
    """
    wanted = limit if first is None else min(first, limit)
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        observe("stat", name)
        if exc.errno == errno.ENOENT:
            raise ReadProblem("does not exist") from None
        raise ReadProblem(f"cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReadProblem(f"cannot be read: {exc}") from None
    try:
        st = os.fstat(fd)
        if not _stat.S_ISREG(st.st_mode):
            observe("stat", name)
            raise ReadProblem(f"is {kind_of(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            observe("stat", name)
            raise ReadProblem(f"is larger than {limit} bytes")
        chunks, size = [], 0
        while size <= wanted:
            chunk = os.read(fd, min(1 << 20, wanted + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ReadProblem(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise ReadProblem(f"is larger than {limit} bytes")
    if name.startswith(("/proc/", "/sys/")):
        observe("content", name)
    else:
        observe("stat", name)
    return b"".join(chunks)[:wanted]


def read_text(path: PathLike, limit: int = 1 << 20) -> str:
    """``read_regular`` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_regular(path, limit).decode("utf-8", "replace")


def file_problem(path: Path, *, executable: bool = False, directory: bool = False) -> str | None:
    """What is wrong with ``path`` as a file (or directory) of the toolchain, or ``None``:
    not absolute, missing, a dangling link, a loop, a directory where a file belongs,
    a FIFO or device, not executable."""
    if not path.is_absolute():
        return "not an absolute path"
    try:
        st = stat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return "is a dangling symlink" if is_link(path) else "does not exist"
        if exc.errno == errno.ELOOP:
            return "is a symlink loop"
        return f"cannot be used: {exc.strerror or exc}"
    if directory:
        return None if _stat.S_ISDIR(st.st_mode) else "is not a directory"
    if not _stat.S_ISREG(st.st_mode):
        return f"is {kind_of(st.st_mode)}, a regular file was expected"
    if executable and not may_execute(path):
        return "is not executable"
    return None
