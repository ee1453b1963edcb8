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

import dataclasses
import errno
import json
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ._host import Host
from ._outputs import recall, remember

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


@dataclass(frozen=True)
class ElfInfo:
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


def _open_problem(path: Path) -> str | None:
    """Why ``path`` cannot be opened as a regular file, without following it blindly."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return "is a dangling symlink" if path.is_symlink() else "does not exist"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symlink loop"
        return f"cannot be read: {exc.strerror or exc}"
    if path.is_dir():
        return "is a directory, not a library"
    if not path.is_file():
        return f"is not a regular file (mode {st.st_mode:o})"
    return None


_CACHE_ARGS = ("(elf facts, v1)",)


def read_elf(path: Path, *, cache: Path | None = None) -> ElfInfo | str:
    """The ELF facts of ``path``, or a problem string (never an exception).

    Problems: ``"does not exist"``, ``"is a symlink loop"``, ``"is a directory, not a
    library"``, ``"cannot be read: Permission denied"``, ``"not an ELF file (...)"``,
    ``"truncated or malformed ELF file (...)"``. With ``cache`` (see ``_outputs``), the
    facts of a file parsed before (same path, inode, size, modification time) are
    reused, so later processes need not import pyelftools.
    """
    problem = _open_problem(path)
    if problem:
        return problem
    remembered = recall(cache, path, _CACHE_ARGS)
    if remembered is not None:
        fields = json.loads(remembered)
        return ElfInfo(**{**fields, "needed": tuple(fields["needed"])})
    try:
        with path.open("rb") as stream:
            head = stream.read(len(ELF_MAGIC))
            if head != ELF_MAGIC:
                return f"not an ELF file (starts with {head!r})" if head else "is an empty file"
            stream.seek(0)
            info = _parse(stream)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if isinstance(info, ElfInfo):
        remember(cache, path, _CACHE_ARGS, json.dumps(dataclasses.asdict(info)))
    return info


def _parse(stream: BinaryIO) -> ElfInfo | str:
    # Imported here, not at the top: a manifest resolution must not pay for pyelftools.
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

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
