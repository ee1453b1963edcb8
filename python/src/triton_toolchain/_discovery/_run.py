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
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path

from . import _answers, _fs

TIMEOUT_S = 10.0
OUTPUT_LIMIT = 1 << 16
DRAIN_S = 0.2  # how long output is still read after the tool itself exited


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


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
    import selectors
    import subprocess

    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError) as exc:
        return None, b"", f"cannot be run: {getattr(exc, 'strerror', None) or exc}"
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
                if now >= deadline:
                    problem = f"did not answer within {timeout:g} s"
                    break
                wait = DRAIN_S if exited_at is not None else min(deadline - now, 0.05)
                if not selector.select(wait):
                    continue
                try:
                    chunk = os.read(stream, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    if proc.poll() is None:
                        try:
                            proc.wait(max(0.0, deadline - time.monotonic()))
                        except subprocess.TimeoutExpired:
                            problem = f"did not answer within {timeout:g} s"
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


def ask(
    path: Path,
    args: tuple[str, ...] = ("--version",),
    *,
    env: Mapping[str, str] | None = None,
    answers: Path | None = None,
    depends_on: tuple[Path, ...] = (),
) -> tuple[str | None, str | None]:
    """``(output, None)`` or ``(None, problem)`` for running ``path args`` (see the module
    docstring). ``answers``: the directory of remembered answers (``_answers``);
    ``depends_on``: other files the answer depends on (the compiler a ``ccache`` runs),
    whose versions are part of the remembered question."""
    problem = _fs.file_problem(path, executable=True) or _fs.untrusted(path)
    if problem:
        return None, problem
    question = (*args, *(_answers.version_of(p) for p in depends_on))
    remembered = _answers.recall(answers, path, question)
    if remembered is not None:
        ok, text = remembered
        return (text, None) if ok else (None, text)
    status, raw, problem = collect([str(path), *args], env)
    text = raw.decode("utf-8", "replace")
    command = f"`{path.name} {' '.join(args)}`"
    if problem is None and status is not None and status < 0:
        try:
            problem = f"was killed by signal {signal.Signals(-status).name}"
        except ValueError:
            problem = f"was killed by signal {-status}"
    elif problem is None and status != 0:
        tail = text.strip().splitlines()[-1:] or [""]
        problem = f"exited with {status}: {tail[0][:200]}"
    if problem is not None:
        problem = f"{command} {problem}"
    _answers.remember(answers, path, question, problem is None, problem or text)
    return (text, None) if problem is None else (None, problem)
