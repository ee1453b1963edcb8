"""Manifest schemas 1 and 2 (docs/manifest.md): find, read, validate strictly, write 2.

Schema 2 adds the components of torch.compile's toolchain (``cxx``, ``openmp``,
``cuda-home``); a schema 1 document is read as it always was.

Guarantees:

- ``load`` returns a ``Manifest`` only when the file is a regular file of at most
  ``MAX_BYTES`` that nobody but root and this user can change (``_trust``), is UTF-8
  JSON nested at most ``MAX_DEPTH`` deep, every key is known, every type is right,
  every string can be a file name, and every component path is absolute and exists
  with the right kind (file, executable file, directory); otherwise it raises
  ``ManifestError`` naming the file, the key and the fix. It never blocks on a FIFO,
  never reads ``/dev/zero`` to the end, and never raises anything else.
- Reading a manifest starts no process and imports no ELF reader.
- ``write`` never leaves a torn or empty file: the new manifest is written to a
  temporary file in the target's directory, flushed to disk and renamed over the
  target; a link at the target is replaced, never written through.
"""

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..runtime import _trust
from ..runtime._errors import ManifestError, SettingError
from ._catalog import CACHE, COMPONENT, MANIFEST_COMPONENTS
from ._discovery import _fs
from ._discovery._host import Host
from ._observe import observe

SCHEMA = 2  # what `lock` writes
SCHEMAS = (1, 2)  # what is read
MANIFEST_VARIABLE = "TRITON_TOOLCHAIN_MANIFEST"
MAX_BYTES = 1 << 20
MAX_DEPTH = 16
MAX_DIGITS = 20
_TOP_KEYS = {
    "schema": int,
    "generator": str,
    "strict": bool,
    "driver_dirs": list,
    "components": dict,
    _trust.MANIFEST_FIELD: list,
    "caches": dict,
}
_ENTRY_KEYS = {"path": str, "version": str}
_JSON_NAMES = {int: "integer", str: "string", bool: "boolean", list: "array", dict: "object"}


class Entry(NamedTuple):
    path: Path
    version: str | None


class Manifest(NamedTuple):
    """A validated manifest. ``file`` is where it was read from."""

    file: Path
    components: Mapping[str, Entry]
    driver_dirs: tuple[Path, ...] = ()
    strict: bool = False
    generator: str | None = None
    schema: int = SCHEMA
    trusted_owners: tuple[str, ...] = ()
    # Per cache of ``_catalog.CACHES``, the directory a site pins on each node, ``$USER``
    # and ``$UID`` expanded per user (``_caches.expand_pin``).
    caches: Mapping[str, str] = {}


def _caches(file: Path, raw: Mapping[str, Any]) -> dict[str, str]:
    """``caches``: a cache's name -> an absolute directory (``$USER``, ``$UID`` allowed)."""
    _check_unique(file, "caches.", raw)
    for name, value in raw.items():
        if name not in CACHE:
            raise _fail(file, f"caches.{name}", "is no cache", f"use {', '.join(CACHE)}")
        if not isinstance(value, str) or not value.startswith("/"):
            raise _fail(
                file,
                f"caches.{name}",
                f"is {_name(value)}",
                'give an absolute directory, e.g. "/local/scratch/$USER/triton"',
            )
        _check_string(file, f"caches.{name}", value)
    return dict(raw)


def search_locations(host: Host) -> tuple[Path, ...]:
    """Where a manifest is looked for when ``TRITON_TOOLCHAIN_MANIFEST`` is unset.

    Search order: inside the installed package, ``sys.prefix/share/triton-toolchain``,
    the user's config directory, ``/etc/triton-toolchain``.
    """
    config = host.environ.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(config):
        home = host.environ.get("HOME") or ""
        config = os.path.join(home, ".config") if os.path.isabs(home) else ""
    places = [
        Path(__file__).parents[1] / "manifest.json",  # triton_toolchain/, not resolver/
        host.prefix / "share" / "triton-toolchain" / "manifest.json",
    ]
    if config:
        places.append(Path(config) / "triton-toolchain" / "manifest.json")
    places.append(host.at("/etc/triton-toolchain/manifest.json"))
    return tuple(places)


def find(host: Host) -> Path | None:
    """The manifest this host uses, or ``None``. A set ``TRITON_TOOLCHAIN_MANIFEST``
    must name an existing absolute file (``SettingError`` otherwise); it is never
    skipped in favour of another manifest."""
    value = host.environ.get(MANIFEST_VARIABLE)
    if value:
        path = Path(value)
        if not path.is_absolute():
            raise SettingError(
                f"{MANIFEST_VARIABLE}={value!r} is not an absolute path; set it to the absolute "
                "path of a manifest file, or unset it"
            )
        if not _fs.lexists(path):
            raise SettingError(
                f"{MANIFEST_VARIABLE}={value!r} does not name an existing file; write one with "
                "`triton-toolchain lock -o FILE`, or unset the variable"
            )
        return path  # what it is (a FIFO, a directory, ...): load(named_by=...) says
    return next((p for p in search_locations(host) if _fs.lexists(p)), None)


def _fail(file: Path, field: str, problem: str, fix: str) -> ManifestError:
    return ManifestError(f"{file}: {field}: {problem}; {fix}")


class _Refused:
    """A JSON value the reader refuses (a huge integer, NaN), kept until validation can
    name its key."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return self.what


def _parse_int(text: str) -> int | _Refused:
    digits = text.lstrip("-")
    if len(digits) > MAX_DIGITS:
        return _Refused(f"an integer of {len(digits)} digits")
    return int(text)


def _parse_constant(text: str) -> _Refused:
    return _Refused(text)


class _Object(dict[str, Any]):
    """A JSON object that remembers the keys it was given more than once (readers
    disagree on which of them counts: the manifest must not say two things)."""

    duplicated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    twice = []
    for key, value in pairs:
        if key in obj:
            twice.append(key)
        obj[key] = value
    if twice:
        obj.duplicated = tuple(twice)
    return obj


def _check_unique(file: Path, field: str, obj: Mapping[str, Any]) -> None:
    twice = getattr(obj, "duplicated", ())
    if twice:
        shown = twice[0] if len(twice[0]) < 60 else twice[0][:57] + "..."
        raise _fail(
            file,
            f"{field}{shown}".encode("ascii", "backslashreplace").decode(),
            "is given twice",
            "keep one (JSON readers disagree on which one counts)",
        )


def _depth_problem(text: str) -> str | None:
    """The key under which ``text`` nests deeper than ``MAX_DEPTH``, or ``None``; read
    without building anything, so no depth exhausts Python's stack."""
    depth, keys = 0, [""]
    in_string = escaped = False
    last_string: list[str] = []
    current: list[str] = []
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                last_string = current
            else:
                current.append(char)
            continue
        if char == '"':
            in_string, current = True, []
        elif char == ":":
            keys[-1] = "".join(last_string)[:40]
        elif char in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return ".".join(k for k in keys if k) or "(top level)"
            keys.append("")
        elif char in "}]":
            depth -= 1
            keys.pop() if len(keys) > 1 else None
    return None


def _name(value: object) -> str:
    if isinstance(value, _Refused):
        return value.what
    return f"{type(value).__name__} {value!r}"[:120]


def _check_string(file: Path, field: str, value: str) -> str:
    if "\0" in value:
        raise _fail(file, field, f"{value!r} contains a NUL character", "write the path itself")
    try:
        os.fsencode(value)
    except UnicodeError:
        raise _fail(
            file,
            field,
            f"{value!r} holds a character no file name can (a lone surrogate)",
            "write the path in UTF-8",
        ) from None
    return value


def _check_keys(
    file: Path, field: str, obj: Mapping[str, Any], allowed: Mapping[str, type]
) -> None:
    _check_unique(file, field, obj)
    for key, value in obj.items():
        if key not in allowed:
            shown = key if len(key) < 60 else key[:57] + "..."
            raise _fail(
                file,
                f"{field}{shown}".encode("ascii", "backslashreplace").decode(),
                "unknown key",
                f"the schema knows {', '.join(sorted(allowed))}",
            )
        want = allowed[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise _fail(
                file,
                f"{field}{key}",
                f"is {_name(value)}",
                f"it must be a JSON {_JSON_NAMES[want]}",
            )
        if isinstance(value, str):
            _check_string(file, f"{field}{key}", value)


def _absolute(file: Path, field: str, value: str) -> Path:
    _check_string(file, field, value)
    if not os.path.isabs(value):
        raise _fail(file, field, f"{value!r} is not an absolute path", "write the absolute path")
    return Path(value)


def _entry(file: Path, name: str, raw: object, schema: int) -> Entry:
    field = f"components.{name}"
    known = [c for c in MANIFEST_COMPONENTS if COMPONENT[c].schema <= schema]
    if name not in known:
        if name in MANIFEST_COMPONENTS:
            hint = f'{name} arrived in schema {COMPONENT[name].schema}: write "schema": {SCHEMA}'
        elif name in COMPONENT:
            hint = "the driver belongs to the host: list its directories in driver_dirs"
        else:
            hint = f"schema {schema} knows {', '.join(known)}"
        raise _fail(file, field, "unknown component", hint)
    if not isinstance(raw, dict):
        raise _fail(file, field, f"is {_name(raw)}", 'it must be an object {"path": ...}')
    _check_keys(file, field + ".", raw, _ENTRY_KEYS)
    if "path" not in raw:
        raise _fail(file, field, "has no path", 'add "path": "/absolute/path"')
    path = _absolute(file, field + ".path", raw["path"])
    kind = COMPONENT[name].kind
    try:
        mode = _fs.stat(path).st_mode
    except OSError as exc:
        raise _fail(
            file,
            field + ".path",
            f"{path} cannot be used ({exc.strerror or exc})",
            "regenerate the manifest or fix the path",
        ) from None
    if kind == "dir" and not stat.S_ISDIR(mode):
        raise _fail(file, field + ".path", f"{path} is not a directory", "give the directory")
    if kind != "dir" and stat.S_ISDIR(mode):
        raise _fail(file, field + ".path", f"{path} is a directory", "give the file itself")
    if kind == "tool" and not _fs.may_execute(path):
        raise _fail(file, field + ".path", f"{path} is not executable", "give an executable")
    return Entry(path, raw.get("version"))


def parse(file: Path, data: bytes) -> Manifest:
    """Validate the bytes of a manifest read from ``file`` (see ``load``)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(
            f"{file}: not UTF-8 text (byte {exc.start}); write the manifest as UTF-8 JSON"
        ) from None
    deep = _depth_problem(text)
    if deep is not None:
        raise _fail(
            file, deep, f"nested deeper than {MAX_DEPTH} levels", "a manifest is a flat document"
        )
    try:
        doc = json.loads(
            text, parse_int=_parse_int, parse_constant=_parse_constant, object_pairs_hook=_object
        )
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"{file}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix the file or regenerate it with `triton-toolchain lock`"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ManifestError(f"{file}: not valid JSON ({exc}); regenerate it") from None
    if not isinstance(doc, dict):
        raise _fail(file, "(top level)", f"is {_name(doc)}", "it must be a JSON object")
    _check_keys(file, "", doc, _TOP_KEYS)
    schema = doc.get("schema")
    if schema not in SCHEMAS:
        raise _fail(
            file,
            "schema",
            f"is {_name(schema)}",
            f"this triton-toolchain reads schemas {' and '.join(map(str, SCHEMAS))}; upgrade it "
            "or regenerate the manifest",
        )
    if "components" not in doc:
        raise _fail(file, "components", "is missing", 'add "components": {}')
    dirs = []
    for i, value in enumerate(doc.get("driver_dirs", [])):
        if not isinstance(value, str):
            raise _fail(file, f"driver_dirs[{i}]", f"is {_name(value)}", "use strings")
        dirs.append(_absolute(file, f"driver_dirs[{i}]", value))
    _check_unique(file, "components.", doc["components"])
    components = {name: _entry(file, name, raw, schema) for name, raw in doc["components"].items()}
    return Manifest(
        trusted_owners=_owners(file, doc.get(_trust.MANIFEST_FIELD, [])),
        file=file,
        components=components,
        driver_dirs=tuple(dirs),
        strict=doc.get("strict", False),
        generator=doc.get("generator"),
        schema=schema,
        caches=_caches(file, doc.get("caches", {})),
    )


def _owners(file: Path, values: list[Any]) -> tuple[str, ...]:
    """``trusted_owners``: one user or ``%group`` per string, a name or a numeric id."""
    for i, value in enumerate(values):
        if not isinstance(value, str) or not value.lstrip("%") or any(c in value for c in " ,\t\n"):
            raise _fail(
                file,
                f"{_trust.MANIFEST_FIELD}[{i}]",
                f"is {_name(value)}",
                'give one owner or %group per string, a name or a numeric id ("swadmin", '
                '"%swgroup", "1234")',
            )
    return tuple(values)


def load_for(host: Host) -> Manifest | None:
    """The manifest this host uses (``find``), read and validated (``load``), or
    ``None``; a file that cannot be read as one names ``TRITON_TOOLCHAIN_MANIFEST``
    when that variable named it. Its ``trusted_owners`` are then in force
    (``_trust.admit``, observed: an activation record puts them in force again), and
    none before it is judged: a manifest cannot vouch for itself."""
    observe("admit", "")
    file = find(host)
    if file is None:
        return None
    manifest = load(
        file, named_by=MANIFEST_VARIABLE if host.environ.get(MANIFEST_VARIABLE) else None
    )
    if manifest.trusted_owners:
        observe("admit", " ".join(manifest.trusted_owners))
    return manifest


def load(file: Path, *, named_by: str | None = None) -> Manifest:
    """Read and validate ``file``; see the module docstring for the guarantees.

    What the file is (its type, without opening it) and whom it belongs to are judged
    before it is read: once every directory and link on the way is trusted, nobody
    else can put another file at that path between the check and the read.
    ``named_by``: the variable that named ``file``; a file that cannot be read as a
    manifest (its type, its trust, its size) then names it in the fix."""
    give = (
        f"{named_by}={str(file)!r} names it: set {named_by} to a manifest file (JSON, schema "
        f"{SCHEMA}), or unset it"
        if named_by
        else f"give a manifest file (JSON, schema {SCHEMA})"
    )
    try:
        mode = _fs.stat(file).st_mode
    except OSError:
        mode = None  # read_regular says why
    if mode is not None and not stat.S_ISREG(mode):
        raise ManifestError(f"{file}: is {_fs.kind_of(mode)}, not a regular file; {give}")
    distrust = _fs.untrusted(file)
    if distrust and distrust.startswith(_trust.UNTRUSTED):
        named = f" ({named_by} names it)" if named_by else ""
        raise ManifestError(
            f"{file}: {distrust}{named}; a manifest says which programs run: {_trust.FIX}"
        )
    try:
        data = _fs.read_regular(file, MAX_BYTES)
    except _fs.ReadProblem as exc:
        raise ManifestError(f"{file}: {exc}; {give}") from None
    if distrust:  # it could not be examined (a dangling link, a loop), yet was read
        raise ManifestError(f"{file}: {distrust}; {give}")
    return parse(file, data)


def to_json(
    components: Mapping[str, tuple[str, str | None]],
    *,
    driver_dirs: tuple[str, ...] = (),
    strict: bool = False,
    caches: Mapping[str, str] | None = None,
    generator: str = "triton-toolchain lock",
) -> str:
    """Serialise a manifest: ``components`` maps name -> (path, version or None);
    ``caches``, a cache's pinned directory (checked as ``load`` checks it). Raises
    ``ManifestError`` for a path a manifest cannot hold (not UTF-8: JSON strings are
    Unicode, and ``load`` refuses the lone surrogates it would be written as)."""
    for name, (path, _) in components.items():
        _writable_path(f"components.{name}.path", path)
    for i, directory in enumerate(driver_dirs):
        _writable_path(f"driver_dirs[{i}]", directory)
    doc: dict[str, Any] = {"schema": SCHEMA, "generator": generator, "strict": strict}
    if driver_dirs:
        doc["driver_dirs"] = list(driver_dirs)
    if caches:
        doc["caches"] = _caches(Path("lock --cache"), caches)
    doc["components"] = {
        name: {"path": path, **({"version": version} if version else {})}
        for name, (path, version) in components.items()
    }
    return json.dumps(doc, indent=2) + "\n"


def _existing_ancestor(directory: Path) -> Path:
    while not os.path.lexists(directory) and directory != directory.parent:
        directory = directory.parent
    return directory


def _writable_path(field: str, path: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise ManifestError(
            f"cannot write a manifest: {field}: {shown} is not UTF-8, which a manifest (JSON "
            "text) cannot hold; move or rename it, or leave it out of the manifest"
        ) from None


def write(target: Path, text: str, *, force: bool) -> str:
    """Write ``text`` to ``target`` so that no reader ever sees a torn file (see the
    module docstring). Without ``force`` an existing target (a symbolic link too, even
    a dangling one) is kept. Returns what was done (``"wrote X"``, ``"replaced the
    symbolic link X (to Y, which is untouched)"``); raises ``ManifestError`` saying what
    happened and where the old file is."""
    directory = target.parent
    try:
        existing = os.lstat(target)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise ManifestError(
            f"cannot write {target} ({exc.strerror or exc}); choose another -o path"
        ) from None
    if existing is not None and not force:
        what = "is a symbolic link" if stat.S_ISLNK(existing.st_mode) else "exists"
        raise ManifestError(f"{target} {what}; not overwriting it (add --force to replace it)")
    if existing is not None and not (
        stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)
    ):
        raise ManifestError(f"{target} is {_fs.kind_of(existing.st_mode)}; choose another -o path")
    # Judge the directory (or, for one still to be made, its nearest existing ancestor)
    # before anything is created in it.
    distrust = _trust.untrusted(str(_existing_ancestor(directory)), container=True)
    if distrust:
        raise ManifestError(
            f"cannot write {target}: {distrust}, so the manifest would not be trusted; "
            "choose a directory only root or you can change"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ManifestError(
            f"cannot write {target} ({exc.strerror or exc}); choose another -o path "
            "(or run as a user who may write there)"
        ) from None
    distrust = _trust.untrusted(str(directory), container=True)
    if distrust:
        raise ManifestError(
            f"cannot write {target}: {distrust}, so the manifest would not be trusted; "
            "choose a directory only root or you can change"
        )
    kept = f"; {target} is unchanged" if existing is not None else ""
    _replace(target, text.encode(), kept)
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        return (
            f"replaced the symbolic link {target} by the manifest (what it pointed to is untouched)"
        )
    return f"wrote {target}"


def _replace(target: Path, data: bytes, kept: str) -> None:
    """A new file in ``target``'s directory (an unpredictable name, ``O_EXCL`` and
    ``O_NOFOLLOW``), flushed to disk, renamed over ``target``; the directory flushed."""
    directory = target.parent
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        try:
            os.fchmod(fd, 0o644)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise ManifestError(
            f"cannot write {target} ({exc.strerror or exc}){kept}; free space or choose another "
            "-o path"
        ) from None
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
