"""Hostile corpus, round 4, a stuck lock holder: a process that holds the record lock and
never lets go (stopped, hung, in a debugger) makes every new ``import triton`` wait. After
``LOCK_NOTICE_S`` (2 s) of waiting, one warning names the holder's pid and how long it
has held the lock, and the wait keeps its bound (``LOCK_WAIT_S``).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from hostile import clean_env, run
from triton_toolchain.resolver import _observe


def _holder(cache: Path, *, shim: bool) -> subprocess.Popen[str]:
    """A process holding ``cache``'s record lock until it is killed: the shim's own
    (``resolving_alone``, which writes its pid and time) or a bare ``flock`` (an older
    shim's, which writes nothing: the pid comes from ``/proc/locks``)."""
    if shim:
        code = (
            "import sys, time\nfrom triton_toolchain.resolver import _observe\n"
            "with _observe.resolving_alone({'XDG_CACHE_HOME': sys.argv[1]}):\n"
            "    print('held', flush=True)\n    time.sleep(300)\n"
        )
        arg = str(cache.parent)
    else:
        code = (
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(300)\n"
        )
        arg = str(cache / _observe.LOCK_FILE)
    proc = subprocess.Popen([sys.executable, "-c", code, arg], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


@pytest.mark.parametrize("shim", [True, False], ids=["shim-holder", "bare-flock-holder"])
def test_a_stuck_holder_is_named_once_after_two_seconds_and_the_bound_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shim: bool
) -> None:
    cache = tmp_path / "xdg/triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    holder = _holder(cache, shim=shim)
    try:
        time.sleep(1.0)  # it has held the lock a second before anyone waits
        monkeypatch.setattr(_observe, "LOCK_WAIT_S", 4.0)
        start = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with _observe.resolving_alone({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) as waited:
                took = time.monotonic() - start
        assert waited is False and 4.0 <= took < 5.5, took  # the bound, not a hang
        said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert len(said) == 1, said
        assert said[0].startswith(f"triton-toolchain: process {holder.pid} has held "), said
        assert str(cache / _observe.LOCK_FILE) in said[0]
        held = int(said[0].split(" for ", 1)[1].split(" s ", 1)[0])
        assert held >= (3 if shim else 2), said  # its own time where it wrote it
    finally:
        holder.kill()
        holder.wait()


def test_a_short_wait_says_nothing(tmp_path: Path) -> None:
    """The control: a holder that lets go within the notice costs no warning."""
    cache = tmp_path / "xdg/triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    holder = _holder(cache, shim=True)
    try:
        killer = threading.Timer(0.5, holder.kill)
        killer.start()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with _observe.resolving_alone({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) as waited:
                assert waited is True
        killer.join()
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    finally:
        holder.kill()
        holder.wait()


def test_import_triton_behind_a_stuck_holder_says_who_and_goes_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = clean_env(home, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    cache = tmp_path / "xdg/triton-toolchain"
    cache.mkdir(parents=True, mode=0o700)
    holder = _holder(cache, shim=False)
    try:
        code = (
            "from triton_toolchain.resolver import _observe\n"
            "_observe.LOCK_WAIT_S = 4.0\n"
            "import triton, triton.knobs\n"
            "print('ptxas', triton.knobs.nvidia.ptxas.path)\n"
        )
        done = run([sys.executable, "-c", code], env).clean()
        assert done.returncode == 0, done.output
        assert f"RuntimeWarning: triton-toolchain: process {holder.pid} has held" in done.stderr
        assert done.stderr.count("has held") == 1, done.stderr
        assert "ptxas /" in done.stdout  # resolved alone after the bound, and applied
        assert done.seconds < 30, done.seconds
    finally:
        holder.kill()
        holder.wait()
