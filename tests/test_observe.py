"""``_observe``, recording what a resolution observes and keeping it as an activation
record, on real files: every look and every variable read inside ``recording()`` is a
fact, none outside; a look that answers twice differently makes the facts unstable and
unstorable; the record file is written whole in a private directory (mode 0700, file
0600), the newest first, at most ``MAX_RECORDS``; nothing raises for a place it cannot
write, and an old file then stays as it was."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from triton_toolchain.resolver._discovery import _fs
from triton_toolchain.resolver._discovery._host import RecordedEnviron
from triton_toolchain.resolver._observe import (
    Facts,
    make_private_dir,
    observe,
    observed_env,
    recording,
    store,
    write_new,
    write_private,
)
from triton_toolchain.resolver._plan import resolve_plan, without_history
from triton_toolchain.runtime import _record


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ---------------------------------------------------------------------- facts


def test_only_what_is_observed_inside_a_recording_is_a_fact(tmp_path: Path) -> None:
    environ = RecordedEnviron({"CUDA_HOME": "/cuda"})
    assert observe("stat", str(tmp_path))[0] == os.stat(tmp_path).st_mode  # a value, no fact
    environ.get("CUDA_HOME")
    with recording() as facts:
        assert observe("realpath", str(tmp_path)) == str(tmp_path)
        assert environ.get("CUDA_HOME") == "/cuda"
        assert environ.get("CUDA_PATH") is None
        observed_env("TRITON_PTXAS_PATH", None)
        with recording() as inner:  # a recording inside another keeps its own facts
            _fs.is_dir(tmp_path)
        _fs.lexists(tmp_path / "none")
    environ.get("CC")
    _fs.is_dir(tmp_path / "after")
    assert list(inner.values) == [("stat", str(tmp_path))]
    assert facts.values == {
        ("realpath", str(tmp_path)): str(tmp_path),
        ("env", "CUDA_HOME"): "/cuda",
        ("env", "CUDA_PATH"): None,
        ("env", "TRITON_PTXAS_PATH"): None,
        ("lstat", str(tmp_path / "none")): [-1, errno.ENOENT],
    }
    # The environment's facts first: a record made elsewhere fails before any file look.
    assert [f[0] for f in facts.to_list()] == ["env", "env", "env", "realpath", "lstat"]
    assert not facts.unstable


def test_a_fact_seen_twice_with_two_values_is_unstable() -> None:
    facts = Facts()
    facts.add("env", "CC", "/usr/bin/gcc")
    facts.add("env", "CC", "/usr/bin/gcc")
    assert not facts.unstable
    facts.add("env", "CC", "/usr/bin/clang")
    assert facts.unstable
    assert facts.values[("env", "CC")] == "/usr/bin/gcc"  # the first observation stays


# ---------------------------------------------------------------------- private files


def test_make_private_dir_creates_mode_0700_only_below_a_trusted_directory(
    tmp_path: Path,
) -> None:
    made = make_private_dir(str(tmp_path / "a" / "b" / "cache"))
    assert made == str(tmp_path / "a" / "b" / "cache")
    assert mode_of(tmp_path / "a" / "b" / "cache") == 0o700
    assert make_private_dir(made) == made  # as it is
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert make_private_dir(str(shared / "cache")) is None
    assert not (shared / "cache").exists()  # nothing created where it would not be used
    (tmp_path / "file").write_text("")
    assert make_private_dir(str(tmp_path / "file" / "cache")) is None
    assert make_private_dir(None) is None
    assert make_private_dir(f"{tmp_path}/nul\0") is None


@pytest.mark.root
def test_make_private_dir_refuses_a_directory_of_someone_else(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 4242, 4242)
    assert make_private_dir(str(theirs)) is None
    group = tmp_path / "group"
    group.mkdir()
    group.chmod(0o770)
    os.chown(group, os.geteuid(), 4242)
    assert make_private_dir(str(group)) is None


def test_write_new_makes_a_new_file_of_mode_0600_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "new"
    write_new(str(path), b"x" * 100_000)
    assert path.read_bytes() == b"x" * 100_000 and mode_of(path) == 0o600
    with pytest.raises(FileExistsError):
        write_new(str(path), b"y")
    target = tmp_path / "target"
    (tmp_path / "link").symlink_to(target)  # dangling: O_EXCL | O_NOFOLLOW refuse it
    with pytest.raises(OSError):
        write_new(str(tmp_path / "link"), b"y")
    assert not target.exists() and path.read_bytes() == b"x" * 100_000


def test_write_private_replaces_whole_or_leaves_the_old_file(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    assert write_private(str(directory), "f", b"old")
    assert write_private(str(directory), "f", b"new")
    assert (directory / "f").read_bytes() == b"new" and mode_of(directory / "f") == 0o600
    assert os.listdir(directory) == ["f"]  # no temporary file left
    directory.chmod(0o777)  # now others could change it: not used, and left alone
    assert not write_private(str(directory), "f", b"newer")
    assert (directory / "f").read_bytes() == b"new"
    directory.chmod(0o700)
    (directory / "f").unlink()
    (directory / "f").mkdir()  # a directory where the file goes: the rename fails
    assert not write_private(str(directory), "f", b"x")
    assert os.listdir(directory) == ["f"]
    assert not write_private(None, "f", b"x")


# ---------------------------------------------------------------------- the record file


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    """This machine's resolution, as the record keeps it."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TRITON")}
    resolved, _ = resolve_plan(None, environ)
    return without_history(resolved)


def facts_of(*paths: Path) -> Facts:
    with recording() as facts:
        for path in paths:
            _fs.is_file(path)
    return facts


def test_store_keeps_the_newest_first_and_at_most_max_records(
    tmp_path: Path, plan: dict[str, Any]
) -> None:
    environ = {"HOME": str(tmp_path / "home")}
    files = [tmp_path / f"f{n}" for n in range(_record.MAX_RECORDS + 2)]
    for n, path in enumerate(files):
        assert store(["key", n], facts_of(path), plan, environ)
    record = tmp_path / "home" / ".cache" / "triton-toolchain" / _record.RECORD_FILE
    assert mode_of(record) == 0o600 and mode_of(record.parent) == 0o700
    found = _record.decode(record.read_bytes())
    assert [r["key"] for r in found] == [["key", n] for n in reversed(range(2, len(files)))]
    assert found[0]["result"] == plan
    assert found[0]["facts"] == [["stat", str(files[-1]), [-1, errno.ENOENT]]]


def test_store_replaces_a_record_of_the_same_key_and_facts(
    tmp_path: Path, plan: dict[str, Any]
) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    a, b = tmp_path / "a", tmp_path / "b"
    assert store(["k"], facts_of(a), plan, environ)
    assert store(["k"], facts_of(b), plan, environ)
    assert store(["k"], facts_of(a), plan, environ)
    record = tmp_path / "xdg" / "triton-toolchain" / _record.RECORD_FILE
    found = _record.decode(record.read_bytes())
    assert [r["facts"][0][1] for r in found] == [str(a), str(b)]


def test_what_cannot_be_stored_is_not_and_nothing_raises(
    tmp_path: Path, plan: dict[str, Any]
) -> None:
    environ = {"HOME": str(tmp_path / "home")}
    f = tmp_path / "f"
    with recording() as unstable:
        assert not _fs.may_execute(f)
        f.write_text("")
        f.chmod(0o755)
        assert _fs.may_execute(f)
    assert unstable.unstable
    assert not store(["k"], unstable, plan, environ)
    assert not store(["k"], facts_of(f), {**plan, "x": object()}, environ)  # not JSON
    assert not (tmp_path / "home").exists()
    assert not store(["k"], facts_of(f), plan, {})  # no HOME: nowhere to keep it
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert not store(["k"], facts_of(f), plan, {"HOME": str(shared)})
    assert os.listdir(shared) == []
