"""Hostile corpus, tools that misbehave: output is bounded, the stated timeout is the
whole time a tool gets (not per read, not twice), the whole process group is killed,
an answer given is kept even when a child holds the output open, failures are
remembered like answers, and a manifest entry's failure names the manifest and key.

The tools are real programs (shell scripts, ``yes``); the timeout is lowered for the
in-process cases (``_run.TIMEOUT_S``) and, in fresh processes, by ``cli_with_timeout``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from hostile import alive, clean_env, cli_with_timeout, run, signalled_while_tools_run
from tool_fixtures import RELEASE_LINE
from triton_toolchain.resolver._discovery import _answers, _run

T = 1.0  # the timeout the in-process cases use
SLACK = 0.6  # what a loaded 2-core CI machine may add to it


def _tool(tmp: Path, body: str, name: str = "ptxas") -> Path:
    path = tmp / "safe" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


LINE = RELEASE_LINE.format(release="13.0")
BANNER = f'echo "{LINE}"\n'


def _collect(tool: Path, timeout: float = T, limit: int | None = None):  # type: ignore[no-untyped-def]
    start = time.monotonic()
    result = _run.collect([str(tool), "--version"], None, timeout=timeout, limit=limit)
    return (*result, time.monotonic() - start)


# ----------------------------------------------------------- bounds, in this process


def test_endless_output_is_cut_at_the_bound_at_once(tmp_path: Path) -> None:
    tool = _tool(tmp_path, f"exec yes '{LINE}'\n")
    status, output, problem, seconds = _collect(tool, timeout=30)
    assert status is None and problem == f"printed more than {_run.OUTPUT_LIMIT} bytes"
    assert len(output) == _run.OUTPUT_LIMIT
    assert seconds < 2


def test_one_endless_line_without_newline_is_cut_at_the_bound(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "exec tr '\\0' x < /dev/zero\n")
    _status, output, problem, seconds = _collect(tool, timeout=30, limit=4096)
    assert problem == "printed more than 4096 bytes" and len(output) == 4096
    assert seconds < 2


def test_a_slow_drip_gets_the_timeout_in_all_not_per_read(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "while :; do printf x; sleep 0.05; done\n")
    _status, output, problem, seconds = _collect(tool)
    assert problem == f"did not answer within {T:g} s"
    assert T <= seconds < T + SLACK, seconds
    assert output.startswith(b"xxx")  # what it printed is kept


@pytest.mark.parametrize(
    ("case", "body"),
    [
        ("silent", "exec sleep 60\n"),
        ("closes-its-output-and-sleeps", "exec >&- 2>&-\nexec sleep 60\n"),
        ("ignores-sigterm", "trap '' TERM INT HUP\nwhile :; do sleep 1; done\n"),
        ("answers-then-hangs", BANNER + "exec sleep 60\n"),
    ],
)
def test_a_hanging_tool_is_killed_at_its_timeout(tmp_path: Path, case: str, body: str) -> None:
    tool = _tool(tmp_path, body)
    _status, output, problem, seconds = _collect(tool)
    assert problem == f"did not answer within {T:g} s", (case, problem, output)
    assert T <= seconds < T + SLACK, seconds


@pytest.mark.parametrize("pidfds", [True, False], ids=["pidfd", "no-pidfd"])
@pytest.mark.parametrize(
    ("case", "body", "expected"),
    [
        ("exits-later", BANNER + "exec >&- 2>&-\nsleep 0.3\nexit 3\n", (3, None)),
        (
            "never-exits",
            BANNER + "exec >&- 2>&-\nexec sleep 60\n",
            (None, f"did not answer within {T:g} s"),
        ),
    ],
)
def test_the_exit_after_the_output_closes_is_waited_for(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pidfds: bool,
    case: str,
    body: str,
    expected: tuple[int | None, str | None],
) -> None:
    """A tool that closes its output before it exits: its exit status is waited for, on
    the process's pidfd or, where the kernel gives none, in ``Popen.wait`` slices; one
    that never exits is killed at the timeout. Its output is kept either way."""
    if not pidfds:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    status, output, problem, seconds = _collect(_tool(tmp_path, body))
    assert (status, problem) == expected, case
    assert b"release 13.0" in output
    assert seconds < T + SLACK, seconds


def test_the_whole_process_group_is_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    tool = _tool(tmp_path, f"sleep 60 &\necho $! > {pids}\n(sleep 60; true) &\nexec sleep 60\n")
    _, _, problem, _ = _collect(tool)
    assert problem is not None
    time.sleep(0.1)
    assert not alive(int(pids.read_text()))


@pytest.mark.parametrize(
    ("case", "body"),
    [
        ("child-keeps-the-output", BANNER + "sleep 30 &\nexit 0\n"),
        ("grandchild-in-its-own-session", BANNER + "setsid sleep 30 &\nexit 0\n"),
        ("daemonised-child", BANNER + "(sleep 30 &) \nexit 0\n"),
    ],
)
def test_an_answer_is_kept_when_a_child_holds_the_output(
    tmp_path: Path, case: str, body: str
) -> None:
    tool = _tool(tmp_path, body)
    status, output, problem, seconds = _collect(tool, timeout=10)
    assert (status, problem) == (0, None), (case, problem)
    assert b"release 13.0" in output
    assert seconds < 1.5, seconds


@pytest.mark.parametrize(
    ("case", "body", "expected"),
    [
        (
            "exit-1",
            'echo "ptxas fatal: licence expired" >&2\nexit 1\n',
            "exited with 1: ptxas fatal",
        ),
        ("segfault", "kill -SEGV $$\n", "was killed by signal SIGSEGV"),
        ("abort", "kill -ABRT $$\n", "was killed by signal SIGABRT"),
        ("not-runnable", None, "cannot be run"),
    ],
)
def test_a_failing_tool_says_how_it_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, body: str | None, expected: str
) -> None:
    if body is None:
        tool = tmp_path / "safe" / "ptxas"
        tool.parent.mkdir()
        tool.write_bytes(b"\x7fELF garbage that no kernel runs")
        tool.chmod(0o755)
    else:
        tool = _tool(tmp_path, body)
    monkeypatch.setattr(_run, "TIMEOUT_S", T)
    output, problem = _run.ask(tool, answers=None)
    assert output is None and problem is not None
    assert problem.startswith("`ptxas --version` ") and expected in problem, problem


def test_failures_are_remembered_like_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_run, "TIMEOUT_S", T)
    tool = _tool(tmp_path, "exec sleep 60\n")
    cache = tmp_path / "cache"
    start = time.monotonic()
    first = _run.ask(tool, answers=cache)
    middle = time.monotonic()
    _answers.forget_loaded()  # as a new process would
    second = _run.ask(tool, answers=cache)
    end = time.monotonic()
    assert first == second == (None, f"`ptxas --version` did not answer within {T:g} s")
    assert middle - start >= T and end - middle < 0.2


# ------------------------------------------------------- as users run the command line


MEMORY = r"""
import resource, subprocess, sys, json
done = subprocess.run(sys.argv[1:], capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB
print(json.dumps({"rc": done.returncode, "peak_kib": peak, "err": done.stderr.decode()[-2000:],
                  "out": done.stdout.decode()[-4000:]}))
"""


def test_doctor_with_a_ptxas_that_prints_endlessly_stays_small_and_quick(tmp_path: Path) -> None:
    tool = _tool(tmp_path, f"exec yes '{LINE}'\n")
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(tool))
    done = run(
        [sys.executable, "-c", MEMORY, sys.executable, "-m", "triton_toolchain", "doctor"], env
    )
    report = json.loads(done.stdout)
    assert report["rc"] == 2, report
    # On the screen (doctor's `error:` line), not in a raw warning.
    assert f"TRITON_PTXAS_PATH='{tool}'" in report["out"] and "printed more than" in report["out"]
    assert "RuntimeWarning" not in report["err"]
    assert report["peak_kib"] < 200 * 1024, report["peak_kib"]
    assert done.seconds < 8, done.seconds


MANIFEST_TOOLS = {
    "hangs": ("exec sleep 60\n", "did not answer within 1 s"),
    "prints-garbage": ("echo 'ptxas: version ∞ (built by nobody)'\n", "printed no CUDA release"),
    "prints-binary": ("head -c 300 /dev/urandom\n", "printed no CUDA release"),
    "exits-1": ('echo "cannot open shared object" >&2\nexit 1\n', "exited with 1"),
    "lies-about-its-release": (BANNER, "the manifest records release 12.8, the tool says 13.0"),
}


@pytest.mark.parametrize("command", ["doctor", "check-manifest"])
@pytest.mark.parametrize("case", sorted(MANIFEST_TOOLS))
def test_a_manifest_ptxas_that_fails_is_named_with_the_manifest_and_key(
    tmp_path: Path, case: str, command: str
) -> None:
    body, words = MANIFEST_TOOLS[case]
    tool = _tool(tmp_path, body)
    manifest = tmp_path / "safe" / "manifest.json"
    entry = {"path": str(tool), **({"version": "12.8"} if case.startswith("lies") else {})}
    manifest.write_text(json.dumps({"schema": 1, "components": {"ptxas": entry}}))
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    args = [command] if command == "doctor" else [command, str(manifest)]
    done = run(cli_with_timeout(1.0, *args), env, timeout=30).clean()
    assert done.returncode == (2 if command == "doctor" else 1), done.output
    assert f"{manifest}: components.ptxas" in done.output
    assert words in done.output
    assert done.seconds < 6


def test_a_manifest_ptxas_that_hangs_costs_its_timeout_once(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "exec sleep 60\n")
    manifest = tmp_path / "safe" / "manifest.json"
    manifest.write_text(json.dumps({"schema": 1, "components": {"ptxas": {"path": str(tool)}}}))
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    # A 2 s timeout against 1.2 s of margin: the rest absorbs a loaded runner's noise.
    first = run(cli_with_timeout(2.0, "doctor"), env).clean()
    second = run(cli_with_timeout(2.0, "doctor"), env).clean()
    assert first.returncode == second.returncode == 2
    assert first.seconds >= 2.0 and second.seconds < first.seconds - 1.2, (
        first.seconds,
        second.seconds,
    )


def test_a_ptxas_that_answers_garbage_then_hangs_at_import_is_asked_once(tmp_path: Path) -> None:
    """At ``import triton``, a discovered tool that misbehaves costs its timeout in the
    first process only (here through CUDA_HOME, with Triton's own found first: the
    shim's doctor asks every ptxas it lists)."""
    tool = _tool(tmp_path, "exec sleep 60\n")
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(tool))
    times = []
    for _ in range(2):
        done = run(cli_with_timeout(2.0, "env"), env).clean()
        assert done.returncode == 2 and "did not answer within 2 s" in done.output
        times.append(done.seconds)
    assert times[0] >= 2.0 and times[1] < times[0] - 1.2, times


@pytest.mark.parametrize("cache", ["private", "refused"])
def test_a_hanging_ptxas_costs_one_timeout_per_process_not_two(tmp_path: Path, cache: str) -> None:
    """Whether or not a cache can be kept (here refused: XDG_CACHE_HOME is writable by
    everyone), a process asks a hanging tool once."""
    from hostile import shared_dir

    tool = _tool(tmp_path, "exec sleep 60\n")
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(tool))
    if cache == "refused":
        env["XDG_CACHE_HOME"] = str(shared_dir(tmp_path / "xdg", sticky=False))
    done = run(cli_with_timeout(2.0, "doctor"), env).clean()
    assert done.returncode == 2 and "did not answer within 2 s" in done.output
    assert 2.0 <= done.seconds < 3.5, done.seconds


# ------------------------------------------------------------------ signals


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_doctor_waits_on_a_hanging_compiler_ends_its_whole_group(
    tmp_path: Path, signo: signal.Signals
) -> None:
    """``CXX -v`` hangs, with a child of its own; doctor gets a real SIGTERM (what
    ``timeout``, ``kill`` and CI runners send) or SIGINT (Ctrl-C): the compiler and its
    child are gone at once, doctor ends with 128+signo (SIGTERM: killed by it, as with
    no handler; SIGINT: exit 130), without a traceback."""
    pids = tmp_path / "pids"
    cxx = _tool(tmp_path, f"echo $$ >> {pids}\nsleep 300 &\necho $! >> {pids}\nwait\n", "g++")
    env = clean_env(tmp_path / "home", CXX=str(cxx))
    argv = [sys.executable, "-m", "triton_toolchain", "doctor"]
    done = signalled_while_tools_run(argv, env, pids, 2, signo)
    started = done.started
    survivors = [p for p in started if alive(p)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"still running after {signo.name}: {survivors}"
    assert done.took < 2, done.took
    output = (done.out + done.err).decode()
    assert "Traceback" not in output, output
    if signo == signal.SIGTERM:
        assert done.returncode == -signal.SIGTERM, (done.returncode, output)
    else:
        assert done.returncode == 128 + signal.SIGINT, (done.returncode, output)


def test_a_programs_own_sigterm_handler_still_runs_after_the_tool_is_ended(
    tmp_path: Path,
) -> None:
    """A program that handles SIGTERM itself (to save a checkpoint) and resolves, on
    its first ``import triton``, with a tool that hangs: the tool is ended, then the
    program's handler runs; the run is a failure, not remembered."""
    hang = _tool(tmp_path, "exec sleep 300\n")
    code = (
        "import os, signal, sys, threading\n"
        "from pathlib import Path\n"
        "from triton_toolchain.resolver._discovery import _answers, _run\n"
        "seen = []\n"
        "signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))\n"
        "threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()\n"
        f"out, problem = _run.ask(Path({str(hang)!r}), answers=Path({str(tmp_path)!r}))\n"
        f"again = _answers.recall(Path({str(tmp_path)!r}), Path({str(hang)!r}), ('--version',))\n"
        "print(seen == [signal.SIGTERM], problem, again)\n"
    )
    done = run([sys.executable, "-c", code], clean_env(tmp_path / "home")).clean()
    assert done.returncode == 0, done.output
    assert done.stdout.startswith("True ") and "was interrupted by SIGTERM" in done.stdout
    assert done.stdout.rstrip().endswith("None"), done.stdout
    assert done.seconds < 5, done.seconds
