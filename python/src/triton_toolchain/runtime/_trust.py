"""Who can change a file: the one rule by which the shim decides what it may run, load,
read as a manifest, or believe from its cache.

A path is trusted when nobody can change what it names but principals who can already
run code in this process: root, this user, the owners of the code this process runs
(the interpreter, its prefix, the standard library, the directories holding the
``triton``, ``torch`` and ``triton_toolchain`` packages; a group that may write one of
those is one too: ``code_principals``), and the owners and groups a site names
(``TRITON_TOOLCHAIN_TRUSTED_OWNERS``, the manifest's ``trusted_owners``: ``admit``).
Everyone is never one. The path is walked as the kernel resolves it, component by
component and through every symbolic link; each directory whose entries are read on
the way, and the final file, must be:

- owned by one of them (a member of a trusted group counts);
- not writable by others, nor by its group unless that group is trusted or the
  owner's private group (named like the owner, with no other members: Debian's and
  Ubuntu's default);
- except a directory with the sticky bit (``/tmp``, ``/nix/store``): others may add
  entries there but not replace ours, and the entry itself is checked next.

Every symbolic link followed on the way must be owned by one of them too: in a sticky
directory, another user's link can be pointed elsewhere at any moment, so what it
names is theirs to choose (the kernel's ``fs.protected_symlinks`` is not relied on).

Guarantees: pure standard library (this module is on the activation fast path; the
code's principals are computed once per process, and only when a path's owner is
neither root nor this user or its group may write it); never raises for a path that
cannot be walked: the reason is returned
(``"not trusted: directory /tmp/x is writable by everyone"``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import stat
import sys
from collections.abc import Callable
from typing import TypeVar

MAX_LINKS = 40  # as the kernel's MAXSYMLINKS
# Every reason this module gives starts so; the fix for one is ``fix_for``'s.
UNTRUSTED = "not trusted: "
FIX = (
    "move it where nobody but root and you can change it or a directory above it, or take "
    "the others' write permission away (chmod go-w)"
)
TRUSTED_OWNERS = "TRITON_TOOLCHAIN_TRUSTED_OWNERS"
MANIFEST_FIELD = "trusted_owners"
# The packages whose code this process runs (or will): whoever can change them can
# already run anything in it.
CODE_PACKAGES = ("triton", "torch", "triton_toolchain")
_T = TypeVar("_T")


class Principals:
    """Owners (uids) and groups (gids) trusted besides root and this user, each with why
    (``"alice (uid 1001) can change /opt/venv, which holds the triton package"``)."""

    def __init__(self) -> None:
        self.uids: dict[int, str] = {}
        self.gids: dict[int, str] = {}
        self.unknown: list[str] = []  # allow-list entries that name nobody here


def _owner_name(uid: int) -> str:
    import pwd  # noqa: PLC0415  fast path: only for a file of another owner

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (KeyError, OSError, OverflowError):
        return f"uid {uid}"


def _group_name(gid: int) -> str:
    import grp  # noqa: PLC0415  fast path: only for a file its group can write

    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except (KeyError, OSError, OverflowError):
        return f"(gid {gid})"


def package_dirs(name: str) -> list[str]:
    """The directories of package ``name`` as the import system finds it now, without
    importing it (a namespace package has several)."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None) if module is not None else None
    if spec is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return []
    if spec is None:
        return []
    if spec.submodule_search_locations is not None:
        return [str(p) for p in spec.submodule_search_locations]
    return [os.path.dirname(spec.origin)] if spec.origin else []


def code_places() -> list[tuple[str, str]]:
    """``(path, what it holds)`` of the code this process runs: the interpreter, its
    prefixes, the standard library, and each of ``CODE_PACKAGES`` found."""
    places = [
        (sys.executable, "the Python interpreter"),
        (sys.prefix, "the Python environment (sys.prefix)"),
        (sys.base_prefix, "the Python installation (sys.base_prefix)"),
        (os.path.dirname(os.__file__), "the standard library"),
    ]
    for package in CODE_PACKAGES:
        places += [(d, f"the {package} package") for d in package_dirs(package)]
    return [(p, what) for p, what in places if p.startswith("/")]


def _components(path: str) -> list[str]:
    """Every entry the kernel reads to reach ``path``: each component of it as given
    (the links among them) and of what it resolves to."""
    seen: dict[str, None] = {}
    for form in (os.path.abspath(path), os.path.realpath(path)):
        current = ""
        for name in [p for p in form.split("/") if p]:
            current = f"{current}/{name}"
            seen[current] = None
    return ["/", *seen]


def _writers(places: list[tuple[str, str]]) -> Principals:
    """Who can change the entries on the way to each of ``places``: each one's owner,
    and its group where the group may write and the directory is not sticky (never
    everyone)."""
    found = Principals()
    for place, what in places:
        for entry in _components(place):
            try:
                st = os.lstat(entry)
            except (OSError, ValueError):
                continue
            why = f"can change {entry}, which holds {what}"
            if st.st_uid not in (0, os.geteuid()):
                found.uids.setdefault(st.st_uid, f"{_owner_name(st.st_uid)} {why}")
            shared = st.st_mode & stat.S_ISVTX or stat.S_ISLNK(st.st_mode)  # /tmp: theirs only
            if st.st_mode & stat.S_IWGRP and not shared:
                found.gids.setdefault(st.st_gid, f"group {_group_name(st.st_gid)} {why}")
    return found


_CODE: list[Principals] = []  # computed once per process
_LISTED: dict[str, Principals] = {}  # an allow-list's text -> what it names
_MANIFEST: list[Principals] = [Principals()]  # the manifest's allow-list (``admit``)
_MEMBERS: dict[int, str | None] = {}  # uid -> the trusted group it is a member of


def code_principals() -> Principals:
    """Who can change the code this process runs (``code_places``), computed once."""
    if not _CODE:
        _CODE.append(_writers(code_places()))
    return _CODE[0]


def allow_list(text: str, source: str) -> Principals:
    """The owners and groups an allow-list names: comma- or space-separated names or
    numeric ids, a group as ``%name`` or ``%gid`` (as in sudoers); ``source`` is where
    it was written. An entry that names nobody here admits nobody (``unknown``)."""
    key = f"{source}\0{text}"
    if key not in _LISTED:
        import grp  # noqa: PLC0415  only where an allow-list is set
        import pwd  # noqa: PLC0415  only where an allow-list is set

        found = Principals()
        for entry in text.replace(",", " ").split():
            group = entry.startswith("%")
            name = entry[1:] if group else entry
            try:
                if group:
                    gid = int(name) if re.fullmatch("[0-9]+", name) else grp.getgrnam(name).gr_gid
                    found.gids[gid] = f"group {_group_name(gid)} is listed in {source}"
                else:
                    uid = int(name) if re.fullmatch("[0-9]+", name) else pwd.getpwnam(name).pw_uid
                    found.uids[uid] = f"{_owner_name(uid)} is listed in {source}"
            except (KeyError, OverflowError, ValueError):
                found.unknown.append(entry)
        _LISTED[key] = found
    return _LISTED[key]


def listed() -> list[Principals]:
    """The allow-lists in force: ``TRITON_TOOLCHAIN_TRUSTED_OWNERS``, the manifest's."""
    text = os.environ.get(TRUSTED_OWNERS, "")
    from_env = [allow_list(text, TRUSTED_OWNERS)] if text.strip() else []
    return [*from_env, *_MANIFEST]


def admit(text: str, looks: Looks | None = None) -> list[str]:
    """Put the manifest's ``trusted_owners`` (``text``, as ``allow_list`` reads it; ``""``:
    none) in force for this process, replacing the one before; what it names, as
    ``["u1234", "g50"]`` (an activation record's fact: a name that comes to mean
    another id is a change). Walks ``looks`` made before are judged again."""
    found = allow_list(text, f"the manifest's {MANIFEST_FIELD}") if text else Principals()
    _MANIFEST[0] = found
    _MEMBERS.clear()
    if looks is not None:
        looks.walks.clear()
    return [f"u{u}" for u in sorted(found.uids)] + [f"g{g}" for g in sorted(found.gids)]


def _trusted_gid(gid: int) -> str | None:
    """Why the group ``gid`` is trusted, or ``None``."""
    for principals in (code_principals(), *listed()):
        if gid in principals.gids:
            return principals.gids[gid]
    return None


def _trusted_uid(uid: int) -> str | None:
    """Why the owner ``uid`` (neither root nor this user) is trusted, or ``None``: it
    owns the code, is listed, or is a member of a trusted group."""
    for principals in (code_principals(), *listed()):
        if uid in principals.uids:
            return principals.uids[uid]
    if uid not in _MEMBERS:
        _MEMBERS[uid] = _membership(uid)
    return _MEMBERS[uid]


def _membership(uid: int) -> str | None:
    import grp  # noqa: PLC0415  only for an owner that is not trusted otherwise
    import pwd  # noqa: PLC0415  only for an owner that is not trusted otherwise

    try:
        user = pwd.getpwuid(uid)
    except (KeyError, OSError):
        return None
    for principals in (code_principals(), *listed()):
        for gid, why in principals.gids.items():
            try:
                members = grp.getgrgid(gid).gr_mem
            except (KeyError, OSError):
                members = []
            if user.pw_gid == gid or user.pw_name in members:
                return f"{_owner_name(uid)} is a member of the trusted {why}"
    return None


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


def entry_problem(
    path: str, st: os.stat_result, *, directory: bool, sticky_ok: bool | None = None
) -> str | None:
    """Why ``path`` (with status ``st``) lets someone untrusted change what it holds,
    or ``None``. ``sticky_ok``: a sticky directory passes (default: ``directory``)."""
    what = "directory" if directory or stat.S_ISDIR(st.st_mode) else "file"
    mode = st.st_mode
    if st.st_uid != 0 and st.st_uid != os.geteuid() and _trusted_uid(st.st_uid) is None:
        return (
            f"{UNTRUSTED}{what} {path} is owned by {_owner_name(st.st_uid)}, group "
            f"{_group_name(st.st_gid)}, mode {stat.S_IMODE(mode):04o}"
        )
    if (directory if sticky_ok is None else sticky_ok) and mode & stat.S_ISVTX:
        return None
    if mode & stat.S_IWOTH:
        return f"{UNTRUSTED}{what} {path} is writable by everyone"
    if mode & stat.S_IWGRP and not _private_group(st) and _trusted_gid(st.st_gid) is None:
        return (
            f"{UNTRUSTED}{what} {path} is writable by its group {_group_name(st.st_gid)}, "
            f"mode {stat.S_IMODE(mode):04o}"
        )
    return None


def grounds(st: os.stat_result) -> list[str]:
    """Which rule lets the owner and the group of an entry that passed change it, where
    neither root nor this user nor a private group: the reasons of ``code_principals``
    and the allow-lists."""
    found = []
    if st.st_uid not in (0, os.geteuid()):
        found.append(_trusted_uid(st.st_uid) or "")
    if st.st_mode & stat.S_IWGRP and not stat.S_ISLNK(st.st_mode) and not _private_group(st):
        found.append(_trusted_gid(st.st_gid) or "")
    return [g for g in found if g]


def _link_problem(path: str, st: os.stat_result) -> str | None:
    if st.st_uid == 0 or st.st_uid == os.geteuid() or _trusted_uid(st.st_uid) is not None:
        return None
    return f"{UNTRUSTED}symbolic link {path} is owned by {_owner_name(st.st_uid)}"


def fix_for(problem: str) -> str:
    """The fix for a reason this module gave: for an owner outside the trusted set, the
    allow-list; for a group that may write, the group and both fixes; else ``FIX``."""

    listing = f"{TRUSTED_OWNERS} (or the manifest's {MANIFEST_FIELD}, written once for a site)"
    owner = re.search(r"^not trusted: (?:file|directory) .* is owned by (.+?), group ", problem)
    if owner:
        who = owner.group(1)
        name = re.sub(r" \(uid ([0-9]+)\)$", "", who).removeprefix("uid ")
        return (
            f"if {who} is an account you trust to install software (a site's Spack, modules "
            f"or conda), add {name} to {listing}; else use a copy only root and you can change"
        )
    group = re.search(
        r"^not trusted: (?:file|directory) (.+) is writable by its group (.+?), mode ", problem
    )
    if group:
        entry, who = group.groups()
        name = re.sub(r" ?\(gid ([0-9]+)\)$", "", who) or re.sub(r"[^0-9]", "", who)
        return (
            f"take the group's write permission away (chmod g-w {entry}), or, if every member "
            f"of the group {who} may run code as you, add %{name} to {listing}"
        )
    return FIX


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
        # Where set (``explain``), why each entry that passed may be changed by its
        # owner or group, where neither is root, this user or a private group.
        self.grounds: list[str] | None = None

    def note(self, st: os.stat_result) -> None:
        """Keep the ``grounds`` of an entry walked, where asked to (``explain``)."""
        if self.grounds is not None:
            self.grounds += grounds(st)

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
                look.note(st)
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
            look.note(st)
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


def explain(path: str) -> str:
    """Which rule trusts or refuses ``path`` (``doctor -v``): its reason, or
    ``"trusted: <why each owner or group other than root and you may change it>"``."""
    looks = Looks()
    looks.grounds = []
    problem = resolve(path, looks)[1]
    if problem is not None:
        return problem
    why = "; ".join(dict.fromkeys(looks.grounds)) or "nobody but root and you can change it"
    return f"trusted: {why}"
