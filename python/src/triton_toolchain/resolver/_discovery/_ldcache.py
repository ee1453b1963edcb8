"""The dynamic linker's cache, ``/etc/ld.so.cache``, read directly: no ``ldconfig``
binary (NixOS has none, triton-lang/triton#2878) and no process.

Both formats glibc writes are read (the layout is glibc's ``dl-cache.h``):

- the new format, ``"glibc-ld.so.cache1.1"`` (glibc 2.32 and newer write only this);
- the old format, ``"ld.so-1.7.0"``, alone (``ldconfig -c old``) or with the new format
  appended after its entries (``ldconfig -c compat``); then the new part is read, as
  ``ld.so`` does, since it is the complete one.

Guarantees: pure Python (``struct``), one read of the file; a missing, empty, truncated
or malformed cache gives a problem string, never an exception; entries keep the cache's
order (the order in which ``ld.so`` tries them); each entry's architecture comes from its
flags, e.g. ``0x0303`` is ``"libc6,x86-64"``.

Example::

    cache = read_ld_cache(Path("/etc/ld.so.cache"))
    [e.path for e in cache.entries if e.name == "libcuda.so.1"]
    # ['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/lib/i386-linux-gnu/libcuda.so.1']
"""

import struct
from pathlib import Path
from typing import NamedTuple

from .._catalog import MACHINES
from . import _fs

OLD_MAGIC = b"ld.so-1.7.0"
NEW_MAGIC = b"glibc-ld.so.cache1.1"

# glibc sysdeps/generic/ldconfig.h
FLAG_TYPE_MASK = 0x00FF
FLAG_REQUIRED_MASK = 0xFF00
TYPE_NAMES: dict[int, str] = {0x0000: "libc4", 0x0001: "ELF", 0x0002: "libc5", 0x0003: "libc6"}
ARCH_NAMES: dict[int, str] = {
    0x0000: "",  # the machine's default ABI: i386 on x86, 32-bit ARM soft-float...
    0x0100: "64bit (SPARC)",
    0x0200: "IA-64",
    0x0300: "x86-64",
    0x0400: "64bit (s390)",
    0x0500: "64bit (POWER)",
    0x0600: "N32",
    0x0700: "64bit (MIPS)",
    0x0800: "x32",
    0x0900: "hard-float",
    0x0A00: "AArch64",
    0x0B00: "soft-float",
    0x0C00: "nan2008",
    0x0D00: "N32,nan2008",
    0x0E00: "64bit,nan2008",
    0x0F00: "soft-float (RISC-V)",
    0x1000: "double-float",
}

_OLD_HEADER = struct.Struct("<11sxI")  # char magic[11], (padding), unsigned nlibs
_OLD_ENTRY_SIZE = 12  # int flags; unsigned key, value
# magic[17] version[3] nlibs len_strings flags(uint8) pad[3] extension_offset unused[3]
_NEW_HEADER_SIZE = 48
_NEW_ENTRY_SIZE = 24  # int32 flags; uint32 key, value, osversion; uint64 hwcap
_ALIGN = 8  # __alignof__ (struct cache_file_new)
_ENDIAN_BIG = 3  # cache_file_new.flags: 2 little-endian, 3 big-endian, 0 unknown


class CacheEntry(NamedTuple):
    """One library in the cache: ``name`` (the SONAME, ``"libcuda.so.1"``), ``path`` (as
    the cache gives it, absolute), ``flags`` (``0x0303``) and ``hwcap`` (glibc-hwcaps)."""

    name: str
    path: str
    flags: int
    hwcap: int = 0

    @property
    def arch(self) -> str:
        """``"libc6,x86-64"``, ``"libc6"`` (i386 on x86), ``"libc6,AArch64"``."""
        kind = TYPE_NAMES.get(self.flags & FLAG_TYPE_MASK, "unknown")
        required = self.flags & FLAG_REQUIRED_MASK
        extra = ARCH_NAMES.get(required, f"{required:#06x}")
        return f"{kind},{extra}" if extra else kind

    def matches(self, machine: str) -> bool | None:
        """Whether ``ld.so`` for ``machine`` (``Host.machine``) would use this entry;
        ``None`` when the machine is not in ``MACHINES``."""
        facts = MACHINES.get(machine)
        return None if facts is None else self.flags == facts.ld_cache_flags


class LdCache:
    """A parsed cache (read-only): ``format`` is ``"new"``, ``"old"`` or ``"compat"``
    (old with new appended), ``count`` the number of entries. Every string an entry
    points at is known to end inside the file once it is parsed; ``named`` decodes only
    the entries of one name, ``entries`` all of them, once (thousands of objects on a
    large machine: most of the cost of reading a cache, which the driver's search does
    not need)."""

    __slots__ = ("_all", "_base", "_data", "_rows", "format", "path")
    path: Path
    format: str

    def __init__(
        self, path: Path, fmt: str, data: bytes, base: int, rows: list[tuple[int, ...]]
    ) -> None:
        self.path, self.format = path, fmt
        # A row: the flags, the offsets of the name and of the path (from ``base``), and
        # in the new format the OS version and the hwcap.
        self._data, self._base, self._rows = data, base, rows
        self._all: tuple[CacheEntry, ...] | None = None

    def __repr__(self) -> str:
        return f"LdCache({str(self.path)!r}, {self.format!r}, {self.count} entries)"

    @property
    def count(self) -> int:
        return len(self._rows)

    def _entry(self, row: tuple[int, ...]) -> CacheEntry:
        data, base = self._data, self._base
        name, path = _string(data, base + row[1]), _string(data, base + row[2])
        return CacheEntry(name, path, row[0], row[4] if len(row) > 4 else 0)

    @property
    def entries(self) -> tuple[CacheEntry, ...]:
        """Every entry, in cache order."""
        if self._all is None:
            self._all = tuple(self._entry(row) for row in self._rows)
        return self._all

    def named(self, name: str) -> tuple[CacheEntry, ...]:
        """The entries whose SONAME is ``name``, in cache order (those of ``entries``)."""
        data, base = self._data, self._base
        # The string at an offset is ``name`` exactly when its bytes and a NUL are there.
        wanted = name.encode("utf-8", "surrogateescape") + b"\0"
        return tuple(self._entry(r) for r in self._rows if data.startswith(wanted, base + r[1]))


def _checked(data: bytes, base: int, rows: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """``rows``, once every string they point at is known to end inside ``data`` (each
    offset at or before the file's last NUL byte: ``ld.so`` reads them as C strings);
    ``ValueError`` otherwise."""
    if rows:
        last = base + max(max(r[1], r[2]) for r in rows)
        if last > data.rfind(b"\0"):
            raise ValueError(f"a string at offset {last} does not end inside the file")
    return rows


def _string(data: bytes, offset: int) -> str:
    end = data.index(b"\0", offset)  # ValueError when unterminated
    return data[offset:end].decode("utf-8", "surrogateescape")


def _parse_new(data: bytes, start: int) -> list[tuple[int, ...]]:
    """The rows of the new format's table whose header is at ``start`` (its strings'
    offsets count from there)."""
    header = data[start : start + _NEW_HEADER_SIZE]
    if len(header) < _NEW_HEADER_SIZE:
        raise ValueError("new-format header is truncated")
    order = ">" if header[28] == _ENDIAN_BIG else "<"
    nlibs, len_strings = struct.unpack_from(order + "II", header, 20)
    table_end = start + _NEW_HEADER_SIZE + nlibs * _NEW_ENTRY_SIZE
    if table_end > len(data):
        raise ValueError(f"{nlibs} entries announced, the file ends inside the table")
    if table_end + len_strings > len(data):
        raise ValueError("string table is truncated")
    rows = list(struct.iter_unpack(order + "iIIIQ", data[start + _NEW_HEADER_SIZE : table_end]))
    return _checked(data, start, rows)


def parse_ld_cache(data: bytes, path: Path = Path("/etc/ld.so.cache")) -> LdCache | str:
    """Parse the bytes of a cache; see ``read_ld_cache``."""
    try:
        if data.startswith(NEW_MAGIC):
            return LdCache(path, "new", data, 0, _parse_new(data, 0))
        if not data.startswith(OLD_MAGIC):
            return f"{path} is not a linker cache (starts with {data[:20]!r})"
        if len(data) < _OLD_HEADER.size:
            raise ValueError("old-format header is truncated")
        _, nlibs = _OLD_HEADER.unpack_from(data)
        table_end = _OLD_HEADER.size + nlibs * _OLD_ENTRY_SIZE
        if table_end > len(data):
            raise ValueError(f"{nlibs} entries announced, the file ends inside the table")
        new_start = -(-table_end // _ALIGN) * _ALIGN
        if data.startswith(NEW_MAGIC, new_start):
            return LdCache(path, "compat", data, new_start, _parse_new(data, new_start))
        # Old-format offsets count from the end of the entry table.
        rows = list(struct.iter_unpack("<iII", data[_OLD_HEADER.size : table_end]))
        return LdCache(path, "old", data, table_end, _checked(data, table_end, rows))
    except (ValueError, IndexError, struct.error) as exc:
        return f"{path} is a damaged linker cache: {exc}"


MAX_BYTES = 64 << 20


def read_ld_cache(path: Path) -> LdCache | str | None:
    """The cache at ``path``; ``None`` when there is none (NixOS); a problem string when
    it cannot be read or is malformed, e.g. ``"/etc/ld.so.cache is a damaged linker
    cache: string table is truncated"``."""
    try:
        data = _fs.read_regular(path, MAX_BYTES)
    except _fs.ReadProblem as problem:
        if str(problem) == "does not exist":
            return None
        return f"{path} {problem}"
    if not data:
        return f"{path} is empty"
    return parse_ld_cache(data, path)
