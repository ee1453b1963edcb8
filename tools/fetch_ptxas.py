"""Fetch real ptxas binaries of a few CUDA releases from PyPI for the fit tests
(``tests/test_fit_matrix.py``): ``pip download --no-deps`` of NVIDIA's nvcc wheel, the
``bin/ptxas`` unpacked into ``~/.cache/triton-toolchain/ptxas/<version>/ptxas``.

Idempotent: a release already unpacked is not fetched again. Usage:
``python tools/fetch_ptxas.py`` (every release of ``RELEASES``), prints the directory.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# (PyPI project, version): 12.x come as nvidia-cuda-nvcc-cu12, 13.x as nvidia-cuda-nvcc.
RELEASES: tuple[tuple[str, str], ...] = (
    ("nvidia-cuda-nvcc-cu12", "12.4.131"),
    ("nvidia-cuda-nvcc-cu12", "12.6.20"),
    ("nvidia-cuda-nvcc-cu12", "12.9.86"),
    ("nvidia-cuda-nvcc", "13.1.115"),
    ("nvidia-cuda-nvcc", "13.3.33"),
    ("nvidia-cuda-nvcc", "13.5.37"),
)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "triton-toolchain" / "ptxas"


def _pip() -> list[str]:
    """This interpreter's pip, else the first ``pip3``/``pip`` on PATH (uv's virtual
    environments have none)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    found = shutil.which("pip3") or shutil.which("pip")
    if found is None:
        raise SystemExit("fetch_ptxas: no pip to download NVIDIA's wheels with; install pip")
    return [found]


def fetch(project: str, version: str, root: Path) -> Path:
    """``root/<version>/ptxas``, downloaded and unpacked if not there yet."""
    target = root / version / "ptxas"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                *_pip(),
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--platform",
                f"manylinux2014_{platform.machine()}",
                "--platform",
                f"manylinux_2_27_{platform.machine()}",
                "--dest",
                tmp,
                f"{project}=={version}",
            ],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            member = next(n for n in zf.namelist() if n.endswith("/bin/ptxas"))
            target.parent.mkdir(parents=True, exist_ok=True)
            # One partial file per process: two sessions may fetch at once.
            partial = target.with_name(f".ptxas.{os.getpid()}.partial")
            partial.write_bytes(zf.read(member))
            partial.chmod(0o755)
            partial.replace(target)
    return target


def main() -> None:
    root = cache_root()
    for project, version in RELEASES:
        fetch(project, version, root)
    print(root)


if __name__ == "__main__":
    main()
