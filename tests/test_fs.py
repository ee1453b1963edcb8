"""``_discovery._fs``, every look discovery takes at the filesystem, on real files: FIFOs
that nobody writes, character devices that never end, sockets, links dangling and
looping, files one byte over the bound. Nothing blocks, nothing reads past its bound,
nothing raises but where the module says so, and every look is recorded as a fact."""

from __future__ import annotations

import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import NULL_BYTE
from triton_toolchain.resolver._discovery import _fs
from triton_toolchain.resolver._observe import Facts, recording


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A FIFO nobody writes, a listening socket, a directory, a loop, a dangling link."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "socket"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "dir").mkdir()
    try:
        yield {
            "fifo": fifo,
            "socket": sock_path,
            "dir": tmp_path / "dir",
            "loop": tmp_path / "loop",
            "dangling": tmp_path / "dangling",
            "device": Path("/dev/zero"),
        }
    finally:
        sock.close()


# ---------------------------------------------------------------------- bounded reads


def test_read_regular_reads_a_file_whole_up_to_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert _fs.read_regular(path, 100) == b"x" * 100
    (tmp_path / "link").symlink_to(path)
    assert _fs.read_regular(tmp_path / "link", 100) == b"x" * 100  # links are followed
    with pytest.raises(_fs.ReadProblem, match=r"^is larger than 99 bytes$"):
        _fs.read_regular(path, 99)
    assert _fs.read_regular(tmp_path / "link", 1 << 20) == path.read_bytes()


def test_read_regular_of_a_files_head_judges_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(bytes(range(100)))
    assert _fs.read_regular(path, 100, first=10) == bytes(range(10))
    assert _fs.read_regular(path, 100, first=1000) == bytes(range(100))  # all of it
    with pytest.raises(_fs.ReadProblem, match=r"^is larger than 50 bytes$"):
        _fs.read_regular(path, 50, first=10)  # the file is still too large to be one
    with pytest.raises(_fs.ReadProblem, match=r"^is a directory, not a regular file$"):
        _fs.read_regular(tmp_path, 100, first=10)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("fifo", "is a FIFO, not a regular file"),
        ("dir", "is a directory, not a regular file"),
        ("device", "is a character device, not a regular file"),
        ("socket", "cannot be read: No such device or address"),
        ("loop", "cannot be read: Too many levels of symbolic links"),
        ("dangling", "does not exist"),
    ],
)
def test_read_regular_never_blocks_on_or_reads_a_special_file(
    specials: dict[str, Path], name: str, reason: str
) -> None:
    """A FIFO nobody writes would block a plain open; /dev/zero never ends."""
    start = time.monotonic()
    with pytest.raises(_fs.ReadProblem) as caught:
        _fs.read_regular(specials[name], 1 << 20)
    assert str(caught.value) == reason
    assert time.monotonic() - start < 1


def test_read_regular_of_a_name_the_kernel_refuses(tmp_path: Path) -> None:
    with pytest.raises(_fs.ReadProblem, match=rf"^cannot be read: {NULL_BYTE}$"):
        _fs.read_regular(f"{tmp_path}/a\0b", 10)
    with pytest.raises(_fs.ReadProblem, match=r"^cannot be read: Not a directory$"):
        (tmp_path / "f").write_text("")
        _fs.read_regular(tmp_path / "f" / "x", 10)


def test_read_text_replaces_what_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(b"#define CUDA_VERSION 13000 \xff\n")
    assert _fs.read_text(path) == "#define CUDA_VERSION 13000 \ufffd\n"


# ---------------------------------------------------------------------- status and kinds


def test_status_and_kinds(specials: dict[str, Path], tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("abc")
    status = _fs.stat(f)
    real = os.stat(f)
    assert status == _fs.Status(
        real.st_mode,
        real.st_uid,
        real.st_gid,
        real.st_dev,
        real.st_ino,
        real.st_size,
        real.st_mtime_ns,
        real.st_ctime_ns,
    )
    assert _fs.is_file(f) and not _fs.is_dir(f) and not _fs.is_link(f)
    assert _fs.is_dir(specials["dir"]) and not _fs.is_file(specials["dir"])
    dangling = specials["dangling"]
    assert _fs.lexists(dangling) and _fs.is_link(dangling) and not _fs.is_file(dangling)
    assert stat.S_ISLNK(_fs.lstat(dangling).st_mode)
    assert not _fs.lexists(tmp_path / "none")
    with pytest.raises(FileNotFoundError):
        _fs.stat(dangling)
    with pytest.raises(OSError, match="Too many levels"):
        _fs.stat(specials["loop"])
    with pytest.raises(OSError, match="invalid path"):
        _fs.stat(f"{tmp_path}/a\0b")
    assert _fs.kind_of(os.stat(specials["fifo"]).st_mode) == "a FIFO"
    assert _fs.kind_of(os.stat(specials["socket"]).st_mode) == "a socket"
    assert _fs.kind_of(os.stat("/dev/zero").st_mode) == "a character device"
    assert _fs.kind_of(stat.S_IFREG | 0o644) == "not a regular file (mode 100644)"


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("fifo", "is a FIFO, a regular file was expected"),
        ("socket", "is a socket, a regular file was expected"),
        ("device", "is a character device, a regular file was expected"),
        ("dir", "is a directory, a regular file was expected"),
        ("loop", "is a symlink loop"),
        ("dangling", "is a dangling symlink"),
    ],
)
def test_file_problem_names_what_is_there(
    specials: dict[str, Path], name: str, problem: str
) -> None:
    assert _fs.file_problem(specials[name]) == problem


def test_file_problem_of_tools_and_directories(tmp_path: Path) -> None:
    tool = tmp_path / "ptxas"
    tool.write_text("#!/bin/sh\n")
    assert _fs.file_problem(Path("bin/ptxas")) == "not an absolute path"
    assert _fs.file_problem(tmp_path / "none") == "does not exist"
    assert _fs.file_problem(tool) is None
    assert _fs.file_problem(tool, executable=True) == "is not executable"
    tool.chmod(0o755)
    assert _fs.file_problem(tool, executable=True) is None and _fs.may_execute(tool)
    assert _fs.file_problem(tmp_path, directory=True) is None
    assert _fs.file_problem(tool, directory=True) == "is not a directory"
    assert _fs.file_problem(tool / "x") == "cannot be used: Not a directory"


# ---------------------------------------------------------------------- links, globs, trust


def test_real_path_and_glob(tmp_path: Path) -> None:
    for name in ("cuda-12.8", "cuda-13.0", "cuda-12.10", ".cuda-hidden", "other"):
        (tmp_path / name / "bin").mkdir(parents=True)
    (tmp_path / "cuda").symlink_to("cuda-13.0")
    assert _fs.real_path(tmp_path / "cuda" / "bin") == tmp_path / "cuda-13.0" / "bin"
    assert _fs.glob(tmp_path / "cuda-*" / "bin") == [
        tmp_path / n / "bin" for n in ("cuda-12.10", "cuda-12.8", "cuda-13.0")
    ]
    assert _fs.glob(tmp_path / "none-*") == []
    assert _fs.glob(tmp_path / "cuda-13.0" / "bin" / "x" / "*") == []  # nothing to list
    (tmp_path / "shut").mkdir(mode=0o000)
    assert _fs.glob(tmp_path / "shut" / "*") == []  # as root: readable, and empty


def test_untrusted_is_the_trust_rule(tmp_path: Path) -> None:
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    assert _fs.untrusted(tmp_path) is None
    assert _fs.untrusted(tmp_path / "open" / "x") == (
        f"not trusted: directory {tmp_path / 'open'} is writable by everyone"
    )


# ---------------------------------------------------------------------- every look recorded


def test_every_look_is_recorded_as_a_fact(tmp_path: Path) -> None:
    """Files under /proc are recorded by their content, others by their status; a
    failed read is recorded too (a record must fail where the file appears)."""
    f = tmp_path / "f"
    f.write_text("abc")
    facts: Facts
    with recording() as facts:
        _fs.read_regular(f, 10)
        _fs.read_regular(Path("/proc/self/limits"), 1 << 16)
        with pytest.raises(_fs.ReadProblem):
            _fs.read_regular(tmp_path / "none", 10)
        _fs.is_dir(tmp_path)
        _fs.lexists(tmp_path / "none")
        _fs.glob(tmp_path / "*")
        _fs.real_path(f)
        _fs.may_execute(f)
        _fs.untrusted(f)
    ops = {(op, arg) for op, arg in facts.values}
    assert ops == {
        ("stat", str(f)),
        ("content", "/proc/self/limits"),
        ("stat", str(tmp_path / "none")),
        ("stat", str(tmp_path)),
        ("lstat", str(tmp_path / "none")),
        ("glob", str(tmp_path / "*")),
        ("realpath", str(f)),
        ("executable", str(f)),
        ("trust", str(f)),
    }
    assert facts.values[("stat", str(tmp_path / "none"))][0] == -1
    assert facts.values[("glob", str(tmp_path / "*"))] == [str(f)]
    assert not facts.unstable


def test_a_look_that_changes_while_resolving_makes_the_facts_unstable(tmp_path: Path) -> None:
    """Within one recording the view of the filesystem is one moment: a second look at
    a path's status gives what the first saw. A look that is made again and answers
    otherwise (the file made executable meanwhile) makes the facts unstable: never
    stored."""
    f = tmp_path / "f"
    f.write_text("abc")
    with recording() as facts:
        first = _fs.stat(f)
        f.write_text("abcdef")
        assert _fs.stat(f) == first
        assert not _fs.may_execute(f)
    assert not facts.unstable
    with recording() as facts:
        assert not _fs.may_execute(f)
        f.chmod(0o755)
        assert _fs.may_execute(f)
    assert facts.unstable
