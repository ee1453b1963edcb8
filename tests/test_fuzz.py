"""Fuzzing (Hypothesis) of every parser and reader of bytes the shim reads back: manifests
(JSON and schema), the activation record, the tools' answers (and the ELF facts kept in
them), ``/etc/ld.so.cache`` in both formats, ELF headers, LLVM bitcode headers,
``/proc/self/maps``, ``/proc/driver/nvidia/version``, ``-v`` and ``--version`` outputs,
``TRITON_TOOLCHAIN_EXPORTS``.

The property, for every input: a result or the project's named error (a miss, a problem
string, ``ManifestError``), never another exception, never longer than ``HANG_S``, and
never more memory than ``_bound(size)`` (Python's allocations, measured by
``tracemalloc``; and an address-space limit of the process a little above what it uses,
so that a runaway allocation fails here instead of taking the machine's memory).

Inputs are random bytes and text, values of the format made by a strategy, and real files
mutated: a real record and answers file of this machine, linker caches ``ldconfig``
wrote, an ELF library ``gcc`` built, Triton's ``libdevice.10.bc``; mutations overwrite
bytes, insert, delete, cut, and put lying counts (0, 2**31-1, 2**32-1, the size) where
a count or offset may be.

Profiles: ``TT_FUZZ=ci`` (the default: derandomized, the same examples every run, a few
thousand per reader, well under a minute in all) and ``TT_FUZZ=long`` (random, 25 times
as many examples), e.g. ``TT_FUZZ=long python -m pytest -q tests/test_fuzz.py``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import resource
import struct
import time
import tracemalloc
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from elf_fixtures import built, install_driver, kernel_module, write_ld_cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from triton_toolchain import runtime
from triton_toolchain.resolver import _manifest
from triton_toolchain.resolver._discovery import (
    _answers,
    _bitcode,
    _driver,
    _elf,
    _headers,
    _ldcache,
)
from triton_toolchain.resolver._discovery._compiler import judge_v
from triton_toolchain.resolver._discovery._host import Host, triton_version
from triton_toolchain.resolver._discovery._search import Verdict
from triton_toolchain.resolver._discovery._tools import release_in
from triton_toolchain.resolver._exports import read_exports
from triton_toolchain.resolver._observe import encode, store
from triton_toolchain.resolver._plan import resolve_plan, without_history
from triton_toolchain.runtime import _record, drivers_in
from triton_toolchain.runtime._errors import ManifestError

PROFILE = os.environ.get("TT_FUZZ", "ci")
SCALE = {"ci": 1, "long": 25}[PROFILE]
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(PROFILE)

HANG_S = 2.0  # one input, parsed once, on a loaded machine


def examples(n: int) -> Callable[[Any], Any]:
    """``n`` examples in the CI profile, ``SCALE`` times as many in the long one."""
    return settings(max_examples=n * SCALE)


def _bound(size: int) -> int:
    """The most memory reading ``size`` bytes may take: a small multiple of the size
    (JSON's ``[[],[],...]`` is an empty list, 56 bytes and a pointer, per 3 bytes),
    plus what a parser needs whatever the input (pyelftools' structures)."""
    return 64 * size + (8 << 20)


@pytest.fixture(scope="module", autouse=True)
def _measured() -> Iterator[None]:
    """The address space limited to 2 GiB above what is mapped."""
    status = Path("/proc/self/status").read_text()
    mapped = int(
        next(line for line in status.splitlines() if line.startswith("VmSize:")).split()[1]
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped * 1024 + (2 << 30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextmanager
def bounded(size: int) -> Iterator[None]:
    """The body ran within ``HANG_S`` and ``_bound(size)`` bytes of allocations (traced
    only while it runs: Hypothesis's own would slow every example down tenfold)."""
    tracemalloc.start()
    start = time.monotonic()
    try:
        yield
    finally:
        took = time.monotonic() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert took < HANG_S, f"{took:.2f} s for {size} bytes"
    assert peak < _bound(size), f"{peak} bytes allocated for {size} bytes"


# ------------------------------------------------------------------------ strategies

LIES = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes], most: int = 8) -> bytes:
    """One of ``seeds`` with up to ``most`` edits: a byte overwritten, bytes inserted or
    deleted, a lying 4-byte count (little- or big-endian) written, the rest cut off."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, most))):
        op = draw(st.sampled_from(("byte", "insert", "delete", "count", "cut")))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "byte" and data:
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(max_size=16))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif op == "count":
            lie = draw(st.sampled_from((*LIES, len(data), len(data) + 1)))
            order = draw(st.sampled_from(("little", "big")))
            data[pos : pos + 4] = (lie & 0xFFFFFFFF).to_bytes(4, order)
        elif op == "cut":
            del data[pos:]
    return bytes(data)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=12,
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
# Text that parsers look into: random text, and lines made of the words they look for.
WORDS = (
    "Target:",
    "x86_64-linux-gnu",
    "aarch64-linux-gnu",
    "i686-linux-gnu",
    "x86_64-linux-gnux32",
    "gcc version",
    "clang version",
    "release",
    "V12.8.93",
    "12.8,",
    "Kernel Module",
    "Open Kernel Module for x86_64",
    "for",
    "NVRM version:",
    "580.159.04",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/libcuda.so",
    "r-xp",
    "00000000",
    "\n",
    "\t",
    " ",
    "\0",
    "\udcff",
    "9" * 30,
    "9" * 5000,
    ".",
)
TEXTS = st.text(max_size=300) | st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join)
TEXT_BYTES = TEXTS.map(lambda t: t.encode("utf-8", "surrogateescape")) | st.binary(max_size=300)
NESTED = st.integers(1, 100_000).map(lambda n: "[" * n) | st.integers(1, 5000).map(
    lambda n: '{"a":' * n
)


# --------------------------------------------------------------------------- manifests

HERE = str(Path(__file__).resolve())
MANIFEST_FILE = Path("/fuzz/manifest.json")
PATHS = st.sampled_from(
    ("/usr/bin/gcc", HERE, "/usr", "/nonexistent/x", "relative/x", "", "/dev/null", "/a\0b")
) | st.text(max_size=30)
ENTRY = (
    st.fixed_dictionaries(
        {},
        optional={"path": PATHS | JSON_VALUES, "version": st.text(max_size=8) | JSON_VALUES},
    )
    | JSON_VALUES
)
COMPONENT_NAMES = st.sampled_from(
    ("ptxas", "ptxas-blackwell", "cc", "cxx", "openmp", "cuda-home", "libdevice", "libcuda", "x")
) | st.text(max_size=10)
MANIFESTS = st.fixed_dictionaries(
    {},
    optional={
        "schema": st.sampled_from((1, 2, 3, "2", True, None, 2.0)) | JSON_VALUES,
        "generator": st.text(max_size=10) | JSON_VALUES,
        "strict": st.booleans() | JSON_VALUES,
        "driver_dirs": st.lists(PATHS | JSON_VALUES, max_size=3) | JSON_VALUES,
        "components": st.dictionaries(COMPONENT_NAMES, ENTRY, max_size=4) | JSON_VALUES,
        "unknown": JSON_VALUES,
    },
)
MANIFEST_BYTES = (
    st.binary(max_size=400)
    | MANIFESTS.map(lambda d: json.dumps(d).encode())
    | JSON_VALUES.map(lambda d: json.dumps(d).encode())
    | NESTED.map(str.encode)
    | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))
)


def _parse_manifest(data: bytes) -> None:
    with bounded(len(data)):
        try:
            manifest = _manifest.parse(MANIFEST_FILE, data)
        except ManifestError as exc:
            assert str(exc).startswith(f"{MANIFEST_FILE}: "), exc
        else:
            assert manifest.schema in _manifest.SCHEMAS


@examples(700)
@given(MANIFEST_BYTES)
def test_manifest_parse(data: bytes) -> None:
    _parse_manifest(data)


VALID_MANIFEST = json.dumps(
    {
        "schema": 2,
        "strict": False,
        "driver_dirs": ["/usr/lib"],
        "components": {"cc": {"path": "/usr/bin/gcc", "version": "12.2.0"}},
    }
).encode()


@examples(700)
@given(mutated([VALID_MANIFEST]))
def test_manifest_parse_mutated(data: bytes) -> None:
    _parse_manifest(data)


# ----------------------------------------------------------------- the activation record


@pytest.fixture(scope="module")
def real_record(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, dict[str, str]]:
    """The record this machine's resolution writes, and the environment it is for."""
    home = tmp_path_factory.mktemp("record-home")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TRITON")}
    environ.update(HOME=str(home))
    environ.pop("XDG_CACHE_HOME", None)
    plan, facts = resolve_plan(None, environ)
    assert store(_record.identity(None), facts, without_history(plan), environ)
    path = home / ".cache" / "triton-toolchain" / _record.RECORD_FILE
    return path.read_bytes(), environ


def _read_record(data: bytes) -> None:
    """The reader's pieces on ``data``, each a result or a miss."""
    with bounded(len(data)):
        found = _record.records(data)
        assert isinstance(found, list)
        for record in found[:2]:
            assert _record.well_formed(record["facts"]) in (True, False)
            assert _record.plan_fits(record["result"]) in (True, False)
        assert all(_record.plan_fits(r["result"]) for r in _record.decode(data))


def _record_file(records: object) -> bytes:
    return json.dumps({"format": _record.RECORD_FORMAT, "records": records}).encode()


RECORDS = st.lists(
    st.fixed_dictionaries({"key": JSON_VALUES, "facts": JSON_VALUES, "result": JSON_VALUES}),
    max_size=4,
)


@examples(400)
@given(
    st.binary(max_size=200).map(lambda b: _record_file([])[:-3] + b)
    | JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | JSON_VALUES.map(_record_file)
    | RECORDS.map(_record_file)
    | NESTED.map(lambda n: _record_file([]).replace(b"[]", n.encode()))
)
def test_record_random(data: bytes) -> None:
    _read_record(data)


@examples(300)
@given(data=st.data())
def test_record_mutated(real_record: tuple[bytes, dict[str, str]], data: st.DataObject) -> None:
    result = json.dumps(_record.records(real_record[0])[0]["result"]).encode()
    whole = data.draw(mutated([real_record[0]]))
    _read_record(whole)
    plan = data.draw(mutated([result]))
    with bounded(len(plan)):
        assert _record.plan_fits(_record.load(plan)) in (True, False)


ARGS = ("/", "/usr/*", "/*/*/*", "os.path", "triton", "/proc/self/maps", "HOME", "relative")


@examples(150)
@given(data=st.data())
def test_record_lookup_of_a_mutated_file(
    real_record: tuple[bytes, dict[str, str]], data: st.DataObject, tmp_path_factory: Any
) -> None:
    """The whole reader, from the file: a plan of the right shape (whose every fact
    held again) or a miss; facts mutated included (observed for real)."""
    raw, environ = real_record
    records = _record.decode(raw)
    facts = records[0]["facts"]
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(facts) - 1))
        op = data.draw(st.sampled_from((*_record.OPS, "env")) | st.text(max_size=8))
        arg = data.draw(st.sampled_from(ARGS) | st.text(max_size=30))
        facts[i] = [op, arg, data.draw(VALUES)]
        with contextlib.suppress(TypeError, ValueError):  # a value JSON cannot store
            raw = encode(records)
    home = Path(environ["HOME"])
    path = home / ".cache" / "triton-toolchain" / _record.RECORD_FILE
    mutated_bytes = data.draw(mutated([raw], most=3))
    path.write_bytes(mutated_bytes)
    with bounded(len(mutated_bytes)):
        plan = _record.lookup(_record.identity(None), environ)
    assert plan is None or _record.plan_fits(plan)


@examples(500)
@given(
    JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=100)
    | NESTED.map(str.encode)
    | st.integers(1, 200_000).map(lambda n: b"9" * n)
    | mutated([json.dumps([[1, "a", None, {"k": [True, 2**70]}]] * 3).encode()])
    | st.sampled_from((b"NaN", b"[Infinity]", b"-Infinity", b'{"a": 1, "a": 1}', b"1e999"))
)
def test_load_is_a_value_or_a_miss_within_the_bound(data: bytes) -> None:
    """``_record.load`` gives a value of what the shim stores (no float, ``NaN`` or
    infinity, every key once) or ``None``, within the bound, never an exception."""
    with bounded(len(data)):
        decoded = _record.load(data)
    assert decoded is None or _floatless(decoded)
    assert decoded is None or json.dumps(decoded, allow_nan=False)


@examples(300)
@given(JSON_VALUES)
def test_load_reads_back_every_value_the_writer_writes(value: Any) -> None:
    """Never a miss for what the writer writes (else every process would resolve): every
    JSON value but floats, which no record holds, read back equal."""
    decoded = _record.load(json.dumps(value).encode())
    assert decoded == (value if _floatless(value) else None)


def _floatless(value: Any) -> bool:
    if isinstance(value, float):
        return False
    if isinstance(value, (list, tuple)):
        return all(_floatless(v) for v in value)
    if isinstance(value, dict):
        return all(_floatless(k) and _floatless(v) for k, v in value.items())
    return True


# ------------------------------------------------------------ the plan's one schema


# Values of each scalar type's JSON neighbours that are not of it (a bool is no int, a
# lone surrogate no file name).
WRONG = {
    str: (None, True, 0, [], {}, "\ud800", "a\udbff"),
    int: (None, True, False, "1", [], {}, 1.0),
    bool: (None, 0, 1, "true", [], {}),
    type(None): (False, 0, "", [], {}),
}
NOT_CONTAINERS = st.sampled_from((None, "x", 0, True))


def good(shape: Any) -> st.SearchStrategy[Any]:
    """Values of ``shape``, built from the schema's annotations."""
    if shape in (str, int, bool, type(None)):
        return {str: st.text(max_size=8), int: st.integers(), bool: st.booleans()}.get(
            shape, st.none()
        )
    if runtime.is_shape(shape):
        hints = typing.get_type_hints(shape)
        return st.fixed_dictionaries({k: good(t) for k, t in hints.items()})
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(good(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), good(args[1]), max_size=3)
    return st.one_of([good(a) for a in args])  # a union


def bad(shape: Any) -> st.SearchStrategy[Any]:
    """Values not of ``shape``: the wrong type at one place, at any depth."""
    if shape in WRONG:
        return st.sampled_from(WRONG[shape])
    if runtime.is_shape(shape):
        hints = typing.get_type_hints(shape)
        one_wrong = st.sampled_from(sorted(hints)).flatmap(
            lambda k: st.tuples(good(shape), bad(hints[k])).map(lambda p: {**p[0], k: p[1]})
        )
        missing = good(shape).flatmap(
            lambda d: st.sampled_from(sorted(d)).map(
                lambda k: {n: v for n, v in d.items() if n != k}
            )
        )
        extra = good(shape).map(lambda d: {**d, "unknown": None})
        return NOT_CONTAINERS | st.just([]) | one_wrong | missing | extra
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is typing.Literal:
        return st.sampled_from(("", "link", None, 0, True, [])).filter(lambda v: v not in args)
    if origin is list:
        item = good(args[0])
        with_a_wrong_one = st.tuples(
            st.lists(item, max_size=2), bad(args[0]), st.lists(item, max_size=2)
        )
        return NOT_CONTAINERS | st.just({}) | with_a_wrong_one.map(lambda t: [*t[0], t[1], *t[2]])
    if origin is dict:
        entries = st.dictionaries(st.text(max_size=8), good(args[1]), max_size=2)
        with_a_wrong_one = st.tuples(entries, st.text(max_size=8), bad(args[1]))
        return NOT_CONTAINERS | st.just([]) | with_a_wrong_one.map(lambda t: {**t[0], t[1]: t[2]})
    (other,) = [a for a in args if a is not type(None)]  # ``X | None``: neither
    return bad(other).filter(lambda v: v is not None)


@examples(300)
@given(good(runtime.Plan))
def test_the_schema_accepts_every_plan(plan: Any) -> None:
    """Every value of the schema's types passes, also as the record reads it back."""
    assert runtime.valid(plan, runtime.Plan)
    assert runtime.valid(_record.load(json.dumps(plan).encode()), runtime.Plan)


@examples(500)
@given(bad(runtime.Plan))
def test_the_schema_refuses_every_value_wrong_in_one_place(value: Any) -> None:
    assert runtime.valid(value, runtime.Plan) is False


def _nested(depth: int) -> Any:
    return json.loads("[" * depth + "]" * depth)


@examples(300)
@given(JSON_VALUES | good(runtime.Plan).map(lambda p: [p]) | st.integers(1, 900).map(_nested))
def test_the_schema_never_raises(value: Any) -> None:
    assert runtime.valid(value, runtime.Plan) in (True, False)


# --------------------------------------------------------------------- the tools' answers


@pytest.fixture(scope="module")
def real_answers(real_record: tuple[bytes, dict[str, str]]) -> bytes:
    path = Path(real_record[1]["HOME"]) / ".cache" / "triton-toolchain" / _answers.ANSWERS_FILE
    return path.read_bytes()


def _parse_answers(data: bytes) -> None:
    with bounded(len(data)):
        loaded = _answers.parse(data)
    assert len(loaded) <= _answers.MAX_ENTRIES
    for value in loaded.values():
        assert type(value[0]) is bool and type(value[1]) is str
        with bounded(len(value[1])):
            info = _elf.remembered_info(value[1])
        assert info is None or info.elf_class in (32, 64)


def _answers_file(answers: str) -> bytes:
    """An answers file of this version whose answers are the JSON text ``answers``."""
    return f'{{"format": {json.dumps(_answers.ANSWERS_FORMAT)}, "answers": {answers}}}'.encode()


ANSWER_ENTRIES = st.dictionaries(
    st.text(max_size=20), st.tuples(st.booleans(), st.text(max_size=20)).map(list), max_size=8
)


@examples(500)
@given(
    st.binary(max_size=300)
    | st.binary(max_size=300).map(lambda b: _answers_file("")[:-1] + b)
    | JSON_VALUES.map(lambda v: _answers_file(json.dumps(v)))
    | st.dictionaries(st.text(max_size=20), JSON_VALUES, max_size=5).map(
        lambda v: _answers_file(json.dumps(v))
    )
    | NESTED.map(_answers_file)
    | st.integers(1, 200_000).map(lambda n: _answers_file("9" * n))
)
def test_answers_random(data: bytes) -> None:
    _parse_answers(data)


@examples(300)
@given(ANSWER_ENTRIES)
def test_answers_read_back_as_written(entries: dict[str, list[Any]]) -> None:
    """Whatever the shim writes it reads back whole: never a miss for its own file."""
    assert _answers.parse(_answers.encode(entries)) == entries


@examples(500)
@given(data=st.data())
def test_answers_mutated(real_answers: bytes, data: st.DataObject) -> None:
    _parse_answers(data.draw(mutated([real_answers])))


NAMES = st.text(max_size=10)
ELF_INFOS = st.builds(
    _elf.ElfInfo,
    st.sampled_from((32, 64)),
    NAMES,
    NAMES,
    st.none() | NAMES,
    st.lists(NAMES, max_size=3).map(tuple),
)
ELF_TEXT = st.lists(
    st.sampled_from(("32", "64", "63", "-", "=", "=libcuda.so.1", "EM_X86_64", "")) | NAMES,
    max_size=7,
).map("\0".join)


@examples(500)
@given(ELF_TEXT | ELF_INFOS.map(lambda i: _elf.remembered_text(i) or "") | st.text(max_size=100))
def test_remembered_elf_facts(text: str) -> None:
    with bounded(len(text)):
        info = _elf.remembered_info(text)
    if info is not None:
        assert info.describe and all(isinstance(n, str) for n in info.needed)
        assert _elf.remembered_text(info) == text  # one text for one set of facts


@examples(300)
@given(ELF_INFOS)
def test_elf_facts_read_back_as_remembered(info: _elf.ElfInfo) -> None:
    """Facts with a NUL in a name are not remembered; all others come back equal."""
    text = _elf.remembered_text(info)
    names = [info.machine, info.osabi, info.soname or "", *info.needed]
    assert (text is None) == any("\0" in n for n in names)
    assert text is None or _elf.remembered_info(text) == info


# ----------------------------------------------------------------------- ld.so.cache


@pytest.fixture(scope="module")
def caches(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """Linker caches ``ldconfig`` wrote, in each format, over a 64- and a 32-bit driver."""
    root = tmp_path_factory.mktemp("ldcache")
    dirs = [
        install_driver(root / "usr/lib/x86_64-linux-gnu").parent,
        install_driver(root / "usr/lib/i386-linux-gnu", variant="i386").parent,
    ]
    return [
        write_ld_cache(root / f"{fmt}.cache", dirs, fmt).read_bytes()
        for fmt in ("new", "old", "compat")
    ]


def _parse_cache(data: bytes) -> None:
    with bounded(len(data)):
        parsed = _ldcache.parse_ld_cache(data)
    assert isinstance(parsed, (_ldcache.LdCache, str))
    if isinstance(parsed, _ldcache.LdCache):
        for entry in parsed.entries:
            assert isinstance(entry.name, str) and isinstance(entry.arch, str)
        # Only the entries of one name, decoded alone: those of the whole list.
        for name in {e.name for e in parsed.entries} | {"libcuda.so.1"}:
            assert parsed.named(name) == tuple(e for e in parsed.entries if e.name == name)


@examples(1000)
@given(data=st.data())
def test_ld_cache_mutated(caches: list[bytes], data: st.DataObject) -> None:
    _parse_cache(data.draw(mutated(caches)))


@examples(500)
@given(
    st.sampled_from((_ldcache.NEW_MAGIC, _ldcache.OLD_MAGIC + b"\0", b"")).flatmap(
        lambda magic: st.binary(max_size=200).map(lambda b: magic + b)
    )
    | st.tuples(st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFFFFFFFF), st.integers(0, 255)).map(
        lambda t: _ldcache.NEW_MAGIC + struct.pack("<IIB3xI12x", t[0], t[1], t[2], 0)
    )
)
def test_ld_cache_random(data: bytes) -> None:
    _parse_cache(data)


# ------------------------------------------------------------------------- ELF headers


@pytest.fixture(scope="module")
def elves() -> list[bytes]:
    """Libraries gcc built, 64- and 32-bit (with SONAME and DT_NEEDED)."""
    return [built("x86_64").read_bytes(), built("i386").read_bytes()]


@examples(500)
@given(data=st.data())
def test_elf_headers_mutated(
    elves: list[bytes], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    headers = st.binary(max_size=100).map(lambda b: _elf.ELF_MAGIC + b)
    blob = data.draw(mutated(elves, most=12) | headers)
    path = tmp_path_factory.getbasetemp() / "fuzzed.so"
    path.write_bytes(blob)
    with bounded(len(blob)):
        info = _elf.read_elf(path)
    assert isinstance(info, (_elf.ElfInfo, str))
    if isinstance(info, _elf.ElfInfo):
        assert info.elf_class in (32, 64) and isinstance(info.machine, str)
    # The plain reader and pyelftools agree where both answer (pyelftools also reads
    # section names and the other sections, which the plain reader does not).
    with path.open("rb") as stream, bounded(len(blob)):
        plain, full = _elf._plain(stream), _elf._parse(stream)
    assert plain is None or not isinstance(full, _elf.ElfInfo) or plain == full


def _section_headers(blob: bytes) -> tuple[int, int]:
    """Where a 64-bit little-endian library's section headers are: (offset, bytes)."""
    return int.from_bytes(blob[0x28:0x30], "little"), 64 * int.from_bytes(blob[0x3C:0x3E], "little")


@examples(500)
@given(data=st.data())
def test_elf_fields_that_lie(
    elves: list[bytes], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The header's and the section headers' fields (offsets, sizes, counts, links)
    overwritten with lies of 2, 4 or 8 bytes, up to the largest a field holds: no
    exception, bounded memory, and the plain reader and pyelftools agree where both
    answer."""
    blob = bytearray(elves[0])
    start, size = _section_headers(bytes(blob))
    for _ in range(data.draw(st.integers(1, 4))):
        width = data.draw(st.sampled_from((2, 4, 8)))
        where = data.draw(st.integers(16, 63) | st.integers(start, start + size - 1))
        lie = data.draw(
            st.sampled_from((0, 1, len(blob), len(blob) + 1, 2 ** (8 * width) - 1))
            | st.integers(0, 2 ** (8 * width) - 1)
        )
        blob[where : where + width] = lie.to_bytes(width, "little")
    path = tmp_path_factory.getbasetemp() / "lying.so"
    path.write_bytes(bytes(blob))
    with bounded(len(blob)):
        info = _elf.read_elf(path)
    assert isinstance(info, (_elf.ElfInfo, str))
    with path.open("rb") as stream, bounded(len(blob)):
        plain, full = _elf._plain(stream), _elf._parse(stream)
    assert plain is None or not isinstance(full, _elf.ElfInfo) or plain == full


# ---------------------------------------------------------------------- LLVM bitcode


@pytest.fixture(scope="module")
def bitcode() -> list[bytes]:
    """Triton's ``libdevice.10.bc`` (its start and its end, where blocks begin and end)
    and a bitcode wrapper around its start."""
    spec = importlib.util.find_spec("triton")
    assert spec is not None and spec.origin, "Triton is installed by the nox session"
    path = Path(spec.origin).parent / "backends/nvidia/lib/libdevice.10.bc"
    data = path.read_bytes()
    assert _bitcode.bitcode_problem(data) is None
    head = data[:2048]
    wrapper = _bitcode.WRAPPER_MAGIC + struct.pack("<IIII", 0, 20, len(head), 7) + head
    return [head, data[-2048:], wrapper, data[:64]]


@examples(1000)
@given(data=st.data())
def test_bitcode_headers(bitcode: list[bytes], data: st.DataObject) -> None:
    blob = data.draw(
        mutated(bitcode)
        | st.binary(max_size=200).map(lambda b: _bitcode.BITCODE_MAGIC + b)
        | st.binary(max_size=200).map(lambda b: _bitcode.WRAPPER_MAGIC + b)
    )
    with bounded(len(blob)):
        problem = _bitcode.bitcode_problem(blob)
    assert problem is None or isinstance(problem, str)


# ---------------------------------------------------------------- /proc and tools' output

MAPS_LINE = st.tuples(
    st.sampled_from(("7f00-7f10", "0-1", "", "x")),
    st.sampled_from(("r-xp", "rw-p", "")),
    st.sampled_from(("00000000", "")),
    st.sampled_from(("08:01", "")),
    st.sampled_from(("1234", "0", "")),
    st.sampled_from(("/usr/lib/libcuda.so.1", "/x/libcuda.so", "[heap]", "", "/a b/libcuda.so.1"))
    | st.text(max_size=30),
).map(lambda t: " ".join(t).encode("utf-8", "surrogateescape"))


@examples(800)
@given(
    st.lists(MAPS_LINE, max_size=20).map(b"\n".join)
    | TEXT_BYTES
    | st.binary(max_size=300).map(lambda b: b + b"/libcuda.so")
)
def test_proc_self_maps(text: bytes) -> None:
    with bounded(len(text)):
        found = drivers_in(text)
    assert all("libcuda.so" in p for p in found) and len(found) == len(set(found))


@examples(500)
@given(data=st.data())
def test_proc_driver_nvidia_version(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.getbasetemp() / "nvidia-root"
    kernel_module(root)
    path = root / "proc/driver/nvidia/version"
    real = path.read_bytes()
    blob = data.draw(mutated([real]) | TEXT_BYTES | st.binary(max_size=300))
    path.write_bytes(blob)
    with bounded(len(blob)):
        version = _driver.kernel_module_version(Host(root=root))
    assert version is None or all(p.isdigit() for p in version.split("."))


@examples(1000)
@given(TEXTS, st.lists(st.sampled_from(("-m32", "-m64", "-mx32", "-O2", "")), max_size=3))
def test_compiler_v_output(text: str, options: list[str]) -> None:
    with bounded(len(text)):
        verdict = judge_v(text, options, "x86_64")
    assert isinstance(verdict, Verdict)
    assert verdict.problem is None or isinstance(verdict.problem, str)


@examples(1000)
@given(TEXTS)
def test_tool_version_output(text: str) -> None:
    with bounded(len(text)):
        release, problem = release_in(text)
    assert (release is None) != (problem is None)


@examples(500)
@given(
    st.text(max_size=300)
    | JSON_VALUES.map(json.dumps)
    | st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=4).map(json.dumps)
    | NESTED
)
def test_exports_variable(value: str) -> None:
    with bounded(len(value)):
        exports = read_exports(value)
    assert all(isinstance(v, str) and isinstance(s, str) for v, s in exports.values())


HEADER_TEXT = st.lists(
    st.sampled_from(
        (
            "#define CUDA_VERSION ",
            "  #  define   CUDA_VERSION\t",
            "__version__ = '",
            '__version__ = "',
            "13000",
            "3.9.0",
            "1" * 5000,
            "\n",
            ".",
            "'",
        )
    )
    | st.text(max_size=10),
    max_size=12,
).map("".join)


@examples(800)
@given(data=st.data())
def test_version_lines_of_cuda_h_and_triton(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``cuda.h``'s ``CUDA_VERSION`` and Triton's ``__version__``, read from files."""
    directory = tmp_path_factory.getbasetemp() / "versions"
    directory.mkdir(exist_ok=True)
    blob = data.draw(HEADER_TEXT.map(lambda t: t.encode("utf-8", "surrogateescape")) | TEXT_BYTES)
    (directory / "cuda.h").write_bytes(blob)
    (directory / "__init__.py").write_bytes(blob)
    with bounded(len(blob)):
        cuda = _headers.cuda_h_version(directory / "cuda.h")
        triton = triton_version(directory)
    assert cuda is None or cuda.count(".") == 1
    assert triton is None or all(type(n) is int for n in triton)
