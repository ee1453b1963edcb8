"""LLVM bitcode files (``libdevice.10.bc``), checked whole from their bytes: the magic
(raw ``BC\\xc0\\xde`` or wrapped ``\\xde\\xc0\\x17\\x0b``, the wrapper's offset and size
inside the file) and the top-level blocks, each of which must end inside the file, one of
them the module.

Guarantees: pure Python, no process, no file access (the caller reads the bytes, with its
own size limit); ``bitcode_problem`` never raises for any bytes: a truncated, empty,
wrapped-and-lying or foreign file gives a problem string such as
``"not LLVM bitcode (wrong magic bytes)"``; it walks block headers only (one jump per
block), so its time grows with the number of top-level blocks, not the file's size.

Example::

    bitcode_problem(Path("libdevice.10.bc").read_bytes())  # None: complete
    bitcode_problem(b"version https://git-lfs...")  # 'not LLVM bitcode (wrong magic bytes)'
"""

from __future__ import annotations

import struct

BITCODE_MAGIC = b"BC\xc0\xde"
WRAPPER_MAGIC = b"\xde\xc0\x17\x0b"
MODULE_BLOCK_ID = 8  # LLVM's MODULE_BLOCK_ID
_ENTER_SUBBLOCK = 1
_VBR_BITS = 32  # LLVM reads a block header's numbers as 32-bit values
# A module is a handful of top-level blocks (identification, module, string and symbol
# tables); a file of thousands is refused before walking it costs seconds.
MOST_BLOCKS = 1024


class _Bits:
    """LLVM's bitstream: little-endian, least significant bit first."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.end = len(data) * 8

    def read(self, width: int) -> int:
        start, self.pos = self.pos, self.pos + width
        if self.pos > self.end:
            raise EOFError
        chunk = self.data[start // 8 : (self.pos + 7) // 8]
        return (int.from_bytes(chunk, "little") >> (start % 8)) & ((1 << width) - 1)

    def vbr(self, width: int) -> int:
        """A variable-width number; ``ValueError`` past ``_VBR_BITS`` bits (so that a run
        of continuation bits costs linear time, not a quadratic big integer)."""
        value, shift, high = 0, 0, 1 << (width - 1)
        while True:
            if shift >= _VBR_BITS:
                raise ValueError
            piece = self.read(width)
            value |= (piece & (high - 1)) << shift
            shift += width - 1
            if not piece & high:
                return value


def bitcode_problem(data: bytes) -> str | None:
    """Why ``data`` is not a complete LLVM bitcode file, or ``None``.

    Walks the top-level blocks (abbreviation width 2): each must be a sub-block that
    ends inside the file, and one must be the module. Trailing zero padding is allowed.
    """
    if data[:4] == WRAPPER_MAGIC:
        if len(data) < 20:
            return "truncated bitcode wrapper header"
        offset, size = struct.unpack_from("<II", data, 8)
        if offset + size > len(data):
            return (
                f"truncated: the wrapper announces {offset + size} bytes, the file has {len(data)}"
            )
        data = data[offset : offset + size]
    if data[:4] != BITCODE_MAGIC:
        return "not LLVM bitcode (wrong magic bytes)"
    bits = _Bits(data)
    bits.pos = 32
    blocks: list[int] = []
    try:
        while bits.end - bits.pos >= 32:
            if bits.read(2) != _ENTER_SUBBLOCK:
                break
            if len(blocks) == MOST_BLOCKS:
                return f"malformed: more than {MOST_BLOCKS} top-level bitcode blocks"
            blocks.append(bits.vbr(8))
            bits.vbr(4)
            bits.pos = (bits.pos + 31) // 32 * 32
            length = bits.read(32) * 32
            if bits.pos + length > bits.end:
                return (
                    f"truncated: a bitcode block runs past the end of the file ({len(data)} bytes)"
                )
            bits.pos += length
    except EOFError:
        return f"truncated: the bitcode ends inside a block header ({len(data)} bytes)"
    except ValueError:
        return f"malformed: a bitcode block header holds a number over {_VBR_BITS} bits"
    if MODULE_BLOCK_ID not in blocks:
        return "LLVM bitcode without a module"
    return None
