"""The LLVM bitcode reader (``_bitcode``): real libdevice files (CUDA's and the one in
Triton's wheel), wrapped, cut and padded, and hostile bytes: lying sizes, endless
numbers, thousands of blocks, tens of megabytes. Every input gives ``None`` or a problem
string, fast."""

from __future__ import annotations

import importlib.util
import struct
import time
from pathlib import Path

import pytest
from tool_fixtures import REAL_LIBDEVICE
from triton_toolchain.resolver._discovery._bitcode import (
    BITCODE_MAGIC,
    MODULE_BLOCK_ID,
    MOST_BLOCKS,
    WRAPPER_MAGIC,
    bitcode_problem,
)

IDENTIFICATION_BLOCK_ID = 13  # LLVM's IDENTIFICATION_BLOCK_ID


def triton_libdevice() -> Path:
    spec = importlib.util.find_spec("triton")
    assert spec is not None and spec.origin, "Triton is installed by the nox session"
    return Path(spec.origin).parent / "backends/nvidia/lib/libdevice.10.bc"


REAL = [REAL_LIBDEVICE, triton_libdevice()]


def block(block_id: int, words: int = 0, *, announced: int | None = None) -> bytes:
    """A top-level block as LLVM writes it: abbreviation id 1 (ENTER_SUBBLOCK) in 2 bits,
    the block id (vbr8, < 128 here), the new abbreviation width 2 (vbr4), aligned to 32
    bits, then the body's length in 32-bit words (``announced``, or the true one) and
    the body (zero words)."""
    assert block_id < 128
    header = 1 | block_id << 2 | 2 << 10
    length = words if announced is None else announced
    return struct.pack("<II", header, length) + b"\0" * (4 * words)


def wrapped(inner: bytes, *, size: int | None = None, offset: int = 20) -> bytes:
    """Apple's bitcode wrapper: magic, version 0, offset, size, cpu type; then the bitcode."""
    header = WRAPPER_MAGIC + struct.pack(
        "<IIII", 0, offset, len(inner) if size is None else size, 7
    )
    return header + b"\0" * (offset - 20) + inner


def fast(data: bytes) -> str | None:
    start = time.perf_counter()
    problem = bitcode_problem(data)
    assert time.perf_counter() - start < 1.0, f"{len(data)} bytes took too long"
    return problem


# ---------------------------------------------------------------------- real files


@pytest.mark.parametrize("path", REAL, ids=["cuda", "triton"])
def test_real_libdevice_is_complete(path: Path) -> None:
    data = path.read_bytes()
    assert data[:4] == BITCODE_MAGIC
    assert fast(data) is None
    assert fast(data + b"\0" * 64) is None  # trailing zero padding is allowed
    assert fast(wrapped(data)) is None
    assert fast(wrapped(data, offset=32) + b"\0" * 8) is None


@pytest.mark.parametrize("path", REAL, ids=["cuda", "triton"])
def test_every_cut_of_real_libdevice_is_refused(path: Path) -> None:
    """Cut anywhere (every byte of the first 64, every 4 KiB after), the file is refused:
    cut between blocks (before the module) it holds no module, elsewhere it is truncated;
    the same inside a wrapper."""
    data = path.read_bytes()
    for cut in [*range(4, 64), *range(64, len(data), 4096), len(data) - 4]:
        problem = fast(data[:cut])
        assert problem is not None, cut
        assert problem.startswith("truncated: ") or problem == "LLVM bitcode without a module"
        assert fast(wrapped(data[:cut])) == problem
    assert fast(data[: len(data) // 2]).startswith("truncated: a bitcode block runs past the end")


def test_magic_alone_and_foreign_files() -> None:
    assert fast(b"") == "not LLVM bitcode (wrong magic bytes)"
    assert fast(b"version https://git-lfs.github.com/spec/v1\n") == (
        "not LLVM bitcode (wrong magic bytes)"
    )
    assert fast(REAL_LIBDEVICE.read_bytes()[4:]) == "not LLVM bitcode (wrong magic bytes)"
    assert fast(BITCODE_MAGIC) == "LLVM bitcode without a module"
    assert fast(BITCODE_MAGIC + block(IDENTIFICATION_BLOCK_ID, 3)) == (
        "LLVM bitcode without a module"
    )
    assert fast(BITCODE_MAGIC + block(IDENTIFICATION_BLOCK_ID, 3) + block(MODULE_BLOCK_ID)) is None


# ---------------------------------------------------------------------- lying sizes


@pytest.mark.parametrize("announced", [1, 2**16, 2**31 - 1, 2**32 - 1])
def test_a_block_announcing_more_than_the_file_holds(announced: int) -> None:
    data = BITCODE_MAGIC + block(MODULE_BLOCK_ID, announced=announced)
    assert fast(data) == (
        f"truncated: a bitcode block runs past the end of the file ({len(data)} bytes)"
    )


@pytest.mark.parametrize("size", [2**16, 2**31 - 1, 2**32 - 1])
def test_a_wrapper_announcing_more_than_the_file_holds(size: int) -> None:
    data = wrapped(BITCODE_MAGIC + block(MODULE_BLOCK_ID), size=size)
    assert fast(data) == (
        f"truncated: the wrapper announces {20 + size} bytes, the file has {len(data)}"
    )


def test_a_wrapper_pointing_past_its_bitcode_or_cut_short() -> None:
    inner = BITCODE_MAGIC + block(MODULE_BLOCK_ID)
    lying_offset = WRAPPER_MAGIC + struct.pack("<IIII", 0, 2**32 - 1, len(inner), 7) + inner
    assert fast(lying_offset).startswith("truncated: the wrapper announces")
    assert fast(wrapped(inner)[:19]) == "truncated bitcode wrapper header"
    # The offset points 4 bytes before the bitcode.
    early = WRAPPER_MAGIC + struct.pack("<IIII", 0, 20, len(inner), 7) + b"\0" * 4 + inner
    assert fast(early) == "not LLVM bitcode (wrong magic bytes)"


# ---------------------------------------------------------------------- huge and endless


def test_an_endless_block_id_is_refused_at_once() -> None:
    """Continuation bits up to the end of 64 MiB (the size libdevice may have): refused
    at the 32-bit limit, not walked into a quadratic big integer."""
    data = BITCODE_MAGIC + b"\xfd" + b"\xff" * (64 << 20)
    assert fast(data) == "malformed: a bitcode block header holds a number over 32 bits"


def test_thousands_of_blocks_are_refused_at_once() -> None:
    many = BITCODE_MAGIC + block(MODULE_BLOCK_ID) * (8 << 20)  # 64 MiB of empty blocks
    assert fast(many) == f"malformed: more than {MOST_BLOCKS} top-level bitcode blocks"
    assert fast(BITCODE_MAGIC + block(MODULE_BLOCK_ID) * MOST_BLOCKS) is None


def test_a_huge_complete_module_is_walked_in_one_jump() -> None:
    data = BITCODE_MAGIC + block(MODULE_BLOCK_ID, 16 << 20)  # 64 MiB body
    assert fast(data) is None
    assert fast(data[:-1]).startswith("truncated: a bitcode block runs past the end")
