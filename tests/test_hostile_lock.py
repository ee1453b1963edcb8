"""Hostile corpus, ``lock``: nothing the user wrote is lost, no reader ever sees a torn
file, and no link is written through.

Real concurrency (32 ``lock --force`` processes and 32 reading processes on one file),
a real full disk (a 64 KiB tmpfs in a private mount namespace), a real read-only
mount, and links planted by another user (``setpriv``) in a shared sticky directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import (
    OTHER_UID,
    as_user,
    clean_env,
    cli,
    fifo,
    reachable,
    run,
    shared_dir,
)
from tool_fixtures import fake_ptxas
from triton_layouts import Namespace
from triton_toolchain.resolver._manifest import SCHEMA

WRITERS = 32
READERS = 32


def _writer_env(tmp: Path, name: str) -> dict[str, str]:
    """A user whose resolution differs from every other writer's (its own ptxas, given
    by a strict manifest: quick to resolve), so each writer's output is recognisable."""
    tool = fake_ptxas(tmp / "writers" / name, "13.0")
    manifest = tmp / "writers" / name / "in.json"
    manifest.write_text(
        json.dumps({"schema": 1, "strict": True, "components": {"ptxas": {"path": str(tool)}}})
    )
    return clean_env(tmp / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))


READER = r"""
import json, os, sys, time
target, stop, allowed = sys.argv[1], sys.argv[2], set(json.loads(sys.argv[3]))
reads = torn = 0
seen = set()
while not os.path.exists(stop):
    with open(target, "rb") as f:
        data = f.read()
    reads += 1
    try:
        path = json.loads(data)["components"]["ptxas"]["path"]
        if path not in allowed:
            torn += 1
        seen.add(path)
    except (ValueError, KeyError, TypeError):
        torn += 1
    time.sleep(0.001)  # leave the two cores of CI to the writers too
print(json.dumps({"reads": reads, "torn": torn, "seen": len(seen)}))
"""


def test_32_concurrent_writers_and_32_readers_never_see_a_torn_manifest(tmp_path: Path) -> None:
    target = tmp_path / "out" / "manifest.json"
    names = [f"w{i:02d}" for i in range(WRITERS)]
    envs = {name: _writer_env(tmp_path, name) for name in names}
    allowed = [str(tmp_path / "writers" / n / "ptxas") for n in names]
    first = cli("lock", "-o", str(target), env=envs[names[0]])
    assert first.returncode == 1 and "wrote" in first.stderr, first.output
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(target), str(stop), json.dumps(allowed)],
            stdout=subprocess.PIPE,
        )
        for _ in range(READERS)
    ]
    time.sleep(0.2)
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "triton_toolchain", "lock", "--force", "-o", str(target)],
            env=envs[name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in names
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 1 and b"wrote" in err, err.decode()
    stop.touch()
    results = [json.loads(r.communicate(timeout=60)[0]) for r in readers]
    assert sum(r["reads"] for r in results) > READERS * 10, results
    assert [r["torn"] for r in results] == [0] * READERS
    final = json.loads(target.read_text())
    winner = Path(final["components"]["ptxas"]["path"]).parent.name
    assert winner in names
    expected = cli("lock", env=envs[winner])  # the winner's output, to standard output
    assert target.read_text() == expected.stdout
    assert sorted(p.name for p in target.parent.iterdir()) == ["manifest.json"]  # no temp left


@pytest.mark.root
def test_a_full_disk_keeps_the_old_manifest_and_says_where_it_is(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    env = _writer_env(tmp_path, "w")
    old = '{"schema": 1, "components": {}, "generator": "my hand-written manifest"}\n'
    script = (
        f"cd {disk} && printf '%s' '{old}' > manifest.json && "
        "(head -c 1048576 /dev/zero > fill 2>/dev/null; true) && "
        f"{sys.executable} -m triton_toolchain lock --force -o {disk}/manifest.json; "
        "echo rc=$?; echo ---; cat manifest.json; echo ---; ls -a"
    )
    namespace = Namespace()
    namespace.mounts.append(["-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(disk)])
    done = run(namespace.argv(["/bin/sh", "-c", script]), env).clean()
    status, contents, listing = done.stdout.split("---\n")
    assert status.strip() == "rc=2", done.output
    assert contents == old
    assert f"cannot write {disk / 'manifest.json'} (No space left on device)" in done.stderr
    assert f"{disk / 'manifest.json'} is unchanged" in done.stderr
    assert sorted(listing.split()) == [".", "..", "fill", "manifest.json"]  # no temp left


@pytest.mark.root
def test_a_read_only_directory_keeps_the_old_manifest(tmp_path: Path) -> None:
    place = tmp_path / "ro"
    place.mkdir()
    (place / "manifest.json").write_text("mine\n")
    env = _writer_env(tmp_path, "w")
    script = f"{sys.executable} -m triton_toolchain lock --force -o {place}/manifest.json"
    namespace = Namespace().bind(place, place)
    namespace.mounts.append(["-o", "remount,bind,ro", str(place)])
    done = run(namespace.argv(["/bin/sh", "-c", script]), env).clean()
    assert done.returncode == 2
    assert "Read-only file system" in done.stderr and "is unchanged" in done.stderr
    assert (place / "manifest.json").read_text() == "mine\n"


# ------------------------------------------------------------- links planted in /tmp


def _planted_link(tmp: Path, target: Path) -> Path:
    """``shared/manifest.json``, a link owned by another user, to ``target``."""
    shared = shared_dir(tmp / "shared", sticky=True)
    reachable(shared)
    link = shared / "manifest.json"
    done = subprocess.run(
        as_user(OTHER_UID, ["ln", "-s", str(target), str(link)]), capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return link


def _victim(tmp: Path) -> Path:
    victim = tmp / "etc" / "important.conf"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    return victim


@pytest.mark.root
@pytest.mark.parametrize("force", [False, True])
def test_lock_onto_a_planted_link_never_writes_through_it(tmp_path: Path, force: bool) -> None:
    victim = _victim(tmp_path)
    link = _planted_link(tmp_path, victim)
    args = ["lock", "-o", str(link), *(["--force"] if force else [])]
    done = cli(*args, env=_writer_env(tmp_path, "w"))
    assert victim.read_text() == "precious\n"
    if force:
        assert done.returncode == 1, done.output  # written; the driver etc. are missing
        assert f"replaced the symbolic link {link}" in done.stderr
        assert not link.is_symlink() and json.loads(link.read_text())["schema"] == SCHEMA
    else:
        assert done.returncode == 2
        assert f"{link} is a symbolic link; not overwriting it" in done.stderr
        assert link.is_symlink()


@pytest.mark.root
@pytest.mark.parametrize("force", [False, True])
def test_lock_onto_a_dangling_planted_link_creates_nothing_elsewhere(
    tmp_path: Path, force: bool
) -> None:
    elsewhere = tmp_path / "etc" / "cron.d" / "evil"
    elsewhere.parent.mkdir(parents=True)
    link = _planted_link(tmp_path, elsewhere)
    args = ["lock", "-o", str(link), *(["--force"] if force else [])]
    done = cli(*args, env=_writer_env(tmp_path, "w"))
    assert not elsewhere.exists()
    assert done.returncode == (1 if force else 2), done.output


@pytest.mark.root
def test_lock_through_a_directory_link_of_another_user_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "etc"
    real.mkdir()
    link_dir = _planted_link(tmp_path, real)  # shared/manifest.json -> etc/, as a directory
    done = cli("lock", "-o", str(link_dir / "m.json"), env=_writer_env(tmp_path, "w"))
    assert done.returncode == 2
    assert f"symbolic link {link_dir} is owned by uid {OTHER_UID}" in done.stderr
    assert list(real.iterdir()) == []


def test_lock_onto_a_hard_link_replaces_only_the_name(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    os.link(victim, out / "manifest.json")
    done = cli("lock", "--force", "-o", str(out / "manifest.json"), env=_writer_env(tmp_path, "w"))
    assert done.returncode == 1 and "wrote" in done.stderr, done.output
    assert victim.read_text() == "precious\n"


def test_lock_into_a_directory_everyone_can_write_is_refused_before_creating_anything(
    tmp_path: Path,
) -> None:
    drop = shared_dir(tmp_path / "drop", sticky=False)
    target = drop / "sub" / "manifest.json"
    done = cli("lock", "-o", str(target), env=_writer_env(tmp_path, "w"))
    assert done.returncode == 2
    assert f"directory {drop} is writable by everyone" in done.stderr
    assert "would not be trusted" in done.stderr
    assert list(drop.iterdir()) == []


@pytest.mark.parametrize("kind", ["fifo", "directory", "socket"])
def test_lock_onto_a_special_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    from hostile import unix_socket

    target = tmp_path / "out" / "manifest.json"
    keep = None
    if kind == "fifo":
        fifo(target)
    elif kind == "directory":
        target.mkdir(parents=True)
    else:
        keep = unix_socket(target)
    done = cli("lock", "--force", "-o", str(target), env=_writer_env(tmp_path, "w"), timeout=20)
    assert done.returncode == 2
    assert f"{target} is a" in done.stderr and "choose another -o path" in done.stderr
    if keep is not None:
        keep.close()


@pytest.mark.parametrize("force", [False, True])
def test_lock_to_an_empty_path_is_refused_by_name(tmp_path: Path, force: bool) -> None:
    """``-o ''`` names no file (made absolute, it would be the current directory)."""
    work = tmp_path / "work"
    work.mkdir()
    flags = ["--force"] if force else []
    done = cli("lock", *flags, "-o", "", env=_writer_env(tmp_path, "w"), cwd=work)
    assert done.returncode == 2
    assert done.stderr == "error: lock -o '': give the path of the manifest file to write\n"
    assert list(work.iterdir()) == []


def test_lock_to_a_closed_standard_output_is_exit_2_without_traceback(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = cli("lock", env=_writer_env(tmp_path, "w"), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 2
    assert "standard output is closed" in done.stderr
