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
pays for on a hit). Records are read only from a directory this user alone can write
(``_trust``), without following a link or blocking on a special file, and a missing,
damaged or foreign record only means resolving again; nothing here raises for them.

The records are stored with ``marshal`` (built in, and ten times faster to read than
JSON, whose import alone would cost ``import triton`` a millisecond or two), behind a
header line. ``marshal`` is not meant for data others can forge; the file is read only
from a directory nobody but this user (and root) can write, the standard Python itself
applies to the byte code it loads from ``__pycache__``, and a file that is damaged or
not ours decodes to nothing.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from collections.abc import Callable, Mapping
from typing import Any

from . import _trust

RECORD_FILE = "activation-v3.marshal"
RECORD_HEADER = b"triton-toolchain activation records 3\n"
MARSHAL_VERSION = 4
MAX_RECORDS = 8
MAX_RECORD_BYTES = 8 << 20
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
    import fnmatch

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
        import importlib.util

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


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def verify(facts: list[Any], environ: Mapping[str, str]) -> bool:
    """Every fact, observed again, has the value recorded (a malformed fact never
    holds)."""
    looks = _trust.Looks()
    for fact in facts:
        if not (isinstance(fact, list) and len(fact) == 3 and isinstance(fact[1], str)):
            return False
        op, arg, value = fact
        if op == "env":
            now = environ.get(arg)
        elif op in OPS:
            now = _plain(OPS[op](arg, looks))
        else:
            return False
        if now != value:
            return False
    return True


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
    is not a regular file of at most ``limit`` bytes."""
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
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit or st.st_uid != os.geteuid():
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


def identity(arch: int | None) -> list[Any]:
    """What a record is only valid for: this interpreter, its import path, this user
    and groups, the target architecture, and the shim's own files."""
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
        _status(os.stat, package),
        _status(os.stat, __file__),
    ]


def entries(data: bytes) -> list[tuple[Any, bytes]]:
    """The ``(key, body)`` pairs in the bytes of a record file; none for bytes that are
    not one. Each body (the facts and the result, marshalled apart) is decoded only for a
    record whose key matches: a file of several records costs little more than one."""
    if not data.startswith(RECORD_HEADER):
        return []
    try:
        # Only from a private directory (``read_private``): see the module docstring.
        doc = marshal.loads(memoryview(data)[len(RECORD_HEADER) :])  # noqa: S302
    except (EOFError, ValueError, TypeError):
        return []
    if not isinstance(doc, list):
        return []
    return [(e[0], e[1]) for e in doc if type(e) is list and len(e) == 2 and type(e[1]) is bytes]


def body(data: bytes) -> tuple[list[Any], dict[str, Any]] | None:
    """The facts and the result in a record's body; ``None`` for a body that is not one
    (the facts' form is checked by ``verify``)."""
    try:
        doc = marshal.loads(data)  # noqa: S302  (see ``entries``)
    except (EOFError, ValueError, TypeError):
        return None
    if type(doc) is list and len(doc) == 2 and type(doc[0]) is list and type(doc[1]) is dict:
        return doc[0], doc[1]
    return None


def decode(data: bytes) -> list[dict[str, Any]]:
    """Every record in the bytes of a record file, as ``{"key", "facts", "result"}``."""
    found = []
    for key, raw in entries(data):
        content = body(raw)
        if content is not None:
            found.append({"key": key, "facts": content[0], "result": content[1]})
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
            if content is not None and verify(content[0], environ):
                return content[1]
    return None
