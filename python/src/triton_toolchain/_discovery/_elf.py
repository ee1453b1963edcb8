"""ELF facts about a library, read with pyelftools: class, machine, OS ABI, SONAME and
DT_NEEDED. Never guessed from the file name.

Guarantees: importing this module does not import ``elftools`` (``read_elf`` does, on
first use), so resolving from a manifest stays cheap; ``read_elf`` never raises for a
bad file: a directory, a symlink loop, an unreadable, truncated or non-ELF file gives a
problem string such as ``"not an ELF file (starts with b'#!/b')"``.

Example::

    info = read_elf(Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1"))
    # ElfInfo(elf_class=64, machine='EM_X86_64', osabi='ELFOSABI_SYSV',
    #         soname='libcuda.so.1', needed=('libm.so.6', ...))
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import BinaryIO

from .._tuple import NamedTuple
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


def machine_name(machine: str) -> str:
    """``"EM_386"`` -> ``"i386"``; unknown names lose their ``EM_`` prefix."""
    return MACHINE_NAMES.get(machine, machine.removeprefix("EM_"))


_CACHE_QUESTION = ("(elf facts, v1)",)


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
        stream.seek(0)
        info = _parse(stream)
    if isinstance(info, ElfInfo):
        remember(answers, path, _CACHE_QUESTION, True, json.dumps(info._asdict()))
    return info


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "elf_class": int,
    "machine": str,
    "osabi": str,
    "soname": (str, type(None)),
}


def remembered_info(text: str) -> ElfInfo | None:
    """The ``ElfInfo`` an answers file remembered (``ElfInfo._asdict`` as JSON), or
    ``None`` for text that is not exactly one: every field, of its type, ``elf_class``
    32 or 64, ``needed`` a list of strings."""
    try:
        fields = json.loads(text, parse_int=lambda t: int(t) if len(t) < 4 else None)
    except (ValueError, RecursionError):
        return None
    if type(fields) is not dict or set(fields) != {*_FIELDS, "needed"}:
        return None
    if fields["elf_class"] not in (32, 64) or type(fields["elf_class"]) is not int:
        return None
    if not all(isinstance(fields[k], t) for k, t in _FIELDS.items() if k != "elf_class"):
        return None
    needed = fields["needed"]
    if type(needed) is not list or not all(type(n) is str for n in needed):
        return None
    return ElfInfo(**{**fields, "needed": tuple(needed)})


def _parse(stream: BinaryIO) -> ElfInfo | str:
    # Imported here, not at the top: a manifest resolution must not pay for pyelftools.
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
