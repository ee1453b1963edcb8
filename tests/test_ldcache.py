from __future__ import annotations

import struct
import subprocess
import time
from pathlib import Path

import pytest
from elf_fixtures import LDCONFIG, install_driver, write_ld_cache
from triton_toolchain.resolver._discovery._ldcache import (
    NEW_MAGIC,
    CacheEntry,
    LdCache,
    parse_ld_cache,
    read_ld_cache,
)


def _ldconfig_p(cache: Path) -> list[str]:
    """``ldconfig -p -C cache``, minus its header and trailer, as our lines print."""
    out = subprocess.run(
        [LDCONFIG, "-p", "-C", str(cache)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return [line.strip() for line in out[1:] if line.startswith("\t")]


def _named_as_listed(parsed: LdCache, *others: str) -> None:
    """``named`` gives, for every name in the cache and for ``others``, the entries of
    that name in ``entries``, in order."""
    for name in {e.name for e in parsed.entries} | set(others):
        assert parsed.named(name) == tuple(e for e in parsed.entries if e.name == name)
    assert parsed.count == len(parsed.entries)


def _line(e: CacheEntry) -> str:
    hwcap = f", hwcap: {e.hwcap:#018x}" if e.hwcap else ""
    return f"{e.name} ({e.arch}{hwcap}) => {e.path}"


@pytest.fixture(scope="module")
def multiarch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("multiarch")
    x64 = install_driver(root / "usr/lib/x86_64-linux-gnu")
    i386 = install_driver(root / "usr/lib/i386-linux-gnu", variant="i386")
    return root, x64, i386


@pytest.mark.parametrize("fmt", ["new", "old", "compat"])
def test_reads_every_format_ldconfig_writes(
    tmp_path: Path, multiarch: tuple[Path, Path, Path], fmt: str
) -> None:
    _, x64, i386 = multiarch
    cache = write_ld_cache(tmp_path / "ld.so.cache", [i386.parent, x64.parent], fmt)
    header = cache.read_bytes()[:20]
    assert header.startswith(NEW_MAGIC if fmt == "new" else b"ld.so-1.7.0")
    parsed = read_ld_cache(cache)
    assert isinstance(parsed, LdCache)
    assert parsed.format == fmt
    # Every entry, in order, exactly as glibc's own reader prints it.
    assert [_line(e) for e in parsed.entries] == _ldconfig_p(cache)
    _named_as_listed(parsed, "libcuda.so", "libcuda.so.10", "")
    cuda = {e.path: e for e in parsed.named("libcuda.so.1")}
    assert set(cuda) == {str(x64), str(i386)}
    assert (cuda[str(x64)].flags, cuda[str(x64)].arch) == (0x0303, "libc6,x86-64")
    assert (cuda[str(i386)].flags, cuda[str(i386)].arch) == (0x0003, "libc6")
    assert cuda[str(x64)].matches("x86_64") and not cuda[str(i386)].matches("x86_64")
    assert cuda[str(i386)].matches("i686") and cuda[str(x64)].matches("riscv64") is None


def test_reads_this_machines_cache_like_ldconfig() -> None:
    cache = Path("/etc/ld.so.cache")
    start = time.perf_counter()
    parsed = read_ld_cache(cache)
    elapsed = time.perf_counter() - start
    assert isinstance(parsed, LdCache)
    assert [_line(e) for e in parsed.entries] == _ldconfig_p(cache)
    assert elapsed < 0.25  # about 1 ms for 600 entries; generous for a loaded CI runner
    _named_as_listed(parsed, "libcuda.so.1", "libc.so", "ibc.so.6")


def test_names_shared_with_paths_and_names_that_extend_others() -> None:
    # glibc's ldconfig stores a name once, as the tail of its path ("libc.so.6" inside
    # "/lib/libc.so.6"); a name is matched whole, never as a prefix or suffix of another.
    strings = b"/lib/libcuda.so.1\0/lib/libcuda.so.10\0/lib/xlibcuda.so.1\0"
    at = {s: strings.index(s) for s in (b"libcuda.so.1\0", b"libcuda.so.10", b"xlibcuda")}
    table = 48 + 24 * 3
    rows = [
        (0x0303, table + at[b"libcuda.so.1\0"], table),
        (0x0303, table + at[b"libcuda.so.10"], table + strings.index(b"/lib/libcuda.so.10")),
        (0x0303, table + at[b"xlibcuda"], table + strings.index(b"/lib/xlibcuda")),
    ]
    header = NEW_MAGIC + struct.pack("<IIB3xI12x", 3, len(strings), 2, 0)
    body = b"".join(struct.pack("<iIIIQ", f, k, v, 0, 0) for f, k, v in rows)
    parsed = parse_ld_cache(header + body + strings)
    assert isinstance(parsed, LdCache)
    assert [e.path for e in parsed.named("libcuda.so.1")] == ["/lib/libcuda.so.1"]
    assert [e.name for e in parsed.entries] == ["libcuda.so.1", "libcuda.so.10", "xlibcuda.so.1"]
    _named_as_listed(parsed, "libcuda.so", "cuda.so.1")


def test_arch_names_from_flags() -> None:
    assert CacheEntry("a", "/a", 0x0A03).arch == "libc6,AArch64"
    assert CacheEntry("a", "/a", 0x0803).arch == "libc6,x32"
    assert CacheEntry("a", "/a", 0x0503).arch == "libc6,64bit (POWER)"
    assert CacheEntry("a", "/a", 0x0001).arch == "ELF"
    assert CacheEntry("a", "/a", 0x7703).arch == "libc6,0x7700"
    assert CacheEntry("a", "/a", 0x0A03).matches("aarch64")


def _new_cache(entries: list[tuple[str, str, int]], order: str = "<") -> bytes:
    """A new-format cache written the way glibc lays it out (strings after the table,
    indices from the header's start)."""
    table_size = 48 + 24 * len(entries)
    strings = b""
    rows = b""
    for name, path, flags in entries:
        key = table_size + len(strings)
        strings += name.encode() + b"\0"
        value = table_size + len(strings)
        strings += path.encode() + b"\0"
        rows += struct.pack(order + "iIIIQ", flags, key, value, 0, 0)
    endian = 3 if order == ">" else 2
    header = NEW_MAGIC + struct.pack(order + "IIB3xI12x", len(entries), len(strings), endian, 0)
    return header + rows + strings


def test_big_endian_new_format() -> None:
    data = _new_cache([("libcuda.so.1", "/usr/lib64/libcuda.so.1", 0x0503)], ">")
    parsed = parse_ld_cache(data)
    assert isinstance(parsed, LdCache)
    assert parsed.entries == (CacheEntry("libcuda.so.1", "/usr/lib64/libcuda.so.1", 0x0503),)


def test_missing_empty_directory_and_garbage(tmp_path: Path) -> None:
    assert read_ld_cache(tmp_path / "none") is None
    (tmp_path / "empty").write_bytes(b"")
    assert read_ld_cache(tmp_path / "empty") == f"{tmp_path / 'empty'} is empty"
    (tmp_path / "dir").mkdir()
    problem = read_ld_cache(tmp_path / "dir")
    assert isinstance(problem, str) and "is a directory, not a regular file" in problem
    junk = b"\x7fELF" + b"\0" * 100
    (tmp_path / "junk").write_bytes(junk)
    assert read_ld_cache(tmp_path / "junk") == (
        f"{tmp_path / 'junk'} is not a linker cache (starts with {junk[:20]!r})"
    )


def test_malformed_caches_give_problems() -> None:
    good = _new_cache([("libcuda.so.1", "/usr/lib/libcuda.so.1", 0x0303)])
    huge = good[:20] + struct.pack("<I", 10**6) + good[24:]
    unterminated = good[:-1] + b"x"
    assert parse_ld_cache(good[:30]) == (
        "/etc/ld.so.cache is a damaged linker cache: new-format header is truncated"
    )
    assert parse_ld_cache(huge) == (
        "/etc/ld.so.cache is a damaged linker cache: "
        "1000000 entries announced, the file ends inside the table"
    )
    path_at = len(good) - len(b"/usr/lib/libcuda.so.1x")  # the last string: its NUL cut
    assert parse_ld_cache(unterminated) == (
        "/etc/ld.so.cache is a damaged linker cache: "
        f"a string at offset {path_at} does not end inside the file"
    )
    assert parse_ld_cache(b"ld.so-1.7.0\0\xff\xff\xff\x7f") == (
        "/etc/ld.so.cache is a damaged linker cache: "
        "2147483647 entries announced, the file ends inside the table"
    )


@pytest.mark.parametrize("fmt", ["new", "old", "compat"])
def test_truncation_anywhere_never_raises(
    tmp_path: Path, multiarch: tuple[Path, Path, Path], fmt: str
) -> None:
    _, x64, i386 = multiarch
    data = write_ld_cache(tmp_path / "c", [x64.parent, i386.parent], fmt).read_bytes()
    full = parse_ld_cache(data)
    assert isinstance(full, LdCache)
    for size in range(0, len(data), 97):
        result = parse_ld_cache(data[:size])
        if isinstance(result, LdCache):
            # Only a cut after everything the entries use (e.g. in the trailing
            # "generated by" extension) still parses, and then nothing is lost.
            assert result.entries == full.entries
            _named_as_listed(result, "libcuda.so.1")
        else:
            assert "linker cache" in result
