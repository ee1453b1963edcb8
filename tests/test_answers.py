"""Tools' answers and ELF facts remembered across processes: reused only for the same
file, asked again when the file changes, never a reason to run an unsafe binary."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from elf_fixtures import install_driver
from tool_fixtures import fake_host, fake_ptxas, make_writable_by_all, write_script
from triton_toolchain.resolver._discovery import _answers
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._discovery._tools import LOCATORS
from triton_toolchain.runtime._record import cache_dir


@pytest.fixture(autouse=True)
def new_process() -> None:
    """Each test starts as a new process would: nothing read from the cache file yet."""
    _answers.forget_loaded()


def _check(host_root: Path, tool: Path) -> str | None:
    host = fake_host(host_root, {"XDG_CACHE_HOME": str(host_root / "cache")})
    verdict = LOCATORS["ptxas"].check(host, tool, Context())
    assert verdict.problem is None, verdict.problem
    return verdict.version


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_an_answer_is_reused_by_the_next_process_until_the_file_changes(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    tool = fake_ptxas(tmp_path / "bin", "12.8", log=log)
    assert _check(tmp_path, tool) == "12.8"
    _answers.forget_loaded()
    assert _check(tmp_path, tool) == "12.8"
    assert _runs(log) == 1
    assert (tmp_path / "cache/triton-toolchain" / _answers.ANSWERS_FILE).is_file()

    # A rebuilt tool (new contents, new modification time) is asked again.
    time.sleep(0.01)
    fake_ptxas(tmp_path / "bin", "13.0", log=log)
    _answers.forget_loaded()
    assert _check(tmp_path, tool) == "13.0"
    assert _runs(log) == 2


def test_a_damaged_or_unwritable_cache_only_means_asking_again(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    tool = fake_ptxas(tmp_path / "bin", "12.8", log=log)
    cache = tmp_path / "cache/triton-toolchain"
    cache.mkdir(parents=True)
    (cache / _answers.ANSWERS_FILE).write_text("{not answers")
    assert _check(tmp_path, tool) == "12.8"
    assert _answers.parse((cache / _answers.ANSWERS_FILE).read_bytes())  # rewritten, valid

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "cache").write_text("a file where the cache directory would go")
    _answers.forget_loaded()
    assert _check(blocked, tool) == "12.8"
    assert _runs(log) == 2


def test_a_resolution_writes_its_answers_once_and_a_failure_at_once(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    first = fake_ptxas(tmp_path / "a", "12.8", log=log)
    second = fake_ptxas(tmp_path / "b", "12.9", log=log)
    broken = write_script(tmp_path / "c/ptxas", "exit 3\n")
    stored = tmp_path / "cache/triton-toolchain" / _answers.ANSWERS_FILE
    host = fake_host(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    check = LOCATORS["ptxas"].check
    with _answers.written_once():
        with _answers.written_once():  # nested: the outermost one writes
            assert check(host, first, Context()).version == "12.8"
        assert check(host, second, Context()).version == "12.9"
        assert not stored.exists()  # answers wait for the end of the resolution
        assert check(host, broken, Context()).problem is not None
        # A failure is written at once (with what was learnt so far): a tool that hangs
        # costs its timeout once, even in a process killed before the end.
        assert len(_answers.parse(stored.read_bytes())) == 3
        assert check(host, first, Context()).version == "12.8"  # in memory meanwhile
    assert _runs(log) == 2
    _answers.forget_loaded()
    assert [check(host, t, Context()).version for t in (first, second)] == ["12.8", "12.9"]
    assert _runs(log) == 2  # the next process reads both from the file
    assert len(_answers.parse(stored.read_bytes())) == 3


def test_answers_learnt_inside_are_written_even_when_the_resolution_fails(tmp_path: Path) -> None:
    tool = fake_ptxas(tmp_path / "bin", "12.8")
    host = fake_host(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    with pytest.raises(RuntimeError, match="later step"), _answers.written_once():
        assert LOCATORS["ptxas"].check(host, tool, Context()).version == "12.8"
        raise RuntimeError("a later step of the resolution failed")
    stored = tmp_path / "cache/triton-toolchain" / _answers.ANSWERS_FILE
    assert any(str(tool) in key for key in _answers.parse(stored.read_bytes()))


def test_a_remembered_answer_never_makes_an_unsafe_tool_acceptable(tmp_path: Path) -> None:
    tool = fake_ptxas(tmp_path / "bin", "12.8")
    assert _check(tmp_path, tool) == "12.8"
    make_writable_by_all(tool.parent)
    host = fake_host(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    verdict = LOCATORS["ptxas"].check(host, tool, Context())
    assert verdict.problem is not None and "writable by everyone" in verdict.problem


def test_without_a_cache_directory_nothing_is_written(tmp_path: Path) -> None:
    assert cache_dir({}) is None
    assert cache_dir({"XDG_CACHE_HOME": "relative", "HOME": "also-relative"}) is None
    assert cache_dir({"HOME": "/home/u"}) == "/home/u/.cache/triton-toolchain"
    tool = fake_ptxas(tmp_path / "bin", "12.8")
    verdict = LOCATORS["ptxas"].check(fake_host(tmp_path, {}), tool, Context())
    assert verdict.version == "12.8"
    assert not list(tmp_path.rglob(_answers.ANSWERS_FILE))


def test_elf_facts_spare_the_next_process_pyelftools(tmp_path: Path) -> None:
    driver = install_driver(tmp_path / "lib")
    # An OS ABI the plain reader leaves to pyelftools (``_elf.OSABIS``).
    data = bytearray(driver.read_bytes())
    data[7] = 97  # ELFOSABI_ARM: not
    driver.write_bytes(bytes(data))
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from triton_toolchain.resolver._discovery._elf import read_elf\n"
        f"info = read_elf(Path({str(driver)!r}), answers=Path({str(tmp_path / 'cache')!r}))\n"
        "print(info.describe, info.soname, 'elftools' in sys.modules)\n"
    )
    env = {**os.environ, "TRITON_TOOLCHAIN": "off"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["ELF64", "x86-64", "libcuda.so.1", "True"]
    assert runs[1] == ["ELF64", "x86-64", "libcuda.so.1", "False"]


def test_a_checked_libdevice_is_remembered_and_a_changed_one_checked_again(
    tmp_path: Path,
) -> None:
    from tool_fixtures import libdevice
    from triton_toolchain.resolver._discovery._headers import LOCATORS as HEADER_LOCATORS

    host = fake_host(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    bc = libdevice(tmp_path / "nvvm/libdevice")
    check = HEADER_LOCATORS["libdevice"].check
    assert check(host, bc, Context()).problem is None
    cache = tmp_path / "cache/triton-toolchain" / _answers.ANSWERS_FILE
    assert any(str(bc) in key for key in _answers.parse(cache.read_bytes()))
    # Truncated in place (a new size): checked again, and refused.
    bc.write_bytes(bc.read_bytes()[:1000])
    _answers.forget_loaded()
    verdict = check(host, bc, Context())
    assert verdict.problem is not None
