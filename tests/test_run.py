"""``resolver/_discovery/_run``: asking real processes (shell scripts), in this process:
what a tool gets (no input, only the environment given) and what comes back (its exit
status, its output and errors on one pipe), questions asked at once, answers remembered
per version of the files they depend on, and signals while a tool runs (its whole group
ended first, then the signal delivered to the handler this process had; handlers put
back). The bounds on misbehaving tools (timeouts, floods, children holding the output)
are the hostile corpus's: ``tests/test_hostile_tools.py``."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import alive
from tool_fixtures import write_script
from triton_toolchain.resolver._discovery import _answers
from triton_toolchain.resolver._discovery._run import Question, ask, ask_each, ask_question, collect


@pytest.fixture(autouse=True)
def _fresh_answers() -> Iterator[None]:
    _answers.forget_loaded()
    yield
    _answers.forget_loaded()


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


# ------------------------------------------------------------------- what a tool gets


def test_a_tool_gets_no_input_and_only_the_environment_given(tmp_path: Path) -> None:
    tool = write_script(
        tmp_path / "bin" / "tool",
        'echo "stdin: $(cat)"\necho "only: $ONLY, home: ${HOME:-unset}"\necho "to stderr" >&2\n'
        "exit 7\n",
    )
    status, output, problem = collect([str(tool)], {"ONLY": "this", "PATH": os.defpath})
    assert (status, problem) == (7, None)
    assert output == b"stdin: \nonly: this, home: unset\nto stderr\n"


def test_a_tool_that_answers_gives_its_text(tmp_path: Path) -> None:
    tool = write_script(tmp_path / "bin" / "ptxas", 'echo "args: $*"\n')
    assert ask(tool, ("--version", "-x")) == ("args: --version -x\n", None)


# ---------------------------------------------------------- answers, asked at once and kept


def _slow_tools(tmp_path: Path, count: int, seconds: float) -> list[tuple[Path, Path]]:
    """``count`` tools that each take ``seconds`` to answer, each logging its runs."""
    made = []
    for i in range(count):
        log = tmp_path / f"runs-{i}.log"
        tool = write_script(
            tmp_path / f"bin-{i}" / "ptxas", f"echo run >> {log}\nsleep {seconds}\necho tool {i}\n"
        )
        made.append((tool, log))
    return made


def test_independent_questions_cost_the_longest_not_the_sum(tmp_path: Path) -> None:
    """Four tools of a second each, asked at once: about a second in all, not four; the
    ``ask`` of each that follows is answered from what was remembered."""
    tools = _slow_tools(tmp_path, 4, 1.0)
    answers = tmp_path / "cache"
    answers.mkdir(mode=0o700)
    start = time.monotonic()
    ask_each([Question(tool) for tool, _log in tools], answers)
    took = time.monotonic() - start
    assert 1.0 <= took < 3.0, took
    for i, (tool, log) in enumerate(tools):
        assert ask(tool, answers=answers) == (f"tool {i}\n", None)
        assert _runs(log) == 1


def test_an_answer_is_remembered_per_version_of_the_files_it_depends_on(tmp_path: Path) -> None:
    """A ``ccache`` runs a compiler: its answer holds while the compiler stays the same
    file, and is asked again once the compiler changed."""
    log = tmp_path / "runs.log"
    compiler = write_script(tmp_path / "bin" / "gcc", "echo gcc 12\n")
    launcher = write_script(
        tmp_path / "bin" / "ccache", f'echo run >> {log}\nexec {compiler} "$@"\n'
    )
    answers = tmp_path / "cache"
    answers.mkdir(mode=0o700)
    question = Question(launcher, ("-v",), depends_on=(compiler,))
    assert ask_question(question, answers) == ("gcc 12\n", None)
    _answers.forget_loaded()  # as a new process would
    assert ask_question(question, answers) == ("gcc 12\n", None)
    assert _runs(log) == 1
    compiler.write_text("#!/bin/sh\necho gcc 13\n")
    _answers.forget_loaded()
    assert ask_question(question, answers) == ("gcc 13\n", None)
    assert _runs(log) == 2


# ------------------------------------------------------------------------------- signals


def _hanging_tool(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A tool that writes its pid and its child's, then waits; and where it logs runs."""
    pids, log = tmp_path / "pids", tmp_path / "runs.log"
    tool = write_script(
        tmp_path / "bin" / "ptxas",
        f"echo run >> {log}\nsleep 60 &\necho $$ $! > {pids}.tmp\nmv {pids}.tmp {pids}\nwait\n",
    )
    return tool, pids, log


def _signal_once_started(pids: Path, signo: int) -> threading.Thread:
    """Send ``signo`` to this process once the tool has written its pids."""

    def send() -> None:
        deadline = time.monotonic() + 30
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signo)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def own_sigterm() -> Iterator[list[int]]:
    """A SIGTERM handler of this process's own, which notes each call."""
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signo, frame: received.append(signo))
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_signal_ends_the_tools_group_then_reaches_the_programs_handler(
    tmp_path: Path, own_sigterm: list[int]
) -> None:
    tool, pids, log = _hanging_tool(tmp_path)
    handler = signal.getsignal(signal.SIGTERM)
    answers = tmp_path / "cache"
    answers.mkdir(mode=0o700)
    thread = _signal_once_started(pids, signal.SIGTERM)
    start = time.monotonic()
    output, problem = ask(tool, answers=answers)
    took = time.monotonic() - start
    thread.join()
    assert (output, problem) == (None, "`ptxas --version` was interrupted by SIGTERM")
    assert own_sigterm == [signal.SIGTERM]  # delivered once, after the run
    assert signal.getsignal(signal.SIGTERM) is handler  # put back
    assert took < 10, took
    time.sleep(0.1)
    assert not any(alive(int(pid)) for pid in pids.read_text().split())
    # An interrupted run is no answer: the next ask runs the tool again.
    pids.unlink()
    thread = _signal_once_started(pids, signal.SIGTERM)
    ask(tool, answers=answers)
    thread.join()
    assert _runs(log) == 2


def test_sigint_with_pythons_handler_raises_keyboardinterrupt_after_the_tool_ends(
    tmp_path: Path,
) -> None:
    tool, pids, _log = _hanging_tool(tmp_path)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        thread = _signal_once_started(pids, signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            collect([str(tool)], None)
        thread.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    time.sleep(0.1)
    assert not any(alive(int(pid)) for pid in pids.read_text().split())


def test_an_ignored_signal_stays_ignored_and_the_tool_answers(tmp_path: Path) -> None:
    tool = write_script(tmp_path / "bin" / "tool", "kill -TERM $PPID\nsleep 0.2\necho done\n")
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        assert collect([str(tool)], None) == (0, b"done\n", None)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_tool_asked_from_another_thread_leaves_the_handlers_alone(tmp_path: Path) -> None:
    """Only the main thread may set handlers: a run in another thread works without."""
    tool = write_script(tmp_path / "bin" / "tool", "echo from a thread\n")
    before = signal.getsignal(signal.SIGTERM)
    got: list[tuple[int | None, bytes, str | None]] = []
    thread = threading.Thread(target=lambda: got.append(collect([str(tool)], None)))
    thread.start()
    thread.join()
    assert got == [(0, b"from a thread\n", None)]
    assert signal.getsignal(signal.SIGTERM) is before
