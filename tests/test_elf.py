from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import conftest
import pytest
from elf_fixtures import built
from triton_toolchain.resolver._discovery import _elf
from triton_toolchain.resolver._discovery._elf import ElfInfo, machine_problem, read_elf
from triton_toolchain.resolver._discovery._host import Host

SRC = str(conftest.SRC)


def test_reads_x86_64_driver_stand_in() -> None:
    info = read_elf(built("x86_64"))
    assert isinstance(info, ElfInfo)
    assert (info.elf_class, info.machine, info.osabi) == (64, "EM_X86_64", "ELFOSABI_SYSV")
    assert info.soname == "libcuda.so.1"
    assert "libm.so.6" in info.needed
    assert info.describe == "ELF64 x86-64"
    assert machine_problem(info, Host(machine="x86_64")) is None


def test_reads_i386_driver_stand_in_and_names_the_mismatch() -> None:
    info = read_elf(built("i386"))
    assert isinstance(info, ElfInfo)
    assert (info.elf_class, info.machine, info.soname) == (32, "EM_386", "libcuda.so.1")
    assert machine_problem(info, Host(machine="x86_64")) == "ELF32 i386, this Python is x86-64"
    assert machine_problem(info, Host(machine="i686")) is None


@pytest.mark.parametrize("variant", ["x86_64", "i386", "aarch64"])
def test_a_plain_library_is_read_without_pyelftools_as_pyelftools_reads_it(variant: str) -> None:
    with built(variant).open("rb") as stream:
        plain, full = _elf._plain(stream), _elf._parse(stream)
    assert isinstance(plain, ElfInfo) and plain == full
    assert plain.soname == "libcuda.so.1" and plain.needed == ("libm.so.6", "libc.so.6")
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from triton_toolchain.resolver._discovery._elf import read_elf\n"
        "print(read_elf(Path(sys.argv[1])).describe, 'elftools' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(built(variant))],
        env={"PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == [*plain.describe.split(), "False"]


def test_a_library_out_of_the_ordinary_is_read_by_pyelftools(tmp_path: Path) -> None:
    data = bytearray(built("x86_64").read_bytes())
    data[7] = 9  # EI_OSABI: FreeBSD, which the plain reader leaves to pyelftools
    lib = tmp_path / "libcuda.so.1"
    lib.write_bytes(bytes(data))
    with lib.open("rb") as stream:
        assert _elf._plain(stream) is None
    info = read_elf(lib)
    assert isinstance(info, ElfInfo)
    assert (info.osabi, info.soname) == ("ELFOSABI_FREEBSD", "libcuda.so.1")


@pytest.mark.parametrize(
    ("field", "where"),
    [
        ("e_shoff", 0x28),  # the section headers' offset
        ("sh_offset", None),  # the dynamic section's offset
    ],
)
def test_offsets_beyond_the_file_are_refused_however_large(
    tmp_path: Path, field: str, where: int | None
) -> None:
    data = bytearray(built("x86_64").read_bytes())
    if where is None:  # the dynamic section's header: e_shoff + index * 64, sh_offset at +24
        shoff = int.from_bytes(data[0x28:0x30], "little")
        for index in range(int.from_bytes(data[0x3C:0x3E], "little")):
            header = shoff + index * 64
            if int.from_bytes(data[header + 4 : header + 8], "little") == _elf.SHT_DYNAMIC:
                where = header + 24
    assert where is not None, field
    for offset in (len(data), 2**63 - 1, 2**64 - 1):
        data[where : where + 8] = offset.to_bytes(8, "little")
        lib = tmp_path / "libcuda.so.1"
        lib.write_bytes(bytes(data))
        with lib.open("rb") as stream:
            assert _elf._plain(stream) is None, (field, offset)
        info = read_elf(lib)  # pyelftools' answer: a problem, or the facts it can read
        assert isinstance(info, (str, ElfInfo)), (field, offset)


def test_the_libraries_of_this_machine_read_plainly_as_pyelftools_reads_them() -> None:
    """Every shared library of the system's and the CUDA toolkit's directories that the
    plain reader reads, it reads as pyelftools does (a few hundred real files)."""
    compared = 0
    for pattern in ("/usr/lib/*-linux-gnu/*.so*", "/usr/local/cuda*/lib64/*.so*"):
        for path in sorted(Path("/").glob(pattern.lstrip("/")))[:300]:
            if not path.is_file() or path.read_bytes()[:4] != _elf.ELF_MAGIC:
                continue
            with path.open("rb") as stream:
                plain = _elf._plain(stream)
                if plain is not None:
                    assert plain == _elf._parse(stream), path
                    compared += 1
    assert compared >= 50, compared


def test_machine_problem_wording() -> None:
    x64 = ElfInfo(64, "EM_X86_64", "ELFOSABI_SYSV")
    x32 = ElfInfo(32, "EM_X86_64", "ELFOSABI_SYSV")
    arm = ElfInfo(64, "EM_AARCH64", "ELFOSABI_SYSV")
    assert machine_problem(x64, Host(machine="i686")) == "ELF64 x86-64, this Python is i386"
    assert machine_problem(x32, Host(machine="x86_64")) == (
        "ELF32 x86-64, this Python is ELF64 x86-64"
    )
    assert machine_problem(arm, Host(machine="x86_64")) == "ELF64 AArch64, this Python is x86-64"
    assert machine_problem(x64, Host(machine="aarch64")) == "ELF64 x86-64, this Python is AArch64"


def test_not_elf(tmp_path: Path) -> None:
    script = tmp_path / "libcuda.so.1"
    script.write_text("#!/bin/sh\necho hi\n")
    assert read_elf(script) == "not an ELF file (starts with b'#!/b')"
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert read_elf(empty) == "is an empty file"


@pytest.mark.parametrize("size", [4, 30, 64, 1000, 4000])
def test_truncated(tmp_path: Path, size: int) -> None:
    lib = tmp_path / "libcuda.so.1"
    lib.write_bytes(built("x86_64").read_bytes()[:size])
    problem = read_elf(lib)
    assert isinstance(problem, str)
    assert problem.startswith("truncated or malformed ELF file")


def test_directory_loop_missing_and_dangling(tmp_path: Path) -> None:
    (tmp_path / "dir.so.1").mkdir()
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "dangling").symlink_to("nowhere")
    assert read_elf(tmp_path / "dir.so.1") == "is a directory, a regular file was expected"
    assert read_elf(tmp_path / "a") == "is a symlink loop"
    assert read_elf(tmp_path / "missing") == "does not exist"
    assert read_elf(tmp_path / "dangling") == "is a dangling symlink"


def test_importing_does_not_import_elftools() -> None:
    code = "import sys, triton_toolchain.resolver._discovery._elf; print('elftools' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"
