"""Machine layouts for the tests that drive the installed Triton: a strict manifest
(docs/manifest.md) naming recording ptxas wrappers, the driver stand-in, the compiler
and headers; and a runner of ``scenario.py`` in a fresh interpreter.

The recording wrapper appends ``"<its path> <args>"`` to a log, then execs the real
ptxas from Triton's wheel, so a test proves which binary Triton ran for which target.

Discovery (no manifest) is tested at the real system paths: ``Namespace`` lists mounts
made in a private mount namespace (``unshare -m``, as root) before the scenario's
interpreter starts, e.g. a directory bound over ``/run`` or Triton's ``bin``; nothing
outside that process changes.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import driver_standin
from conftest import SRC
from tool_fixtures import fake_ptxas
from triton_toolchain.resolver._catalog import COMPONENT

ROOT = Path(__file__).resolve().parent.parent
PTH = SRC / "triton_toolchain.pth"
SCENARIO = Path(__file__).resolve().parent / "scenario.py"
SCENARIO_TIMEOUT_S = 300
# Triton's backends/nvidia/bin, as every release since 3.3 ships it.
BUNDLED_TOOLS = ("ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm")


def triton_version() -> tuple[int, int]:
    """The installed Triton's (major, minor), read without importing it."""
    major, minor = importlib.metadata.version("triton").split(".")[:2]
    return int(major), int(minor)


def nvidia_dir() -> Path:
    """``triton/backends/nvidia`` of the installed Triton, found without importing it."""
    spec = importlib.util.find_spec("triton")
    assert spec is not None and spec.submodule_search_locations, "Triton is not installed"
    return Path(next(iter(spec.submodule_search_locations))) / "backends" / "nvidia"


def blackwell_from() -> int:
    """The first architecture for which the installed Triton runs ptxas-blackwell
    (its ``compiler.get_ptxas``; the catalog's row is checked against that code in
    ``tests/test_releases.py``): 90 in 3.9, 100 in 3.3 and 3.6-3.8, never (a number
    above every architecture) where the release has no ptxas-blackwell."""
    from triton_toolchain.resolver._catalog import triton_release

    row = triton_release(triton_version())
    return row.blackwell_from if row is not None and row.blackwell_from else 10**6


def bundled(name: str) -> Path:
    """The installed Triton's own binary that serves ``name`` (``ptxas-blackwell``: its
    ``ptxas`` where the release bundles no ptxas-blackwell)."""
    spec = COMPONENT[name]
    bin_dir = nvidia_dir() / "bin"
    return next((bin_dir / b for b in spec.bundled if (bin_dir / b).exists()), bin_dir / name)


def recording_tool(path: Path, real: Path, log: Path) -> Path:
    """A script at ``path`` that logs its arguments to ``log`` and execs ``real``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nprintf "%s\\n" "$0 $*" >> "{log}"\nexec "{real}" "$@"\n')
    path.chmod(0o755)
    return path


def old_ptxas(path: Path, log: Path, release: str = "11.8") -> Path:
    """A ptxas that says it is CUDA ``release`` and fails if asked to assemble."""
    return fake_ptxas(path.parent, release, name=path.name, log=log)


@dataclass
class Layout:
    root: Path
    log: Path
    components: dict[str, str] = field(default_factory=dict)
    driver_dirs: list[str] = field(default_factory=list)
    strict: bool = True

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    def write(self) -> Path:
        document = {
            "schema": 1,
            "generator": "triton-toolchain tests",
            "strict": self.strict,
            "driver_dirs": self.driver_dirs,
            "components": {name: {"path": path} for name, path in self.components.items()},
        }
        self.manifest.write_text(json.dumps(document, indent=2))
        return self.manifest

    def ptxas_runs(self) -> list[tuple[str, str]]:
        """``(wrapper directory name, --gpu-name value)`` of each assembler run."""
        return [(Path(tool).parent.name, gpu) for tool, gpu in assembler_runs(self.log)]


def assembler_runs(log: Path) -> list[tuple[str, str]]:
    """``(the path Triton ran, --gpu-name value)`` of each assembler run that recording
    wrappers logged to ``log`` (``--version`` queries and the shim's fit probe, which
    assembles ``probe.ptx`` in a ``triton-toolchain-probe-*`` directory, are not runs)."""
    if not log.exists():
        return []
    runs = []
    for line in log.read_text().splitlines():
        tool, *args = line.split()
        gpu = [a.split("=", 1)[1] for a in args if a.startswith("--gpu-name=")]
        if gpu and not any("triton-toolchain-probe-" in a for a in args):
            runs.append((tool, gpu[0]))
    return runs


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def make_layout(root: Path, *, driver: bool = True, stub: bool = False) -> Layout:
    """A complete strict layout under ``root``: recording ``ptxas`` (``bin-ptxas``) and
    ``ptxas-blackwell`` (``bin-blackwell``) wrappers of Triton's bundled binaries, gcc,
    this Python's headers, Triton's ``cuda.h`` and libdevice; the driver stand-in in
    ``root/driver`` (marker ``chosen``) and/or a link stub in ``root/toolkit/stubs``."""
    nvidia = nvidia_dir()
    log = root / "ptxas.log"
    layout = Layout(root, log)
    layout.components = {
        "ptxas": str(recording_tool(root / "bin-ptxas" / "ptxas", bundled("ptxas"), log)),
        "ptxas-blackwell": str(
            recording_tool(root / "bin-blackwell" / "ptxas", bundled("ptxas-blackwell"), log)
        ),
        "cc": str(Path(os.path.realpath("/usr/bin/gcc"))),
        "python-headers": python_include(),
        "cuda-headers": str(nvidia / "include"),
        "libdevice": str(nvidia / "lib" / "libdevice.10.bc"),
    }
    if driver:
        driver_standin.driver(root / "driver", marker="chosen")
        layout.driver_dirs = [str(root / "driver")]
    if stub:
        driver_standin.stub(root / "toolkit")
        layout.components["libcuda-link"] = str(root / "toolkit" / "stubs")
    layout.write()
    return layout


def scenario_env(layout: Layout, *, manifest: bool = True, **extra: str) -> dict[str, str]:
    """A clean environment: no TRITON_*, CC, LD_LIBRARY_PATH, CUDA or conda variables
    of the caller's, the layout's manifest (``manifest=False``: none, for discovery), a
    private Triton cache and HOME (so no user manifest or remembered tool answers)."""
    dropped = ("CC", "LD_LIBRARY_PATH", "PYTHONPATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
    dropped += ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON") and k not in dropped}
    if manifest:
        env["TRITON_TOOLCHAIN_MANIFEST"] = str(layout.manifest)
    env.update(
        TRITON_CACHE_DIR=str(layout.root / "cache"),
        HOME=str(layout.root / "home"),
        PYTHONPATH=os.pathsep.join([str(SRC), str(Path(__file__).parent)]),
        TRITON_DEFAULT_FP_FUSION="1",
    )
    env.update(extra)
    return env


@dataclass
class Namespace:
    """Mounts made, in order, in a private mount namespace before the scenario's
    interpreter starts (root only: ``unshare -m --propagation private``)."""

    mounts: list[list[str]] = field(default_factory=list)

    def bind(self, source: Path, target: Path | str) -> Namespace:
        """Show ``source`` (a file or directory) at ``target``, which must exist."""
        self.mounts.append(["--bind", str(source), str(target)])
        return self

    def tmpfs(self, target: Path | str) -> Namespace:
        """An empty directory over ``target`` (e.g. hiding ``/usr/sbin``'s ldconfig)."""
        self.mounts.append(["-t", "tmpfs", "-o", "mode=0755", "tmpfs", str(target)])
        return self

    def argv(self, command: list[str]) -> list[str]:
        """``command`` run inside the namespace, after the mounts (``mount -n``: no
        record written to /run/mount)."""
        unshare, mount = _tool("unshare"), _tool("mount")
        lines = ["set -e", *(shlex.join([mount, "-n", *m]) for m in self.mounts), 'exec "$@"']
        script = "\n".join(lines)
        return [unshare, "-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", *command]


def _tool(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} is not installed; install util-linux and mount (see README)"
    return found


def record_bundled_tools(namespace: Namespace, root: Path, log: Path) -> Path:
    """Replace, in ``namespace``, Triton's ``backends/nvidia/bin`` by recording wrappers
    of its own binaries (reached through ``root/triton-bin``, a second view of the real
    directory), so that the log names the bundled path Triton ran. Returns that path."""
    bundled = nvidia_dir() / "bin"
    real, wrappers = root / "triton-bin", root / "triton-bin-wrappers"
    real.mkdir(parents=True)
    for name in BUNDLED_TOOLS:
        if (bundled / name).exists():  # no ptxas-blackwell before 3.6 (but for 3.3)
            recording_tool(wrappers / name, real / name, log)
    namespace.bind(bundled, real).bind(wrappers, bundled)
    return bundled


def pth_dir(root: Path) -> Path:
    """A directory holding a copy of the package's .pth, for ``site.addsitedir``."""
    directory = root / "site"
    directory.mkdir(exist_ok=True)
    (directory / PTH.name).write_text(PTH.read_text())
    return directory


def run_scenario(
    layout: Layout,
    activation: str,
    actions: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    python_flags: tuple[str, ...] = (),
    namespace: Namespace | None = None,
) -> dict[str, Any]:
    """Run ``scenario.py`` in a fresh interpreter (inside ``namespace``'s mounts when
    given) and return its report."""
    config = {"activation": activation, "actions": actions, "pth_dir": str(pth_dir(layout.root))}
    env = dict(env if env is not None else scenario_env(layout))
    if activation == "none":
        # Stock Triton even where the shim is installed with its .pth (as nox installs it).
        env["TRITON_TOOLCHAIN"] = "off"
    command = [sys.executable, *python_flags, str(SCENARIO), json.dumps(config)]
    done = subprocess.run(
        namespace.argv(command) if namespace is not None else command,
        env=env,
        cwd=cwd or layout.root,
        capture_output=True,
        text=True,
        timeout=SCENARIO_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"scenario failed:\n{done.stdout}\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report["stderr"] = done.stderr
    return report
