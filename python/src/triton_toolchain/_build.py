"""Building Triton's launcher modules (``cuda_utils``, ``__triton_launcher``) with the
resolved toolchain: the ``triton.knobs.build.impl`` hook (Triton 3.4 and newer) and the
replacement of ``triton.backends.nvidia.driver._build`` (3.0 to 3.3, same signature).

What it does differently from Triton's own ``_build`` (``runtime/build.py``), which runs
``[cc, src, -O3, -shared, -fPIC, -Wno-psabi, -o, so, -l:libcuda.so.1, -L..., -I...]``:

- the compiler is the resolved ``cc`` and ``Python.h`` comes from ``python-headers``
  (Triton: ``CC`` or ``gcc``/``clang`` on ``PATH``, and ``sysconfig``);
- ``cuda.h`` and ``crt/`` come after Triton's bundled include directory, from
  ``cuda-headers`` and ``cuda-crt-headers`` (as ``TRITON_CUDART_PATH`` would);
- the driver is linked by the full path of the file in ``libcuda-link`` (the driver's
  ``libcuda.so.1``, or a toolkit stub ``libcuda.so``), after checking with pyelftools
  that its SONAME is ``libcuda.so.1``, so the module records ``NEEDED libcuda.so.1``
  whichever it was and no ``-L`` directory (an i386 one, the current directory) can
  supply another ``libcuda``;
- the module gets ``DT_RPATH`` (not ``DT_RUNPATH``: it wins over ``LD_LIBRARY_PATH``)
  to the run-time driver's directory, so even a process without the shim that loads it
  from Triton's cache finds the chosen driver;
- before returning, the chosen driver is loaded by its absolute path with
  ``RTLD_GLOBAL`` (see ``preload_driver``), so the module's ``NEEDED libcuda.so.1`` and
  ``driver.c``'s ``dlopen("libcuda.so.1")`` bind to it by SONAME, whatever
  ``LD_LIBRARY_PATH`` says;
- a compiler failure raises ``BuildError`` with the command, the compiler's output and
  what to change; a missing component raises ``MissingComponentError``.

Libraries other than ``libcuda`` (another backend's) are passed through as Triton would.
Triton's ``ccflags`` never reach a ``build.impl`` (Triton 3.9 drops them; its NVIDIA
backend passes none).
"""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import subprocess
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._catalog import SPECS
from ._driver import loaded_drivers
from ._errors import BuildError, MissingComponentError
from ._model import Toolchain

DRIVER_SONAME = "libcuda.so.1"
# How Triton names the driver library in ``libraries``: 3.0-3.5 ``cuda`` (-lcuda),
# 3.6+ ``libcuda.so.1`` (-l:libcuda.so.1).
LIBCUDA_NAMES = frozenset({"cuda", "libcuda.so", "libcuda.so.1", ":libcuda.so.1", ":libcuda.so"})
_CXX_SUFFIXES = (".cc", ".cpp", ".cxx")


@dataclass(frozen=True)
class BuildPlan:
    """One compiler command and the module it writes."""

    argv: tuple[str, ...]
    output: str
    driver: str | None  # the run-time driver the module is meant to load (for the rpath)

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


def _library_flag(lib: str) -> str:
    """Triton's own rule (``runtime/build.py: _library_flag``)."""
    if re.search(r"\.so(\.\d+)*$", lib) or lib.endswith(".a"):
        return f"-l:{lib}"
    return f"-l{lib}"


def _unique(items: Sequence[str | None]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def link_file(tc: Toolchain) -> Path:
    """The file to link the launcher against: ``libcuda.so.1`` or, in a toolkit stub
    directory, ``libcuda.so``, inside the resolved ``libcuda-link`` directory.

    Raises ``MissingComponentError`` when there is no link directory, and ``BuildError``
    when the file's SONAME is not ``libcuda.so.1`` (the module would then need a library
    that no driver installs).
    """
    directory = Path(tc.require("libcuda-link"))
    for name in (DRIVER_SONAME, "libcuda.so"):
        candidate = directory / name
        if candidate.exists():
            break
    else:
        raise MissingComponentError(
            f"libcuda-link {directory} holds neither libcuda.so.1 nor libcuda.so; "
            f"fix: {SPECS['libcuda-link'].fix}"
        )
    from ._elf import read_elf

    info = read_elf(candidate)
    if isinstance(info, str):
        raise BuildError(
            f"cannot link against {candidate}: {info}; fix: {SPECS['libcuda-link'].fix}"
        )
    if info.soname != DRIVER_SONAME:
        raise BuildError(
            f"cannot link against {candidate}: its SONAME is {info.soname!r}, not "
            f"{DRIVER_SONAME!r}, so the launcher would need a library no NVIDIA driver "
            f"installs; fix: {SPECS['libcuda-link'].fix}"
        )
    return candidate


def plan(
    tc: Toolchain,
    name: str,
    src: str,
    srcdir: str,
    library_dirs: Sequence[str],
    include_dirs: Sequence[str],
    libraries: Sequence[str],
    *,
    require_driver: bool = True,
) -> BuildPlan:
    """The compiler command for one module, as Triton's ``_build`` would run it but with
    the resolved toolchain (see the module docstring).

    ``require_driver=False`` allows building against a link stub without a run-time
    driver (``doctor --run`` on a machine without a GPU); the module then has no rpath.
    Raises ``MissingComponentError`` for a missing ``cc``, ``python-headers``,
    ``libcuda-link`` or (with ``require_driver``) ``libcuda``.
    """
    cc = tc.require("cc")
    python_headers = tc.require("python-headers")
    output = os.path.join(srcdir, f"{name}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}")
    argv = [cc, src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", output]
    cxx = src.endswith(_CXX_SUFFIXES)
    if cxx:
        argv[2:2] = ["-x", "c++", "-std=c++17"]

    driver: str | None = None
    links_cuda = any(lib in LIBCUDA_NAMES for lib in libraries)
    if links_cuda:
        if require_driver:
            driver = tc.require("libcuda")
        argv.append(str(link_file(tc)))
    argv += [_library_flag(lib) for lib in libraries if lib not in LIBCUDA_NAMES]
    if cxx:
        argv.append("-lstdc++")
    argv += [f"-L{d}" for d in _unique(list(library_dirs))]
    if driver is not None:
        argv.append(f"-Wl,--disable-new-dtags,-rpath,{os.path.dirname(driver)}")
    includes = _unique(
        [
            *include_dirs,
            srcdir,
            python_headers,
            tc["cuda-headers"].path,
            tc["cuda-crt-headers"].path,
        ]
    )
    argv += [f"-I{d}" for d in includes]
    return BuildPlan(tuple(argv), output, driver)


def _advice(output: str, tc: Toolchain) -> str:
    """What to change, from the compiler's output."""
    missing = re.search(r"fatal error: ([\w./+-]+\.h): No such file", output)
    if missing:
        header = missing.group(1)
        if header in ("Python.h", "pyconfig.h"):
            where = tc["python-headers"].path
            return (
                f"{header} is not in {where}: {SPECS['python-headers'].fix} "
                f"(e.g. Debian/Ubuntu: python3-dev or python3.X-dev; Fedora: python3-devel; "
                f"conda: it ships them), or point the manifest's python-headers at the "
                f"directory holding {header}"
            )
        if header.startswith(("cuda", "crt/")):
            return f"{header} was not found: {SPECS['cuda-headers'].fix}"
        return f"the header {header} is missing from the compiler's include path"
    if "skipping incompatible" in output or "file in wrong format" in output:
        return (
            "the linker was given a library of another architecture (e.g. a 32-bit libcuda "
            "on a 64-bit system): set TRITON_LIBCUDA_PATH to the directory of this "
            "machine's driver"
        )
    if "cannot find" in output and "cuda" in output:
        return SPECS["libcuda-link"].fix
    return (
        f"the C compiler {tc['cc'].path} failed; check that it can build a shared library "
        f"for this Python, or set CC to another compiler"
    )


def run(build_plan: BuildPlan, tc: Toolchain) -> str:
    """Run the compiler; return the module's path or raise ``BuildError``."""
    try:
        done = subprocess.run(
            build_plan.argv,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except OSError as exc:
        raise BuildError(
            f"cannot run the C compiler: {exc.strerror or exc}\n  command: {build_plan.command}\n"
            f"  fix: {SPECS['cc'].fix}"
        ) from exc
    if done.returncode != 0 or not os.path.exists(build_plan.output):
        output = (done.stdout + done.stderr).strip()
        raise BuildError(
            f"building Triton's launcher module failed (exit status {done.returncode})\n"
            f"  command: {build_plan.command}\n"
            f"  compiler output:\n{_indent(output or '(none)')}\n"
            f"  fix: {_advice(output, tc)}"
        )
    return build_plan.output


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def preload_driver(path: str) -> str:
    """Load the driver ``path`` (absolute) with ``RTLD_GLOBAL`` unless a ``libcuda.so*``
    is already mapped into this process; return the path of the driver now loaded.

    Afterwards ``dlopen("libcuda.so.1")`` by bare name, from Triton's ``ctypes`` probe or
    from ``driver.c``, returns this library (the dynamic loader matches loaded objects by
    SONAME before it searches ``LD_LIBRARY_PATH``, whose empty entries mean the current
    directory). A driver already loaded (by torch, say) is kept: two drivers in one
    process cannot work; the resolver reports that one as found in the process.
    """
    loaded = loaded_drivers()
    if loaded:
        return loaded[0]
    if not os.path.isabs(path):
        raise ValueError(f"the driver must be loaded by its absolute path, not {path!r}")
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


class LauncherBuild:
    """The callable given to ``triton.knobs.build.impl``:
    ``impl(name, src, srcdir, library_dirs, include_dirs, libraries) -> path of the .so``.

    ``toolchain`` is asked for the current resolution at every build, so a later
    ``activate(arch=...)`` applies to the next build.
    """

    def __init__(self, toolchain: Callable[[], Toolchain]) -> None:
        self._toolchain = toolchain

    def __call__(
        self,
        name: str,
        src: str,
        srcdir: str,
        library_dirs: list[str],
        include_dirs: list[str],
        libraries: list[str],
        /,
    ) -> str:
        tc = self._toolchain()
        build_plan = plan(tc, name, src, srcdir, library_dirs, include_dirs, libraries)
        if build_plan.driver is not None:
            try:
                preload_driver(build_plan.driver)
            except OSError as exc:
                raise BuildError(
                    f"cannot load the NVIDIA driver {build_plan.driver}: {exc}; "
                    f"fix: {SPECS['libcuda'].fix}"
                ) from exc
        return run(build_plan, tc)

    def __repr__(self) -> str:
        return "<triton_toolchain launcher build>"
