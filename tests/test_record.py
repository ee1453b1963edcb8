"""The activation record: a later process reuses a resolution only when every fact it
rests on still holds, and then gets exactly what the full resolver would give.

Each test resolves on a real layout (fake roots of real files, real scripts for tools,
real ELF driver stand-ins) the way activation does (``_plan.resolve_plan``), stores the
record, changes the machine the way people do, and asks the record again.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from elf_fixtures import install_driver
from tool_fixtures import REAL_GCC, RELEASE_LINE, wrapper, write_script
from triton_layouts import SRC
from triton_toolchain.resolver._observe import store
from triton_toolchain.resolver._plan import resolve_plan, without_history
from triton_toolchain.runtime import _record

NVCC = f'[ "$1" = --version ] || exit 1\necho "{RELEASE_LINE}"\n'


def _toolkit(root: Path, release: str) -> Path:
    """A CUDA toolkit: bin/nvcc (a script answering --version), cuda.h, libcudart.so."""
    nvcc = write_script(root / "bin/nvcc", NVCC.format(release=release))
    (root / "include").mkdir(parents=True, exist_ok=True)
    major, minor = release.split(".")
    (root / "include/cuda.h").write_text(f"#define CUDA_VERSION {int(major)}0{minor}0\n")
    (root / "lib64").mkdir(exist_ok=True)
    (root / "lib64/libcudart.so").write_bytes(b"\x7fELF")
    return nvcc


def _environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": f"{tmp_path / 'bin1'}:{tmp_path / 'bin2'}",
        "HOME": str(tmp_path / "home"),
        "CUDA_HOME": str(tmp_path / "cuda"),
        "LD_LIBRARY_PATH": str(tmp_path / "driver"),
    }
    env.update(extra)
    return env


def _machine(tmp_path: Path) -> dict[str, Path]:
    """What this resolution examines outside Triton's package: the C compiler on PATH,
    the CUDA home, the driver on LD_LIBRARY_PATH."""
    return {
        "cc": wrapper(tmp_path / "bin2/gcc", REAL_GCC),
        "nvcc": _toolkit(tmp_path / "cuda", "12.8"),
        "driver": install_driver(tmp_path / "driver"),
    }


def _store(tmp_path: Path, environ: dict[str, str]) -> tuple[list[object], dict[str, object]]:
    key = _record.identity(None)
    plan, facts = resolve_plan(None, environ)
    assert store(key, facts, without_history(plan), environ)
    return key, plan


def _components(plan: dict[str, object]) -> dict[str, tuple[object, object, object]]:
    components = plan["toolchain"]["components"]  # type: ignore[index]
    return {n: (c["path"], c["version"], c["source"]) for n, c in components.items()}


def test_a_hit_is_what_resolving_again_gives(tmp_path: Path) -> None:
    _machine(tmp_path)
    environ = _environ(tmp_path)
    key, plan = _store(tmp_path, environ)
    hit = _record.lookup(key, environ)
    assert hit is not None
    again, _ = resolve_plan(None, environ)
    assert hit == without_history(again)
    assert _components(hit) == _components(plan)


def _tool_rewritten(tmp_path: Path, paths: dict[str, Path]) -> None:
    time.sleep(0.01)
    _toolkit(tmp_path / "cuda", "12.9")  # nvcc and cuda.h rewritten in place


def _better_place(tmp_path: Path, paths: dict[str, Path]) -> None:
    wrapper(tmp_path / "bin1/gcc", REAL_GCC)  # a PATH entry before the one used


def _chmod_world_writable(tmp_path: Path, paths: dict[str, Path]) -> None:
    paths["cc"].parent.chmod(0o777)


def _contents_replaced_mtime_kept(tmp_path: Path, paths: dict[str, Path]) -> None:
    """`cp -p` of another script over nvcc: same size and modification time; only the
    change time tells."""
    nvcc = paths["nvcc"]
    st = nvcc.stat()
    nvcc.write_text(nvcc.read_text().replace("12.8", "13.0"))
    os.utime(nvcc, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert nvcc.stat().st_size == st.st_size


def _driver_gone(tmp_path: Path, paths: dict[str, Path]) -> None:
    for f in paths["driver"].parent.glob("libcuda*"):
        f.unlink()


def _symlink_repointed(tmp_path: Path, paths: dict[str, Path]) -> None:
    link = paths["driver"]
    other = install_driver(tmp_path / "driver2", "590.10.01")
    link.unlink()
    link.symlink_to(other.resolve())


CHANGES: dict[str, Callable[[Path, dict[str, Path]], None]] = {
    "tool rewritten": _tool_rewritten,
    "a better place appears": _better_place,
    "directory made writable by all": _chmod_world_writable,
    "contents replaced, mtime kept": _contents_replaced_mtime_kept,
    "driver removed": _driver_gone,
    "link repointed": _symlink_repointed,
}


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_the_resolution_saw_is_a_miss(tmp_path: Path, change: str) -> None:
    paths = _machine(tmp_path)
    environ = _environ(tmp_path)
    key, plan = _store(tmp_path, environ)
    assert _record.lookup(key, environ) is not None
    CHANGES[change](tmp_path, paths)
    assert _record.lookup(key, environ) is None
    again, _ = resolve_plan(None, environ)
    assert _components(again) != _components(plan)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TRITON_PTXAS_PATH", "/opt/ptxas"),  # a setting that was not there
        ("CUDA_HOME", "/elsewhere"),  # a search place that moved
        ("PATH", "/usr/bin"),
        ("LD_LIBRARY_PATH", "::"),
    ],
)
def test_a_changed_variable_is_a_miss(tmp_path: Path, variable: str, value: str) -> None:
    _machine(tmp_path)
    environ = _environ(tmp_path)
    key, _ = _store(tmp_path, environ)
    assert _record.lookup(key, {**environ, variable: value}) is None
    assert _record.lookup(key, environ) is not None


def test_a_variable_nothing_reads_is_no_miss(tmp_path: Path) -> None:
    """The compiler is asked `gcc -v` with the whole environment, but its answer is kept
    by the file (``_answers``): a shell's ``PWD`` or ``SHLVL`` changes no resolution."""
    _machine(tmp_path)
    environ = {**_environ(tmp_path), "PWD": "/home/a", "SHLVL": "1", "OLDPWD": "/"}
    key, plan = _store(tmp_path, environ)
    moved = {**environ, "PWD": "/srv/b", "SHLVL": "2", "UNRELATED": "x"}
    del moved["OLDPWD"]
    hit = _record.lookup(key, moved)
    assert hit is not None
    again, _ = resolve_plan(None, moved)
    assert hit == without_history(again)
    assert _components(plan)["cc"][0] == str(tmp_path / "bin2/gcc")


def test_records_of_other_environments_and_interpreters_are_kept_apart(tmp_path: Path) -> None:
    """Processes of one user alternate between environments (a variable set or not) and
    interpreters: each finds its own record, and a record it cannot decode, of another
    interpreter, costs it nothing but that record."""
    _machine(tmp_path)
    plain = _environ(tmp_path)
    other = _environ(tmp_path, CUDA_HOME=str(tmp_path / "elsewhere"))
    key, plan = _store(tmp_path, plain)
    _, plan_other = _store(tmp_path, other)
    assert _components(plan) != _components(plan_other)
    record = Path(_record.cache_dir(plain) or "", _record.RECORD_FILE)
    records = _record.records(record.read_bytes())
    foreign = {"key": ["another interpreter"], "facts": "\ufffdnot facts", "result": 7}
    doc = {"format": _record.RECORD_FORMAT, "records": [foreign, *records]}
    record.write_text(json.dumps(doc))
    hit, hit_other = _record.lookup(key, plain), _record.lookup(key, other)
    assert hit is not None and hit_other is not None
    assert _components(hit) == _components(plan)
    assert _components(hit_other) == _components(plan_other)


def test_a_record_from_a_manifest_does_not_rest_on_packages_it_never_asked_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resolving from a manifest never looks for torch: installing it into a directory
    already on the import path leaves the record valid (and what resolving again gives)."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    _machine(tmp_path)
    environ = _environ(tmp_path)
    found, _ = resolve_plan(None, environ)
    components = {
        name: {"path": c["path"], **({"version": c["version"]} if c["version"] else {})}
        for name, c in found["toolchain"]["components"].items()
        if c["path"] is not None and not name.startswith("libcuda")  # the host's
    }
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"schema": 2, "components": components}))
    with_manifest = {**environ, "TRITON_TOOLCHAIN_MANIFEST": str(manifest)}
    key, plan = _store(tmp_path, with_manifest)
    sources = {n: c[2] for n, c in _components(plan).items() if c[0]}
    assert {s for n, s in sources.items() if n in components} == {f"manifest:{manifest}"}
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    importlib.invalidate_caches()
    assert importlib.util.find_spec("torch").origin == str(site / "torch" / "__init__.py")
    hit = _record.lookup(key, with_manifest)
    assert hit is not None
    assert hit == without_history(resolve_plan(None, with_manifest)[0])


def test_another_interpreter_or_import_path_is_a_miss(tmp_path: Path) -> None:
    _machine(tmp_path)
    environ = _environ(tmp_path)
    key, _ = _store(tmp_path, environ)
    other = list(key)
    other[9] = [*other[9], "/somewhere/else"]  # sys.path
    assert _record.lookup(other, environ) is None


@pytest.mark.parametrize(
    "damage",
    [
        "garbage",
        "fifo",
        "deep",
        pytest.param("foreign owner", marks=pytest.mark.root),
        "world-writable",
    ],
)
def test_a_damaged_or_foreign_record_is_only_a_miss(tmp_path: Path, damage: str) -> None:
    _machine(tmp_path)
    environ = _environ(tmp_path)
    key, _ = _store(tmp_path, environ)
    directory = Path(_record.cache_dir(environ) or "")
    record = directory / _record.RECORD_FILE
    if damage == "garbage":
        record.write_bytes(b"\xff{not json")
    elif damage == "fifo":
        record.unlink()
        os.mkfifo(record)
    elif damage == "deep":
        record.write_text("[" * 100000 + "]" * 100000)
    elif damage == "foreign owner":
        os.chown(record, 4242, 4242)
    else:
        directory.chmod(0o777)
    start = time.monotonic()
    assert _record.lookup(key, environ) is None
    assert time.monotonic() - start < 1


Facts = list[object]


def _one_more(fact: list[object]) -> Callable[[Facts], Facts]:
    """A fact appended as ``store`` would write it."""
    return lambda facts: [*facts, fact]


def _env_last(facts: Facts) -> Facts:
    """An environment variable's fact after the files' (a record checked by files first
    would look at files before finding it is of another environment)."""
    env = [f for f in facts if f[0] == "env"]  # type: ignore[index]
    return [*[f for f in facts if f not in env], *env]


MALFORMED: dict[str, Callable[[Facts], Facts]] = {
    "an-op-without-argument": _one_more(["stat"]),
    "a-fact-without-value": lambda f: [*f[:-1], f[-1][:2]],  # type: ignore[index]
    "a-fact-of-four": lambda f: [*f[:-1], [*f[-1], None]],  # type: ignore[misc]
    "a-fact-not-a-list": _one_more("stat /"),  # type: ignore[arg-type]
    "an-op-not-a-string": _one_more([1, "/", None]),
    "an-argument-not-a-string": _one_more(["stat", ["/"], None]),
    "not-a-list": lambda f: {"facts": f},  # type: ignore[return-value]
    "an-unknown-op": _one_more(["unknown-op", "/", None]),
    "a-relative-path": _one_more(["stat", "etc", [-1, 2]]),
    "a-glob-of-the-whole-tree": _one_more(["glob", "/*/*/*", []]),
    "a-dotted-package": _one_more(["package", "os.path", []]),
    "an-empty-op": _one_more(["", "/", None]),
    "an-environment-fact-last": _env_last,
    # Values no observation gives (a status, a listing, a path, a flag): refused before
    # they are compared, so no deep value reaches the comparison's encoder.
    "a-value-nested-900-deep": _one_more(["stat", "/", json.loads("[" * 900 + "]" * 900)]),
    "a-value-an-object": _one_more(["stat", "/", {"mode": 1}]),
    "a-value-a-list-of-lists": _one_more(["glob", "/usr/*", [["/usr/lib"]]]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_record_with_a_malformed_fact_is_only_a_miss(tmp_path: Path, case: str) -> None:
    """The record's key is right and its other facts hold; facts of a form no
    resolution writes make it a miss, not an error."""
    _machine(tmp_path)
    environ = _environ(tmp_path)
    key, _ = _store(tmp_path, environ)
    assert _record.lookup(key, environ) is not None
    record = Path(_record.cache_dir(environ) or "", _record.RECORD_FILE)
    rewritten = []
    for found in _record.records(record.read_bytes()):
        assert _record.well_formed(found["facts"])
        rewritten.append({**found, "facts": MALFORMED[case](found["facts"])})
    record.write_text(json.dumps({"format": _record.RECORD_FORMAT, "records": rewritten}))
    assert _record.lookup(key, environ) is None


def test_the_fast_path_imports_nothing_of_the_resolver(tmp_path: Path) -> None:
    """A process that finds a valid record imports neither the resolver nor pyelftools,
    and starts no process."""
    _machine(tmp_path)
    env = {**os.environ, **_environ(tmp_path), "PYTHONPATH": str(SRC)}
    env["PATH"] = f"{env['PATH']}:{os.environ['PATH']}"
    env.pop("TRITON_TOOLCHAIN", None)
    code = (
        "import sys, json\n"
        "spawned = []\n"
        "sys.addaudithook(lambda e, a: spawned.append(e) if e == 'subprocess.Popen' else None)\n"
        "from triton_toolchain.runtime import _activate\n"
        "plan = _activate.resolved_plan(None)\n"
        "print(json.dumps({'spawned': len(spawned), 'modules': sorted(m for m in sys.modules\n"
        "  if m.startswith(('triton_toolchain', 'elftools')))}))\n"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(2)
    ]
    assert "triton_toolchain.resolver._resolve" in runs[0]["modules"]
    assert runs[1]["spawned"] == 0
    assert not [m for m in runs[1]["modules"] if m.startswith(("elftools", "triton_toolchain._d"))]
    assert "triton_toolchain.resolver._resolve" not in runs[1]["modules"]
