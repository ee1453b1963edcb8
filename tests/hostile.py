"""Fixtures of the hostile corpus (``tests/test_hostile_*.py``): what an attacker or a
clumsy user leaves on the machine, made for real (files owned by another user through
``setpriv``, directories everyone can write, FIFOs, sockets, devices, symlinks), and
the command line and ``import triton`` run as users run them, in fresh processes.

Every case checks the same things: the exit status, no traceback, the message names the
file, setting or key and says what to do, and nothing planted ran (planted programs
append to a log: ``Plant.runs``) or was mapped (``/proc/self/maps`` in the scenario).
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import SRC, require_tool
from tool_fixtures import RELEASE_LINE

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
OTHER_UID = 4242  # another user: no passwd entry needed, a uid is a user to the kernel
THIRD_UID = 4343
CLI_TIMEOUT_S = 60


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This machine's environment without any TRITON*, CC, search-path, CUDA or conda
    variable of the caller's, with a private HOME (so no user manifest, cache or record
    of the caller's is seen) and this checkout's package on PYTHONPATH."""
    dropped = ("CC", "LD_LIBRARY_PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CUDA_HOME")
    dropped += ("CUDA_PATH", "CONDA_PREFIX", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON") and k not in dropped}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(SRC), str(TESTS)]))
    env["TRITON_CACHE_DIR"] = str(home / "triton-cache")
    env.update(extra)
    return env


@dataclass
class Done:
    """A finished command: status, output and how long it took."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def clean(self) -> Done:
        """Assert no traceback and no Python-level crash was printed."""
        assert "Traceback" not in self.output, self.output
        for crash in ("RecursionError", "MemoryError", "UnicodeEncodeError", "BrokenPipeError"):
            assert crash not in self.output, self.output
        return self


def run(
    argv: list[str],
    env: dict[str, str],
    *,
    cwd: Path | None = None,
    timeout: float = CLI_TIMEOUT_S,
    stdout: int | None = subprocess.PIPE,
    user: int | None = None,
) -> Done:
    """Run ``argv`` (as ``user`` through ``setpriv`` when given) with no input."""
    if user is not None:
        argv = as_user(user, argv)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(
            f"{shlex.join(argv)} hung for {timeout} s:\n{(out or b'').decode()}{err.decode()}"
        ) from None
    return Done(
        proc.returncode,
        (out or b"").decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        time.monotonic() - start,
    )


def cli(
    *args: str,
    env: dict[str, str],
    cwd: Path | None = None,
    timeout: float = CLI_TIMEOUT_S,
    user: int | None = None,
    stdout: int | None = subprocess.PIPE,
) -> Done:
    """``python -m triton_toolchain ARGS`` as a user runs it; never a traceback."""
    done = run(
        [sys.executable, "-m", "triton_toolchain", *args],
        env,
        cwd=cwd,
        timeout=timeout,
        user=user,
        stdout=stdout,
    )
    return done.clean()


def python(code: str, env: dict[str, str], **kwargs: object) -> Done:
    """``python -c CODE`` in a fresh interpreter."""
    return run([sys.executable, "-c", code], env, **kwargs)  # type: ignore[arg-type]


def as_user(uid: int, argv: list[str]) -> list[str]:
    """``argv`` run as the user ``uid`` (group ``uid``, no supplementary groups)."""
    setpriv = require_tool("setpriv", "util-linux")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]


def shim_for(uid: int, directory: Path) -> tuple[str, str]:
    """``(interpreter, PYTHONPATH)`` with which the user ``uid`` runs this checkout's
    shim: a copy of the package in ``directory`` (the checkout may lie where others
    cannot read, e.g. under /root) and the first interpreter that user can start (a
    venv's may need a libpython under /root)."""
    import shutil

    target = directory / "shim-src"
    shutil.copytree(
        SRC / "triton_toolchain",
        target / "triton_toolchain",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    reachable(target)
    for candidate in (sys.executable, "/usr/bin/python3"):
        done = subprocess.run(
            as_user(uid, [candidate, "-c", "import elftools"]), capture_output=True, check=False
        )
        if done.returncode == 0 or b"elftools" in done.stderr:
            return candidate, str(target)
    raise AssertionError(
        f"no Python interpreter can be started by uid {uid}; install python3 (Debian's)"
    )


def shared_dir(path: Path, *, sticky: bool) -> Path:
    """A directory every user may write: ``/tmp``'s mode 1777 (``sticky``) or 0777."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o1777 if sticky else 0o777)
    return path


def reachable(path: Path) -> None:
    """Let other users walk down to ``path`` (pytest's base directory is 0700)."""
    for parent in [path, *path.parents]:
        if parent == Path("/"):
            break
        mode = parent.stat().st_mode & 0o7777
        parent.chmod(mode | 0o055 if parent.is_dir() else mode | 0o044)


def write_as(uid: int, path: Path, text: str | bytes, *, mode: int = 0o644) -> Path:
    """Write ``path`` as the user ``uid`` (through ``setpriv``, into a directory that user
    may write): the file is theirs, as if they had planted it."""
    script = f"umask 022; cat > {shlex.quote(str(path))}; chmod {mode:o} {shlex.quote(str(path))}"
    done = subprocess.run(
        as_user(uid, ["/bin/sh", "-c", script]),
        input=text if isinstance(text, bytes) else text.encode(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return path


def write_into_as(uid: int, path: Path, data: bytes) -> Path:
    """Overwrite the existing file ``path``, which stays someone else's, as the user
    ``uid`` (``cat >``, through ``setpriv``): what a file that others can write lets
    them do."""
    done = subprocess.run(
        as_user(uid, ["/bin/sh", "-c", f"cat > {shlex.quote(str(path))}"]),
        input=data,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return path


def mkdir_as(uid: int, path: Path, *, mode: int = 0o755) -> Path:
    """The directory ``path``, made by root and given to the user ``uid`` (as an admin
    makes a home or project directory for someone)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


class Plant:
    """Programs an attacker plants: each appends its path to ``log`` when it runs (any
    run at all: ``--version`` too), then behaves like the tool it pretends to be."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def _script(self, path: Path, body: str, mode: int) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        log = shlex.quote(str(self.log))
        path.write_text(f'#!/bin/sh\necho "$0 $*" >> {log}\n{body}')
        path.chmod(mode)
        return path

    def ptxas(self, path: Path, release: str = "13.0", *, mode: int = 0o755) -> Path:
        body = f'echo "{RELEASE_LINE.format(release=release)}"\nexit 0\n'
        return self._script(path, body, mode)

    def compiler(self, path: Path, *, mode: int = 0o755) -> Path:
        body = (
            'echo "Target: x86_64-linux-gnu" >&2\necho "gcc version 12.2.0 (planted)" >&2\n'
            'exec /usr/bin/gcc "$@"\n'
        )
        return self._script(path, body, mode)

    def runs(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def unix_socket(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` (keep the returned object alive)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)
    return sock


def runner(code: str) -> list[str]:
    """``python -c CODE`` as an argv."""
    return [sys.executable, "-c", code]


def cli_with_timeout(timeout_s: float, *args: str) -> list[str]:
    """The command line in a fresh interpreter whose tool timeout is ``timeout_s``
    (``_discovery._run.TIMEOUT_S``: the only thing changed), so that a hanging tool
    costs a test a second, not ten."""
    code = (
        "import sys\n"
        "from triton_toolchain.resolver._discovery import _run\n"
        f"_run.TIMEOUT_S = {timeout_s!r}\n"
        "from triton_toolchain.cli._main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return [sys.executable, "-c", code, *args]


# Python's words for a path with a NUL: "embedded null byte" before 3.13, then
# "<call>: embedded null character in path" (the call: open, stat, lstat).
NULL_BYTE = r"(?:\w+: )?embedded null (?:byte|character in path)"


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its parent does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@dataclass
class Signalled:
    """A program signalled while its tools ran: its status and output, the tools' pids
    (each wrote ``$$`` and its child's ``$!``), and how long it took to end."""

    returncode: int
    out: bytes
    err: bytes
    started: list[int]
    took: float


def signalled_while_tools_run(
    argv: list[str], env: dict[str, str], pids: Path, count: int, signo: int
) -> Signalled:
    """Start ``argv`` in a session of its own, wait until its tools have written
    ``count`` pids to ``pids`` (every one alive), send it ``signo`` and wait for its end;
    it is killed with its group if it outlives the wait."""
    # As from a terminal: a run started in the background (`cmd &` in a script) inherits
    # SIGINT ignored, which a child keeps across exec; a handler is reset to the default.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        deadline = time.monotonic() + 60
        while len(pids.read_text().split() if pids.exists() else []) < count:
            assert time.monotonic() < deadline and proc.poll() is None, "the tools never ran"
            time.sleep(0.05)
        started = [int(p) for p in pids.read_text().split()]
        assert all(alive(p) for p in started)
        sent = time.monotonic()
        proc.send_signal(signo)
        out, err = proc.communicate(timeout=10)
        return Signalled(proc.returncode, out, err, started, time.monotonic() - sent)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
