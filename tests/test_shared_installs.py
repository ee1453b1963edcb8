"""Shared and managed installs, laid out for real as HPC sites lay them out, and Triton's
real ahead-of-time compile (``GPUTarget("cuda", 80, 32)`` and 90) run by a member user
(``setpriv``) in a private mount namespace (``unshare -m``) where the system CUDA is
hidden, with the shim and without it (``TRITON_TOOLCHAIN=off``):

- a project environment: a venv in a setgid directory (mode 2775) of a group made by the
  test, made by one member, with Triton's bundled ptxas, used by another member;
- a toolchain owned by a service account (mode 755, as Spack, EasyBuild or an admin's
  conda leave it), named by ``TRITON_PTXAS_PATH``: refused, then allow-listed by
  ``TRITON_TOOLCHAIN_TRUSTED_OWNERS`` or a manifest's ``trusted_owners``;
- Triton's ``bin`` directory writable by a group outside the trusted set, into which
  one of its members planted a logging ptxas.

The promise: where stock Triton compiles, the shim compiles; where the shim refuses,
stock Triton ran a file an outsider could change, and the shim's message says who.

The venv is made with Debian's ``/usr/bin/python3`` (the users made here cannot reach
an interpreter under ``/root``) and filled by ``uv`` from its cache (offline first), the
shim copied in as a wheel installs it (the package and its ``.pth`` line).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require_tool
from fit_compile import MARK
from hostile import SRC, TESTS, reachable
from triton_toolchain.runtime._activate import PTH_LINE

# Real users and groups (useradd), a private mount namespace, Triton from PyPI.
pytestmark = [pytest.mark.root, pytest.mark.network]

TRITON = "triton==3.9.0"
SYSTEM_PYTHON = "/usr/bin/python3"
HIDDEN = ("/usr/local/cuda-13.0", "/opt/cuda")  # the system CUDA, hidden in the namespace
REAL_PTXAS = Path.home() / ".cache" / "triton-toolchain" / "ptxas" / "12.6.20" / "ptxas"
ARCHS = ("80", "90")
TIMEOUT_S = 300


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return done  # type: ignore[no-any-return]


@dataclass
class Site:
    """The users and groups made for the module, and the shared venv."""

    tag: str
    venv: Path
    site_packages: Path
    work: Path

    def user(self, role: str) -> str:
        return f"tt{self.tag}{role}"

    def group(self, role: str) -> str:
        return f"tt{self.tag}{role}"

    @property
    def bundled_bin(self) -> Path:
        return self.site_packages / "triton" / "backends" / "nvidia" / "bin"


def _uv() -> str:
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else require_tool("uv", "uv (pip install uv)")


def _make_venv(venv: Path) -> Path:
    """A venv of Debian's Python with Triton and pyelftools (copies, not links into uv's
    cache, which ``chown`` would change too) and this checkout's shim, as installed."""
    _run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)])
    install = [_uv(), "pip", "install", "-p", str(venv / "bin" / "python"), "--link-mode", "copy"]
    packages = [TRITON, "pyelftools"]
    offline = subprocess.run([*install, "--offline", *packages], capture_output=True, check=False)
    if offline.returncode != 0:  # an empty cache (CI's first run): from the index
        _run([*install, *packages])
    site = next((venv / "lib").glob("python3*/site-packages"))
    shutil.copytree(
        SRC / "triton_toolchain",
        site / "triton_toolchain",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (site / "triton_toolchain.pth").write_text(PTH_LINE + "\n")
    return site


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """Users ``owner`` (made the venv) and ``member`` (compiles) of the group ``proj``;
    ``swadmin``, a service account; ``mallory``, a member of ``evil`` only. The venv in a
    setgid 2775 directory of ``proj``, every file the owner's and group-writable, as
    ``umask 002`` leaves them."""
    require_tool("useradd", "passwd")
    assert os.geteuid() == 0, "this suite makes users: run it as root (CI's container is)"
    assert Path(SYSTEM_PYTHON).exists(), f"install python3 (Debian's) for {SYSTEM_PYTHON}"
    tag = uuid.uuid4().hex[:6]
    # Not under pytest's base directory, which another pytest session may make 0700.
    work = Path(tempfile.mkdtemp(prefix="triton-toolchain-shared-"))
    work.chmod(0o755)
    made_users: list[str] = []
    made_groups: list[str] = []
    here = Site(tag, work / "proj" / "venv", work, work)
    try:
        for role in ("proj", "evil"):
            _run([require_tool("groupadd", "passwd"), here.group(role)])
            made_groups.append(here.group(role))
        for role, groups in (
            ("owner", "proj"),
            ("member", "proj"),
            ("swadmin", ""),
            ("mallory", "evil"),
        ):
            extra = ["-G", here.group(groups)] if groups else []
            _run(
                [
                    require_tool("useradd", "passwd"),
                    "-M",
                    "-U",
                    "-s",
                    "/usr/sbin/nologin",
                    *extra,
                    here.user(role),
                ]
            )
            made_users.append(here.user(role))
        project = work / "proj"
        project.mkdir()
        shutil.chown(project, "root", here.group("proj"))
        project.chmod(0o2775)
        site_packages = _make_venv(here.venv)
        _run(["chown", "-R", f"{here.user('owner')}:{here.group('proj')}", str(here.venv)])
        _run(["chmod", "-R", "g+w", str(here.venv)])
        _run(["find", str(here.venv), "-type", "d", "-exec", "chmod", "g+s", "{}", "+"])
        for name in ("member", "mallory"):
            home = work / "home" / name
            home.mkdir(parents=True)
            shutil.chown(home, here.user(name), here.user(name))
            home.chmod(0o700)
        shutil.copy(TESTS / "fit_compile.py", work / "fit_compile.py")
        reachable(work / "fit_compile.py")
        reachable(project)
        (work / "home").chmod(0o755)
        yield Site(tag, here.venv, site_packages, work)
    finally:
        for user in made_users:
            subprocess.run([require_tool("userdel", "passwd"), user], check=False)
        for group in made_groups:
            subprocess.run([require_tool("groupdel", "passwd"), group], check=False)
        shutil.rmtree(work, ignore_errors=True)


def _env(site: Site, user: str, **extra: str) -> dict[str, str]:
    home = site.work / "home" / user
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TRITON_CACHE_DIR": str(home / "triton-cache"),
    }
    env.update(extra)
    return env


def _as_member(
    site: Site, argv: list[str], env: dict[str, str], user: str = "member", *, hidden: bool = True
) -> str:
    """``argv`` run as ``user`` (its groups), the system CUDA hidden: its output."""
    hide = " && ".join(
        f"mount -t tmpfs none {d}"
        for d in HIDDEN
        if hidden and os.path.isdir(d) and not os.path.islink(d)
    )
    setpriv = require_tool("setpriv", "util-linux")
    name = site.user(user)
    as_user = [setpriv, f"--reuid={name}", f"--regid={name}", "--init-groups", *argv]
    script = (hide + " && " if hide else "") + 'exec "$@"'
    unshare = require_tool("unshare", "util-linux")
    done = subprocess.run(
        [unshare, "-m", "--propagation", "private", "sh", "-c", script, "sh", *as_user],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return done.stdout + done.stderr


def _compile(site: Site, *, shim: bool = True, **extra: str) -> tuple[dict[str, dict], str]:
    """The AOT compile for each of ``ARCHS`` as the member: ``{arch: result}``, output."""
    env = _env(site, "member", **extra)
    if not shim:
        env["TRITON_TOOLCHAIN"] = "off"
    python = str(site.venv / "bin" / "python")
    out = _as_member(site, [python, str(site.work / "fit_compile.py"), *ARCHS], env)
    results = {}
    for line in out.splitlines():
        if line.startswith(MARK):
            found = json.loads(line[len(MARK) :])
            results[str(found["arch"])] = found
    assert sorted(results) == sorted(ARCHS), out
    assert "Traceback" not in out.replace(MARK, ""), out
    return results, out


def _ok(results: dict[str, dict]) -> bool:
    return all(r["ok"] for r in results.values())


# ---------------------------------------------------------------- the project environment


def test_a_group_environment_compiles_with_the_shim_where_stock_does(site: Site) -> None:
    """The venv's owner and its group ``proj`` can change the interpreter and Triton
    already: a ptxas only they can change is trusted, for every member."""
    stock, out = _compile(site, shim=False)
    assert _ok(stock), out
    shim, out = _compile(site)
    assert _ok(shim), out
    assert all(r["warnings"] == [] for r in shim.values()), out


def test_doctor_says_which_rule_trusts_the_groups_ptxas(site: Site) -> None:
    env = _env(site, "member")
    python = str(site.venv / "bin" / "python")
    out = _as_member(site, [python, "-m", "triton_toolchain", "doctor", "-v", "--arch", "80"], env)
    # -v says Triton's directory once, its bundled files' paths relative to it, and wraps
    # its lines at the screen's width.
    triton_dir = site.bundled_bin.parents[2]
    flat = " ".join(out.split())
    assert f"Triton {TRITON.split('==')[1]} at {triton_dir}" in flat, out
    assert "ptxas: backends/nvidia/bin/ptxas (triton-bundled" in flat, out
    details = flat.split("ptxas: backends/nvidia/bin/ptxas (triton-bundled", 1)[1]
    trust = details.split(" looked at: ", 1)[0].split(" trust: ", 1)[1]
    assert trust.startswith("trusted: "), trust
    assert f"{site.user('owner')} (uid " in trust, trust
    assert f"group {site.group('proj')} (gid " in trust, trust
    assert f"can change {site.venv}, which holds the Python interpreter" in trust, trust


# ---------------------------------------------------------------- a service account's toolchain


@pytest.fixture(scope="module")
def managed(site: Site) -> Path:
    """A real CUDA 12.6 ptxas in a tree of the service account, mode 755."""
    assert REAL_PTXAS.exists(), "fetch the real ptxas binaries: python tools/fetch_ptxas.py"
    tree = site.work / "sw" / "cuda-12.6"
    (tree / "bin").mkdir(parents=True)
    shutil.copy(REAL_PTXAS, tree / "bin" / "ptxas")
    _run(["chown", "-R", site.user("swadmin"), str(site.work / "sw")])
    _run(["chmod", "-R", "u=rwX,go=rX", str(site.work / "sw")])
    (tree / "bin" / "ptxas").chmod(0o755)
    reachable(tree / "bin" / "ptxas")
    return tree / "bin" / "ptxas"


def test_a_service_accounts_ptxas_is_refused_naming_the_owner_and_the_allow_list(
    site: Site, managed: Path
) -> None:
    """Stock Triton runs a file that the service account, outside the trusted set, can
    change; the shim says who and how to trust that owner."""
    stock, out = _compile(site, shim=False, TRITON_PTXAS_PATH=str(managed))
    assert stock["80"]["ok"], out
    shim, out = _compile(site, TRITON_PTXAS_PATH=str(managed))
    error = shim["80"]["error"] or ""
    assert not shim["80"]["ok"], out
    assert error.startswith("SettingError: TRITON_PTXAS_PATH="), error
    assert f"is owned by {site.user('swadmin')} (uid " in error, error
    assert "mode 0755" in error, error
    assert f"add {site.user('swadmin')} to TRITON_TOOLCHAIN_TRUSTED_OWNERS" in error, error
    assert "chmod go-w" not in error, error


def test_an_allow_listed_service_account_compiles(site: Site, managed: Path) -> None:
    shim, out = _compile(
        site, TRITON_PTXAS_PATH=str(managed), TRITON_TOOLCHAIN_TRUSTED_OWNERS=site.user("swadmin")
    )
    assert shim["80"]["ok"], out
    assert "RuntimeWarning" not in out, out


def test_an_allow_list_for_one_owner_never_admits_another(site: Site, managed: Path) -> None:
    listed = f"{site.user('mallory')},%{site.group('evil')}"
    shim, out = _compile(
        site, TRITON_PTXAS_PATH=str(managed), TRITON_TOOLCHAIN_TRUSTED_OWNERS=listed
    )
    error = shim["80"]["error"] or ""
    assert not shim["80"]["ok"], out
    assert f"is owned by {site.user('swadmin')} (uid " in error, error


def test_a_manifest_allow_lists_the_service_account_once_for_the_site(
    site: Site, managed: Path
) -> None:
    """The manifest lies where root alone can change it (a site's /etc); its
    ``trusted_owners`` admit the service account, whose ptxas it names."""
    etc = site.work / "etc"
    etc.mkdir(exist_ok=True)
    manifest = etc / "manifest.json"
    document = {
        "schema": 2,
        "trusted_owners": [site.user("swadmin")],
        "components": {"ptxas": {"path": str(managed), "version": "12.6"}},
    }
    manifest.write_text(json.dumps(document))
    reachable(manifest)
    shim, out = _compile(site, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    assert shim["80"]["ok"], out
    assert "RuntimeWarning" not in out, out  # the manifest was taken, not warned about


# ---------------------------------------------------------------- a group outside the set


def test_a_bin_directory_writable_by_an_outside_group_is_refused_before_anything_runs(
    site: Site,
) -> None:
    """``evil`` may write Triton's ``bin``; its member mallory swaps ``ptxas`` for one
    that logs each run and then runs the real one. Stock Triton runs hers; the shim runs
    nothing of the directory, and its error names the group and both fixes."""
    bin_dir = site.bundled_bin
    runs = site.work / "runs"
    runs.mkdir(exist_ok=True)
    runs.chmod(0o1777)  # as /tmp: whoever runs her ptxas appends to her log
    log = runs / "runs.log"
    original_group = bin_dir.stat().st_gid
    shutil.chown(bin_dir, group=site.group("evil"))
    bin_dir.chmod(0o2775)
    try:
        for name in ("ptxas", "ptxas-blackwell"):
            plant = (
                f"mv {bin_dir / name} {bin_dir / name}.real && "
                f'printf \'#!/bin/sh\\necho "$0 $*" >> {log}\\nexec "$0.real" "$@"\\n\' '
                f"> {bin_dir / name} && chmod 755 {bin_dir / name}"
            )
            done = _as_member(site, ["sh", "-c", plant], _env(site, "mallory"), user="mallory")
            assert (bin_dir / f"{name}.real").exists(), done
        shim, out = _compile(site)
        assert not log.exists(), log.read_text()  # nothing of hers ran, not even --version
        error = shim["80"]["error"] or ""
        assert not shim["80"]["ok"], out
        assert f"is writable by its group {site.group('evil')} (gid " in error, error
        assert f"chmod g-w {bin_dir}" in error, error
        assert f"%{site.group('evil')}" in error, error
        python = str(site.venv / "bin" / "python")
        doctor = [python, "-m", "triton_toolchain", "doctor", "--arch", "80"]
        screen = _as_member(site, doctor, _env(site, "member"), hidden=False)  # CUDA 13.0
        flat = " ".join(screen.split())  # the note, unwrapped
        assert "note: ptxas: /usr/local/cuda" in flat, screen
        said = f"because {bin_dir / 'ptxas'} is not trusted (directory {bin_dir} is writable by"
        assert f"{said} its group {site.group('evil')} (gid " in flat, screen
        assert not log.exists(), log.read_text()
        stock, out = _compile(site, shim=False)
        assert _ok(stock), out
        assert f"{bin_dir / 'ptxas'} --version" in log.read_text()  # stock ran hers
    finally:
        for name in ("ptxas", "ptxas-blackwell"):
            if (bin_dir / f"{name}.real").exists():
                os.replace(bin_dir / f"{name}.real", bin_dir / name)
        os.chown(bin_dir, -1, original_group)
        bin_dir.chmod(0o2775)
        log.unlink(missing_ok=True)


def test_a_manifests_allow_list_is_kept_by_the_activation_record(site: Site, managed: Path) -> None:
    """The second process reuses the first one's record (it loads no resolver), and its
    Triton is given the service account's ptxas: the manifest's ``trusted_owners`` are
    put in force again by the record, before the facts that depend on them."""
    etc = site.work / "etc-record"
    etc.mkdir(exist_ok=True)
    manifest = etc / "manifest.json"
    document = {
        "schema": 2,
        "trusted_owners": [site.user("swadmin")],
        "components": {"ptxas": {"path": str(managed), "version": "12.6"}},
    }
    manifest.write_text(json.dumps(document))
    reachable(manifest)
    code = (
        "import sys, triton\n"
        "print('resolved:', 'triton_toolchain.resolver._resolve' in sys.modules)\n"
        "print('ptxas:', vars(triton.knobs.nvidia).get('ptxas'))\n"
    )
    python = str(site.venv / "bin" / "python")
    env = _env(site, "member", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    env["XDG_CACHE_HOME"] = str(site.work / "home" / "member" / "record-cache")
    twice = f'"{python}" -c "$0" && echo --- && "{python}" -c "$0"'
    # One namespace for both: each hiding mounts a new tmpfs, a change the record sees.
    first, _, second = _as_member(site, ["sh", "-c", twice, code], env).partition("---")
    assert f"ptxas: {managed}" in first and "resolved: True" in first, first
    assert f"ptxas: {managed}" in second and "resolved: False" in second, second
