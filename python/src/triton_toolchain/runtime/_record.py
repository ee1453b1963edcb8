"""The activation record, which lets a process skip resolving: how each kind of fact is
observed (``OPS``), where records live, and reusing one (``lookup``).

Resolution is a function of what it observes: environment variables, and the status,
links, listings and trust of files (``_observe`` records every observation a resolution
makes); what it learns by running tools or parsing files is tied to the status of the
file it came from. ``activate()`` keeps the result with those facts in the user's cache;
a later process whose interpreter is the same (``identity``) and whose every fact,
observed again, has the same value, reuses the result: it cannot differ from what
resolving again would give. Observing again costs a few hundred ``stat`` calls, not the
resolver's modules.

Guarantees: pure standard library, and nothing that ``import triton`` does not load
anyway (this module and the plan's shape in ``runtime``, without the recording and
writing side in ``_observe``, is what it pays for on a hit; ``json`` is imported by
Triton itself right after the shim). Every byte read back is treated as hostile
(``read_private``, the one reader of persisted state, the tools' answers included): the
file must be a regular file of this user that nobody else can write (neither its
directory nor the file itself: no group or other write bit, which an ACL granting
someone write also sets), of a bounded size, read without following a link or blocking
on a special file; it is decoded by ``load`` (strict JSON: what it refuses is a miss,
never an error), and a decoded value is used only when it has the expected shape: the
record file's, each fact's (``well_formed``), the plan's (``plan_fits``, against the
plan's one schema). A missing, damaged, foreign or forged record only means resolving
again (the next ``store`` replaces the file, by a temporary file renamed over it);
nothing here raises for one.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard, cast

from . import Plan, _trust, valid

RECORD_FILE = "activation-v5.json"
RECORD_FORMAT = "triton-toolchain activation records 5"
_RECORD_KEYS = {"key", "facts", "result"}
MAX_RECORDS = 8
MAX_RECORD_BYTES = 2 << 20  # a file of eight records has a hundred kilobytes
MAX_CONTAINERS = 1 << 14  # lists and objects in one file: a record has a few hundred
MAX_FACTS = 1 << 14  # a record holds a few hundred
MAX_WILDCARDS = 2  # wildcard components in a ``glob`` fact (discovery's have one or two)
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
CONTENT_LIMIT = 1 << 16  # /proc and /sys files are observed by their content


def _status(call: Callable[[str], os.stat_result], path: str) -> list[int]:
    try:
        st = call(path)
    except OSError as exc:
        return [-1, exc.errno or 0]
    except ValueError:  # an embedded NUL character
        return [-1, 0]
    return [
        st.st_mode,
        st.st_uid,
        st.st_gid,
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
    ]


def _matcher(pattern: str) -> Callable[[str], bool]:
    """``fnmatch`` of one pattern; for the one-``*`` patterns discovery uses, without
    compiling a regular expression. Hidden names match only a pattern that starts with
    a dot, as in ``glob``."""
    shown = "" if pattern.startswith(".") else "."  # what a name must not start with
    if pattern.count("*") == 1 and not any(c in pattern for c in "?["):
        head, tail = pattern.split("*")
        least = len(head) + len(tail)
        return lambda n: (
            len(n) >= least and n.startswith(head) and n.endswith(tail) and n[:1] != shown
        )
    return lambda n: n[:1] != shown and fnmatch.fnmatchcase(n, pattern)


def _listing(pattern: str) -> list[str]:
    """Sorted matches of an absolute pattern whose wildcards are in whole components
    (``/usr/local/cuda-*``, ``/x/nvidia/*/lib/stubs/libcuda.so``), as ``glob`` gives them."""
    found = ["/"]
    for part in [p for p in pattern.split("/") if p]:
        if not any(c in part for c in "*?["):
            found = [os.path.join(d, part) for d in found if os.path.lexists(os.path.join(d, part))]
            continue
        matches = []
        match = _matcher(part)
        for directory in found:
            try:
                names = os.listdir(directory)
            except (OSError, ValueError):
                continue
            matches += [os.path.join(directory, n) for n in names if match(n)]
        found = matches
    return sorted(found)


def _content(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, CONTENT_LIMIT).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


# Every kind of observation: op -> how to make it, with the ``Looks`` (remembered
# ``lstat``, ``stat`` and ``readlink``) of the resolution or verification that makes it.
# A recorded fact is (op, argument, value); observing it again must give the same value.
OPS: dict[str, Callable[[str, _trust.Looks], Any]] = {
    "stat": lambda p, looks: _status(looks.stat, p),
    "lstat": lambda p, looks: _status(looks.lstat, p),
    "realpath": _trust.real_path,
    "glob": lambda p, looks: _listing(p),
    "executable": lambda p, looks: os.access(p, os.X_OK),
    "trust": _trust.untrusted,
    "content": lambda p, looks: _content(p),
    "package": lambda p, looks: _trust.package_dirs(p),
    "admit": _trust.admit,  # a manifest's allow-list, in force from here on
}


def _fact_allowed(op: object, arg: str) -> bool:
    """Whether observing ``op`` of ``arg`` is what a resolution can have recorded: a path
    is absolute, a package a top-level name (finding ``a.b`` would import ``a``), a
    pattern has at most ``MAX_WILDCARDS`` wildcard components (no walk of the whole
    filesystem)."""
    if op in ("env", "admit"):
        return True
    if op == "package":
        return arg.isidentifier()
    if op not in OPS or not arg.startswith("/") or "\0" in arg:
        return False
    return op != "glob" or sum(any(c in p for c in "*?[") for p in arg.split("/")) <= (
        MAX_WILDCARDS
    )


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


_SCALARS = frozenset({str, int, bool, type(None)})


def well_formed(facts: object) -> bool:
    """Whether ``facts`` are what a resolution records: at most ``MAX_FACTS`` of
    ``[op, argument, value]``, each an observation ``_fact_allowed`` whose value is one
    that ``OPS`` give (a scalar, or a list of scalars: a status, a listing)."""
    if type(facts) is not list or len(facts) > MAX_FACTS:
        return False
    for fact in facts:
        if type(fact) is not list or len(fact) != 3:
            return False
        op, arg, value = fact
        if type(op) is not str or type(arg) is not str or not _fact_allowed(op, arg):
            return False
        if not (
            type(value) in _SCALARS
            or (type(value) is list and _SCALARS.issuperset(map(type, value)))
        ):
            return False
    return True


def verify(facts: list[list[Any]], environ: Mapping[str, str]) -> bool:
    """Every fact (``well_formed``), observed again, has the value recorded, compared
    exactly (as JSON text: ``true`` is no ``1``): each variable's at once (the
    environment's come first, so a record of another environment fails before any file is
    looked at), the files' together."""
    looks = _trust.Looks()
    recorded: list[Any] = []
    observed: list[Any] = []
    for op, arg, value in facts:
        if op != "env":
            recorded.append(value)
            observed.append(_plain(OPS[op](arg, looks)))
            continue
        now = environ.get(arg)
        if observed or type(value) is not type(now) or value != now:
            return False
    return json.dumps(observed) == json.dumps(recorded)


# --------------------------------------------------------------- the stored records


def cache_dir(environ: Mapping[str, str]) -> str | None:
    """``$XDG_CACHE_HOME/triton-toolchain`` (absolute only), else
    ``$HOME/.cache/triton-toolchain``; ``None`` without either."""
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, "triton-toolchain")
    home = environ.get("HOME", "")
    return os.path.join(home, ".cache", "triton-toolchain") if home.startswith("/") else None


def private_dir(directory: str | None) -> str | None:
    """``directory`` if it exists, belongs to this user and nobody else can change it
    (``_trust``); ``None`` otherwise."""
    if directory is None:
        return None
    try:
        st = os.lstat(directory)
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return None
    return directory if _trust.untrusted(directory) is None else None


def read_private(directory: str | None, name: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``name`` in the private ``directory``, without
    following a link or blocking on a special file; ``None`` when there is none or it
    is not a regular file of this user, of at most ``limit`` bytes, that nobody else
    can write (no group or other write bit: the shim writes its files 0600)."""
    if private_dir(directory) is None:
        return None
    assert directory is not None  # noqa: S101  private_dir returned it
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(os.path.join(directory, name), flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_size > limit
            or st.st_uid != os.geteuid()
            or st.st_mode & OTHERS_WRITE
        ):
            return None
        chunks, size = [], 0
        while size <= limit:
            # The size it has now, and one byte more to see it grow: a larger buffer
            # costs more to allocate than the read.
            chunk = os.read(fd, min(st.st_size + 1, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


ROOMS = ("", "runtime", "resolver", "cli")


def identity(arch: int | None, scope: str = "all") -> list[Any]:
    """What a record is only valid for: this interpreter, its import path, this user
    and groups, the target architecture, the parts of the plan resolved (``_catalog.Part``), and
    the shim's own files."""
    package = os.path.dirname(os.path.dirname(__file__))  # triton_toolchain/
    return [
        sys.executable,
        sys.prefix,
        sys.base_prefix,
        list(sys.version_info[:3]),
        os.uname().machine,
        sys.maxsize,
        os.geteuid(),
        os.getegid(),
        sorted(os.getgroups()),
        list(sys.path),
        arch,
        scope,
        # The package's directories: a file of the shim replaced changes its own.
        *(_status(os.stat, os.path.join(package, room)) for room in ROOMS),
        _status(os.stat, __file__),
    ]


# --------------------------------------------------------------- decoding


def _refuse(text: str) -> Any:
    raise ValueError(f"{text}: no value the shim stores")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key given twice")
    return found


def load(data: bytes) -> Any:
    """The JSON value in ``data`` (UTF-8), or ``None`` for bytes that are not one of
    what the shim stores: the one decoder of what the shim keeps (records here, tools'
    answers in ``_answers``). Refused, never raised: bytes not UTF-8, nesting deeper than
    the interpreter recurses, a number not an integer (``NaN``, ``Infinity``, a
    fraction), an integer of more digits than ``int`` converts, a key given twice, more
    than ``MAX_CONTAINERS`` lists and objects (each costs the decoder time and memory)."""
    if data.count(b"[") + data.count(b"{") > MAX_CONTAINERS:  # what decoding allocates
        return None
    try:
        return json.loads(
            data.decode(),
            parse_constant=_refuse,
            parse_float=_refuse,
            object_pairs_hook=_unique,
        )
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError too
        return None


def plan_fits(plan: object) -> TypeGuard[Plan]:
    """Whether ``plan`` is one the adapters can apply: a ``Plan`` (``runtime.valid``),
    and every setting names a component of the toolchain."""
    if not valid(plan, Plan):
        return False
    checked = cast("Plan", plan)
    components = checked["toolchain"]["components"]
    return all(s["component"] in components for s in checked["settings"])


def records(data: bytes) -> list[dict[str, Any]]:
    """The records in the bytes of a record file, each ``{"key", "facts", "result"}``,
    neither facts nor result checked yet (``lookup`` checks a record's only when its key
    matches); none for bytes that are not a record file of this version."""
    doc = load(data)
    if type(doc) is not dict or doc.keys() != {"format", "records"}:
        return []
    found = doc["records"]
    if doc["format"] != RECORD_FORMAT or type(found) is not list or len(found) > MAX_RECORDS:
        return []
    return [r for r in found if type(r) is dict and r.keys() == _RECORD_KEYS]


def decode(data: bytes) -> list[dict[str, Any]]:
    """Every record in the bytes of a record file whose facts are ``well_formed`` and
    whose result ``plan_fits``."""
    return [r for r in records(data) if well_formed(r["facts"]) and plan_fits(r["result"])]


def stored(environ: Mapping[str, str]) -> list[dict[str, Any]]:
    """The records of the user's record file (``records``)."""
    data = read_private(cache_dir(environ), RECORD_FILE, MAX_RECORD_BYTES)
    return [] if data is None else records(data)


def lookup(key: list[Any], environ: Mapping[str, str]) -> Plan | None:
    """The stored plan for ``key`` (compared as JSON text, exactly) whose facts all hold
    now, or ``None``."""
    wanted = json.dumps(key)
    for record in stored(environ):
        if (
            record["key"] == key  # first: no deep value reaches the encoder
            and json.dumps(record["key"]) == wanted
            and well_formed(record["facts"])
            and plan_fits(record["result"])
            and verify(record["facts"], environ)
        ):
            return record["result"]
    return None
