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
  ``libcuda.so.1``, or a toolkit stub ``libcuda.so``, whose SONAME the resolver checked
  is ``libcuda.so.1``), so the module records ``NEEDED libcuda.so.1``
  whichever it was and no ``-L`` directory (an i386 one, the current directory) can
  supply another ``libcuda``;
- the module gets ``DT_RPATH`` (not ``DT_RUNPATH``: it wins over ``LD_LIBRARY_PATH``)
  to the run-time driver's directory, so even a process without the shim that loads it
  from Triton's cache finds the chosen driver;
- before returning, the chosen driver is loaded by its absolute path with
  ``RTLD_GLOBAL`` (``runtime.preload_driver``), so the module's ``NEEDED libcuda.so.1`` and
  ``driver.c``'s ``dlopen("libcuda.so.1")`` bind to it by SONAME, whatever
  ``LD_LIBRARY_PATH`` says;
- the compiler runs for at most ``BUILD_TIMEOUT_S`` seconds with bounded output (its
  process group is killed then); a failure raises ``BuildError`` with the command, the
  compiler's output and what to change; a missing component raises
  ``MissingComponentError``; a wrong explicit setting of a build component raises its
  ``SettingError``.

Libraries other than ``libcuda`` (another backend's) are passed through as Triton would.
Triton's ``ccflags`` never reach a ``build.impl`` (Triton 3.9 drops them; its NVIDIA
backend passes none).
"""

from __future__ import annotations

import os
import re
import shlex
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..runtime import Plan, preload_driver
from ..runtime._errors import BuildError, MissingComponentError
from ._catalog import COMPONENT, DRIVER_SONAME
from ._discovery._compiler import command_argv
from ._discovery._run import collect
from ._guards import setting_error
from ._model import Toolchain
from ._plan import full_toolchain

# How Triton names the driver library in ``libraries``: 3.0-3.5 ``cuda`` (-lcuda),
# 3.6+ ``libcuda.so.1`` (-l:libcuda.so.1).
LIBCUDA_NAMES = frozenset({"cuda", "libcuda.so", DRIVER_SONAME, f":{DRIVER_SONAME}", ":libcuda.so"})
_CXX_SUFFIXES = (".cc", ".cpp", ".cxx")
BUILD_TIMEOUT_S = 300.0
BUILD_OUTPUT_LIMIT = 1 << 20


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
    if re.search(r"\.so(\.[0-9]+)*$", lib) or lib.endswith(".a"):
        return f"-l:{lib}"
    return f"-l{lib}"


def _unique(items: Sequence[str | None]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def link_file(tc: Toolchain) -> Path:
    """The file to link the launcher against: ``libcuda.so.1`` or, in a toolkit stub
    directory, ``libcuda.so``, inside the resolved ``libcuda-link`` directory (whose
    check made sure its SONAME is ``libcuda.so.1``). Raises ``MissingComponentError``
    when there is none."""
    directory = Path(tc.require("libcuda-link"))
    for name in (DRIVER_SONAME, "libcuda.so"):
        candidate = directory / name
        if candidate.exists():
            return candidate
    raise MissingComponentError(
        f"libcuda-link {directory} holds neither libcuda.so.1 nor libcuda.so; "
        f"fix: {COMPONENT['libcuda-link'].fix}"
    )


def make_plan(
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
    cc = command_argv(tc.require("cc"))
    python_headers = tc.require("python-headers")
    output = os.path.join(srcdir, f"{name}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}")
    argv = [*cc, src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", output]
    cxx = src.endswith(_CXX_SUFFIXES)
    if cxx:
        argv[len(cc) + 1 : len(cc) + 1] = ["-x", "c++", "-std=c++17"]

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
                f"{header} is not in {where}: {COMPONENT['python-headers'].fix} "
                f"(e.g. Debian/Ubuntu: python3-dev or python3.X-dev; Fedora: python3-devel; "
                f"conda: it ships them), or point the manifest's python-headers at the "
                f"directory holding {header}"
            )
        if header.startswith(("cuda", "crt/")):
            return f"{header} was not found: {COMPONENT['cuda-headers'].fix}"
        return f"the header {header} is missing from the compiler's include path"
    if "skipping incompatible" in output or "file in wrong format" in output:
        return (
            "the linker was given a library of another architecture (e.g. a 32-bit libcuda "
            "on a 64-bit system): set TRITON_LIBCUDA_PATH to the directory of this "
            "machine's driver"
        )
    if "cannot find" in output and "cuda" in output:
        return COMPONENT["libcuda-link"].fix
    return (
        f"the C compiler {tc['cc'].path} failed; check that it can build a shared library "
        f"for this Python, or set CC to another compiler"
    )


def run(build_plan: BuildPlan, tc: Toolchain) -> str:
    """Run the compiler; return the module's path or raise ``BuildError``."""
    status, raw, problem = collect(list(build_plan.argv), None, BUILD_TIMEOUT_S, BUILD_OUTPUT_LIMIT)
    output = raw.decode("utf-8", "replace").strip()
    if problem is not None and status is None and not raw and problem.startswith("cannot be run"):
        raise BuildError(
            f"cannot run the C compiler: {problem}\n  command: {build_plan.command}\n"
            f"  fix: {COMPONENT['cc'].fix}"
        )
    if problem is not None or status != 0 or not os.path.exists(build_plan.output):
        what = problem or f"exit status {status}"
        raise BuildError(
            f"building Triton's launcher module failed ({what})\n"
            f"  command: {build_plan.command}\n"
            f"  compiler output:\n{_indent(output or '(none)')}\n"
            f"  fix: {_advice(output, tc)}"
        )
    return build_plan.output


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def build_module(
    plan: Plan,
    name: str,
    src: str,
    srcdir: str,
    library_dirs: list[str],
    include_dirs: list[str],
    libraries: list[str],
) -> str:
    """Build one launcher module with the plan's toolchain (``_triton.LauncherBuild``):
    a wrong explicit setting of a build component raises its ``SettingError``; the
    driver is loaded by its absolute path before the module is built."""
    error = setting_error(plan, "build")
    if error is not None:
        raise error
    tc = Toolchain.from_dict(plan["toolchain"])
    try:
        build_plan = make_plan(tc, name, src, srcdir, library_dirs, include_dirs, libraries)
    except MissingComponentError:
        # Raised again with the whole story: where the shim looked, what it rejected.
        tc = full_toolchain(plan)
        build_plan = make_plan(tc, name, src, srcdir, library_dirs, include_dirs, libraries)
    if build_plan.driver is not None:
        try:
            preload_driver(build_plan.driver)
        except OSError as exc:
            raise BuildError(
                f"cannot load the NVIDIA driver {build_plan.driver}: {exc}; "
                f"fix: {COMPONENT['libcuda'].fix}"
            ) from exc
    return run(build_plan, tc)
