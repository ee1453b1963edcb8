"""Hostile corpus, what the shim remembers: the tools' answers (``answers-v4.json``) and
the activation record (``activation-v5.json``) are believed only from a directory this
user alone can write, never outlive a change of the file they describe (its change
time included), and a damaged file of any kind only means asking again, quickly.

The lies are real: a cache this shim wrote, edited to say ptxas 99.9, put where another
user (``setpriv``) or everyone could have put it.
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import require_tool
from hostile import (
    OTHER_UID,
    THIRD_UID,
    Plant,
    clean_env,
    cli,
    cli_with_timeout,
    fifo,
    mkdir_as,
    reachable,
    run,
    shared_dir,
    shim_for,
    write_as,
    write_into_as,
)
from tool_fixtures import RELEASE_LINE, fake_ptxas, write_script
from triton_layouts import Layout, run_scenario, scenario_env
from triton_toolchain.resolver._discovery._answers import ANSWERS_FILE, ANSWERS_FORMAT
from triton_toolchain.resolver._discovery._answers import parse as parse_answers
from triton_toolchain.resolver._observe import encode
from triton_toolchain.runtime._record import MAX_RECORD_BYTES, RECORD_FILE, RECORD_FORMAT, decode

REAL = "13.0"
LIE = "99.9"  # as long as REAL: a fake ptxas of either has the same size (cp -p of a look-alike)


def _version(done_stdout: str) -> str | None:
    doc = json.loads(done_stdout)
    version: str | None = doc["components"]["ptxas"]["version"]
    return version


def _doctor(env: dict[str, str], **kwargs: object) -> str | None:
    done = cli("doctor", "--json", env=env, **kwargs)  # type: ignore[arg-type]
    assert done.returncode in (0, 1), done.output
    return _version(done.stdout)


def _lying_answers(tmp: Path, tool: Path) -> bytes:
    """The answers file this shim writes for ``tool``, edited to say ``LIE``: a file it
    would believe in its own private cache."""
    cache = tmp / "honest-cache"
    env = clean_env(tmp / "honest-home", XDG_CACHE_HOME=str(cache), TRITON_PTXAS_PATH=str(tool))
    assert _doctor(env) == REAL
    data = (cache / "triton-toolchain" / ANSWERS_FILE).read_bytes()
    assert f"release {REAL}".encode() in data
    lie = data.replace(f"release {REAL}".encode(), f"release {LIE}".encode())
    assert any(f"release {LIE}" in text for _ok, text in parse_answers(lie).values())
    return lie


# ------------------------------------------------------------- lies where others write


def _shared_cache_everyone_writes(tmp: Path, lie: bytes) -> Path:
    xdg = shared_dir(tmp / "xdg", sticky=False)
    directory = xdg / "triton-toolchain"
    directory.mkdir(mode=0o700)
    (directory / ANSWERS_FILE).write_bytes(lie)
    return xdg


def _shared_cache_dir_of_another_user(tmp: Path, lie: bytes) -> Path:
    xdg = shared_dir(tmp / "xdg", sticky=True)
    reachable(xdg)
    directory = mkdir_as(OTHER_UID, xdg / "triton-toolchain", mode=0o777)
    write_as(OTHER_UID, directory / ANSWERS_FILE, lie)
    return xdg


def _file_of_another_user_in_a_private_dir(tmp: Path, lie: bytes) -> Path:
    xdg = tmp / "xdg"
    directory = xdg / "triton-toolchain"
    directory.mkdir(parents=True, mode=0o700)
    (directory / ANSWERS_FILE).write_bytes(lie)
    os.chown(directory / ANSWERS_FILE, OTHER_UID, OTHER_UID)
    return xdg


def _cache_dir_writable_by_everyone(tmp: Path, lie: bytes) -> Path:
    xdg = tmp / "xdg"
    directory = xdg / "triton-toolchain"
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    (directory / ANSWERS_FILE).write_bytes(lie)
    return xdg


def _cache_dir_writable_by_a_shared_group(tmp: Path, lie: bytes) -> Path:
    xdg = tmp / "xdg"
    directory = xdg / "triton-toolchain"
    directory.mkdir(parents=True)
    os.chown(directory, 0, OTHER_UID)
    directory.chmod(0o770)
    (directory / ANSWERS_FILE).write_bytes(lie)
    return xdg


def _cache_dir_linked_by_another_user(tmp: Path, lie: bytes) -> Path:
    theirs = mkdir_as(OTHER_UID, tmp / "theirs", mode=0o755)
    (theirs / ANSWERS_FILE).write_bytes(lie)
    xdg = shared_dir(tmp / "xdg", sticky=True)
    (xdg / "triton-toolchain").symlink_to(theirs)
    os.lchown(xdg / "triton-toolchain", OTHER_UID, OTHER_UID)
    return xdg


def _cache_dir_is_our_link_to_a_private_dir(tmp: Path, lie: bytes) -> Path:
    """Even our own link is not followed: only a real directory is the cache."""
    real = tmp / "elsewhere"
    real.mkdir(mode=0o700)
    (real / ANSWERS_FILE).write_bytes(lie)
    xdg = tmp / "xdg"
    xdg.mkdir()
    (xdg / "triton-toolchain").symlink_to(real)
    return xdg


LIES: dict[str, Callable[[Path, bytes], Path]] = {
    "shared-cache-everyone-writes": _shared_cache_everyone_writes,
    "shared-cache-dir-of-another-user": _shared_cache_dir_of_another_user,
    "answers-file-of-another-user": _file_of_another_user_in_a_private_dir,
    "cache-dir-writable-by-everyone": _cache_dir_writable_by_everyone,
    "cache-dir-writable-by-a-shared-group": _cache_dir_writable_by_a_shared_group,
    "cache-dir-a-link-of-another-user": _cache_dir_linked_by_another_user,
    "cache-dir-a-link-of-ours": _cache_dir_is_our_link_to_a_private_dir,
}


@pytest.mark.root
@pytest.mark.parametrize("case", sorted(LIES))
def test_answers_others_could_write_are_never_believed_nor_written(
    tmp_path: Path, case: str
) -> None:
    tool = fake_ptxas(tmp_path / "safe", REAL)
    xdg = LIES[case](tmp_path, _lying_answers(tmp_path, tool))
    before = {p: p.read_bytes() for p in xdg.rglob("*") if p.is_file()}
    env = clean_env(tmp_path / "home", XDG_CACHE_HOME=str(xdg), TRITON_PTXAS_PATH=str(tool))
    assert _doctor(env) == REAL
    assert _doctor(env) == REAL
    after = {p: p.read_bytes() for p in xdg.rglob("*") if p.is_file()}
    if case == "answers-file-of-another-user":  # the directory is ours: ours replaces it
        assert (xdg / "triton-toolchain" / ANSWERS_FILE).stat().st_uid == os.geteuid()
        assert LIE.encode() not in (xdg / "triton-toolchain" / ANSWERS_FILE).read_bytes()
    else:
        assert after == before  # nothing written where it would not be believed


@pytest.mark.root
def test_another_users_lies_in_a_shared_cache_are_not_believed_by_a_user(
    tmp_path: Path,
) -> None:
    """Two real users: 4343 plants a cache in a shared XDG_CACHE_HOME; 4242 runs doctor."""
    reachable(tmp_path)
    tool = fake_ptxas(tmp_path / "safe", REAL)
    lie = _lying_answers(tmp_path, tool)
    xdg = shared_dir(tmp_path / "xdg", sticky=True)
    planted = mkdir_as(THIRD_UID, xdg / "triton-toolchain", mode=0o755)
    write_as(THIRD_UID, planted / ANSWERS_FILE, lie)
    home = mkdir_as(OTHER_UID, tmp_path / "home4242")
    python, src = shim_for(OTHER_UID, tmp_path)
    env = clean_env(home, XDG_CACHE_HOME=str(xdg), TRITON_PTXAS_PATH=str(tool), PYTHONPATH=src)
    reachable(tmp_path / "safe")
    argv = [python, "-m", "triton_toolchain", "doctor", "--json"]
    done = run(argv, env, user=OTHER_UID).clean()
    assert done.returncode in (0, 1), done.output
    assert _version(done.stdout) == REAL
    assert (planted / ANSWERS_FILE).read_bytes() == lie


# --------------------------------------------------- an entry never outlives a change


def _copy_keeping_times(old: Path, new: Path) -> None:
    """``cp -p``: the contents replaced in place, size and modification time kept."""
    subprocess.run([require_tool("cp", "coreutils"), "-p", str(new), str(old)], check=True)


def _rewrite_and_restore_mtime(old: Path, new: Path) -> None:
    st = old.stat()
    old.write_bytes(new.read_bytes())
    os.utime(old, ns=(st.st_atime_ns, st.st_mtime_ns))


def _rename_over_keeping_mtime(old: Path, new: Path) -> None:
    st = old.stat()
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, old)


CHANGES: dict[str, Callable[[Path, Path], None]] = {
    "cp-p-over-it": _copy_keeping_times,
    "rewritten-with-its-mtime-restored": _rewrite_and_restore_mtime,
    "renamed-over-with-its-mtime": _rename_over_keeping_mtime,
}


@pytest.mark.parametrize("case", sorted(CHANGES))
def test_a_remembered_answer_does_not_outlive_a_change_of_the_file(
    tmp_path: Path, case: str
) -> None:
    tool = fake_ptxas(tmp_path / "safe", LIE)
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(tool))
    assert _doctor(env) == LIE
    look_alike = fake_ptxas(tmp_path / "other", REAL)
    os.utime(look_alike, ns=(tool.stat().st_atime_ns, tool.stat().st_mtime_ns))
    assert look_alike.stat().st_size == tool.stat().st_size
    CHANGES[case](tool, look_alike)
    assert tool.stat().st_mtime_ns == (tmp_path / "safe" / "ptxas").stat().st_mtime_ns
    assert _doctor(env) == REAL


# --------------------------------------------------------------- damaged caches


def _damage_fifo(path: Path) -> None:
    fifo(path)


def _damage_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _damage_dev_urandom(path: Path) -> None:
    path.symlink_to("/dev/urandom")


def _damage_garbage(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


def _damage_directory(path: Path) -> None:
    path.mkdir()


def _damage_huge(path: Path) -> None:
    with path.open("wb") as f:  # sparse: 8 GiB that cost no disk
        f.truncate(8 << 30)


def _answers(text: str) -> str:
    """An answers file of this version whose answers are ``text`` (JSON)."""
    return f'{{"format": {json.dumps(ANSWERS_FORMAT)}, "answers": {text}}}'


def _damage_deep(path: Path) -> None:
    path.write_text(_answers("[" * 100_000 + "]" * 100_000))


def _damage_many_items(path: Path) -> None:
    """A million empty lists, to the size limit: decoded, then refused."""
    path.write_text(_answers("[" + "[]," * 1_300_000 + "[]]"))


def _damage_marshal(path: Path) -> None:
    """The answers as the ``marshal`` of an earlier version of the shim."""
    path.write_bytes(
        b"triton-toolchain answers 3\n" + marshal.dumps({"x": [True, "release 99.9"]}, 4)
    )


def _damage_digits(path: Path) -> None:
    path.write_text(_answers('{"x": [true, "y"]}, "n": ' + "9" * 5000))


def _damage_types(path: Path) -> None:
    path.write_text(_answers('{"x": [1, "y"], "z": [true, null]}'))


def _damage_truncated(path: Path) -> None:
    path.write_text(_answers('{"x": [true, "release 13.0"]}')[:-3])


def _damage_json(path: Path) -> None:
    """The answers as the JSON of an earlier version of the shim."""
    path.write_text('{"x": [true, "release 99.9"]}')


def _damage_other_version(path: Path) -> None:
    """Answers of the right shape, of another version of the file."""
    path.write_text(_answers('{"x": [true, "release 99.9"]}').replace(ANSWERS_FORMAT, "x 3"))


def _damage_nan(path: Path) -> None:
    path.write_text(_answers('{"x": [true, "y"], "n": [NaN, Infinity, -Infinity]}'))


def _damage_float(path: Path) -> None:
    path.write_text(_answers('{"x": [true, "y"], "n": [1e999]}'))


def _damage_twice(path: Path) -> None:
    """A key given twice: which one counts is the decoder's choice, so neither does."""
    path.write_text(_answers('{"x": [true, "release 13.0"], "x": [true, "release 99.9"]}'))


def _damage_not_utf8(path: Path) -> None:
    path.write_bytes(_answers('{"x": [true, "release \xff"]}').encode("latin-1"))


def _damage_utf16(path: Path) -> None:
    path.write_bytes(_answers('{"x": [true, "y"]}').encode("utf-16"))


def _damage_empty(path: Path) -> None:
    path.write_text("")


def _damage_dangling(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere")


def _damage_loop(path: Path) -> None:
    path.symlink_to(path)


def _damage_million_digits(path: Path) -> None:
    """An integer of a million digits (``int`` refuses more than a few thousand at once,
    rather than take quadratic time)."""
    path.write_text(_answers('{"x": [true, "y"]}, "n": ' + "9" * 1_000_000))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "fifo": _damage_fifo,
    "link-to-dev-zero": _damage_dev_zero,
    "link-to-dev-urandom": _damage_dev_urandom,
    "garbage": _damage_garbage,
    "directory": _damage_directory,
    "8-gib-sparse": _damage_huge,
    "nested-100000-deep": _damage_deep,
    "nested-10000-deep": lambda path: path.write_text(_answers("[" * 10_000 + "]" * 10_000)),
    "a-million-items": _damage_many_items,
    "marshal-of-an-earlier-version": _damage_marshal,
    "json-of-an-earlier-version": _damage_json,
    "another-version": _damage_other_version,
    "nan-and-infinity": _damage_nan,
    "a-float-out-of-range": _damage_float,
    "a-key-twice": _damage_twice,
    "not-utf-8": _damage_not_utf8,
    "utf-16": _damage_utf16,
    "5000-digit-integer": _damage_digits,
    "million-digit-integer": _damage_million_digits,
    "wrong-types": _damage_types,
    "truncated": _damage_truncated,
    "empty": _damage_empty,
    "dangling-link": _damage_dangling,
    "link-loop": _damage_loop,
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_answers_file_only_means_asking_again(tmp_path: Path, case: str) -> None:
    tool = fake_ptxas(tmp_path / "safe", REAL)
    cache = tmp_path / "xdg" / "triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    DAMAGE[case](cache / ANSWERS_FILE)
    env = clean_env(tmp_path / "home", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env["TRITON_PTXAS_PATH"] = str(tool)
    done = cli("doctor", "--json", env=env, timeout=20)
    assert _version(done.stdout) == REAL
    assert done.seconds < 10, done.seconds


def _records(text: str) -> Callable[[Path], None]:
    """A record file of this version whose records are ``text`` (JSON)."""

    def damage(path: Path) -> None:
        path.write_text(f'{{"format": {json.dumps(RECORD_FORMAT)}, "records": {text}}}')

    return damage


RECORD_DAMAGE: dict[str, Callable[[Path], None]] = {
    **{case: DAMAGE[case] for case in ("fifo", "link-to-dev-zero", "garbage", "8-gib-sparse")},
    **{case: DAMAGE[case] for case in ("nested-100000-deep", "not-utf-8", "utf-16", "empty")},
    "format-then-garbage": _records("{not json"),
    "format-then-truncated": _records('[{"key": [], "facts": [], "res'),
    "format-then-a-dict": _records('{"key": [], "facts": [], "result": {}}'),
    "format-then-wrong-types": _records('[{"facts": 1}, 7, null]'),
    "format-then-nested-100000-deep": _records("[" * 100_000 + "]" * 100_000),
    "format-then-nested-10000-deep": _records("[" * 10_000 + "]" * 10_000),
    "format-then-nan": _records('[{"key": NaN, "facts": [], "result": {}}]'),
    "format-then-huge-integer": _records('[{"key": ' + "9" * 100_000 + ', "facts": []}]'),
    "format-then-a-key-twice": _records('[{"key": [], "key": [], "facts": [], "result": {}}]'),
    "another-format": lambda path: path.write_text('{"format": "x 4", "records": []}'),
    "marshal-of-an-earlier-version": lambda path: path.write_bytes(
        b"triton-toolchain activation records 4\n" + marshal.dumps([], 4)
    ),
}


@pytest.mark.parametrize("case", sorted(RECORD_DAMAGE))
def test_a_damaged_activation_record_only_means_resolving_again(tmp_path: Path, case: str) -> None:
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False)
    record = Path(env["HOME"]) / ".cache" / "triton-toolchain" / RECORD_FILE
    record.parent.mkdir(parents=True, mode=0o700)
    RECORD_DAMAGE[case](record)
    report = run_scenario(layout, "hook", [], env=env)
    assert report["activation"]["mode"] == "knobs"
    assert "Traceback" not in report["stderr"] and "Warning" not in report["stderr"]


def _record_with_a_planted_ptxas(tmp: Path, plant: Plant) -> tuple[Layout, dict[str, str], Path]:
    """An activation record this shim wrote, edited so that its plan names a planted
    ptxas (as a process able to write the record could)."""
    layout = Layout(tmp, tmp / "ptxas.log")
    env = scenario_env(layout, manifest=False)
    run_scenario(layout, "hook", [], env=env)
    record = Path(env["HOME"]) / ".cache" / "triton-toolchain" / RECORD_FILE
    tool = plant.ptxas(tmp / "planted" / "ptxas", "12.8")
    records = decode(record.read_bytes())
    for entry in records:
        for setting in entry["result"]["settings"]:
            if setting["component"] in ("ptxas", "ptxas-blackwell"):
                setting["value"] = str(tool)
        components = entry["result"]["toolchain"]["components"]
        for name in {"ptxas", "ptxas-blackwell"} & components.keys():  # the import's: ptxas
            components[name]["path"] = str(tool)
    record.write_bytes(encode(records))
    return layout, env, record


@pytest.mark.root
def test_an_activation_record_of_another_user_is_not_believed(tmp_path: Path) -> None:
    plant = Plant(tmp_path / "runs.log")
    layout, env, record = _record_with_a_planted_ptxas(tmp_path, plant)
    os.chown(record, OTHER_UID, OTHER_UID)
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert report["results"]["compile:80"]["ok"] is True, report["results"]
    assert plant.runs() == []


def test_an_activation_record_in_a_cache_others_can_write_is_not_believed(
    tmp_path: Path,
) -> None:
    plant = Plant(tmp_path / "runs.log")
    layout, env, record = _record_with_a_planted_ptxas(tmp_path, plant)
    record.parent.chmod(0o777)
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert report["results"]["compile:80"]["ok"] is True, report["results"]
    assert plant.runs() == []


def _forged_into_a_file_others_can_write(
    tmp: Path, mode: int, group: int | None
) -> tuple[Plant, Layout, dict[str, str], Path]:
    """The honest record of a private cache directory (0755, as ``mkdir -p`` makes it),
    its file made ``mode`` (a careless ``chmod``), then overwritten by another user (a
    real one, through ``setpriv``) with a record whose plan names a planted ptxas."""
    plant = Plant(tmp / "runs.log")
    layout, env, record = _record_with_a_planted_ptxas(tmp, plant)
    forged = record.read_bytes()
    record.unlink()
    run_scenario(layout, "hook", [], env=env)  # the honest record again
    record.parent.chmod(0o755)
    record.chmod(mode)
    if group is not None:
        os.chown(record, os.geteuid(), group)
    reachable(record.parent)
    write_into_as(OTHER_UID, record, forged)
    assert record.stat().st_uid == os.geteuid() and record.read_bytes() == forged
    return plant, layout, env, record


@pytest.mark.root
@pytest.mark.parametrize(
    ("mode", "group"),
    [(0o666, None), (0o646, None), (0o664, OTHER_UID)],
    ids=["0666", "0646", "0664-their-group"],
)
def test_a_record_file_others_can_write_is_not_believed(
    tmp_path: Path, mode: int, group: int | None
) -> None:
    """The file is ours, in our private directory, but another user (everyone, or the
    file's group) could write it, and did: the record is a miss, is replaced by ours
    (0600), and the planted ptxas never runs."""
    plant, layout, env, record = _forged_into_a_file_others_can_write(tmp_path, mode, group)
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert report["results"]["compile:80"]["ok"] is True, report["results"]
    assert plant.runs() == []
    assert "Warning" not in report["stderr"], report["stderr"]
    assert record.stat().st_mode & 0o777 == 0o600
    assert b"planted" not in record.read_bytes()


@pytest.mark.root
def test_an_answers_file_others_can_write_is_not_believed(tmp_path: Path) -> None:
    """The tools' answers, the same: ours, 0666, another user wrote ptxas 99.9 into it."""
    tool = fake_ptxas(tmp_path / "safe", REAL)
    lie = _lying_answers(tmp_path, tool)
    xdg = tmp_path / "xdg"
    env = clean_env(tmp_path / "home", XDG_CACHE_HOME=str(xdg), TRITON_PTXAS_PATH=str(tool))
    assert _doctor(env) == REAL
    answers = xdg / "triton-toolchain" / ANSWERS_FILE
    answers.parent.chmod(0o755)
    answers.chmod(0o666)
    reachable(answers.parent)
    write_into_as(OTHER_UID, answers, lie)
    assert _doctor(env) == REAL
    assert answers.stat().st_mode & 0o777 == 0o600 and LIE.encode() not in answers.read_bytes()


# Record files that make a decoder work hard or allocate much for their size (marshal,
# the earlier format, allocated what a count claimed; JSON claims nothing, but each list,
# object, number or string it holds costs time and memory), each as large as a record
# file is read (``MAX_RECORD_BYTES``), or larger.
FILL = MAX_RECORD_BYTES // 3 - 100
CLAIMS = {
    "nested-a-million-deep": "[" * 1_000_000,
    "nested-as-deep-as-the-size-limit": "[" * (MAX_RECORD_BYTES - 100),
    "a-million-digit-integer": "9" * 1_000_000,
    "empty-lists-to-the-size-limit": "[" + "[]," * FILL + "[]]",
    "empty-lists-beyond-the-size-limit": "[" + "[]," * 4 * FILL + "[]]",
    "objects-to-the-size-limit": "[" + "{}," * FILL + "{}]",
    "integers-to-the-size-limit": "[" + "10," * FILL + "0]",
    "strings-to-the-size-limit": "[" + '"",' * FILL + '""]',
    "list-in-a-record": None,  # a well-formed file whose matching record's facts are it
}


# Written by the interpreter that looks it up (its own key, for the claim in a record).
_CLAIM_LOOKUP = """
import json, os, sys, time
from triton_toolchain.runtime import _record
claim = open(sys.argv[1]).read()
key = _record.identity(None)
if sys.argv[2] == "record":
    claim = json.dumps([{"key": key, "facts": "@", "result": {}}]).replace('"@"', claim)
directory = os.path.join(os.environ["HOME"], ".cache", "triton-toolchain")
os.makedirs(directory, mode=0o700)
with open(os.path.join(directory, _record.RECORD_FILE), "w") as f:
    f.write(json.dumps({"format": _record.RECORD_FORMAT, "records": "@"}).replace('"@"', claim))
t = time.monotonic()
hit = _record.lookup(key, os.environ)
print(hit, time.monotonic() - t)
"""


@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_a_record_claiming_a_huge_size_is_a_quick_miss_within_a_memory_bound(
    tmp_path: Path, case: str
) -> None:
    """Under a 1 GiB address-space limit (``prlimit``), the lookup is a miss, at once,
    with no MemoryError."""
    claim = CLAIMS[case] or CLAIMS["empty-lists-to-the-size-limit"]
    where = "record" if CLAIMS[case] is None else "file"
    prlimit = require_tool("prlimit", "util-linux")
    (tmp_path / "claim").write_text(claim)
    argv = [
        prlimit,
        f"--as={1 << 30}",
        sys.executable,
        "-c",
        _CLAIM_LOOKUP,
        str(tmp_path / "claim"),
        where,
    ]
    done = run(argv, clean_env(tmp_path / "home")).clean()
    assert done.returncode == 0, done.output
    hit, seconds = done.stdout.split()
    assert hit == "None" and float(seconds) < 0.5, done.stdout


def test_import_triton_with_a_record_claiming_a_huge_list_configures_triton(
    tmp_path: Path,
) -> None:
    """The issue's case end to end: a miss, Triton configured, no warning, quickly."""
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False)
    record = Path(env["HOME"]) / ".cache" / "triton-toolchain" / RECORD_FILE
    record.parent.mkdir(parents=True, mode=0o700)
    _records(CLAIMS["empty-lists-to-the-size-limit"] or "")(record)
    assert len(record.read_bytes()) > MAX_RECORD_BYTES - 400
    report = run_scenario(layout, "hook", [], env=env)
    assert report["activation"]["mode"] == "knobs"
    assert "Warning" not in report["stderr"], report["stderr"]


def _drop(*keys: str) -> Callable[[dict], None]:
    def change(result: dict) -> None:
        where = result
        for key in keys[:-1]:
            where = where[key]
        del where[keys[-1]]

    return change


def _set(value: object, *keys: str | int) -> Callable[[dict], None]:
    def change(result: dict) -> None:
        where = result
        for key in keys[:-1]:
            where = where[key]
        where[keys[-1]] = value

    return change


def _first(result: dict) -> dict:
    """The first component of a plan's toolchain."""
    return next(iter(result["toolchain"]["components"].values()))  # type: ignore[no-any-return]


# A record of the right key whose result has the wrong shape.
SHAPES: dict[str, Callable[[dict], None]] = {
    "result-without-settings": _drop("settings"),
    "setting-without-error": lambda r: r["settings"][0].pop("error"),
    "driver-an-integer": _set(7, "driver"),
    "a-component-a-list": lambda r: r["toolchain"]["components"].update(ptxas=[]),
    "setting-of-an-unknown-component": lambda r: r["settings"][0].update(component="nope"),
    # `import triton` alone keeps no torch part (None): one is put in, of the wrong shape.
    "torch-cpath-a-string": _set(
        {"CXX": None, "CPATH": "/usr/include", "CUDA_HOME": None}, "torch"
    ),
    "torch-a-string": _set("g++", "torch"),
    "result-a-list": None,
    # The wrong type at each level of the plan's schema.
    "history-an-integer": _set(1, "history"),
    "arch-a-boolean": _set(True, "toolchain", "arch"),
    "strict-null": _set(None, "toolchain", "strict"),
    "toolchain-notes-a-string": _set("note", "toolchain", "notes"),
    "toolchain-an-extra-key": _set(1, "toolchain", "extra"),
    "components-a-list": _set([], "toolchain", "components"),
    "a-component-path-an-integer": lambda r: _first(r).update(path=7),
    "a-rejection-without-reason": lambda r: _first(r).update(
        rejected=[{"path": "/x", "source": "env:X"}]
    ),
    "a-rejection-a-string": lambda r: _first(r).update(rejected=["/x"]),
    "a-setting-used-by-something-else": lambda r: r["settings"][0].update(used_by="link"),
    "a-setting-an-extra-key": lambda r: r["settings"][0].update(extra=None),
    "a-setting-value-a-list": lambda r: r["settings"][0].update(value=["/usr/bin/ptxas"]),
    "user-a-string": lambda r: r["settings"][0].update(user="false"),
    "settings-a-dict": _set({}, "settings"),
    "link-a-list": _set(["/usr/lib"], "link"),
    "result-an-extra-key": _set(None, "pending"),
    "a-lone-surrogate": lambda r: r["settings"][0].update(value="/usr/bin/\ud800"),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_record_of_the_right_key_and_the_wrong_shape_is_a_miss(tmp_path: Path, case: str) -> None:
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False)
    run_scenario(layout, "hook", [], env=env)
    record = Path(env["HOME"]) / ".cache" / "triton-toolchain" / RECORD_FILE
    records = decode(record.read_bytes())
    assert records
    for entry in records:
        change = SHAPES[case]
        if change is None:
            entry["result"] = [entry["result"]]
        else:
            change(entry["result"])
    record.write_bytes(encode(records))
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert report["activation"]["mode"] == "knobs"
    assert report["results"]["compile:80"]["ok"] is True, report["results"]
    assert "Warning" not in report["stderr"], report["stderr"]
    assert decode(record.read_bytes())[0]["result"]["settings"]  # replaced by a good one


def test_a_record_naming_a_dotted_package_imports_nothing(tmp_path: Path) -> None:
    """A fact ``["package", "planted.sub", []]``: finding ``planted.sub`` would import
    ``planted`` (a module on the path of this very process). The record is a miss and
    nothing is imported."""
    planted = tmp_path / "on-path" / "planted"
    planted.mkdir(parents=True)
    marker = tmp_path / "imported"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False)
    env["PYTHONPATH"] += os.pathsep + str(planted.parent)
    run_scenario(layout, "hook", [], env=env)
    record = Path(env["HOME"]) / ".cache" / "triton-toolchain" / RECORD_FILE
    records = decode(record.read_bytes())
    for entry in records:
        entry["facts"].insert(0, ["package", "planted.sub", []])
    record.write_bytes(encode(records))
    report = run_scenario(layout, "hook", [], env=env)
    assert report["activation"]["mode"] == "knobs"
    assert not marker.exists()


# ------------------------------------------------------ failures remembered like answers


def test_a_ptxas_that_hangs_costs_its_timeout_once_not_in_every_process(
    tmp_path: Path,
) -> None:
    hang = tmp_path / "safe" / "ptxas"
    hang.parent.mkdir()
    hang.write_text("#!/bin/sh\nexec sleep 60\n")
    hang.chmod(0o755)
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(hang))
    first = run(cli_with_timeout(1.0, "doctor"), env).clean()
    second = run(cli_with_timeout(1.0, "doctor"), env).clean()
    for done in (first, second):
        assert done.returncode == 2
        assert f"TRITON_PTXAS_PATH='{hang}'" in done.output
        assert "did not answer within 1 s" in done.output
    assert 1.0 <= first.seconds < 2.5, first.seconds
    assert second.seconds < first.seconds - 0.8, (first.seconds, second.seconds)


def test_a_ptxas_whose_child_keeps_its_output_open_is_taken_at_its_answer(
    tmp_path: Path,
) -> None:
    """The stated timeout (10 s) is not waited for: the answer came and the tool exited."""
    tool = write_script(
        tmp_path / "safe" / "ptxas",
        f'echo "{RELEASE_LINE.format(release=REAL)}"\nsleep 30 &\nexit 0\n',
    )
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(tool))
    done = cli("doctor", "--json", env=env)
    assert _version(done.stdout) == REAL
    assert done.seconds < 5, done.seconds
    shutil.rmtree(tmp_path / "safe")


def test_an_activation_record_does_not_outlive_a_change_of_trust(tmp_path: Path) -> None:
    """The record was made with a trusted manifest; then the manifest's directory became
    writable by everyone (nothing about the manifest file itself changed): the record is
    not used, the manifest is refused, and what it names is not run."""
    plant = Plant(tmp_path / "runs.log")
    safe = tmp_path / "safe"
    tool = plant.ptxas(safe / "bin" / "ptxas", "12.8")
    manifest = safe / "manifest.json"
    manifest.write_text(
        json.dumps({"schema": 1, "components": {"ptxas": {"path": str(tool), "version": "12.8"}}})
    )
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    first = run_scenario(layout, "hook", [], env=env)
    assert first["activation"]["mode"] == "knobs"
    assert first["activation"]["toolchain"]["components"]["ptxas"]["path"] == str(tool)
    safe.chmod(0o777)
    second = run_scenario(layout, "hook", ["compile:80"], env=env)
    assert f"{manifest}: not trusted: directory {safe} is writable by everyone" in second["stderr"]
    assert plant.runs() == []


@pytest.mark.parametrize("sticky", [False, True])
def test_no_cache_directory_is_made_where_others_could_change_it(
    tmp_path: Path, sticky: bool
) -> None:
    """An ``XDG_CACHE_HOME`` everyone can write (0777) gets nothing; a sticky one (1777,
    like /tmp) gets a private directory of ours, which others cannot replace."""
    tool = fake_ptxas(tmp_path / "safe", REAL)
    xdg = shared_dir(tmp_path / "xdg", sticky=sticky)
    env = clean_env(tmp_path / "home", XDG_CACHE_HOME=str(xdg / "sub"), TRITON_PTXAS_PATH=str(tool))
    assert _doctor(env) == REAL
    made = xdg / "sub" / "triton-toolchain"
    if sticky:
        assert (made / ANSWERS_FILE).exists() and (made.stat().st_mode & 0o777) == 0o700
    else:
        assert list(xdg.iterdir()) == []
