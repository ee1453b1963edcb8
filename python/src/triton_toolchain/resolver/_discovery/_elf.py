"""ELF facts about a library: class, machine, OS ABI, SONAME and DT_NEEDED. Never
guessed from the file name.

A plain library (``_plain``: a machine and OS ABI of ``MACHINES``/``OSABIS``, one
dynamic section whose entries end with ``DT_NULL`` and whose strings are ASCII, all
within the file) is read here, in a few ``read`` calls: importing pyelftools costs a
first resolution on a GPU machine tens of milliseconds (issue 23). Anything else is
read by pyelftools, which stays the dependency for full ELF reading; the two agree on
every library ``gcc`` builds (``tests/test_elf.py``), and on whatever Hypothesis makes
of them where both answer (``tests/test_fuzz.py``). Section names and the other
sections are not read here, as the dynamic loader reads none of them.

Guarantees: importing this module does not import ``elftools`` (``read_elf`` does, for
a file out of the ordinary), so resolving from a manifest stays cheap; ``read_elf``
never raises for a bad file: a directory, a symlink loop, an unreadable, truncated or
non-ELF file gives a problem string such as ``"not an ELF file (starts with b'#!/b')"``;
the plain reader reads at most ``MAX_SECTIONS`` section headers, ``MAX_DYNAMIC`` bytes
of dynamic entries and ``MAX_NAME`` bytes of a name, whatever the file claims.

Example::

    info = read_elf(Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1"))
    # ElfInfo(elf_class=64, machine='EM_X86_64', osabi='ELFOSABI_SYSV',
    #         soname='libcuda.so.1', needed=('libm.so.6', ...))
"""

import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from . import _fs
from ._answers import recall, remember
from ._host import Host

ELF_MAGIC = b"\x7fELF"

# e_machine -> how people say it ("ELF32 i386", "ELF64 x86-64").
MACHINE_NAMES: dict[str, str] = {
    "EM_386": "i386",
    "EM_X86_64": "x86-64",
    "EM_AARCH64": "AArch64",
    "EM_ARM": "ARM",
    "EM_PPC64": "ppc64",
    "EM_PPC": "ppc",
    "EM_RISCV": "RISC-V",
    "EM_S390": "s390",
}


class ElfInfo(NamedTuple):
    """What the ELF header and dynamic section say about one file.

    ``elf_class`` is 32 or 64; ``machine`` and ``osabi`` are pyelftools' names
    (``"EM_X86_64"``, ``"ELFOSABI_SYSV"``); ``soname`` is ``None`` when the file has no
    DT_SONAME; ``needed`` lists DT_NEEDED in file order.
    """

    elf_class: int
    machine: str
    osabi: str
    soname: str | None = None
    needed: tuple[str, ...] = ()

    @property
    def describe(self) -> str:
        """``"ELF32 i386"``."""
        return f"ELF{self.elf_class} {machine_name(self.machine)}"


# e_machine and EI_OSABI values the plain reader knows, with pyelftools' names for them.
MACHINES: dict[int, str] = {
    3: "EM_386",
    62: "EM_X86_64",
    183: "EM_AARCH64",
    40: "EM_ARM",
    21: "EM_PPC64",
    20: "EM_PPC",
    243: "EM_RISCV",
    22: "EM_S390",
}
OSABIS: dict[int, str] = {0: "ELFOSABI_SYSV", 3: "ELFOSABI_LINUX"}
# EI_CLASS -> the struct formats of the header after e_ident, of a section header and of
# a dynamic entry (the ELF specification; <elf.h>'s Elf32_/Elf64_Ehdr, _Shdr, _Dyn).
_LAYOUTS = {
    1: ("HHIIIIIHHHHHH", "IIIIIIIIII", "iI"),
    2: ("HHIQQQIHHHHHH", "IIQQQQIIQQ", "qQ"),
}
_BYTE_ORDERS = {1: "<", 2: ">"}  # EI_DATA: ELFDATA2LSB, ELFDATA2MSB
SHT_STRTAB, SHT_DYNAMIC = 3, 6
DT_NULL, DT_NEEDED, DT_SONAME = 0, 1, 14
MAX_SECTIONS = 1 << 12
MAX_DYNAMIC = 1 << 16
MAX_NAME = 1 << 10


def machine_name(machine: str) -> str:
    """``"EM_386"`` -> ``"i386"``; unknown names lose their ``EM_`` prefix."""
    return MACHINE_NAMES.get(machine, machine.removeprefix("EM_"))


_CACHE_QUESTION = ("(elf facts, v2)",)


def read_elf(path: Path, *, answers: Path | None = None) -> ElfInfo | str:
    """The ELF facts of ``path``, or a problem string (never an exception).

    Problems: ``"does not exist"``, ``"is a symlink loop"``, ``"is a FIFO, a regular
    file was expected"``, ``"cannot be read: Permission denied"``, ``"not an ELF file
    (...)"``, ``"truncated or malformed ELF file (...)"``. With ``answers`` (see
    ``_answers``), the facts of a file parsed before (same path, inode, size, times) are
    reused, so later processes need not import pyelftools.
    """
    problem = _fs.file_problem(path)
    if problem:
        return problem
    remembered = recall(answers, path, _CACHE_QUESTION)
    if remembered is not None and remembered[0]:
        kept = remembered_info(remembered[1])
        if kept is not None:
            return kept
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "is not a regular file"
        head = stream.read(len(ELF_MAGIC))
        if head != ELF_MAGIC:
            return f"not an ELF file (starts with {head!r})" if head else "is an empty file"
        info = _plain(stream) or _parse(stream)
    text = remembered_text(info) if isinstance(info, ElfInfo) else None
    if text is not None:
        remember(answers, path, _CACHE_QUESTION, True, text)
    return info


_NO_SONAME = "-"  # a SONAME is remembered as "=" and the name


def remembered_text(info: ElfInfo) -> str | None:
    """``info`` as an answers file keeps it (``remembered_info`` reads it back): the
    class, machine, OS ABI, SONAME and every DT_NEEDED, separated by NUL characters;
    ``None`` (not remembered) where one holds a NUL, which a C string of the file
    cannot."""
    soname = _NO_SONAME if info.soname is None else f"={info.soname}"
    fields = [info.machine, info.osabi, soname, *info.needed]
    if any("\0" in f for f in fields):
        return None
    return "\0".join([str(info.elf_class), *fields])


def remembered_info(text: str) -> ElfInfo | None:
    """The ``ElfInfo`` an answers file remembered (``remembered_text``), or ``None`` for
    text that is not one: ``elf_class`` 32 or 64, then the machine, the OS ABI, and a
    SONAME given (``=name``) or said to be absent (``-``)."""
    parts = text.split("\0")
    if len(parts) < 4 or parts[0] not in ("32", "64"):
        return None
    soname = parts[3]
    if soname != _NO_SONAME and not soname.startswith("="):
        return None
    return ElfInfo(
        int(parts[0]),
        parts[1],
        parts[2],
        None if soname == _NO_SONAME else soname[1:],
        tuple(parts[4:]),
    )


def _read(stream: BinaryIO, offset: int, size: int) -> bytes | None:
    """``size`` bytes at ``offset``, or ``None`` where the file has fewer (an offset
    beyond its end, however large, is never sought)."""
    if offset + size > stream.seek(0, os.SEEK_END):
        return None
    stream.seek(offset)
    data = stream.read(size)
    return data if len(data) == size else None


def _name(stream: BinaryIO, table: tuple[int, int], offset: int) -> str | None:
    """The ASCII string at ``offset`` of the string table at ``table`` (file offset,
    size), ending with a NUL inside it; ``None`` for any other."""
    start, size = table
    if not 0 <= offset < size:
        return None
    raw = _read(stream, start + offset, min(size - offset, MAX_NAME))
    if raw is None:
        return None
    end = raw.find(b"\0")
    return raw[:end].decode() if end >= 0 and raw[:end].isascii() else None


def _plain(stream: BinaryIO) -> ElfInfo | None:
    """The facts of a plain library (see the module docstring), or ``None`` for a file
    this reader leaves to pyelftools."""
    ident = _read(stream, 0, 16)
    if ident is None or ident[4] not in _LAYOUTS or ident[5] not in _BYTE_ORDERS:
        return None
    order = _BYTE_ORDERS[ident[5]]
    header, section, entry = (order + f for f in _LAYOUTS[ident[4]])
    fields = _read(stream, 16, struct.calcsize(header))
    if fields is None or ident[7] not in OSABIS:
        return None
    _, machine, *_, shoff, _, _, _, _, shentsize, shnum, _ = struct.unpack(header, fields)
    if machine not in MACHINES or shentsize != struct.calcsize(section):
        return None
    if not 0 < shnum <= MAX_SECTIONS or (table := _read(stream, shoff, shnum * shentsize)) is None:
        return None
    sections = list(struct.iter_unpack(section, table))
    dynamic = [s for s in sections if s[1] == SHT_DYNAMIC]
    if len(dynamic) != 1:
        return None
    _, _, _, _, offset, size, link, _, _, entsize = dynamic[0]
    if entsize != struct.calcsize(entry) or size > MAX_DYNAMIC or link >= shnum:
        return None
    if sections[link][1] != SHT_STRTAB or (entries := _read(stream, offset, size)) is None:
        return None
    tags = struct.iter_unpack(entry, entries[: size - size % entsize])
    names = _dynamic_names(stream, tags, (sections[link][4], sections[link][5]))
    if names is None:
        return None
    return ElfInfo(32 * ident[4], MACHINES[machine], OSABIS[ident[7]], *names)


def _dynamic_names(
    stream: BinaryIO, tags: Iterator[tuple[int, ...]], strings: tuple[int, int]
) -> tuple[str | None, tuple[str, ...]] | None:
    """DT_SONAME (the last one, as pyelftools reads it) and every DT_NEEDED of the
    dynamic entries ``tags`` up to their DT_NULL, named in the string table ``strings``;
    ``None`` without a DT_NULL or for a name ``_name`` refuses."""
    soname: str | None = None
    needed: list[str] = []
    for tag, value in tags:
        if tag == DT_NULL:
            return soname, tuple(needed)
        if tag in (DT_NEEDED, DT_SONAME):
            name = _name(stream, strings, value)
            if name is None:
                return None
            if tag == DT_SONAME:
                soname = name
            else:
                needed.append(name)
    return None


def _parse(stream: BinaryIO) -> ElfInfo | str:
    # Imported here, not at the top: a manifest resolution must not pay for pyelftools.
    stream.seek(0)
    from elftools.common.exceptions import ELFError  # noqa: PLC0415  pyelftools: ~50 ms
    from elftools.elf.dynamic import DynamicSection  # noqa: PLC0415  pyelftools: ~50 ms
    from elftools.elf.elffile import ELFFile  # noqa: PLC0415  pyelftools: ~50 ms

    try:
        elf = ELFFile(stream)
        soname: str | None = None
        needed: list[str] = []
        for section in elf.iter_sections():
            if not isinstance(section, DynamicSection):
                continue
            for tag in section.iter_tags():
                # pyelftools sets .soname/.needed per tag at run time: read them from vars().
                if tag.entry.d_tag == "DT_SONAME":
                    soname = str(vars(tag)["soname"])
                elif tag.entry.d_tag == "DT_NEEDED":
                    needed.append(str(vars(tag)["needed"]))
        return ElfInfo(
            elf_class=int(elf.elfclass),
            machine=str(elf["e_machine"]),
            osabi=str(elf["e_ident"]["EI_OSABI"]),
            soname=soname,
            needed=tuple(needed),
        )
    except ELFError as exc:
        return f"truncated or malformed ELF file ({exc})"
    except Exception as exc:  # construct's StreamError, struct.error...: still a bad file
        return f"truncated or malformed ELF file ({type(exc).__name__}: {exc})"


def machine_problem(info: ElfInfo, host: Host) -> str | None:
    """Why a library of ``info`` cannot be loaded by this interpreter, or ``None``.

    >>> machine_problem(ElfInfo(32, "EM_386", "ELFOSABI_SYSV"), Host(machine="x86_64"))
    'ELF32 i386, this Python is x86-64'

    An x32 library (ELF32, x86-64 machine) says ``"ELF32 x86-64, this Python is ELF64
    x86-64"``.
    """
    if info.machine == host.elf_machine and info.elf_class == host.elf_class:
        return None
    python = machine_name(host.elf_machine)
    if info.machine == host.elf_machine:
        python = f"ELF{host.elf_class} {python}"
    return f"{info.describe}, this Python is {python}"
