"""Asking a trusted tool a question (``ptxas --version``, ``cc -v``), with bounds.

Guarantees:

- Nothing is run from a place someone other than root and this user can change
  (``_trust``); the file must be a regular, executable file.
- The tool gets no input, at most ``TIMEOUT_S`` seconds of wall time in all, and at
  most ``OUTPUT_LIMIT`` bytes of output (standard output and error together); then its
  whole process group is killed. A tool that answers and exits but leaves a child
  holding its output is taken at its answer (the child is killed).
- Every outcome, answer or failure, is remembered for the file's version
  (``_answers``): a tool that hangs costs its timeout once, not in every process.
- SIGTERM or SIGINT while a tool runs (in the main thread, where Python handles
  signals) ends the tool's whole process group first; then the signal is delivered
  again to this process with the handler it had before, which does what it would have
  done: the default SIGTERM ends the process (status 128+15), the default SIGINT raises
  ``KeyboardInterrupt`` (the command line exits 130 without a traceback), a program's
  own handler runs (and the tool's run is then a failure, not remembered). The tool
  is ended within a fifth of a second of the signal.
"""

import contextlib
import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ...runtime._errors import printable
from . import _answers, _fs

TIMEOUT_S = 10.0
OUTPUT_LIMIT = 1 << 16
DRAIN_S = 0.2  # how long output is still read after the tool itself exited


ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


INTERRUPTED = "was interrupted by"


class _Signals:
    """Within: SIGTERM and SIGINT are noted, not acted on (where this thread may handle
    signals and the signal is not ignored), so that the run can end its tool first;
    on leaving: the handlers as they were, and a noted signal delivered again to them
    (see the module docstring)."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.previous: dict[int, Any] = {}

    def _note(self, signo: int, frame: object) -> None:
        if self.received is None:
            self.received = signo

    def __enter__(self) -> "_Signals":
        if threading.current_thread() is threading.main_thread():
            for signo in ENDING_SIGNALS:
                handler = signal.getsignal(signo)
                if handler is not signal.SIG_IGN and handler is not None:
                    self.previous[signo] = signal.signal(signo, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        for signo, handler in self.previous.items():
            signal.signal(signo, handler)
        if self.received is not None:
            signal.raise_signal(self.received)


def _cut_short(signals: _Signals, deadline: float, timeout: float) -> str | None:
    """Why the run must end now (a signal, the deadline), or ``None``."""
    if signals.received is not None:
        return f"{INTERRUPTED} {signal.Signals(signals.received).name}"
    if time.monotonic() >= deadline:
        return f"did not answer within {timeout:g} s"
    return None


def _exit_of(proc: Any, deadline: float, timeout: float, signals: _Signals) -> str | None:
    """Wait for ``proc`` to exit; why it was not waited for to the end, or ``None``.
    Waits on the process's pidfd where the kernel gives one (Linux 5.3 and newer), which
    wakes at the exit itself, else in ``Popen.wait`` slices (which poll with growing
    sleeps, a millisecond or two late for a tool that exits at once); either way in
    slices of a tenth of a second, so that a noted signal is acted on within that."""
    try:
        exited: int | None = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, an old kernel, or a sandbox without it
        exited = None
    try:
        while True:
            problem = _cut_short(signals, deadline, timeout)
            if problem is not None:
                return problem
            wait = min(0.1, max(0.0, deadline - time.monotonic()))
            if exited is None:
                try:
                    proc.wait(wait)
                    return None
                except subprocess.TimeoutExpired:
                    continue
            if select.select([exited], [], [], wait)[0]:
                proc.wait()  # the tool has exited: this reaps it at once
                return None
    finally:
        if exited is not None:
            os.close(exited)


def collect(
    argv: list[str],
    env: Mapping[str, str] | None,
    timeout: float | None = None,
    limit: int | None = None,
) -> tuple[int | None, bytes, str | None]:
    """Run ``argv`` with no input, for at most ``timeout`` seconds and ``limit`` bytes of
    output (default ``TIMEOUT_S``, ``OUTPUT_LIMIT``), then kill its process group:
    ``(exit status or None, output, problem or None)``."""
    timeout = TIMEOUT_S if timeout is None else timeout
    limit = OUTPUT_LIMIT if limit is None else limit
    with _Signals() as signals:
        return _collect(argv, env, timeout, limit, signals)


def _start(argv: list[str], env: Mapping[str, str] | None) -> Any:
    """``argv`` started in a session of its own, with no input and its output and
    errors on one pipe: the ``Popen``, or why it cannot be run (a string)."""
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError) as exc:
        return f"cannot be run: {getattr(exc, 'strerror', None) or exc}"


def _collect(
    argv: list[str],
    env: Mapping[str, str] | None,
    timeout: float,
    limit: int,
    signals: _Signals,
    started: Any = None,
) -> tuple[int | None, bytes, str | None]:
    """``collect`` of ``argv``, or of ``started`` (``_start``'s answer for it) when it
    was started already; its process group is killed whatever happens."""
    proc = _start(argv, env) if started is None else started
    if isinstance(proc, str):
        return None, b"", proc
    assert proc.stdout is not None  # noqa: S101  stdout=PIPE
    stream = proc.stdout.fileno()
    os.set_blocking(stream, False)
    output = bytearray()
    problem = None
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(stream, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_S:
                    break  # the tool is done; a child of its may hold the pipe open
                problem = _cut_short(signals, deadline, timeout)
                if problem is not None:
                    break
                wait = DRAIN_S if exited_at is not None else min(deadline - now, 0.05)
                if not selector.select(wait):
                    continue
                try:
                    chunk = os.read(stream, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:  # the output closed: wait for the tool's exit
                    problem = _exit_of(proc, deadline, timeout, signals)
                    break
                output += chunk
                if len(output) > limit:
                    problem = f"printed more than {limit} bytes"
                    break
    finally:
        _kill_group(proc.pid)
        proc.stdout.close()
        proc.wait()
    return (None if problem else proc.returncode), bytes(output[:limit]), problem


class Question(NamedTuple):
    """What ``ask`` runs: ``path args`` with ``env``; ``depends_on``: other files the
    answer depends on (the compiler a ``ccache`` runs), whose versions are part of the
    remembered question."""

    path: Path
    args: tuple[str, ...] = ("--version",)
    env: Mapping[str, str] | None = None
    depends_on: tuple[Path, ...] = ()


def ask(
    path: Path,
    args: tuple[str, ...] = ("--version",),
    *,
    env: Mapping[str, str] | None = None,
    answers: Path | None = None,
    depends_on: tuple[Path, ...] = (),
) -> tuple[str | None, str | None]:
    """``(output, None)`` or ``(None, problem)`` for running ``path args`` (see the module
    docstring). ``answers``: the directory of remembered answers (``_answers``)."""
    return ask_question(Question(path, args, env, depends_on), answers)


def ask_question(q: Question, answers: Path | None) -> tuple[str | None, str | None]:
    """``ask`` of a ``Question``."""
    with _Signals() as signals:
        return _answer(q, answers, signals)


def ask_each(questions: list[Question], answers: Path | None) -> None:
    """Ask every question at once and remember the answers for the ``ask`` that follows
    (independent questions cost the longest of them, not their sum). The processes are
    started one after another from this thread, then each is read in a thread of its
    own: starting them from several threads is slower, as each start holds the
    interpreter's lock while it forks. The same bounds as ``ask``, each tool's time
    counted from its reading; a signal ends every tool's group; a process started is
    always read or killed, whatever happens while the others start."""
    started: list[tuple[Question, Any]] = []
    with _Signals() as signals:
        try:
            for q in questions:
                if _known(q, answers) is None:
                    started.append((q, _start([str(q.path), *q.args], q.env)))
        finally:
            threads = [
                threading.Thread(target=_answer, args=(q, answers, signals, proc), daemon=True)
                for q, proc in started
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()


def _question(q: Question) -> tuple[str, ...]:
    """What the answer to ``q`` is remembered under: its arguments, and the versions of
    the files it depends on."""
    return (*q.args, *(_answers.version_of(p) for p in q.depends_on))


def _known(q: Question, answers: Path | None) -> tuple[str | None, str | None] | None:
    """The answer to ``q`` without running it: why its file may not be run, or the
    answer remembered; ``None`` when it must run."""
    problem = _fs.file_problem(q.path, executable=True) or _fs.untrusted(q.path)
    if problem:
        return None, problem
    remembered = _answers.recall(answers, q.path, _question(q))
    if remembered is None:
        return None
    ok, text = remembered
    return (text, None) if ok else (None, text)


def _answer(
    q: Question, answers: Path | None, signals: _Signals, started: Any = None
) -> tuple[str | None, str | None]:
    """The answer to ``q``: known (``_known``), or from running it (``started``: its
    process, started by ``ask_each`` after ``_known`` said it must run)."""
    path, args = q.path, q.args
    if started is None:
        known = _known(q, answers)
        if known is not None:
            return known
    question = _question(q)
    status, raw, problem = _collect(
        [str(path), *args], q.env, TIMEOUT_S, OUTPUT_LIMIT, signals, started
    )
    text = raw.decode("utf-8", "replace")
    command = f"`{path.name} {' '.join(args)}`"
    if problem is None and status is not None and status < 0:
        try:
            problem = f"was killed by signal {signal.Signals(-status).name}"
        except ValueError:
            problem = f"was killed by signal {-status}"
    elif problem is None and status != 0:
        tail = text.strip().splitlines()[-1:] or [""]
        problem = f"exited with {status}: {printable(tail[0][:200])}"
    if problem is not None:
        problem = f"{command} {problem}"
    if problem is None or INTERRUPTED not in problem:
        _answers.remember(answers, path, question, problem is None, problem or text)
    return (text, None) if problem is None else (None, problem)
