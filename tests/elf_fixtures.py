"""Real ELF files and linker caches for tests, laid out as real systems lay them out.

``built(variant)`` compiles a ``libcuda.so.1`` stand-in (SONAME ``libcuda.so.1``, a few
``cu*`` symbols, DT_NEEDED on libm and libc like the real driver) with gcc (arm64: gcc's
cross compiler, ``aarch64-linux-gnu-gcc``), once per variant per test session; the
``install_*`` helpers copy it into a fake root the way the driver, WSL and the CUDA
toolkit install theirs; ``write_ld_cache`` runs the real
``/sbin/ldconfig`` to write a linker cache over chosen directories.

Example::

    lib = install_driver(tmp_path / "usr/lib/x86_64-linux-gnu", "580.159.04")
    # .../libcuda.so.1 -> libcuda.so.580.159.04 (a real x86-64 ELF shared object)
"""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

GCC = shutil.which("gcc") or "/usr/bin/gcc"
LDCONFIG = "/sbin/ldconfig"
REAL_VERSION = "580.159.04"
COMPAT_VERSION = "580.95.05"

SOURCE = r"""
#include <math.h>
typedef int CUresult;
CUresult cuInit(unsigned int flags) { return flags ? 1 : 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = (int)floor(0.5); return 0; }
"""

# variant -> gcc flags. "x86_64" and "i386" are what a Debian multiarch host carries.
VARIANTS: dict[str, tuple[str, ...]] = {"x86_64": ("-m64",), "i386": ("-m32",), "aarch64": ()}
# variant -> the compiler, where it is not this machine's gcc (Debian's gcc-aarch64-linux-gnu).
CROSS_COMPILERS: dict[str, str] = {"aarch64": "aarch64-linux-gnu-gcc"}


@functools.cache
def _build_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="triton-toolchain-elf-"))
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def built(variant: str = "x86_64") -> Path:
    """A ``libcuda.so.1`` stand-in for ``variant`` (built once per session)."""
    out = _build_dir() / f"libcuda-{variant}.so"
    src = _build_dir() / "libcuda.c"
    src.write_text(SOURCE)
    compiler = GCC
    if variant in CROSS_COMPILERS:
        found = shutil.which(CROSS_COMPILERS[variant])
        assert found, f"{CROSS_COMPILERS[variant]} is not installed; install gcc-aarch64-linux-gnu"
        compiler = found
    subprocess.run(
        [
            compiler,
            *VARIANTS[variant],
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-Wl,--no-as-needed",
            "-o",
            str(out),
            str(src),
            "-lm",
        ],
        check=True,
        capture_output=True,
    )
    return out


def _copy(variant: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built(variant), dest)
    dest.chmod(0o755)
    return dest


def install_driver(
    directory: Path, version: str = REAL_VERSION, *, variant: str = "x86_64", dev_link: bool = False
) -> Path:
    """Install like the NVIDIA driver: ``libcuda.so.<version>`` and the symlink
    ``libcuda.so.1`` to it (and ``libcuda.so`` with ``dev_link``). Returns the
    ``libcuda.so.1`` path."""
    real = _copy(variant, directory / f"libcuda.so.{version}")
    (directory / "libcuda.so.1").symlink_to(real.name)
    if dev_link:
        (directory / "libcuda.so").symlink_to("libcuda.so.1")
    return directory / "libcuda.so.1"


def install_wsl(directory: Path) -> Path:
    """Install like WSL2's ``/usr/lib/wsl/lib``: ``libcuda.so``, ``libcuda.so.1`` and
    ``libcuda.so.1.1``, all plain copies. Returns the ``libcuda.so.1`` path."""
    for name in ("libcuda.so", "libcuda.so.1", "libcuda.so.1.1"):
        _copy("x86_64", directory / name)
    return directory / "libcuda.so.1"


def install_stub(directory: Path, *, variant: str = "x86_64", so1_link: bool = False) -> Path:
    """Install like a CUDA toolkit's link stub: ``<dir>/libcuda.so`` only (``so1_link``
    adds the ``libcuda.so.1 -> libcuda.so`` symlink Docker recipes make). Returns the
    ``libcuda.so`` path."""
    stub = _copy(variant, directory / "libcuda.so")
    if so1_link:
        (directory / "libcuda.so.1").symlink_to("libcuda.so")
    return stub


def write_ld_cache(cache: Path, dirs: Iterable[Path], fmt: str = "new") -> Path:
    """Write a real linker cache over ``dirs`` with ``ldconfig -C cache -f conf -X -c fmt``
    (``fmt``: ``new``, ``old`` or ``compat``). ldconfig adds this machine's trusted
    directories too, as it always does."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    conf = cache.parent / (cache.name + ".conf")
    conf.write_text("".join(f"{d}\n" for d in dirs))
    subprocess.run(
        [LDCONFIG, "-C", str(cache), "-f", str(conf), "-X", "-i", "-c", fmt],
        check=True,
        capture_output=True,
    )
    conf.unlink()
    return cache


def kernel_module(root: Path, version: str = REAL_VERSION) -> None:
    """Write ``/proc/driver/nvidia/version`` as the proprietary module prints it."""
    path = root / "proc/driver/nvidia/version"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {version}  Thu Oct  9 2025\n"
        "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
    )
