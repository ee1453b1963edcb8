"""A stand-in for AMD's HIP runtime, ``libamdhip64``, built with gcc by the tests, for the
ROCm releases Debian does not package (its ``libamdhip64-5`` is ROCm 5.2.3).

It answers what Triton's AMD launcher asks of the real library (``backends/amd/
driver.c`` of 3.9): ``hipDriverGetVersion`` (and ``hipRuntimeGetVersion``) report the
chosen release in HIP's format (``major * 10000000 + minor * 100000 + patch``, as the
real 5.2.3 library reports 50221153), and ``hipGetProcAddress`` hands out, for every
symbol, a function that returns ``hipErrorNoDevice`` (100): the launcher module loads,
nothing runs on a GPU. The SONAME is ``libamdhip64.so.<major>``, as ROCm's.

Layout: ``standin(dir, (6, 4, 43482))`` -> ``dir/libamdhip64.so.6`` (the file) and, with
``dev=True``, ``dir/libamdhip64.so -> libamdhip64.so.6`` (what ROCm's development
packages and ``/opt/rocm`` install).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

GCC = shutil.which("gcc") or "/usr/bin/gcc"
# The Debian package the tests take the real library from, and where it puts it.
DEBIAN_PACKAGE = "libamdhip64-5"
DEBIAN_LIBRARY = Path("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5")
DEBIAN_RELEASE = "5.2.21153"  # hipDriverGetVersion of ROCm 5.2.3's library: 50221153

SOURCE = """
typedef int hipError_t;
static hipError_t no_device(void) { return 100; }
hipError_t hipDriverGetVersion(int *v) { *v = VERSION; return 0; }
hipError_t hipRuntimeGetVersion(int *v) { *v = VERSION; return 0; }
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version,
                             unsigned long long flags, void *status) {
  *pfn = (void *)no_device;
  return 0;
}
"""


def hip_version(release: tuple[int, int, int]) -> int:
    major, minor, patch = release
    return major * 10000000 + minor * 100000 + patch


# With ``loaded_marker``: a constructor that creates that file when the library is
# loaded, so a test can tell that nothing loaded a planted copy.
MARKER_SOURCE = """
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {
  int fd = open("MARKER", O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) close(fd);
}
"""


def standin(
    directory: Path,
    release: tuple[int, int, int],
    *,
    dev: bool = True,
    loaded_marker: Path | None = None,
) -> Path:
    """Build the stand-in for ``release`` into ``directory``; the path Triton would be
    given (``libamdhip64.so`` with ``dev``, else the SONAME file)."""
    directory.mkdir(parents=True, exist_ok=True)
    soname = f"libamdhip64.so.{release[0]}"
    source = directory / "hip_standin.c"
    text = SOURCE.replace("VERSION", str(hip_version(release)))
    if loaded_marker is not None:
        text += MARKER_SOURCE.replace("MARKER", str(loaded_marker))
    source.write_text(text)
    subprocess.run(
        [GCC, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(directory / soname), source],
        check=True,
    )
    source.unlink()
    if not dev:
        return directory / soname
    (directory / "libamdhip64.so").symlink_to(soname)
    return directory / "libamdhip64.so"


def real_library(directory: Path, *, dev: bool = True) -> Path:
    """Debian's real ``libamdhip64.so.5`` (ROCm 5.2.3) copied into ``directory``, as the
    package lays it out (``dev``: with the unversioned link a development package adds)."""
    assert DEBIAN_LIBRARY.exists(), (
        f"{DEBIAN_LIBRARY} is missing; install it: `apt-get install {DEBIAN_PACKAGE}` "
        "(tools/test.sh installs it)"
    )
    directory.mkdir(parents=True, exist_ok=True)
    real = DEBIAN_LIBRARY.resolve()
    shutil.copy2(real, directory / real.name)
    (directory / "libamdhip64.so.5").symlink_to(real.name)
    if not dev:
        return directory / "libamdhip64.so.5"
    (directory / "libamdhip64.so").symlink_to("libamdhip64.so.5")
    return directory / "libamdhip64.so"
