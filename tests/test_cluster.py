"""N workers at once on an empty cache, with the real launcher: ``torchrun
--nproc-per-node 8 --standalone`` (torch's own, CPU backend ``gloo``) of
``bench/cluster_worker.py``, every worker importing torch and Triton with the shim
active (the installed ``.pth`` hook), their ``HOME`` and ``XDG_CACHE_HOME`` fresh and
shared, as on a fresh node or in a fresh container; then a second job on the same
cache, as the next job on that node.

Each job runs under ``strace -f`` (renames only, filtered in the kernel), so that every
write of the activation record by any process of the job (the launcher imports torch
too, and activates) is seen where the kernel sees it: the shim writes a temporary file
and renames it over the record (``_observe.write_private``).

Checked: every worker got the same choice (its plan, what it applied to Triton, what
Triton's knobs give); every write of the record is a whole file renamed over it, no
temporary file is left, and the file at the end reads back with the shim's own reader
(``_record.decode``) holding the workers' plan, which is what a fresh resolution in the
workers' environment gives; on the warm cache every worker reuses the record, none
resolves or writes; on the empty cache one worker resolves and writes the record, the
others wait for it and read it (``_observe.resolving_alone``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool
from triton_layouts import ROOT
from triton_toolchain.resolver._catalog import PARTS, part_components
from triton_toolchain.resolver._plan import without_history
from triton_toolchain.runtime._activate import AT_TORCH
from triton_toolchain.runtime._record import RECORD_FILE, decode

pytestmark = [pytest.mark.torch, pytest.mark.repo]  # runs bench/cluster.py
BENCH = ROOT / "bench"
WORKER = BENCH / "cluster_worker.py"
WORKERS = 8
# A rename as strace prints it: the source and the target, then the result.
RENAME = re.compile(r'^rename(?:at2?)?\((?:\w+, )?"([^"]*)", (?:\w+, )?"([^"]*)".*\) = (-?\d+)')


class Job:
    """One torchrun job's worker reports (by rank) and the renames each process made
    (pid -> [(source, target, result)])."""

    def __init__(self, reports: list[dict[str, Any]], renames: dict[int, list[Any]]) -> None:
        self.reports = reports
        self.renames = renames

    def record_writes(self, cache: Path) -> dict[int, list[Any]]:
        """The renames over the record file, by process."""
        target = str(cache / RECORD_FILE)
        found = {pid: [r for r in made if r[1] == target] for pid, made in self.renames.items()}
        return {pid: made for pid, made in found.items() if made}


def torchrun(home: Path, work: Path) -> Job:
    """``torchrun`` of the worker under ``strace -f``, in the user's environment but for
    the shim's settings, with ``home`` as ``HOME`` and the cache in it."""
    strace = require_tool("strace", "strace")
    launcher = Path(sys.executable).parent / "torchrun"
    assert launcher.exists(), f"no torchrun beside {sys.executable}: install torch"
    out, traces = work / "out", work / "strace"
    out.mkdir(parents=True)
    traces.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TRITON") and k not in ("XDG_CACHE_HOME", "CC", "CXX", "CPATH")
    }
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), GLOO_SOCKET_IFNAME="lo")
    trace = [strace, "-f", "-ff", "-qq", "--seccomp-bpf", "-e", "signal=none"]
    trace += ["-e", "trace=rename,renameat,renameat2", "-o", str(traces / "trace")]
    command = [str(launcher), f"--nproc-per-node={WORKERS}", "--standalone", str(WORKER)]
    done = subprocess.run(
        [*trace, *command, str(out)],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    reports = sorted(
        (json.loads(p.read_text()) for p in out.glob("rank-*.json")), key=lambda r: r["rank"]
    )
    assert done.returncode == 0 and len(reports) == WORKERS, done.stdout + done.stderr[-8000:]
    renames: dict[int, list[Any]] = {}
    for path in traces.iterdir():  # trace.PID, one a process (-ff)
        lines = path.read_text().splitlines()
        renames[int(path.suffix[1:])] = [m.groups() for m in map(RENAME.match, lines) if m]
        assert all(RENAME.match(line) for line in lines), lines
    return Job(reports, renames)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Job, Job]:
    """The shared cache directory, the job on the empty cache, the job after it."""
    root = tmp_path_factory.mktemp("node")
    home = root / "home"
    home.mkdir()
    cold = torchrun(home, root / "cold")
    warm = torchrun(home, root / "warm")
    return home / ".cache" / "triton-toolchain", cold, warm


def choice(report: dict[str, Any]) -> dict[str, Any]:
    """What a worker got: its plan as a record keeps it, what it applied, Triton's knobs."""
    return {
        "plan": without_history(report["plan"]),
        "applied": report["applied"],
        "knobs": report["knobs"],
    }


def test_every_worker_gets_the_same_choice(node: tuple[Path, Job, Job]) -> None:
    _, cold, warm = node
    first = cold.reports[0]
    assert first["mode"] == "knobs", first["mode"]
    for job in (cold, warm):
        for report in job.reports:
            assert report["mode"] == "knobs"
            assert choice(report) == choice(first), report["rank"]
    # Triton's own knobs give the paths the plan chose (the shim applied them); what
    # Triton reads only when it takes it (ptxas-blackwell, the SASS tools) is resolved
    # then, through the lookups the shim guards, not read here.
    chosen = {s["knob"]: s["value"] for s in first["plan"]["settings"] if s["knob"]}
    later = {f"nvidia.{name}" for name in first["knobs"]} - chosen.keys()
    assert later == {"nvidia.ptxas_blackwell", "nvidia.cuobjdump", "nvidia.nvdisasm"}, chosen
    for name, path in first["knobs"].items():
        assert f"nvidia.{name}" in later or path == chosen[f"nvidia.{name}"], (name, path)
    assert first["knobs"]["ptxas"], first["knobs"]


def test_the_record_is_whole_and_what_a_fresh_resolution_gives(
    node: tuple[Path, Job, Job], tmp_path: Path
) -> None:
    cache, cold, _ = node
    writes = cold.record_writes(cache)
    assert writes, cold.renames
    for pid, made in writes.items():
        for source, _, result in made:  # a whole temporary file of that process, renamed
            assert source == str(cache / f".{RECORD_FILE}.{pid}.tmp"), made
            assert result == "0", made
    assert not [p.name for p in cache.iterdir() if p.name.endswith(".tmp")]
    # One record for the workers, one for the launcher, which imported torch first:
    # their keys differ by the import path, which starts with the script's directory.
    records = decode((cache / RECORD_FILE).read_bytes())
    by_script = {
        script: [
            r for r in records if any(p[:1] == [str(script)] for p in r["key"] if type(p) is list)
        ]
        for script in (BENCH, Path(sys.executable).parent)
    }
    assert len(records) == 2 and all(len(r) == 1 for r in by_script.values()), records
    record = by_script[BENCH][0]
    first = cold.reports[0]
    assert record["result"] == without_history(first["plan"])
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, triton_toolchain\n"
            "from triton_toolchain.resolver._caches import caches_for\n"
            "from triton_toolchain.resolver._discovery._host import Host\n"
            "from triton_toolchain.resolver._plan import plan_of, without_history\n"
            "plan = plan_of(triton_toolchain.resolve())\n"
            "plan['caches'] = caches_for(Host.current())  # the import's part judges them\n"
            "print(json.dumps(without_history(plan)))",
        ],
        env={**first["environ"], "XDG_CACHE_HOME": str(tmp_path / "fresh-cache")},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    # The whole resolution, less what the workers' imports leave pending until Triton
    # takes it.
    pending = [p for p in PARTS if p not in AT_TORCH]
    whole, later = json.loads(fresh.stdout), set().union(*map(part_components, pending))
    whole["pending"] = pending
    whole["settings"] = [s for s in whole["settings"] if s["component"] not in later]
    components = whole["toolchain"]["components"]
    whole["toolchain"]["components"] = {n: c for n, c in components.items() if n not in later}
    assert whole == record["result"]


def test_the_next_job_reuses_the_record(node: tuple[Path, Job, Job]) -> None:
    cache, _, warm = node
    assert [r["rank"] for r in warm.reports if r["resolved"]] == []
    assert warm.record_writes(cache) == {}


def test_the_workers_write_the_record_once(node: tuple[Path, Job, Job]) -> None:
    cache, cold, _ = node
    workers = {r["pid"] for r in cold.reports}
    by_workers = {pid: made for pid, made in cold.record_writes(cache).items() if pid in workers}
    assert sum(map(len, by_workers.values())) == 1, by_workers
    assert sum(r["resolved"] for r in cold.reports) == 1


def test_strace_sees_every_process_of_the_job(node: tuple[Path, Job, Job]) -> None:
    """The trace covers the launcher and every worker (else a write could go unseen)."""
    _, cold, _ = node
    assert {r["pid"] for r in cold.reports} <= set(cold.renames)
