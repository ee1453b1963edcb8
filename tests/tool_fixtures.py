"""Real fake tools for the tests: executable ``/bin/sh`` scripts that answer like
NVIDIA's tools and compilers, record every run, and can hand over to a real binary.

Nothing here imitates our own logic: the code under test runs these files for real.
"""

from __future__ import annotations

import shlex
import stat
from pathlib import Path

from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import Context, Locator, search
from triton_toolchain.resolver._model import Choice

# The line of every CUDA tool's ``--version`` that says its release (ptxas, nvcc...).
RELEASE_LINE = "Cuda compilation tools, release {release}, V{release}.93"
BANNER = (
    "{name}: NVIDIA (R) Ptx optimizing assembler\n"
    "Copyright (c) 2005-2025 NVIDIA Corporation\n"
    "Built on Fri_Feb_21_20:23:50_PST_2025\n"
    f"{RELEASE_LINE}\n"
    "Build cuda_{release}.r{release}/compiler.35583870_0"
)

REAL_GCC = Path("/usr/bin/gcc")
REAL_CUDA = Path("/usr/local/cuda-13.0")
REAL_LIBDEVICE = REAL_CUDA / "nvvm/libdevice/libdevice.10.bc"


def write_script(path: Path, body: str, *, mode: int = 0o755) -> Path:
    """Write an executable ``/bin/sh`` script (parents created) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return path


def _log_line(log: Path | None) -> str:
    return f'echo "$0 $*" >> {shlex.quote(str(log))}\n' if log else ""


def fake_ptxas(
    directory: Path,
    release: str,
    *,
    name: str = "ptxas",
    log: Path | None = None,
    exec_real: Path | None = None,
) -> Path:
    """``directory/name`` printing ptxas's real ``--version`` banner for ``release``;
    appends ``"<path> <args>"`` to ``log`` on every run; other calls ``exec`` the real
    ``exec_real`` (or fail)."""
    tail = f'exec {shlex.quote(str(exec_real))} "$@"\n' if exec_real else "exit 1\n"
    body = (
        _log_line(log)
        + 'if [ "$1" = "--version" ]; then\ncat <<\'EOF\'\n'
        + BANNER.format(name=name, release=release)
        + "\nEOF\nexit 0\nfi\n"
        + tail
    )
    return write_script(directory / name, body)


def wrapper(path: Path, real: Path, *, log: Path | None = None) -> Path:
    """An executable script at ``path`` that runs the real binary ``real``."""
    return write_script(path, _log_line(log) + f'exec {shlex.quote(str(real))} "$@"\n')


def gpu_names_run(log: Path) -> list[str]:
    """The ``--gpu-name`` of each assembly a logging wrapper saw (``wrapper(log=...)``),
    the shim's own probes (files named ``triton-toolchain-probe-*``) left out."""
    if not log.exists():
        return []
    return [
        arg.split("=", 1)[1]
        for line in log.read_text().splitlines()
        if "triton-toolchain-probe-" not in line
        for arg in line.split()
        if arg.startswith("--gpu-name=")
    ]


def hanging_tool(directory: Path, name: str = "ptxas") -> Path:
    """A tool that never answers (it becomes ``sleep 60`` so a kill stops it at once)."""
    return write_script(directory / name, "exec sleep 60\n")


def fake_compiler(
    path: Path, *, target: str, version: str = "13.2.0", log: Path | None = None
) -> Path:
    """A ``gcc`` look-alike whose ``-v`` reports ``target`` and ``version`` on stderr."""
    body = _log_line(log) + (
        f'echo "Using built-in specs." >&2\necho "Target: {target}" >&2\n'
        f'echo "gcc version {version} (fake)" >&2\nexit 0\n'
    )
    return write_script(path, body)


def make_writable_by_all(path: Path, *, sticky: bool = False) -> None:
    """``chmod o+w`` (with the sticky bit if asked), as a careless admin would."""
    mode = path.stat().st_mode | stat.S_IWOTH | (stat.S_ISVTX if sticky else 0)
    path.chmod(mode)


def fake_host(root: Path, environ: dict[str, str] | None = None, **fields: object) -> Host:
    """A ``Host`` over ``root``: ``PATH`` empty of real directories unless given, no
    Triton/torch/wheels, this interpreter's facts replaced where ``fields`` says."""
    env = {"PATH": str(root / "empty-bin")} if environ is None else environ
    defaults: dict[str, object] = {
        "python_include": root / "py" / "include" / "python3.11",
        "python_version": (3, 11),
        "base_prefix": root / "py",
        "prefix": root / "venv",
        "machine": "x86_64",
    }
    torch, nvidia = fields.pop("torch_dir", None), fields.pop("nvidia_dirs", ())
    defaults["packages"] = {"torch": (torch,) if torch else (), "nvidia": nvidia}
    defaults.update(fields)
    return Host(root=root, environ=env, **defaults)  # type: ignore[arg-type]


def locate(
    locators: dict[str, Locator], name: str, host: Host, ctx: Context | None = None
) -> Choice:
    """Discover ``name`` with its locator's steps and check, as the resolver does."""
    loc = locators[name]
    context = ctx or Context()
    return loc.finish(
        host, context, search(name, loc.steps, lambda p: loc.check(host, p, context), host, context)
    )


def python_include(directory: Path, version: str = "3.11.7", *, python_h: bool = True) -> Path:
    """An include directory with ``patchlevel.h`` (as CPython writes it) and ``Python.h``."""
    major, minor, _ = version.split(".")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "patchlevel.h").write_text(
        f"#define PY_MAJOR_VERSION        {major}\n#define PY_MINOR_VERSION        {minor}\n"
        f'#define PY_MICRO_VERSION        7\n#define PY_VERSION              "{version}"\n'
    )
    if python_h:
        (directory / "Python.h").write_text('#include "patchlevel.h"\n')
    return directory


def write_os_release(root: Path, text: str) -> None:
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc/os-release").write_text(text)


def cuda_include(directory: Path, version: int = 12080, *, crt: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cuda.h").write_text(
        f"#ifndef __cuda_cuda_h__\n#define CUDA_VERSION {version}\n#endif\n"
    )
    if crt:
        (directory / "crt").mkdir()
        (directory / "crt/host_config.h").write_text("/* host_config */\n")
    return directory


def libdevice(directory: Path, data: bytes | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "libdevice.10.bc"
    path.write_bytes(REAL_LIBDEVICE.read_bytes() if data is None else data)
    return path
