"""The cold start (issue 23): what the import path defers or does at once cannot change
the answer.

- ``import triton`` resolves without torch's part, the launcher's and the target's
  (ptxas-blackwell), which stay pending (``_catalog.Part``): every other component is
  chosen exactly as a whole resolution
  chooses it, on a fake machine and on this one; torch's part is resolved when torch is
  imported, and a C++ compiler that changes between two processes is seen by the second
  although its ``import triton`` reused the record; the launcher's part before the
  first launcher build, which then builds with it; ptxas-blackwell when Triton is about
  to take it for a target, and never for a target that runs ptxas; cuobjdump and
  nvdisasm (part ``sass``) at the first SASS dump.
- Independent tools are asked at once (``_run.ask_each``): their runs overlap, a rejected
  first candidate is still rejected and the next one chosen; a signal ends every tool's
  process group.
- Processes that miss at once resolve one at a time (``_observe.resolving_alone``); a
  planted lock file is neither followed nor believed, and a holder that never lets go
  costs the wait's bound, not a hang.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hostile import alive, clean_env, run, signalled_while_tools_run
from test_resolve import host_of, machine
from tool_fixtures import fake_ptxas, write_script
from triton_layouts import blackwell_from
from triton_toolchain.resolver import _observe
from triton_toolchain.resolver._catalog import COMPONENT_NAMES, part_components
from triton_toolchain.resolver._resolve import resolve_all
from triton_toolchain.runtime import _record

# ------------------------------------------------- torch's, the launcher's, the target's parts

LAUNCHER_ONLY, TARGET_ONLY, SASS_ONLY = map(part_components, ("launcher", "target", "sass"))
PARTS = {p: part_components(p) for p in ("torch", "launcher", "target", "sass")}
# What `import triton` leaves pending (``_activate.AT_TRITON``: the import's part only).
AT_IMPORT_LEFT_OUT = frozenset(COMPONENT_NAMES) - part_components("import")


def _same_but(left_out: frozenset[str], arch: int | None, **host: object) -> None:
    whole = resolve_all(arch, **host)  # type: ignore[arg-type]
    partial = resolve_all(arch, leave_out=left_out, **host)  # type: ignore[arg-type]
    assert set(partial.choices) == set(whole.choices) - left_out
    for name, choice in partial.choices.items():
        assert choice == whole.choices[name], name
    assert partial.notes == whole.notes


@pytest.mark.parametrize("part", sorted(PARTS))
def test_leaving_a_part_out_changes_no_other_choice_on_a_fake_machine(
    tmp_path: Path, part: str
) -> None:
    paths = machine(tmp_path)
    _same_but(PARTS[part], 90, host=host_of(tmp_path, paths))
    _same_but(AT_IMPORT_LEFT_OUT, 90, host=host_of(tmp_path, paths))


@pytest.mark.parametrize("part", sorted(PARTS))
def test_leaving_a_part_out_changes_no_other_choice_on_this_machine(part: str) -> None:
    _same_but(PARTS[part], None)
    _same_but(PARTS[part], 90)
    _same_but(AT_IMPORT_LEFT_OUT, None)


LAUNCHER = """
import json, os, sys
spawned = []
sys.addaudithook(lambda e, a: spawned.append(os.path.basename(str(a[0])))
                 if e == "subprocess.Popen" else None)
import triton
from triton_toolchain.runtime import _activate
at_import = sorted(_activate.current().plan["toolchain"]["components"])
ran_at_import = list(spawned)
src = os.path.join(sys.argv[1], "probe.c")
with open(src, "w") as f:
    f.write("#include <Python.h>\\nPyMODINIT_FUNC PyInit_probe(void) { return NULL; }\\n")
built = triton.knobs.build.impl("probe", src, sys.argv[1], [], [], [])
print(json.dumps({
    "at_import": at_import, "ran_at_import": ran_at_import, "ran": spawned,
    "built": os.path.isfile(built),
    "after": sorted(_activate.current().plan["toolchain"]["components"]),
}))
"""


def test_the_c_compiler_and_python_h_are_resolved_at_the_first_build_not_at_import(
    tmp_path: Path,
) -> None:
    """`import triton` asks no C compiler (part ``launcher``); the first launcher
    build resolves the C compiler and ``Python.h`` and builds with them; the next process
    finds both parts in its records and asks no tool again."""
    env = clean_env(tmp_path / "home")
    env.pop("CC", None)

    def one(name: str) -> dict[str, Any]:
        work = tmp_path / name
        work.mkdir()
        done = run([sys.executable, "-c", LAUNCHER, str(work)], env).clean()
        assert done.returncode == 0, done.output
        result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        return result

    first = one("first")
    assert not LAUNCHER_ONLY & set(first["at_import"]), first
    assert "gcc" not in first["ran_at_import"] and first["ran_at_import"], first
    assert first["built"] and set(first["after"]) >= LAUNCHER_ONLY, first
    assert first["ran"][len(first["ran_at_import"]) :] == ["gcc", "gcc"], first
    second = one("second")
    assert second["ran_at_import"] == [] and second["ran"] == ["gcc"], second  # the build only
    assert second["built"] and second["after"] == first["after"], second


LATER = """
import json, os, sys
spawned = []
def audit(event, args):
    if event == "subprocess.Popen":  # the program's name and first argument
        spawned.append(" ".join([os.path.basename(str(args[0])), *map(str, args[1][1:2])]))
sys.addaudithook(audit)
if os.environ.get("TT_TORCH_FIRST"):
    import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton_toolchain.runtime import _activate; from triton_toolchain.cli import _kernel

def state():
    knobs = vars(triton.knobs.nvidia)
    return {
        "components": sorted(_activate.current().plan["toolchain"]["components"]),
        "resolver": "triton_toolchain.resolver._resolve" in sys.modules,
        "knobs": {k: knobs.get(k) for k in ("ptxas_blackwell", "cuobjdump", "nvdisasm")},
    }

report = {"import": {**state(), "ran": list(spawned)}}
src = ASTSource(_kernel.add_kernel, _kernel.SIGNATURE, constexprs=_kernel.CONSTEXPRS)
for step in sys.argv[1:]:
    before = len(spawned)
    if step == "sass":
        got = kernel.asm["sass"]
        done = "Function:add_kernel" in got
    else:
        kernel = triton.compile(src, target=GPUTarget("cuda", int(step), 32))
        done = len(kernel.asm["cubin"]) > 0
    report[step] = {**state(), "ran": spawned[before:], "done": done}
print(json.dumps(report))
"""


def _later(env: dict[str, str], *steps: object) -> dict[str, Any]:
    done = run([sys.executable, "-c", LATER, *map(str, steps)], env).clean()
    assert done.returncode == 0, done.output
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def _ran(step: dict[str, Any], *tools: str) -> bool:
    return any(r.split()[0] in tools for r in step["ran"])


def test_ptxas_blackwell_is_resolved_when_triton_takes_it_for_a_target_not_at_import(
    tmp_path: Path,
) -> None:
    """`import triton` asks no ptxas-blackwell (part ``target``); a compile for a
    target below the release's switch runs ptxas and adds nothing; the first compile
    from the switch on resolves ptxas-blackwell, hands it to Triton and assembles with
    it; the next process finds both parts in its records and resolves nothing."""
    env = clean_env(tmp_path / "home")
    below, switch = 80, blackwell_from()
    assert switch <= 100, "tests/test_cold.py runs against Triton 3.6 and newer (noxfile)"
    first = _later(env, below, switch)
    at_import, low, high = first["import"], first[str(below)], first[str(switch)]
    assert "ptxas-blackwell" not in at_import["components"], first
    assert at_import["ran"] == ["ptxas --version"], first  # the one tool the import needs
    assert low["done"] and low["components"] == at_import["components"], first
    assert not _ran(low, "ptxas-blackwell") and low["knobs"]["ptxas_blackwell"] is None, first
    assert high["done"] and high["knobs"]["ptxas_blackwell"].endswith("ptxas-blackwell"), first
    assert set(high["components"]) - set(at_import["components"]) == TARGET_ONLY, first
    assert high["ran"][0] == "ptxas-blackwell --version", first  # the shim's question
    second = _later(env, below, switch)  # both parts from their records: nothing resolved
    assert second["import"]["ran"] == [] and not second[str(switch)]["resolver"], second
    assert second[str(switch)]["done"], second
    assert second[str(switch)]["components"] == high["components"], second


def test_cuobjdump_and_nvdisasm_are_resolved_at_the_first_sass_dump_not_at_import(
    tmp_path: Path,
) -> None:
    """`import triton` and a compile ask neither SASS tool (part ``sass``); the
    first ``kernel.asm["sass"]`` resolves both, hands them to Triton, and its
    ``cuobjdump`` dumps the kernel; the next process resolves nothing."""
    env = clean_env(tmp_path / "home")
    first = _later(env, 80, "sass")
    at_import, compiled, dumped = first["import"], first["80"], first["sass"]
    assert not SASS_ONLY & set(at_import["components"]), first
    assert not _ran(at_import, "cuobjdump", "nvdisasm"), first
    assert not _ran(compiled, "cuobjdump", "nvdisasm"), first
    assert compiled["knobs"]["cuobjdump"] is None and compiled["knobs"]["nvdisasm"] is None
    assert dumped["done"] and set(dumped["components"]) - set(compiled["components"]) == SASS_ONLY
    assert dumped["ran"][:2] == ["cuobjdump --version", "nvdisasm --version"], first
    assert "cuobjdump -sass" in dumped["ran"], first
    assert all(dumped["knobs"][k].endswith(k) for k in ("cuobjdump", "nvdisasm")), first
    second = _later(env, 80, "sass")
    assert second["import"]["ran"] == [] and not second["sass"]["resolver"], second
    assert second["sass"]["done"] and second["sass"]["knobs"] == dumped["knobs"], second


@pytest.mark.torch
def test_with_torch_imported_first_the_later_parts_still_wait_for_triton(tmp_path: Path) -> None:
    """``import torch`` before Triton resolves torch's part at once (``_activate.AT_TORCH``), but
    neither ptxas-blackwell nor the SASS tools; the compile at the switch and the first
    dump resolve them in that process too, and the next process resolves nothing."""
    env = clean_env(tmp_path / "home", TT_TORCH_FIRST="1")
    env.pop("CXX", None)
    switch = blackwell_from()
    first = _later(env, switch, "sass")
    at_import, dumped = first["import"], first["sass"]
    assert "cxx" in at_import["components"], first  # torch's part, at once
    assert not (TARGET_ONLY | SASS_ONLY) & set(at_import["components"]), first
    assert not _ran(at_import, "ptxas-blackwell", "cuobjdump", "nvdisasm"), first
    assert first[str(switch)]["done"] and dumped["done"], first
    later = set(dumped["components"]) - set(at_import["components"])
    assert later == TARGET_ONLY | SASS_ONLY, first
    second = _later(env, switch, "sass")
    assert second["import"]["ran"] == [] and not second["sass"]["resolver"], second
    assert second["sass"]["components"] == dumped["components"], second


def test_a_manifests_ptxas_blackwell_and_sass_tools_are_applied_at_import(
    tmp_path: Path,
) -> None:
    """Where the manifest names them (``_catalog.AT_IMPORT_IF_IN_MANIFEST``), ptxas-blackwell and
    the SASS tools are judged at the import, with their recorded versions (no process),
    and Triton's knobs hold them from then on, as the packager wrote them."""
    env = clean_env(tmp_path / "home")
    manifest = tmp_path / "manifest.json"
    lock = [sys.executable, "-m", "triton_toolchain", "lock", "--no-driver", "-o", str(manifest)]
    assert run(lock, env).clean().returncode == 0
    env["TRITON_TOOLCHAIN_MANIFEST"] = str(manifest)
    got = _later(env)["import"]
    named = json.loads(manifest.read_text())["components"]
    assert got["ran"] == [] and set(got["components"]) >= TARGET_ONLY | SASS_ONLY, got
    knobs = {"ptxas-blackwell": "ptxas_blackwell", "cuobjdump": "cuobjdump", "nvdisasm": "nvdisasm"}
    for name, knob in knobs.items():
        assert got["knobs"][knob] == named[name]["path"], (name, got)


PROGRAM = """
import json, os, sys
import triton
after_triton = "triton_toolchain.resolver._resolve" in sys.modules
import torch
from triton_toolchain.runtime import _activate
print(json.dumps({
    "resolved_at_triton": after_triton,
    "resolved": "triton_toolchain.resolver._resolve" in sys.modules,
    "CXX": os.environ.get("CXX"),
    "cxx": _activate.current().plan["torch"]["CXX"],
}))
"""


@pytest.mark.torch
def test_a_compiler_changed_between_processes_is_seen_though_import_triton_reused_the_record(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        write_script(directory / "g++", 'exec /usr/bin/g++ "$@"\n')
    path = f"{first}:{second}:/usr/bin:/bin"
    env = clean_env(tmp_path / "home", PATH=path)
    env.pop("CXX", None)

    def one() -> dict[str, object]:
        done = run([sys.executable, "-c", PROGRAM], env).clean()
        assert done.returncode == 0, done.output
        result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
        return result

    cold = one()
    assert cold["resolved_at_triton"] and cold["CXX"] == cold["cxx"] == str(first / "g++")
    warm = one()  # nothing changed: both parts from the record
    assert not warm["resolved"] and warm["CXX"] == str(first / "g++")
    (first / "g++").unlink()
    changed = one()  # `import triton`: a hit (it looks at no C++ compiler); torch: not
    assert not changed["resolved_at_triton"], changed
    assert changed["resolved"] and changed["CXX"] == changed["cxx"] == str(second / "g++")


WITH_TORCH = """
import json, os, sys
import triton, torch
from triton_toolchain.runtime import _activate
before = _activate.current().plan
src = os.path.join(sys.argv[1], "probe.c")
with open(src, "w") as f:
    f.write("#include <Python.h>\\nPyMODINIT_FUNC PyInit_probe(void) { return NULL; }\\n")
built = triton.knobs.build.impl("probe", src, sys.argv[1], [], [], [])
after = _activate.current().plan
print(json.dumps({
    "before": sorted(before["toolchain"]["components"]), "torch_before": before["torch"],
    "after": sorted(after["toolchain"]["components"]), "torch_after": after["torch"],
    "built": os.path.isfile(built), "CXX": os.environ.get("CXX"),
}))
"""


@pytest.mark.torch
def test_torch_imported_between_the_import_and_the_first_build_keeps_its_part(
    tmp_path: Path,
) -> None:
    """``import triton``, then ``import torch`` (its part, ``Python.h`` included), then a
    launcher build: the build adds only the C compiler, and torch's part and settings
    stay as torch got them."""
    env = clean_env(tmp_path / "home")
    env.pop("CC", None)
    env.pop("CXX", None)
    done = run([sys.executable, "-c", WITH_TORCH, str(tmp_path)], env).clean()
    assert done.returncode == 0, done.output
    got = json.loads(done.stdout.splitlines()[-1])
    assert "cc" not in got["before"] and "python-headers" in got["before"], got
    assert got["torch_before"] is not None and got["built"], got
    assert set(got["after"]) - set(got["before"]) == {"cc"}, got
    assert got["torch_after"] == got["torch_before"], got
    assert got["CXX"] == got["torch_before"]["CXX"], got


MAPS_READS = """
import json, sys
reads = []
sys.addaudithook(lambda e, a: reads.append(a[0]) if e == "open" and a[0] == "/proc/self/maps"
                 else None)
import triton
from triton_toolchain.runtime import _activate
resolved = "triton_toolchain.resolver._resolve" in sys.modules
print(json.dumps({"reads": len(reads), "resolved": resolved}))
"""


def test_a_first_import_reads_the_processs_mappings_once(tmp_path: Path) -> None:
    """The activation reads ``/proc/self/maps`` and hands what it read to the resolution
    (``Host.mapped``), which rests on it: the file is read once per process, not twice."""
    env = clean_env(tmp_path / "home")
    done = run([sys.executable, "-c", MAPS_READS], env).clean()
    assert done.returncode == 0, done.output
    got = json.loads(done.stdout.splitlines()[-1])
    assert got == {"reads": 1, "resolved": True}, got


# ---------------------------------------------------------------- tools asked at once


def _slow(tool: Path, log: Path, seconds: float = 0.4) -> None:
    """Make ``tool`` log when each run starts and ends, ``seconds`` apart."""
    real = tool.with_name(f"{tool.name}.real")
    tool.rename(real)
    write_script(
        tool,
        f'echo "start $(/bin/date +%s.%N) $0 $*" >> {log}\n/bin/sleep {seconds}\n'
        f'"{real}" "$@"; status=$?\necho "end $(/bin/date +%s.%N) $0 $*" >> {log}\n'
        "exit $status\n",
    )


def _runs(log: Path) -> list[tuple[float, float, str]]:
    """(start, end, command) of each run in ``log``."""
    lines = [line.split(" ", 2) for line in log.read_text().splitlines()]
    starts = {cmd: float(t) for kind, t, cmd in lines if kind == "start"}
    return sorted((starts[cmd], float(t), cmd) for kind, t, cmd in lines if kind == "end")


def test_independent_tools_run_at_once_and_a_rejected_first_candidate_is_still_rejected(
    tmp_path: Path,
) -> None:
    paths = machine(tmp_path, ptxas="11.4")  # Triton's bundled ptxas: too old for sm_90
    newer = fake_ptxas(tmp_path / "usr/local/cuda/bin", "12.8")
    nv = paths["triton"] / "backends/nvidia/bin"
    log = tmp_path / "times.log"
    for tool in (nv / "ptxas", nv / "ptxas-blackwell", paths["bin"] / "gcc", newer):
        _slow(tool, log)
    tc = resolve_all(90, host=host_of(tmp_path, paths))
    runs = _runs(log)
    asked = {cmd.split()[0] for _, _, cmd in runs}
    assert {str(nv / "ptxas"), str(nv / "ptxas-blackwell"), str(paths["bin"] / "gcc")} <= asked
    # The bundled ptxas, ptxas-blackwell and gcc were asked together: their runs overlap.
    first_three = [r for r in runs if not r[2].startswith(str(newer))][:3]
    assert max(start for start, _, _ in first_three) < min(end for _, end, _ in first_three)
    # Asked ahead, judged in order: the bundled ptxas still rejected, the next one taken.
    assert tc["ptxas"].path == str(newer)
    assert "release 11.4 cannot assemble sm_90a" in tc["ptxas"].rejected[0].reason
    assert tc["ptxas-blackwell"].version == "12.9"


def test_a_sigterm_while_tools_are_asked_at_once_ends_every_tools_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    tools = [
        write_script(tmp_path / name, f"echo $$ >> {pids}\nsleep 300 &\necho $! >> {pids}\nwait\n")
        for name in ("ptxas", "g++", "nvdisasm")
    ]
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from triton_toolchain.resolver._discovery import _run\n"
        "qs = [_run.Question(Path(p), ('--version',)) for p in sys.argv[1:]]\n"
        "_run.ask_each(qs, None)\n"
    )
    argv = [sys.executable, "-c", code, *map(str, tools)]
    env = clean_env(tmp_path / "home")
    done = signalled_while_tools_run(argv, env, pids, 2 * len(tools), signal.SIGTERM)
    started = done.started
    # SIGKILL is sent to every group before the process ends; dying takes the kernel a
    # moment on a loaded machine.
    deadline = time.monotonic() + 2
    while (survivors := [p for p in started if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], survivors
    assert done.took < 2, done.took
    assert done.returncode == -signal.SIGTERM, (done.returncode, done.out + done.err)
    assert b"Traceback" not in done.err, done.err


# ---------------------------------------------------------------- one resolver at a time


def _holder(cache: Path) -> subprocess.Popen[str]:
    """A process holding ``cache``'s record lock until it is killed."""
    code = (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(300)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(cache / _observe.LOCK_FILE)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_holder_that_never_lets_go_costs_the_bound_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "xdg/triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    holder = _holder(cache)
    try:
        monkeypatch.setattr(_observe, "LOCK_WAIT_S", 0.3)
        start = time.monotonic()
        with _observe.resolving_alone(environ) as waited:
            took = time.monotonic() - start
        assert waited is False  # given up: resolve alone, as without a lock
        assert 0.3 <= took < 2, took
    finally:
        holder.kill()
        holder.wait()
    with _observe.resolving_alone(environ) as waited:  # let go (killed): taken at once
        assert waited is False


def test_a_process_that_waited_says_so(tmp_path: Path) -> None:
    cache = tmp_path / "xdg/triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    holder = _holder(cache)
    try:
        killer = threading.Timer(0.3, holder.kill)
        killer.start()
        with _observe.resolving_alone({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) as waited:
            assert waited is True
        killer.join()
    finally:
        holder.kill()
        holder.wait()


RACE = """
import json, os, sys
from triton_toolchain.runtime import _activate, _record
environ = _activate.user_environ()
key = _record.identity(None, "import")
plan = _activate._resolve_and_store(key, None, ("import",), environ)
print(json.dumps({"resolved": "triton_toolchain.resolver._resolve" in sys.modules,
                  "plan": plan == _record.lookup(key, environ)}))
"""


def test_a_record_stored_between_a_miss_and_the_lock_is_read_not_made_again(
    tmp_path: Path,
) -> None:
    """A process that missed, then took the lock at once because the first one had just
    stored the record and let go, reads that record: it does not resolve again."""
    env = clean_env(tmp_path / "home")
    done = run([sys.executable, "-c", "import triton"], env).clean()
    assert done.returncode == 0, done.output
    record = tmp_path / "home/.cache/triton-toolchain" / _record.RECORD_FILE
    before = record.stat()
    # As the `import triton` of a process whose own lookup came before that store.
    done = run([sys.executable, "-c", RACE], env).clean()
    assert done.returncode == 0, done.output
    assert json.loads(done.stdout.splitlines()[-1]) == {"resolved": False, "plan": True}
    after = record.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("planted", ["link", "fifo", "others-write"])
def test_a_planted_lock_file_is_neither_followed_nor_believed(tmp_path: Path, planted: str) -> None:
    cache = tmp_path / "xdg/triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    lock = cache / _observe.LOCK_FILE
    victim = tmp_path / "someone-elses-file"
    victim.write_text("theirs\n")
    if planted == "link":
        lock.symlink_to(victim)
    elif planted == "fifo":
        os.mkfifo(lock)
    else:
        lock.write_text("")
        lock.chmod(0o666)
    start = time.monotonic()
    with _observe.resolving_alone({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) as waited:
        assert waited is False
    assert time.monotonic() - start < 1
    assert victim.read_text() == "theirs\n"


JSON_LOADED = """
import sys
before = "json" in sys.modules
from triton_toolchain.runtime import _activate
_activate.resolved_plan(None, ("import",))
print(before, "json" in sys.modules, "triton_toolchain.resolver._resolve" in sys.modules)
"""


def test_a_first_process_loads_json_which_triton_loads_anyway(tmp_path: Path) -> None:
    """The record and the tools' answers are kept as JSON (``_record.load``): the shim
    loads ``json`` in a first process, and ``import triton`` loads it anyway, right after
    the shim, so it costs the process nothing. (It replaced ``marshal``, with which a
    resolution without a manifest did not load ``json``.)"""
    env = clean_env(tmp_path / "home")
    done = run([sys.executable, "-c", JSON_LOADED], env).clean()
    assert done.returncode == 0, done.output
    assert done.stdout.split() == ["False", "True", "True"], done.output
    off = {**env, "TRITON_TOOLCHAIN": "off"}
    done = run([sys.executable, "-c", "import sys, triton; print('json' in sys.modules)"], off)
    assert done.clean().stdout.split() == ["True"], done.output
