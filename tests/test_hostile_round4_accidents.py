"""Hostile corpus, round 4, accidents are not facts: what the probe and the driver-version
query remember of a file is only what the file itself answered. A full temporary
directory (a real tmpfs, mounted here: we are root), a missing one, a SIGINT delivered
while the probe runs in a program with its own handler: each is reported for this run
and asked again by the next, which gets the file's real answer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import driver_standin
import pytest
from conftest import require_tool
from hostile import SRC, TESTS
from tool_fixtures import write_script

pytestmark = pytest.mark.root  # a real tmpfs mounted by the test

# Triton's bundled ptxas (a CUDA 12 or 13 release: PTX 8.0 for sm_90a assembles).
REAL_PTXAS = Path(str(find_spec("triton").origin)).parent / "backends/nvidia/bin/ptxas"  # type: ignore[union-attr]
ASK = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from triton_toolchain.resolver._discovery._probe import assemble\n"
    "print(json.dumps(assemble(Path(sys.argv[1]), 80, 'sm_90a', answers=Path(sys.argv[2]))))\n"
)


_MOUNT = require_tool("mount", "mount")
_UMOUNT = require_tool("umount", "mount")
_UNSHARE = require_tool("unshare", "util-linux")


def _env(**extra: str) -> dict[str, str]:
    env = {"PATH": os.defpath, "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)])}
    env.update(extra)
    return env


def _assemble(ptxas: Path, answers: Path, **env: str) -> str | None:
    """``assemble`` of ``ptxas`` for sm_90a in a fresh process (its own TMPDIR)."""
    done = subprocess.run(
        [sys.executable, "-c", ASK, str(ptxas), str(answers)],
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: str | None = json.loads(done.stdout)
    return answer


@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real tmpfs of 256 KiB, mounted for the test and filled to its last page: room
    for the probe's PTX, none for the cubin."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    subprocess.run([_MOUNT, "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], check=True)
    try:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with pytest.raises(OSError, match="No space left"):
                while True:
                    os.write(fd, b"\0" * 4096)
            os.ftruncate(fd, os.fstat(fd).st_size - 4096)
        finally:
            os.close(fd)
        yield mount
    finally:
        subprocess.run([_UMOUNT, "-l", str(mount)], check=False)


def test_the_ptxas_assembles_here() -> None:
    """The control: the real ptxas used below assembles the probe."""
    assert REAL_PTXAS.is_file(), REAL_PTXAS


def test_a_full_temporary_directory_is_not_remembered_as_the_ptxas_answer(
    tmp_path: Path, full_tmpfs: Path
) -> None:
    answers = tmp_path / "answers"
    first = _assemble(REAL_PTXAS, answers, TMPDIR=str(full_tmpfs))
    assert first is not None, "the probe cannot have assembled on a full file system"
    assert f"the file system of {full_tmpfs} is full" in first, first
    # The next process, with room, asks again and gets the ptxas's real answer.
    assert _assemble(REAL_PTXAS, answers, TMPDIR=str(tmp_path)) is None


def test_a_missing_temporary_directory_is_not_remembered(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    unusable = tmp_path / "not-a-dir"
    unusable.write_text("a file where the temporary directory should be\n")
    # TMPDIR a file, and every fallback of Python's tempfile unusable: run as a user
    # who may write none of them.
    first = _assemble_as_nobody(REAL_PTXAS, answers, tmp_path, TMPDIR=str(unusable))
    assert first is not None and "could not be prepared" in first, first
    assert _assemble(REAL_PTXAS, answers, TMPDIR=str(tmp_path)) is None


def _assemble_as_nobody(ptxas: Path, answers: Path, tmp_path: Path, **env: str) -> str | None:
    """``assemble`` as root, in a process whose every temporary directory is refused: the
    current directory (tempfile's last fallback) and /tmp made unwritable by a private
    mount namespace with /tmp, /var/tmp and /usr/tmp read-only."""
    script = (
        "set -e; for d in /tmp /var/tmp /usr/tmp; do [ -d $d ] && mount -o bind,ro $d $d"
        " 2>/dev/null || true; done; "
        f'cd {tmp_path}/ro; exec "$@"'
    )
    (tmp_path / "ro").mkdir()
    subprocess.run(
        [_MOUNT, "-t", "tmpfs", "-o", "ro,size=4k", "tmpfs", str(tmp_path / "ro")], check=True
    )
    try:
        done = subprocess.run(
            [
                _UNSHARE,
                "-m",
                "/bin/sh",
                "-c",
                script,
                "sh",
                sys.executable,
                "-c",
                ASK,
                str(ptxas),
                str(answers),
            ],
            env=_env(**env),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        subprocess.run([_UMOUNT, "-l", str(tmp_path / "ro")], check=False)
    assert done.returncode == 0, done.stderr
    answer: str | None = json.loads(done.stdout)
    return answer


SIGNALLED = """
import json, signal, sys
from pathlib import Path
from triton_toolchain.resolver._discovery._probe import assemble, driver_cuda
from triton_toolchain.resolver._fit import driver_problem
caught = []
signal.signal(signal.SIGINT, lambda signo, frame: caught.append(signo))
what, path, answers = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
if what == "probe":
    answer = assemble(path, 80, "sm_90a", answers=answers)
elif what == "driver":
    answer = driver_cuda(path, answers=answers)
else:  # the fit at compile time, answers in XDG_CACHE_HOME
    answer = driver_problem(what, str(path))
print(json.dumps({"answer": answer, "caught": caught}))
"""


def _interrupted(what: str, path: Path, answers: Path, started: Path) -> dict[str, object]:
    """Run ``SIGNALLED`` (a program with its own SIGINT handler), send it SIGINT once the
    tool has started (it creates ``started``), and return its report."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGNALLED, what, str(path), str(answers)],
        env=_env(XDG_CACHE_HOME=str(answers)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    report: dict[str, object] = json.loads(out)
    assert report["caught"] == [signal.SIGINT]  # the program's own handler ran
    return report


def test_a_sigint_during_the_probe_is_not_remembered_as_the_ptxas_answer(tmp_path: Path) -> None:
    flag, started = tmp_path / "hang", tmp_path / "started"
    flag.touch()
    # The same file, unchanged, hangs while the flag is there and is the real ptxas after.
    ptxas = write_script(
        tmp_path / "bin" / "ptxas",
        f"#!/bin/sh\nif [ -e {flag} ]; then touch {started}; exec sleep 30; fi\n"
        f'exec {REAL_PTXAS} "$@"\n',
    )
    answers = tmp_path / "answers"
    report = _interrupted("probe", ptxas, answers, started)
    assert "interrupted by SIGINT" in str(report["answer"]), report
    flag.unlink()
    assert _assemble(ptxas, answers, TMPDIR=str(tmp_path)) is None


def _slow_driver(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in ``libcuda.so.1`` (gcc) whose ``cuDriverGetVersion`` waits while a flag
    file is there (it creates ``started`` first), then answers CUDA 12.8; the library,
    the flag, ``started``."""
    flag, started = tmp_path / "hang", tmp_path / "started"
    flag.touch()
    driver = driver_standin.driver(tmp_path / "driver", cuda_version=12080)
    source = tmp_path / "driver" / "slow.c"
    source.write_text(
        "#include <unistd.h>\n#include <fcntl.h>\n"
        "int cuInit(unsigned f) { return 100; }\n"
        "int cuDriverGetVersion(int *v) {\n"
        f'  if (access("{flag}", F_OK) == 0) {{ close(open("{started}", O_CREAT | O_WRONLY, 0600));'
        " sleep(30); }\n"
        "  *v = 12080; return 0;\n}\n"
    )
    real = driver.resolve()
    subprocess.run(
        [
            driver_standin.GCC,
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            str(real),
            str(source),
        ],
        check=True,
    )
    return driver, flag, started


def _asked_again(code: str, driver: Path, answers: Path) -> object:
    done = subprocess.run(
        [sys.executable, "-c", code, str(driver), str(answers)],
        env=_env(XDG_CACHE_HOME=str(answers)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_an_interrupted_driver_query_is_not_remembered(tmp_path: Path) -> None:
    driver, flag, started = _slow_driver(tmp_path)
    answers = tmp_path / "answers"
    report = _interrupted("driver", driver, answers, started)
    assert report["answer"][0] is None and "interrupted by SIGINT" in report["answer"][1], report  # type: ignore[index]
    flag.unlink()
    ask = (
        "import json, sys\nfrom pathlib import Path\n"
        "from triton_toolchain.resolver._discovery._probe import driver_cuda\n"
        "print(json.dumps(driver_cuda(Path(sys.argv[1]), answers=Path(sys.argv[2]))))\n"
    )
    assert _asked_again(ask, driver, answers) == [[12, 8], None]  # asked again


def test_an_interrupted_driver_query_fails_the_fit_closed_and_the_next_one_judges(
    tmp_path: Path,
) -> None:
    """The compile-time fit of a CUDA 13.1 ptxas for this 12.8 driver: refused in the
    interrupted process (not known is not fine), refused with both releases after."""
    driver, flag, started = _slow_driver(tmp_path)
    answers = tmp_path / "xdg"
    report = _interrupted("13.1", driver, answers, started)
    problem = report["answer"]
    assert problem is not None and "is not known" in problem[0], report  # type: ignore[index]
    assert "interrupted by SIGINT" in problem[0]  # type: ignore[index]
    flag.unlink()
    ask = (
        "import json, sys\n"
        "from triton_toolchain.resolver._fit import driver_problem\n"
        "print(json.dumps([driver_problem(r, sys.argv[1]) for r in ('13.1', '12.9')]))\n"
    )
    newer, same_major = _asked_again(ask, driver, answers)  # type: ignore[misc]
    assert "supports CUDA 12.8" in newer[0] and same_major is None
