"""Observations, and the activation record that lets a process skip resolving.

Resolution is a function of what it observes: environment variables, and the status,
links, listings and trust of files (``_discovery._fs`` routes every such read through
``observe`` here); what it learns by running tools or parsing files is tied to the
status of the file it came from. While ``resolve`` runs, every observation and its
value are recorded. ``activate()`` keeps the result with those facts in the user's
cache; a later process whose interpreter is the same (``identity``) and whose every
fact, observed again, has the same value, reuses the result: it cannot differ from
what resolving again would give. Observing again costs a few hundred ``stat`` calls,
not the resolver's modules.

Guarantees: pure standard library, and nothing that ``import triton`` does not load
anyway (this module is what it pays for on a hit). Records live only in a directory
this user alone can write (``_trust``), are written to a temporary file and renamed,
and a missing, damaged or foreign record only means resolving again; nothing here
raises for them.

The records are stored with ``marshal`` (built in, and ten times faster to read than
JSON, whose import alone would cost ``import triton`` a millisecond or two), behind a
header line. ``marshal`` is not meant for data others can forge; the file is read only
from a directory nobody but this user (and root) can write, the standard Python itself
applies to the byte code it loads from ``__pycache__``, and a file that is damaged or
not ours decodes to nothing.
"""

from __future__ import annotations

import contextvars
import marshal
import os
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any

from . import _trust

RECORD_FILE = "activation-v2.marshal"
RECORD_HEADER = b"triton-toolchain activation records 2\n"
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


def _matches(name: str, pattern: str) -> bool:
    """``fnmatch`` for the one-``*`` patterns discovery uses, without compiling a
    regular expression (other patterns go to ``fnmatch``)."""
    if pattern.count("*") == 1 and not any(c in pattern for c in "?["):
        head, tail = pattern.split("*")
        return len(name) >= len(head) + len(tail) and name.startswith(head) and name.endswith(tail)
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


def _listing(pattern: str) -> list[str]:
    """Sorted matches of an absolute pattern whose wildcards are in whole components
    (``/usr/local/cuda-*``, ``/x/nvidia/*/lib/stubs/libcuda.so``); hidden names match
    only a pattern that starts with a dot, as in ``glob``."""
    found = ["/"]
    for part in [p for p in pattern.split("/") if p]:
        if not any(c in part for c in "*?["):
            found = [os.path.join(d, part) for d in found if os.path.lexists(os.path.join(d, part))]
            continue
        matches = []
        for directory in found:
            try:
                names = os.listdir(directory)
            except (OSError, ValueError):
                continue
            matches += [
                os.path.join(directory, n)
                for n in names
                if _matches(n, part) and (part.startswith(".") or not n.startswith("."))
            ]
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
# ``lstat``/``readlink``) of the resolution or verification that makes it. A recorded
# fact is (op, argument, value); observing it again must give the same value.
OPS: dict[str, Callable[[str, _trust.Looks], Any]] = {
    "stat": lambda p, looks: _status(os.stat, p),
    "lstat": lambda p, looks: _status(looks.lstat, p),
    "realpath": _trust.real_path,
    "glob": lambda p, looks: _listing(p),
    "executable": lambda p, looks: os.access(p, os.X_OK),
    "trust": _trust.untrusted,
    "content": lambda p, looks: _content(p),
    "package": lambda p, looks: _spec_dirs(p),
}


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
        return [[op, arg, value] for (op, arg), value in self.values.items()]


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


def write_private(directory: str | None, name: str, data: bytes) -> bool:
    """Replace ``name`` in the private ``directory`` (created if needed) by ``data``:
    written to a temporary file of mode 0600, then renamed over. False when it could
    not be written; the old file then stays as it was."""
    directory = make_private_dir(directory)
    if directory is None:
        return False
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(directory, name))
        return True
    except OSError:
        with suppress(OSError):
            os.unlink(tmp)
        return False


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


def decode(data: bytes) -> list[dict[str, Any]]:
    """The records in the bytes of a record file; none for bytes that are not one."""
    if not data.startswith(RECORD_HEADER):
        return []
    try:
        # Only from a private directory (``read_private``): see the module docstring.
        doc = marshal.loads(memoryview(data)[len(RECORD_HEADER) :])  # noqa: S302
    except (EOFError, ValueError, TypeError):
        return []
    records = doc.get("records") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        return []
    # The facts' form is checked by ``verify``, for the one record whose key matches.
    return [r for r in records if isinstance(r, dict) and isinstance(r.get("facts"), list)]


def encode(records: list[dict[str, Any]]) -> bytes:
    """The bytes of a record file holding ``records``; raises ``ValueError`` for a value
    ``marshal`` cannot store."""
    return RECORD_HEADER + marshal.dumps({"records": records}, MARSHAL_VERSION)


def _records(environ: Mapping[str, str]) -> list[dict[str, Any]]:
    data = read_private(cache_dir(environ), RECORD_FILE, MAX_RECORD_BYTES)
    return [] if data is None else decode(data)


def lookup(key: list[Any], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The stored result for ``key`` whose facts all hold now, or ``None``."""
    for record in _records(environ):
        if record.get("key") == key and verify(record["facts"], environ):
            result = record.get("result")
            return result if isinstance(result, dict) else None
    return None


def store(key: list[Any], facts: Facts, result: dict[str, Any], environ: Mapping[str, str]) -> bool:
    """Keep ``result`` with its facts (the newest first, at most ``MAX_RECORDS``)."""
    if facts.unstable:
        return False
    entry = {"key": key, "facts": facts.to_list(), "result": result}
    kept = [r for r in _records(environ) if r.get("facts") != entry["facts"]]
    try:
        data = encode([entry, *kept][:MAX_RECORDS])
    except ValueError:
        return False
    return write_private(cache_dir(environ), RECORD_FILE, data)
