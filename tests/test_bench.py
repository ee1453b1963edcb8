"""The benchmarks under ``bench/`` run (one round each), and what they check besides
speed holds: from a manifest and from the warm record, activation starts no process,
imports no pyelftools and loads none of the resolver's modules; resolving from a
manifest starts no process; the ``.pth`` hook imports nothing at start-up; the record
is used. Times are the benchmarks' business (their exit status 1 means a time target
missed on this machine), not asserted here.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
from triton_layouts import ROOT

# Runs the benchmarks under bench/.
pytestmark = pytest.mark.repo

BENCH = ROOT / "bench"
# Modules only a resolution on a miss, doctor or a launcher build may load.
SLOW_PATH = (
    "triton_toolchain.resolver._resolve",
    "triton_toolchain.resolver._model",
    "triton_toolchain.resolver._catalog",
)


def bench(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done


def lines_starting(output: str, word: str) -> list[str]:
    return [line for line in output.splitlines() if line.split()[:1] == [word]]


def test_activation_fast_path_starts_nothing_and_loads_no_resolver() -> None:
    out = bench("activation.py", "--runs", "1").stdout
    for case in ("manifest", "discovery"):
        found = lines_starting(out, case)
        assert found, out  # one per imported library: triton, and torch where installed
        for line in found:
            assert "processes 0" in line and "pyelftools False" in line, line
    hits = [line for line in out.splitlines() if "shim modules on a hit:" in line]
    assert hits, out
    for line in hits:
        assert "triton_toolchain.runtime._activate" in line, line
        assert not any(f"{module}," in f"{line}," for module in SLOW_PATH), line


def test_resolve_from_a_manifest_starts_no_process() -> None:
    out = bench("resolve.py", "--runs", "1").stdout
    assert "manifest resolution: processes started 0, pyelftools imported: False" in out, out
    assert len(lines_starting(out, "triton-toolchain,")) == 2, out
    # The binding target's line: after `import triton`, from the manifest the bench wrote.
    after = [line for line in out.splitlines() if "after `import triton`" in line]
    assert len(after) == 1 and "manifest None" not in after[0], out


LOADED_BY_TRITON = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "import triton\n"
    "loaded = set(sys.modules) - before\n"
    "sys.stdout.write(' '.join(sorted(m for m in loaded if m.split('.')[0] in "
    "sys.stdlib_module_names)))\n"
)


def test_what_the_benchmarks_load_first_is_what_triton_loads() -> None:
    """The benchmarks load the standard library modules `import triton` loads before they
    time the shim (``activation.stdlib_loaded_by``): exactly those, none hidden by the
    benchmark's own imports (``json`` once was, and the shim was charged for it)."""
    spec = importlib.util.spec_from_file_location("bench_activation", BENCH / "activation.py")
    assert spec is not None and spec.loader is not None
    activation = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(activation)
    env = {**os.environ, "TRITON_TOOLCHAIN": "off"}
    listed = activation.stdlib_loaded_by("triton", env)
    done = subprocess.run(
        [sys.executable, "-c", LOADED_BY_TRITON],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Equal whatever the release loads (3.9 loads json: the list had left it out).
    assert listed == done.stdout.split()


def test_before_after_times_each_version_in_each_case() -> None:
    """Two versions (here the same interpreter twice): each found with this layout's
    hook, and a time in the shim for each of its warm, (``--cold``) cold and
    (``--resolve``) ``resolve()`` cases."""
    versions = (f"a={sys.executable}", f"b={sys.executable}")
    out = bench("before_after.py", "--runs", "1", "--cold", "--resolve", *versions).stdout
    for name in ("a", "b"):
        assert f"  {name}: {sys.executable} (its hook: triton_toolchain.runtime._activate)" in out
        rows = {row[1]: row for row in map(str.split, lines_starting(out, name))}
        cases = ["discovery", "manifest", "manifest-cold", "miss", "resolve"]
        assert sorted(rows) == cases, out
        for row in rows.values():
            assert float(row[2]) > 0 and row[3:5] == ["ms", "here,"], out


def test_hardening_bench_uses_the_record() -> None:
    # The script asserts that every round hit the activation record.
    out = bench("hardening.py", "--runs", "1").stdout
    assert lines_starting(out, "activation"), out


def test_startup_hook_imports_nothing() -> None:
    out = bench("startup.py", "--runs", "3").stdout
    assert "importtime lines mentioning triton: none (the hook imports nothing)" in out, out
    assert "_TritonToolchainStub" in out, out


def test_fast_path_breakdown_accounts_for_the_hit() -> None:
    """Each phase is part of the whole, and the record re-observed fact by fact still
    holds (the script asserts each fact)."""
    out = bench("fast_path.py", "--runs", "1").stdout
    for case in ("manifest", "discovery"):
        (row,) = [line for line in lines_starting(out, case) if "record:" not in line]
        phases = dict(
            zip(
                ("import", "maps", "record", "verify", "driver", "apply", "total"),
                map(float, row.split()[1:]),
                strict=True,
            )
        )
        parts = sum(v for k, v in phases.items() if k != "total")
        assert 0 < parts <= phases["total"] * 1.01, row
        assert phases["verify"] > 0 and phases["import"] > 0, row
    facts = [line.split() for line in out.splitlines() if line.strip().endswith(" ms")]
    assert any(f[0] == "stat" for f in facts) and any(f[0] == "env" for f in facts), out


def test_cold_path_breakdown_accounts_for_the_first_process() -> None:
    """Each phase is part of the whole; from a manifest no tool is asked and its
    components are judged, without one the tools are asked at once."""
    out = bench("cold_path.py", "--runs", "1").stdout
    header = next(line.split() for line in out.splitlines() if line.split()[:1] == ["shim"])
    rows = {}
    for case in ("manifest-cold", "miss"):
        (row,) = lines_starting(out, case)
        rows[case] = dict(zip(header, map(float, row.split()[1:]), strict=True))
        phases = rows[case]
        parts = sum(v for k, v in phases.items() if k != "total")
        assert 0 < parts <= phases["total"] * 1.01, row
        assert phases["resolver"] > 0 and phases["tools"] > 0 and phases["store"] > 0, row
    assert rows["manifest-cold"]["ask"] == 0 and rows["miss"]["ask"] > 0, out
    assert rows["manifest-cold"]["manifest"] > 0, out


@pytest.mark.torch
def test_cluster_bench_times_both_cases() -> None:
    """One round of torchrun jobs (two workers each, for the test's time), off and on:
    each case's time until the workers were ready, and how many resolved."""
    out = bench("cluster.py", "--runs", "1", "--workers", "2").stdout
    ready = [line.split() for line in out.splitlines() if " ready: median " in line]
    assert [words[0] for words in ready] == ["off", "on"], out
    assert all(float(words[3]) > 0 for words in ready), out
    assert "workers that resolved, per on run:" in out and "on/off:" in out, out
