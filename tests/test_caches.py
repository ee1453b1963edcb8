"""Triton's and Inductor's cache directories, judged like the toolchain, on real file
systems: a read-only ``$HOME`` (a read-only bind mount), ``HOME=/`` and ``HOME`` unset for
an arbitrary uid (``setpriv``), Inductor's ``/tmp/torchinductor_<user>`` made first by
another real user (``useradd``), everyone's to write, or a link of theirs, each holding
a planted ``.so``, and a FUSE file system that refuses ``flock`` (``noflockfs.c``, built
here against libfuse3: this machine has no NFS server) with eight processes compiling at
once. Each runs a real ahead-of-time Triton compile (sm_90, the wheel's ptxas) and a
real ``torch.compile`` on the CPU (``cache_compile.py``) in a private mount namespace
with its own ``/tmp``, with the shim and without it (``TRITON_TOOLCHAIN=off``), and
compares the directory each used and the result.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import require_tool

pytestmark = [pytest.mark.torch, pytest.mark.root]

TESTS = Path(__file__).resolve().parent
MARK = "cache-compile-result: "
TIMEOUT_S = 900
# An arbitrary uid with no passwd entry, as OpenShift runs a container.
ARBITRARY_UID = 1000770000


class Work:
    """A directory outside ``/tmp`` (each run mounts its own ``/tmp``) everyone can read,
    holding the child's script, and the other user's name and uid."""

    def __init__(self, root: Path, other: str, other_uid: int) -> None:
        self.root = root
        self.other = other
        self.other_uid = other_uid
        self.child = root / "cache_compile.py"


@pytest.fixture(scope="module")
def work() -> Iterator[Work]:
    require_tool("useradd", "passwd")
    assert os.geteuid() == 0, "this suite makes users and mounts: run it as root"
    root = Path(tempfile.mkdtemp(prefix="triton-toolchain-caches-", dir="/var/tmp"))
    root.chmod(0o755)
    other = f"tcc{uuid.uuid4().hex[:6]}"
    subprocess.run(
        [require_tool("useradd", "passwd"), "-M", "-U", "-s", "/usr/sbin/nologin", other],
        check=True,
    )
    try:
        shutil.copy(TESTS / "cache_compile.py", root / "cache_compile.py")
        (root / "cache_compile.py").chmod(0o644)
        import pwd

        yield Work(root, other, pwd.getpwnam(other).pw_uid)
    finally:
        subprocess.run([require_tool("userdel", "passwd"), other], check=False)
        subprocess.run(
            [require_tool("groupdel", "passwd"), other], check=False, capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


def _env(shim: bool, **extra: str) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no pool of workers on a 2-core runner
        "TRITON_TOOLCHAIN": "on" if shim else "off",
    }
    env.update(extra)
    return {k: v for k, v in env.items() if v != ""}


def _fresh_tmp(cwd: Path) -> str:
    """Shell lines that mount a fresh tmpfs on ``/tmp``, keeping visible the directories
    of ``/tmp`` that hold this session's interpreter and this checkout (a clone in
    ``/tmp``), bound from the old ``/tmp`` (bound first below ``cwd``)."""
    kept = sorted(
        {
            Path(*parts[:3])
            for path in (sys.prefix, TESTS)
            if (parts := Path(path).resolve().parts)[1:2] == ("tmp",) and len(parts) > 2
        }
    )
    old = cwd / "host-tmp"
    old.mkdir(exist_ok=True)
    lines = [f"mount --bind /tmp {old}", "mount -t tmpfs -o mode=1777 none /tmp"]
    for top in kept:
        lines += [f"mkdir -p {top}", f"mount --bind {old}/{top.name} {top}"]
    return "; ".join(lines)


def _namespace(script: str, argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """``argv`` after ``script`` (sh) in a private mount namespace whose ``/tmp`` is a
    fresh tmpfs: the output."""
    unshare = require_tool("unshare", "util-linux")
    whole = f"set -e; {_fresh_tmp(cwd)}; {script}"
    done = subprocess.run(
        [unshare, "-m", "--propagation", "private", "sh", "-c", whole, "sh", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return done.stdout + done.stderr


def _results(output: str) -> list[dict[str, object]]:
    found = [json.loads(line[len(MARK) :]) for line in output.splitlines() if line.startswith(MARK)]
    assert found, output[-4000:]
    return found


def _compile(
    work: Work, script: str, env: dict[str, str], *, uid: int | None = None
) -> dict[str, object]:
    """One child (``cache_compile.py``, as ``uid`` where given) after ``script``."""
    argv = [sys.executable, str(work.child)]
    if uid is not None:
        setpriv = require_tool("setpriv", "util-linux")
        argv = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *_as_other(work)]
    return _results(_namespace(script + '; exec "$@"', argv, env, work.root))[0]


AS_INSTALLED = (
    "import runpy, site, sys; site.addsitedir(sys.argv.pop(1)); del sys.argv[0]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _as_other(work: Work) -> list[str]:
    """The child as a user who cannot read ``/root``: the system's interpreter of this
    one's version (this session's lies below ``/root``, as pyenv's does, and Inductor runs
    ``sys.executable`` again), with this session's packages added as a site directory
    (so the shim's ``.pth`` hook runs as in an install)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    python = f"/usr/bin/python{version}"
    assert os.access(python, os.X_OK), f"{python} (Debian's python{version}) is needed"
    site = sysconfig.get_paths()["purelib"]
    return [python, "-c", AS_INSTALLED, site, str(work.child)]


def _said(result: dict[str, object], variable: str) -> list[str]:
    warnings = result["warnings"]
    assert isinstance(warnings, list)
    return [w for w in warnings if variable in w and "refused" in w]


def _no_file_under(result: dict[str, object], directory: str) -> None:
    mapped = result["mapped"]
    assert isinstance(mapped, list)
    assert not [m for m in mapped if m.startswith(directory)], mapped


# ------------------------------------------------------------------------ no usable home


def test_read_only_home(work: Work) -> None:
    """``$HOME`` a read-only bind mount: stock Triton cannot write its cache and fails;
    with the shim, Triton's cache is the private ``$TMPDIR/triton-toolchain-<uid>``,
    said once, and both compiles work."""
    home = work.root / "ro-home"
    home.mkdir(exist_ok=True)
    home.chmod(0o700)
    script = f"mount --bind {home} {home}; mount -o remount,bind,ro {home}"
    stock = _compile(work, script, _env(False, HOME=str(home), USER="root"))
    shim = _compile(work, script, _env(True, HOME=str(home), USER="root"))
    assert stock["triton_dir"] == f"{home}/.triton/cache"
    assert stock["triton_ok"] is False and "Read-only file system" in str(stock["triton_error"])
    assert shim["triton_dir"] == "/tmp/triton-toolchain-0/triton", shim
    assert shim["triton_ok"] is True and shim["torch_ok"] is True, shim
    assert len(_said(shim, "TRITON_CACHE_DIR")) == 1, shim["warnings"]
    assert "read-only" in _said(shim, "TRITON_CACHE_DIR")[0]
    assert stock["torch_ok"] is True  # Inductor's /tmp default works for both
    assert shim["inductor_dir"] == stock["inductor_dir"] == "/tmp/torchinductor_root"


def test_home_is_root_for_an_arbitrary_uid(work: Work) -> None:
    """OpenShift's arbitrary uid with ``HOME=/``: stock Triton tries ``/.triton`` and
    fails; the shim takes ``/tmp/triton-toolchain-<uid>/triton``."""
    uid = ARBITRARY_UID
    stock = _compile(work, "true", _env(False, HOME="/"), uid=uid)
    shim = _compile(work, "true", _env(True, HOME="/"), uid=uid)
    assert stock["triton_dir"] == "/.triton/cache"
    assert stock["triton_ok"] is False and "Permission denied" in str(stock["triton_error"])
    assert shim["triton_dir"] == f"/tmp/triton-toolchain-{uid}/triton", shim
    assert shim["triton_ok"] is True, shim
    assert shim["torch_ok"] is True and stock["torch_ok"] is True, (shim, stock)
    assert len(_said(shim, "TRITON_CACHE_DIR")) == 1, shim["warnings"]
    assert shim["inductor_dir"] == stock["inductor_dir"] == f"/tmp/torchinductor_uid_{uid}"


def test_home_unset_for_an_arbitrary_uid(work: Work) -> None:
    """``HOME`` unset and no passwd entry: Triton's ``expanduser("~/")`` stays ``~/``, a
    cache relative to the working directory (here one the user cannot write: stock
    fails); the shim refuses a relative cache and takes its private one."""
    uid = ARBITRARY_UID + 1
    stock = _compile(work, "true", _env(False), uid=uid)
    shim = _compile(work, "true", _env(True), uid=uid)
    assert stock["triton_dir"] == "~/.triton/cache"
    assert stock["triton_ok"] is False, stock
    assert shim["triton_dir"] == f"/tmp/triton-toolchain-{uid}/triton", shim
    assert shim["triton_ok"] is True, shim
    assert shim["torch_ok"] is True and stock["torch_ok"] is True, (shim, stock)
    assert "not an absolute path" in _said(shim, "TRITON_CACHE_DIR")[0]


# ------------------------------------------------------- another user's /tmp/torchinductor


@pytest.fixture(scope="module")
def planted(work: Work) -> Path:
    """What a stock run leaves in ``/tmp/torchinductor_root`` for the child's function,
    every ``.so`` in it replaced by a library whose constructor writes a marker file:
    a planted copy that Inductor would load on its next run."""
    populated = work.root / "populated"
    if not populated.exists():
        script = (
            f'"$@"; cp -a /tmp/torchinductor_root {populated}; '
            f"rm -rf {populated}/*/triton"  # Inductor's Triton dir: not needed
        )
        argv = [sys.executable, str(work.child)]
        _namespace(script, argv, _env(False, HOME=str(work.root / "home"), USER="root"), work.root)
    libraries = sorted(populated.rglob("*.so"))
    assert libraries, sorted(populated.rglob("*"))
    marker = work.root / "marker.c"
    marker.write_text(
        "#include <fcntl.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'  int fd = open("{work.root}/loaded-" MARK_NAME, O_CREAT | O_WRONLY, 0644);\n'
        "  if (fd >= 0) close(fd);\n}\n"
    )
    for library in libraries:
        subprocess.run(
            [
                require_tool("gcc", "gcc"),
                "-shared",
                "-fPIC",
                f'-DMARK_NAME="{library.name}"',
                "-o",
                library,
                marker,
            ],
            check=True,
        )
    return populated


def _loaded(work: Work) -> list[str]:
    return sorted(p.name for p in work.root.glob("loaded-*"))


@pytest.mark.parametrize("layout", ["theirs", "everyones", "their-link"])
def test_inductor_dir_planted_by_another_user(work: Work, planted: Path, layout: str) -> None:
    """Another user made ``/tmp/torchinductor_root`` first (theirs, mode 755; everyone's
    to write, 777; or a link of theirs to a directory of theirs), with a planted ``.so``
    where Inductor looks: stock Inductor loads it (its constructor runs); with the shim,
    the directory is refused, Inductor's cache is the private one, nothing of the
    planted directory is mapped, and the compile's result is right."""
    for stale in work.root.glob("loaded-*"):
        stale.unlink()
    other = work.other
    target = "/tmp/theirs" if layout == "their-link" else "/tmp/torchinductor_root"
    mode = "777" if layout == "everyones" else "755"
    as_other = f"setpriv --reuid={other} --regid={other} --clear-groups"
    script = f"cp -a {planted} {target}; chown -R {other}:{other} {target}; chmod {mode} {target}"
    if layout == "their-link":
        script += f"; {as_other} ln -s {target} /tmp/torchinductor_root"
    env = {"HOME": str(work.root / "home"), "USER": "root"}
    stock = _compile(work, script, _env(False, **env))
    stock_loaded = _loaded(work)
    for stale in work.root.glob("loaded-*"):
        stale.unlink()
    shim = _compile(work, script, _env(True, **env))
    assert stock["inductor_dir"] == "/tmp/torchinductor_root"
    assert stock_loaded, stock  # stock loaded the planted library
    assert _loaded(work) == [], shim
    assert shim["inductor_dir"] == "/tmp/triton-toolchain-0/torchinductor", shim
    assert shim["torch_ok"] is True and shim["triton_ok"] is True, shim
    _no_file_under(shim, target)
    _no_file_under(shim, "/tmp/torchinductor_root")
    said = _said(shim, "TORCHINDUCTOR_CACHE_DIR")
    assert len(said) == 1 and other in said[0], shim["warnings"]


def test_explicit_cache_of_another_user_is_an_error(work: Work, planted: Path) -> None:
    """``TORCHINDUCTOR_CACHE_DIR`` set to the other user's directory: the shim's error,
    naming the variable, the directory and the fix, at its first use; the planted
    library is never loaded; ``doctor`` says the same and exits 2."""
    for stale in work.root.glob("loaded-*"):
        stale.unlink()
    other = work.other
    script = f"cp -a {planted} /tmp/theirs; chown -R {other}:{other} /tmp/theirs"
    env = _env(
        True, HOME=str(work.root / "home"), USER="root", TORCHINDUCTOR_CACHE_DIR="/tmp/theirs"
    )
    shim = _compile(work, script, env)
    assert shim["torch_ok"] is False, shim
    error = str(shim["torch_error"])
    assert "TORCHINDUCTOR_CACHE_DIR='/tmp/theirs'" in error and "Fix: set" in error, error
    assert _loaded(work) == []
    doctor = _namespace(
        script + '; "$@" || echo "status $?"',
        [sys.executable, "-m", "triton_toolchain", "doctor", "--json"],
        env,
        work.root,
    )
    doc = json.loads(doctor[: doctor.rindex("}") + 1])
    assert doc["caches"]["inductor"]["error"].startswith("TORCHINDUCTOR_CACHE_DIR='/tmp/theirs'")
    assert doc["caches"]["inductor"]["untrusted"]
    assert "status 2" in doctor


# ------------------------------------------------------------ a FUSE file system, no flock


@pytest.fixture(scope="module")
def noflockfs(work: Work) -> Path:
    """``noflockfs.c`` built against libfuse3 (``fuse3``, ``libfuse3-dev``)."""
    require_tool("fusermount3", "fuse3")
    pkg_config = require_tool("pkg-config", "pkg-config")
    flags = subprocess.run(
        [pkg_config, "--cflags", "--libs", "fuse3"], capture_output=True, text=True, check=True
    ).stdout.split()
    binary = work.root / "noflockfs"
    subprocess.run(
        [require_tool("gcc", "gcc"), "-O1", "-o", binary, TESTS / "noflockfs.c", *flags], check=True
    )
    return binary


def _on_fuse(work: Work, binary: Path, count: int, env: dict[str, str]) -> list[dict[str, object]]:
    """``count`` children at once with ``$HOME`` and ``$TMPDIR`` on the FUSE file system
    mounted at ``/tmp/mnt`` (both libraries' defaults on it), ``XDG_CACHE_HOME`` local."""
    out = work.root / "fuse-out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    script = (
        f"mkdir -p /tmp/backing /tmp/mnt; {binary} /tmp/backing /tmp/mnt -f "
        "-o default_permissions,allow_other & "
        'for i in $(seq 100); do grep -q " /tmp/mnt " /proc/self/mountinfo && break; '
        "sleep 0.1; done; mkdir -p /tmp/mnt/home /tmp/mnt/tmp /tmp/xdg; set +e; "
        f'pids=; for i in $(seq {count}); do "$@" > {out}/$i 2>&1 & pids="$pids $!"; done; '
        "wait $pids; fusermount3 -u -z /tmp/mnt; wait"
    )
    _namespace(script, [sys.executable, str(work.child)], env, work.root)
    return [_results((out / str(i)).read_text())[0] for i in range(1, count + 1)]


def test_no_flock_fuse_eight_processes(work: Work, noflockfs: Path) -> None:
    """Both defaults on a FUSE file system that refuses ``flock`` (as NFS without a lock
    manager): stock ``torch.compile`` fails in every process ("No locks available");
    with the shim, eight processes at once use ``$XDG_CACHE_HOME``'s private
    directories and every compile works."""
    env = {"HOME": "/tmp/mnt/home", "TMPDIR": "/tmp/mnt/tmp", "XDG_CACHE_HOME": "/tmp/xdg"}
    stock = _on_fuse(work, noflockfs, 2, _env(False, USER="root", **env))
    for result in stock:
        assert result["triton_dir"] == "/tmp/mnt/home/.triton/cache"
        assert result["inductor_dir"] == "/tmp/mnt/tmp/torchinductor_root"
        assert result["torch_ok"] is False and "No locks available" in str(result["torch_error"])
    shim = _on_fuse(work, noflockfs, 8, _env(True, USER="root", **env))
    for result in shim:
        assert result["triton_dir"] == "/tmp/xdg/triton", result
        assert result["inductor_dir"] == "/tmp/xdg/torchinductor", result
        assert result["triton_ok"] is True and result["torch_ok"] is True, result
        said = _said(result, "TORCHINDUCTOR_CACHE_DIR") + _said(result, "TRITON_CACHE_DIR")
        assert len(said) == 2 and all("fuse.noflockfs" in s for s in said), result["warnings"]


# ----------------------------------------------------------------- a site's pin, doctor


def test_manifest_pins_the_cache_per_user(work: Work) -> None:
    """A manifest's ``caches`` pins Triton's cache per node, ``$USER`` expanded for the
    user who runs it; ``doctor --json`` reports it with its source and verdict, and the
    import sets it in ``TRITON_CACHE_DIR`` for Triton."""
    manifest = work.root / "site.json"
    pinned = f"{work.root}/scratch/$USER/triton"
    manifest.write_text(json.dumps({"schema": 2, "components": {}, "caches": {"triton": pinned}}))
    manifest.chmod(0o644)
    env = _env(True, HOME=str(work.root / "home"), TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    cache = json.loads(done.stdout)["caches"]["triton"]
    assert cache["path"] == f"{work.root}/scratch/root/triton", cache
    assert cache["source"] == "manifest" and cache["apply"] is True and cache["error"] is None
    assert cache["local"] is True and cache["flock"] is True and cache["writable"] is True
    used = subprocess.run(
        [sys.executable, "-c", "import triton; print(triton.knobs.cache.dir)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert used.stdout.strip() == cache["path"], used.stderr
    manifest.write_text(json.dumps({"schema": 2, "components": {}, "caches": {"tmp": "x"}}))
    refused = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "check-manifest", str(manifest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert refused.returncode != 0 and "caches.tmp" in refused.stderr + refused.stdout
