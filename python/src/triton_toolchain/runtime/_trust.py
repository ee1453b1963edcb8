"""Who can change a file: the one rule by which the shim decides what it may run, load,
read as a manifest, or believe from its cache.

A path is trusted when nobody but root and this process's user can change what it
names. The path is walked as the kernel resolves it, component by component and
through every symbolic link; each directory whose entries are read on the way, and the
final file, must be:

- owned by root or by this user;
- not writable by others, nor by its group unless that group is the owner's private
  group (named like the owner, with no other members: Debian's and Ubuntu's default);
- except a directory with the sticky bit (``/tmp``, ``/nix/store``): others may add
  entries there but not replace ours, and the entry itself is checked next.

Every symbolic link followed on the way must be owned by root or this user too: in a
sticky directory, another user's link can be pointed elsewhere at any moment, so what
it names is theirs to choose (the kernel's ``fs.protected_symlinks`` is not relied on).

Guarantees: pure standard library (this module is on the activation fast path); never
raises for a path that cannot be walked: the reason is returned
(``"not trusted: directory /tmp/x is writable by everyone"``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

MAX_LINKS = 40  # as the kernel's MAXSYMLINKS
# Every reason this module gives starts so; the fix for any of them.
UNTRUSTED = "not trusted: "
FIX = (
    "move it where nobody but root and you can change it or a directory above it, or take "
    "the others' write permission away (chmod go-w)"
)
if TYPE_CHECKING:  # for the annotations only: creating a TypeVar costs the import ~20 us
    from typing import TypeVar

    _T = TypeVar("_T")


def _private_group(st: os.stat_result) -> bool:
    """The file's group is its owner's private group (same name, no other member)."""
    import grp  # noqa: PLC0415  fast path: only for a file its group can write
    import pwd  # noqa: PLC0415  fast path: only for a file its group can write

    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
        group = grp.getgrgid(st.st_gid)
    except (KeyError, OSError):
        return False
    return group.gr_name == owner and set(group.gr_mem) <= {owner}


def _owner_name(uid: int) -> str:
    import pwd  # noqa: PLC0415  fast path: only for a file of another owner

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (KeyError, OSError):
        return f"uid {uid}"


def entry_problem(
    path: str, st: os.stat_result, *, directory: bool, sticky_ok: bool | None = None
) -> str | None:
    """Why ``path`` (with status ``st``) lets someone else change what it holds, or
    ``None``. ``sticky_ok``: a sticky directory passes (default: ``directory``)."""
    what = "directory" if directory or stat.S_ISDIR(st.st_mode) else "file"
    if st.st_uid != 0 and st.st_uid != os.geteuid():
        return f"{UNTRUSTED}{what} {path} is owned by {_owner_name(st.st_uid)}"
    mode = st.st_mode
    if (directory if sticky_ok is None else sticky_ok) and mode & stat.S_ISVTX:
        return None
    if mode & stat.S_IWOTH:
        return f"{UNTRUSTED}{what} {path} is writable by everyone"
    if mode & stat.S_IWGRP and not _private_group(st):
        return f"{UNTRUSTED}{what} {path} is writable by its group (gid {st.st_gid})"
    return None


def _link_problem(path: str, st: os.stat_result) -> str | None:
    if st.st_uid == 0 or st.st_uid == os.geteuid():
        return None
    return f"{UNTRUSTED}symbolic link {path} is owned by {_owner_name(st.st_uid)}"


class Looks:
    """``lstat``, ``stat`` and ``readlink`` remembered: one walk's, or one verification's,
    view of the filesystem (errors are remembered too)."""

    def __init__(self) -> None:
        self._stat: dict[str, os.stat_result | OSError] = {}
        self._followed: dict[str, os.stat_result | OSError] = {}
        self._link: dict[str, str | OSError] = {}
        # Real directories a walk reached and passed, every directory above included:
        # a later walk of a path in one of them starts there.
        self.passed: set[str] = set()
        # Each walk's answer: (path, container) -> what ``resolve`` returned.
        self.walks: dict[tuple[str, bool], tuple[str, str | None]] = {}

    def lstat(self, path: str) -> os.stat_result:
        return _remembered(self._stat, os.lstat, path)

    def stat(self, path: str) -> os.stat_result:
        """``os.stat``: the ``lstat`` of a path that is no link is its ``stat`` (the
        components before the last are followed alike, and fail alike)."""
        st = self.lstat(path)
        return _remembered(self._followed, os.stat, path) if stat.S_ISLNK(st.st_mode) else st

    def readlink(self, path: str) -> str:
        return _remembered(self._link, os.readlink, path)


def _remembered(seen: dict[str, _T | OSError], call: Callable[[str], _T], path: str) -> _T:
    """``call(path)``, or what it returned or raised the first time."""
    found = seen.get(path)
    if found is None:
        try:
            found = call(path)
        except OSError as exc:
            found = exc
        seen[path] = found
    if isinstance(found, OSError):
        raise found
    return found


def _start(parts: list[str], look: Looks) -> tuple[str, list[str]]:
    """Where a walk of ``parts`` (components from the root) begins, and the components
    left: in the deepest directory an earlier walk of this ``Looks`` passed (the last
    component is always judged)."""
    deepest, prefix = 0, ""
    for depth, name in enumerate(parts[:-1] if look.passed else (), 1):
        if name in (".", ".."):
            break
        prefix = f"{prefix}/{name}"
        if prefix in look.passed:
            deepest = depth
    return ("/" + "/".join(parts[:deepest]) if deepest else "/"), parts[deepest:]


def resolve(
    path: str, looks: Looks | None = None, *, container: bool = False
) -> tuple[str, str | None]:
    """``(the path with every link resolved, why it is not trusted or None)`` in one walk
    (see the module docstring). A path that cannot be walked (missing component, loop,
    permission) is not trusted: what cannot be examined is not; its resolved form is
    then the part walked joined with the rest, as ``os.path.realpath`` gives it.

    The last component is judged as what it names: a directory whose own contents are
    used (headers, libdevice's directory) passes only if nobody else can add to it,
    sticky or not; with ``container``, it is a directory in which the caller makes its
    own file (``lock -o``, the cache), and a sticky one passes, as on the way."""
    if not path.startswith("/"):
        return path, f"{path} is not an absolute path"
    look = looks or Looks()
    key = (path, container)
    if key not in look.walks:
        look.walks[key] = _walk(path, look, container)
    return look.walks[key]


def _walk(path: str, look: Looks, container: bool) -> tuple[str, str | None]:
    current, parts = _start([p for p in path.split("/") if p], look)
    links = 0
    name = ""
    problem: str | None = None
    try:
        if current == "/":
            problem = entry_problem("/", look.lstat("/"), directory=True)
        while parts:
            name = parts.pop(0)
            if name == ".":
                continue
            if name == "..":
                current = os.path.dirname(current) or "/"
                continue
            candidate = f"{current}/{name}" if current != "/" else f"/{name}"
            st = look.lstat(candidate)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    return path, f"{path}: too many levels of symbolic links"
                problem = problem or _link_problem(candidate, st)
                target = look.readlink(candidate)
                names = [p for p in target.split("/") if p]
                if target.startswith("/"):
                    current, parts = _start(names + parts, look)
                else:
                    parts[:0] = names
                continue
            problem = problem or entry_problem(
                candidate, st, directory=bool(parts), sticky_ok=bool(parts) or container
            )
            if parts and not stat.S_ISDIR(st.st_mode):
                return os.path.join(candidate, *parts), problem or (
                    f"{path}: {candidate} is not a directory"
                )
            if parts and problem is None:
                look.passed.add(candidate)
            current = candidate
    except OSError as exc:
        rest = os.path.join(current, name, *parts) if parts or name else current
        return rest, problem or f"{path} cannot be examined: {exc.strerror or exc}"
    except ValueError as exc:  # an embedded NUL character
        return path, f"{path!r} cannot be examined: {exc}"
    return current, problem


def untrusted(path: str, looks: Looks | None = None, *, container: bool = False) -> str | None:
    """Why ``path`` (absolute) is not trusted (see ``resolve``), or ``None``."""
    return resolve(path, looks, container=container)[1]


def real_path(path: str, looks: Looks | None = None) -> str:
    """``path`` with every link resolved (``resolve``)."""
    return resolve(path, looks)[0]
