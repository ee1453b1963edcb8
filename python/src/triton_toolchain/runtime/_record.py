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
anyway (this module, without the recording and writing side in ``_observe``, is what it
pays for on a hit). Every byte read back is treated as hostile (``read_private``, the
one reader of persisted state, the tools' answers included): the file must be a regular
file of this user that nobody else can write (neither its directory nor the file itself:
no group or other write bit, which an ACL granting someone write also sets), of a
bounded size, read without following a link or blocking on a special file; its bytes
are decoded only after ``bounded`` has walked them, and the decoded value is used only
when it has the expected shape (``fits``: types, keys, lengths). A missing, damaged,
foreign or forged record only means resolving again (the next ``store`` replaces the
file, by a temporary file renamed over it); nothing here raises for one.

The records are stored with ``marshal`` (built in, and ten times faster to read than
JSON, whose import alone would cost ``import triton`` a millisecond or two), behind a
header line. ``marshal`` is not meant for data others can forge: it allocates what a
count claims before reading the items (a list that claims 2**31-1 items asks for 16
GiB). ``bounded`` therefore walks the bytes first, in Python, and lets through only the
types records hold (``None``, booleans, integers, strings, bytes, lists, dictionaries,
references), at most ``MAX_NESTING`` deep, each count and length no larger than the
bytes that follow it and the value ending exactly at the end: every item claimed is
then present, so decoding allocates at most a small multiple of the file's size.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from collections.abc import Callable, Mapping
from typing import Any

from . import _trust

RECORD_FILE = "activation-v4.marshal"
RECORD_HEADER = b"triton-toolchain activation records 4\n"
MARSHAL_VERSION = 4
MAX_RECORDS = 8
MAX_RECORD_BYTES = 8 << 20
MAX_FACTS = 1 << 14  # a record holds a few hundred
MAX_NESTING = 16  # a record's values nest 6 deep
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
    import fnmatch  # noqa: PLC0415  fast path: only for a pattern of more wildcards

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


def _spec_dirs(name: str) -> list[str]:
    """The directories of package ``name`` as the import system finds it now, without
    importing it (a namespace package has several)."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None) if module is not None else None
    if spec is None:
        import importlib.util  # noqa: PLC0415  fast path: only for a package not imported

        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return []
    if spec is None:
        return []
    if spec.submodule_search_locations is not None:
        return [str(p) for p in spec.submodule_search_locations]
    return [os.path.dirname(spec.origin)] if spec.origin else []


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
    "package": lambda p, looks: _spec_dirs(p),
}


def _fact_allowed(op: object, arg: str) -> bool:
    """Whether observing ``op`` of ``arg`` is what a resolution can have recorded: a path
    is absolute, a package a top-level name (finding ``a.b`` would import ``a``), a
    pattern has at most ``MAX_WILDCARDS`` wildcard components (no walk of the whole
    filesystem)."""
    if op == "env":
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


FACTS_VERSION = 2  # marshal's version of the facts' values: no references, so one value
# is always the same bytes, and a list is its count, then its items' bytes one after another


def verify(names: str, values: bytes, environ: Mapping[str, str]) -> bool:
    """Every fact, observed again, has the value recorded (a malformed fact never
    holds). The facts as stored (``pack_facts``): ``names``, each fact's op and
    argument, all joined by NUL characters, the environment's first; ``values``, the
    list of their values, marshalled (``FACTS_VERSION``) and compared as bytes, never
    decoded: each variable's at once (a record of another environment fails before any
    file is looked at), the files' together (one ``marshal.dumps``)."""
    parts = names.split("\0") if names else []
    count = len(parts) // 2
    if len(parts) % 2 or count > MAX_FACTS:
        return False
    if values[:5] != b"[" + count.to_bytes(4, "little"):
        return False
    offset = 5
    looks = _trust.Looks()
    observed: list[Any] = []
    for i in range(0, len(parts), 2):
        op, arg = parts[i], parts[i + 1]
        if not _fact_allowed(op, arg):
            return False
        if op != "env":
            observed.append(_plain(OPS[op](arg, looks)))
            continue
        if observed:  # the environment's facts come first
            return False
        seen = marshal.dumps(environ.get(arg), FACTS_VERSION)
        if not values.startswith(seen, offset):
            return False
        offset += len(seen)
    try:
        rest = marshal.dumps(observed, FACTS_VERSION)
    except ValueError:
        return False
    return memoryview(values)[offset:] == memoryview(rest)[5:]


def pack_facts(facts: list[list[Any]]) -> tuple[str, bytes] | None:
    """Facts ``[[op, arg, value], ...]`` as ``verify`` reads them, or ``None`` for facts
    that cannot be stored so (an op or argument not a string, or holding a NUL)."""
    if not all(type(f[0]) is str and type(f[1]) is str for f in facts):
        return None
    names = "\0".join(f"{op}\0{arg}" for op, arg, _ in facts)
    if names.count("\0") != max(2 * len(facts) - 1, 0):
        return None
    try:
        return names, marshal.dumps([f[2] for f in facts], FACTS_VERSION)
    except ValueError:
        return None


def facts_of(names: str, values: bytes) -> list[list[Any]] | None:
    """The facts ``[[op, arg, value], ...]`` of a record's body (for tests and
    benchmarks), or ``None`` for a body that does not hold them."""
    parts = names.split("\0") if names else []
    decoded = load_bounded(values)
    if len(parts) % 2 or type(decoded) is not list or len(decoded) != len(parts) // 2:
        return None
    return [[parts[2 * i], parts[2 * i + 1], v] for i, v in enumerate(decoded)]


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


def identity(arch: int | None, scope: str = "all") -> list[Any]:
    """What a record is only valid for: this interpreter, its import path, this user
    and groups, the target architecture, the parts of the plan resolved (``_catalog.Part``), and
    the shim's own files."""
    package = os.path.dirname(__file__)
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
        _status(os.stat, package),
        _status(os.stat, __file__),
    ]


# ------------------------------------------------------------- decoding, bounded


# marshal's type codes (CPython's Python/marshal.c) that records hold, by what follows
# the code: nothing; 4 bytes (an integer, a reference); a length byte or a 4-byte length,
# then that many bytes (strings, bytes); a 4-byte count of 2-byte digits (a long
# integer); a count of items (a list, a tuple; a small tuple's count is one byte); pairs
# up to a NULL code (a dictionary). The high bit of a code marks an object others refer
# to. Every other code is refused. One table lookup a value: this walk is on the fast
# path.
_PLAIN, _WORD, _SHORT, _SIZED, _LONG, _ITEMS, _SMALL, _DICT, _END = range(1, 10)
_CODES = {
    _PLAIN: b"NFT",
    _WORD: b"ir",
    _SHORT: b"zZ",
    _SIZED: b"stuaA",
    _LONG: b"l",
    _ITEMS: b"[(",
    _SMALL: b")",
    _DICT: b"{",
}
_KIND = bytearray(256)
for _kind, _codes in _CODES.items():
    for _code in _codes:
        _KIND[_code] = _KIND[_code | 0x80] = _kind
_KIND[ord("0")] = _END  # NULL: the end of a dictionary
KIND = bytes(_KIND)
_OPEN_DICT = -1  # an open dictionary on the stack: -1 before a key, -2 before a value


def bounded(data: bytes | memoryview, kinds: bytes = KIND) -> bool:  # noqa: PLR0912  one walk
    """Whether ``data`` is one marshal value that ``marshal.loads`` decodes within a
    small multiple of its size (see the module docstring): only the types records hold,
    nested at most ``MAX_NESTING`` deep, every length and count within the bytes that
    follow it, every item claimed present, nothing after the value."""
    end = len(data)
    pos = 0
    stack: list[int] = []  # per open container: the items still to come, or a dict mark
    while pos < end:
        kind = kinds[data[pos]]
        pos += 1
        if kind == _WORD:
            pos += 4
        elif kind == _SHORT:
            if pos >= end:
                return False
            pos += 1 + data[pos]
        elif kind == _PLAIN:
            pass
        elif kind in (_ITEMS, _SIZED, _LONG):
            n = int.from_bytes(data[pos : pos + 4], "little", signed=True)
            pos += 4
            if kind == _LONG:
                n = 2 * abs(n)
            if n < 0 or pos + n > end:
                return False
            if kind != _ITEMS:
                pos += n
            elif len(stack) >= MAX_NESTING:
                return False
            elif n:
                stack.append(n)
                continue
        elif kind == _SMALL:
            n = data[pos] if pos < end else end
            pos += 1
            if pos + n > end or len(stack) >= MAX_NESTING:
                return False
            if n:
                stack.append(n)
                continue
        elif kind == _DICT:
            if len(stack) >= MAX_NESTING:
                return False
            stack.append(_OPEN_DICT)
            continue
        elif not (kind == _END and stack and stack[-1] == _OPEN_DICT):
            return False
        elif stack:
            stack.pop()  # the dictionary ends: it is the value completed
        # A value is complete: count it in the containers that hold it.
        while stack:
            left = stack[-1]
            if left > 1:
                stack[-1] = left - 1
            elif left == 1:
                stack.pop()
                continue
            else:
                stack[-1] = -3 - left  # a dictionary's key done, or its value
            break
        else:
            return pos == end
    return False


def load_bounded(data: bytes | memoryview) -> Any:
    """``marshal.loads`` of bytes that ``bounded`` let through; ``None`` otherwise (the
    one decoder of what the shim keeps: records here, tools' answers in ``_answers``)."""
    if not bounded(data):
        return None
    try:
        # Only from a private directory (``read_private``), walked first (``bounded``).
        return marshal.loads(data)  # noqa: S302
    except (EOFError, ValueError, TypeError):  # never MemoryError: bounded() bounds it
        return None


# The shapes of decoded values, as data: a type or a tuple of types; ``[shape]`` a list
# of at most ``MAX_ITEMS`` of that shape; ``{key: shape}`` a dictionary of exactly those
# keys; ``Each(shape)`` a dictionary of at most ``MAX_ITEMS`` string keys to that shape;
# ``Maybe(shape)`` that shape or ``None``.
MAX_ITEMS = 1 << 12
_TEXT_OR_NONE = (str, type(None))


class Each:
    """A dictionary of string keys to values of one shape."""

    def __init__(self, shape: Any) -> None:
        self.shape = shape


class Maybe:
    """A value of one shape, or ``None``."""

    def __init__(self, shape: Any) -> None:
        self.shape = shape


_REJECTION = {"path": str, "reason": str, "source": str}
_CHOICE = {
    "path": _TEXT_OR_NONE,
    "version": _TEXT_OR_NONE,
    "source": _TEXT_OR_NONE,
    "rejected": [_REJECTION],
    "searched": [str],
    "notes": [str],
    "error": _TEXT_OR_NONE,
}
_SETTING = {
    "component": str,
    "knob": _TEXT_OR_NONE,
    "variable": _TEXT_OR_NONE,
    "value": _TEXT_OR_NONE,
    "user": bool,
    "error": _TEXT_OR_NONE,
    "used_by": _TEXT_OR_NONE,
}
# A plan (``_plan``), as the adapters use it.
PLAN = {
    "toolchain": {
        "arch": (int, type(None)),
        "manifest": _TEXT_OR_NONE,
        "strict": bool,
        "notes": [str],
        "components": Each(_CHOICE),
    },
    "history": bool,
    "settings": [_SETTING],
    "drivers": Each({"library": _TEXT_OR_NONE, "link": _TEXT_OR_NONE, "user": bool}),
    "pending": [str],
    # None: torch's part pending, added when torch is imported (``_activate.complete``).
    "torch": Maybe({"CXX": _TEXT_OR_NONE, "CPATH": [str], "CUDA_HOME": _TEXT_OR_NONE}),
}


def fits(value: Any, shape: Any) -> bool:  # noqa: PLR0912  the leaves in place
    """Whether ``value`` has ``shape`` (see ``PLAN``); exact types (a ``bool`` is no
    ``int`` here), so no subclass of a decoded value's type is trusted either. (The
    leaves of a dictionary or a list are checked in place: this runs on the fast
    path.)"""
    kind = type(shape)
    if kind is dict:
        if type(value) is not dict or value.keys() != shape.keys():
            return False
        for key, inner in shape.items():
            leaf = type(inner)
            if leaf is type:
                if type(value[key]) is not inner:
                    return False
            elif leaf is tuple:
                if type(value[key]) not in inner:
                    return False
            elif not fits(value[key], inner):
                return False
        return True
    if kind is list:
        if type(value) is not list or len(value) > MAX_ITEMS:
            return False
        item = shape[0]
        if type(item) is type:
            return all(type(v) is item for v in value)
        return all(fits(v, item) for v in value)
    if kind is Each:
        return (
            type(value) is dict
            and len(value) <= MAX_ITEMS
            and all(type(k) is str and fits(v, shape.shape) for k, v in value.items())
        )
    if kind is Maybe:
        return value is None or fits(value, shape.shape)
    if kind is tuple:
        return type(value) in shape
    return type(value) is shape


def plan_fits(plan: Any) -> bool:
    """Whether ``plan`` is one the adapters can apply: ``PLAN``'s shape, and every
    setting names a component of the toolchain."""
    if not fits(plan, PLAN):
        return False
    components = plan["toolchain"]["components"]
    return all(s["component"] in components for s in plan["settings"])


def entries(data: bytes) -> list[tuple[Any, bytes]]:
    """The ``(key, body)`` pairs in the bytes of a record file; none for bytes that are
    not one. Each body (the facts and the result, marshalled apart) is decoded only for a
    record whose key matches: a file of several records costs little more than one."""
    if not data.startswith(RECORD_HEADER):
        return []
    doc = load_bounded(memoryview(data)[len(RECORD_HEADER) :])
    if type(doc) is not list or len(doc) > MAX_RECORDS:
        return []
    return [(e[0], e[1]) for e in doc if type(e) is list and len(e) == 2 and type(e[1]) is bytes]


def body(data: bytes) -> tuple[str, bytes, dict[str, Any]] | None:
    """The facts (``verify``'s ``names`` and ``values``) and the result in a record's
    body; ``None`` for a body that is not one (a result is a plan of ``PLAN``'s shape;
    the facts are checked by ``verify``)."""
    doc = load_bounded(data)
    if (
        type(doc) is list
        and len(doc) == 3
        and type(doc[0]) is str
        and type(doc[1]) is bytes
        and plan_fits(doc[2])
    ):
        return doc[0], doc[1], doc[2]
    return None


def decode(data: bytes) -> list[dict[str, Any]]:
    """Every record in the bytes of a record file, as ``{"key", "facts", "result"}``."""
    found = []
    for key, raw in entries(data):
        content = body(raw)
        facts = facts_of(content[0], content[1]) if content is not None else None
        if content is not None and facts is not None:
            found.append({"key": key, "facts": facts, "result": content[2]})
    return found


def stored(environ: Mapping[str, str]) -> list[tuple[Any, bytes]]:
    """The ``(key, body)`` pairs of the user's record file (``entries``)."""
    data = read_private(cache_dir(environ), RECORD_FILE, MAX_RECORD_BYTES)
    return [] if data is None else entries(data)


def lookup(key: list[Any], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The stored result for ``key`` whose facts all hold now, or ``None``."""
    for found, raw in stored(environ):
        if found == key:
            content = body(raw)
            if content is not None and verify(content[0], content[1], environ):
                return content[2]
    return None
