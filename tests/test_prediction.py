"""One truth about what runs: ``doctor --arch N`` (its JSON's ``runs``), ``which
COMPONENT --arch N`` and the compile-time messages name the binary that Triton's real
ahead-of-time compile for ``sm_N`` runs, or the error it stops with.

The matrix: the installed Triton release (the sessions that run this file: 3.0, 3.3,
3.6, 3.9; 3.8 passed it by hand, and shares 3.6's catalog row) x settings (none,
``TRITON_PTXAS_PATH`` only, the release's Blackwell variable only, both) x
architectures. Every ptxas is a real one behind a logging
wrapper: Triton's bundled binaries are replaced, in a private mount namespace, by
wrappers that log the path Triton ran them by; the user's are wrappers of the same
binaries elsewhere. The shim's own probes (their files are named
``triton-toolchain-probe-*``) are told apart from the kernel's assembly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fit_compile import MARK
from fit_fixtures import installed_triton
from hostile import clean_env
from triton_layouts import Namespace, nvidia_dir, record_bundled_tools, recording_tool
from triton_toolchain.resolver._catalog import triton_release

pytestmark = pytest.mark.root  # the bundled binaries are replaced in a mount namespace

TESTS = Path(__file__).resolve().parent
ROW = triton_release(installed_triton())
ARCHS = (75, 80, 90, 100, 120)
BLACKWELL_VARIABLE = (ROW.blackwell_variable if ROW else None) or "TRITON_PTXAS_BLACKWELL_PATH"
SETTINGS = {
    "none": (),
    "ptxas-only": ("TRITON_PTXAS_PATH",),
    "blackwell-only": (BLACKWELL_VARIABLE,),
    "both": ("TRITON_PTXAS_PATH", BLACKWELL_VARIABLE),
}


def _gpu_names(line: str) -> list[str]:
    return [a.split("=", 1)[1] for a in line.split() if a.startswith("--gpu-name=")]


def _assembled(log: Path, arch: int) -> list[str]:
    """The binaries (as Triton ran them) that assembled the kernel for ``sm_<arch>``."""
    if not log.exists():
        return []
    return [
        line.split(" ", 1)[0]
        for line in log.read_text().splitlines()
        if "triton-toolchain-probe-" not in line
        and any(g in (f"sm_{arch}", f"sm_{arch}a") for g in _gpu_names(line))
    ]


class Site:
    """The matrix's machine: the bundled binaries replaced by logging wrappers in a
    private mount namespace, the user's ptxas wrappers, and one home per setting."""

    def __init__(self, root: Path) -> None:
        self.root, self.log = root, root / "runs.log"
        self.namespace = Namespace()
        self.bundled = record_bundled_tools(self.namespace, root, self.log)
        real = root / "triton-bin"  # the second view of the real directory
        blackwell = (
            "ptxas-blackwell" if (nvidia_dir() / "bin" / "ptxas-blackwell").exists() else "ptxas"
        )
        self.user = {
            "TRITON_PTXAS_PATH": recording_tool(root / "mine" / "ptxas", real / "ptxas", self.log),
            BLACKWELL_VARIABLE: recording_tool(
                root / "mine-blackwell" / "ptxas", real / blackwell, self.log
            ),
        }

    def env(self, setting: str) -> dict[str, str]:
        home = self.root / "home" / setting
        return clean_env(home, **{v: str(self.user[v]) for v in SETTINGS[setting]})

    def run(self, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.namespace.argv(argv),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


def _compile(site: Site, env: dict[str, str], arch: int) -> dict[str, Any]:
    """Triton's compile for ``sm_<arch>`` in a process of its own, as ``doctor --arch``
    predicts it (a warning is given once per process)."""
    done = site.run([sys.executable, str(TESTS / "fit_compile.py"), str(arch)], env)
    rows = [json.loads(x[len(MARK) :]) for x in done.stdout.splitlines() if x.startswith(MARK)]
    assert len(rows) == 1, done.stderr[-3000:]
    return dict(rows[0])


def _said(site: Site, env: dict[str, str], arch: int) -> tuple[dict[str, Any], str, int]:
    """``doctor --arch`` JSON's ``runs``, and ``which <its component> --arch``'s output
    and exit status (2 for a wrong setting, 1 for anything else that stops it)."""
    cli = [sys.executable, "-m", "triton_toolchain"]
    doctor = site.run([*cli, "doctor", "--arch", str(arch), "--json"], env)
    assert "Traceback" not in doctor.stderr, doctor.stderr
    runs = json.loads(doctor.stdout)["runs"]
    which = site.run([*cli, "which", runs["component"], "--arch", str(arch)], env)
    assert "Traceback" not in which.stderr, which.stderr
    return runs, which.stdout.strip(), which.returncode


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_doctor_which_and_the_compile_name_the_binary_that_assembles(
    tmp_path: Path, setting: str
) -> None:
    site = Site(tmp_path)
    env = site.env(setting)
    with ThreadPoolExecutor(4) as pool:  # each asks its own process
        said = dict(zip(ARCHS, pool.map(lambda a: _said(site, env, a), ARCHS), strict=True))
    site.log.unlink(missing_ok=True)  # doctor's probes are not the compile's
    with ThreadPoolExecutor(4) as pool:  # the log tells the targets apart
        compiled = dict(zip(ARCHS, pool.map(lambda a: _compile(site, env, a), ARCHS), strict=True))
    ran = {arch: _assembled(site.log, arch) for arch in ARCHS}
    for arch in ARCHS:
        runs, which, status = said[arch]
        result = compiled[arch]
        where = (setting, arch, runs, result)
        if result["ok"]:
            assert ran[arch] == [runs["path"]] and runs["error"] is None, where
            assert (which, status) == (runs["path"], 0), where
        else:
            assert ran[arch] == [] and runs["error"] is not None, where
            wrong_setting = str(runs["error"]).startswith("SettingError")
            assert (which, status) == ("", 2 if wrong_setting else 1), where
            assert str(result["error"]).split(":")[0] == runs["error"].split(":")[0], where
        assert runs["warnings"] == result["warnings"], where
    assert any(compiled[a]["ok"] for a in ARCHS)
