"""Manifest schema 1 (docs/manifest.md): find, read, validate strictly, and write.

Guarantees: ``load`` returns a ``Manifest`` only when every key is known, every type
is right and every component path is absolute and exists with the right kind (file,
executable file, directory); otherwise it raises ``ManifestError`` naming the file,
the field and the fix. Reading a manifest starts no process and imports no ELF reader.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._catalog import MANIFEST_COMPONENTS, SPECS
from ._errors import ManifestError, SettingError
from ._host import Host

SCHEMA = 1
MANIFEST_VARIABLE = "TRITON_TOOLCHAIN_MANIFEST"
_TOP_KEYS = {
    "schema": int,
    "generator": str,
    "strict": bool,
    "driver_dirs": list,
    "components": dict,
}
_ENTRY_KEYS = {"path": str, "version": str}
_JSON_NAMES = {int: "integer", str: "string", bool: "boolean", list: "array", dict: "object"}


@dataclass(frozen=True)
class Entry:
    path: Path
    version: str | None


@dataclass(frozen=True)
class Manifest:
    """A validated manifest. ``file`` is where it was read from."""

    file: Path
    components: Mapping[str, Entry]
    driver_dirs: tuple[Path, ...] = ()
    strict: bool = False
    generator: str | None = None


def search_locations(host: Host) -> tuple[Path, ...]:
    """Where a manifest is looked for when ``TRITON_TOOLCHAIN_MANIFEST`` is unset.

    Search order: inside the installed package, ``sys.prefix/share/triton-toolchain``,
    the user's config directory, ``/etc/triton-toolchain``.
    """
    config = host.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(config):
        home = host.environ.get("HOME", "")
        config = os.path.join(home, ".config") if os.path.isabs(home) else ""
    places = [
        Path(__file__).parent / "manifest.json",
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
        if not os.path.isfile(path):
            raise SettingError(
                f"{MANIFEST_VARIABLE}={value!r} does not name an existing file; write one with "
                "`triton-toolchain lock -o FILE`, or unset the variable"
            )
        return path
    return next((p for p in search_locations(host) if os.path.isfile(p)), None)


def _fail(file: Path, field: str, problem: str, fix: str) -> ManifestError:
    return ManifestError(f"{file}: {field}: {problem}; {fix}")


def _check_keys(
    file: Path, field: str, obj: Mapping[str, Any], allowed: Mapping[str, type]
) -> None:
    for key, value in obj.items():
        if key not in allowed:
            raise _fail(
                file,
                f"{field}{key}",
                "unknown key",
                f"schema {SCHEMA} knows {', '.join(sorted(allowed))}",
            )
        want = allowed[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise _fail(
                file,
                f"{field}{key}",
                f"is {type(value).__name__} {value!r}",
                f"it must be a JSON {_JSON_NAMES[want]}",
            )


def _absolute(file: Path, field: str, value: str) -> Path:
    if not os.path.isabs(value):
        raise _fail(file, field, f"{value!r} is not an absolute path", "write the absolute path")
    if "\0" in value:
        raise _fail(file, field, f"{value!r} contains a NUL character", "write the path itself")
    return Path(value)


def _entry(file: Path, name: str, raw: object) -> Entry:
    field = f"components.{name}"
    if name not in SPECS or name not in MANIFEST_COMPONENTS:
        hint = (
            "the driver belongs to the host: list its directories in driver_dirs"
            if name == "libcuda"
            else f"known components: {', '.join(MANIFEST_COMPONENTS)}"
        )
        raise _fail(file, field, "unknown component", hint)
    if not isinstance(raw, dict):
        raise _fail(file, field, f"is {type(raw).__name__}", 'it must be an object {"path": ...}')
    _check_keys(file, field + ".", raw, _ENTRY_KEYS)
    if "path" not in raw:
        raise _fail(file, field, "has no path", 'add "path": "/absolute/path"')
    path = _absolute(file, field + ".path", raw["path"])
    kind = SPECS[name].kind
    try:
        mode = path.stat().st_mode
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
    if kind == "tool" and not os.access(path, os.X_OK):
        raise _fail(file, field + ".path", f"{path} is not executable", "give an executable")
    return Entry(path, raw.get("version"))


def load(file: Path) -> Manifest:
    """Read and validate ``file``; see the module docstring for the guarantees."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{file}: cannot be read ({exc}); fix or remove the file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"{file}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix the file or regenerate it with `triton-toolchain lock`"
        ) from None
    if not isinstance(data, dict):
        raise _fail(file, "(top level)", f"is {type(data).__name__}", "it must be a JSON object")
    _check_keys(file, "", data, _TOP_KEYS)
    if data.get("schema") != SCHEMA:
        raise _fail(
            file,
            "schema",
            f"is {data.get('schema')!r}",
            f"this triton-toolchain reads schema {SCHEMA}; upgrade it or regenerate the manifest",
        )
    if "components" not in data:
        raise _fail(file, "components", "is missing", 'add "components": {}')
    dirs = []
    for i, value in enumerate(data.get("driver_dirs", [])):
        if not isinstance(value, str):
            raise _fail(file, f"driver_dirs[{i}]", f"is {type(value).__name__}", "use strings")
        dirs.append(_absolute(file, f"driver_dirs[{i}]", value))
    components = {name: _entry(file, name, raw) for name, raw in data["components"].items()}
    return Manifest(
        file=file,
        components=components,
        driver_dirs=tuple(dirs),
        strict=data.get("strict", False),
        generator=data.get("generator"),
    )


def to_json(
    components: Mapping[str, tuple[str, str | None]],
    *,
    driver_dirs: tuple[str, ...] = (),
    strict: bool = False,
    generator: str = "triton-toolchain lock",
) -> str:
    """Serialise a manifest: ``components`` maps name -> (path, version or None)."""
    doc: dict[str, Any] = {"schema": SCHEMA, "generator": generator, "strict": strict}
    if driver_dirs:
        doc["driver_dirs"] = list(driver_dirs)
    doc["components"] = {
        name: {"path": path, **({"version": version} if version else {})}
        for name, (path, version) in components.items()
    }
    return json.dumps(doc, indent=2) + "\n"
