"""Locator of ``cc``, the C compiler that builds Triton's launcher module.

Search order (first accepted wins):

1. conda's compiler, ``$CONDA_PREFIX/bin/*-conda-linux-gnu-cc`` (those whose triple
   names this interpreter's architecture first). In an active conda environment that
   has ``c-compiler`` installed, that compiler matches the environment's sysroot and
   its Python, and conda's own activation would have exported it as ``CC``: it comes
   before the system's ``gcc``;
2. ``gcc``, then ``clang``, then ``cc`` on the absolute entries of ``PATH`` (Triton's
   ``_find_compiler`` order; empty and relative entries are reported as rejected,
   never used).

Check (``check_compiler``): the file exists, is executable and safe (``_checks``);
then ONE process, ``<cc> -v`` with ``LC_ALL=C``, gives both the target triple
(``Target: x86_64-linux-gnu``) and the version (``gcc version 12.2.0``, ``clang
version 18.1.3``); the triple's architecture (``TRIPLE_MACHINES``) must be this
interpreter's (``host.machine``), since Triton passes no ``-m32``/``--target``. With
``ctx.recorded_version`` (a manifest) no process runs and the target is trusted.

Explicit ``CC`` (``compiler_from_setting``): Triton runs the variable's value as ONE
program (``[cc, src, "-O3", ...]``), looking a bare name up on ``PATH``. So:

- ``CC=gcc`` (common) is looked up like ``shutil.which`` does, on absolute ``PATH``
  entries only;
- ``CC=/usr/bin/gcc`` must exist;
- ``CC=./gcc`` or ``CC=bin/gcc`` (relative) is refused;
- ``CC="gcc -m64"`` (a command line, as make accepts) is refused with the reason:
  Triton would fail to run it. An absolute path that exists is taken whole, even with
  spaces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ._checks import file_problem, insecure_reason, run_output
from ._fs import glob
from ._host import Host
from ._layouts import path_candidates, path_step
from ._search import Candidate, Context, Locator, Step, Verdict, discovered

# A target triple's first component -> the interpreter architecture (``host.machine``)
# it builds for.
TRIPLE_MACHINES: dict[str, str] = {
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "i386": "i686",
    "i486": "i686",
    "i586": "i686",
    "i686": "i686",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "powerpc64le": "ppc64le",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}
# Triples whose last component changes the ABI away from the plain architecture.
ABI_SUFFIXES: dict[str, str] = {"gnux32": "x32"}
COMPILER_NAMES: tuple[str, ...] = ("gcc", "clang", "cc")
CONDA_COMPILER_GLOB = "*-conda-linux-gnu-cc"

_TARGET = re.compile(r"^Target: (\S+)", re.MULTILINE)
_VERSION = re.compile(r"\b(?:gcc|clang) version (\d+(?:\.\d+)*)")


def triple_machine(triple: str) -> str:
    """The interpreter architecture a target triple builds for.

    >>> triple_machine("x86_64-conda-linux-gnu"), triple_machine("x86_64-linux-gnux32")
    ('x86_64', 'x32')
    """
    parts = triple.split("-")
    abi = ABI_SUFFIXES.get(parts[-1])
    return abi or TRIPLE_MACHINES.get(parts[0], parts[0])


def conda_compilers(host: Host) -> Iterator[Candidate]:
    """``$CONDA_PREFIX/bin/*-conda-linux-gnu-cc``, this architecture's first."""
    prefix = host.environ.get("CONDA_PREFIX")
    if not prefix or not Path(prefix).is_absolute():
        return
    found = glob(Path(prefix, "bin"), CONDA_COMPILER_GLOB)
    found.sort(key=lambda p: triple_machine(p.name.removesuffix("-cc")) != host.machine)
    yield from (discovered("CONDA_PREFIX", p) for p in found)


STEPS: tuple[Step, ...] = (conda_compilers, *(path_step(n) for n in COMPILER_NAMES))


def compiler_from_setting(host: Host, value: str) -> tuple[Path | None, str | None]:
    """The compiler an explicit ``CC`` value names, as ``(absolute path, None)`` or
    ``(None, problem)``; the caller raises ``SettingError`` naming ``CC``.

    The path still has to pass ``check_compiler``.
    """
    if not value.strip():
        return None, "is empty"
    path = Path(value)
    if path.is_absolute() and (os.path.exists(path) or not any(c.isspace() for c in value)):
        return path, None
    if any(c.isspace() for c in value):
        return None, (
            f"{value!r} is a command line, but Triton runs CC as one program without "
            "arguments: set CC to the compiler alone (CC=gcc) and put flags in a wrapper script"
        )
    if "/" in value:
        return None, (
            f"{value!r} is a relative path, which depends on the current directory: "
            "give an absolute path or a bare name to look up on PATH"
        )
    refused: list[str] = []
    for cand in path_candidates(host, value):
        if cand.refused is not None:
            if os.path.lexists(cand.path):
                refused.append(cand.refused)
            continue
        if os.path.isfile(cand.path) and file_problem(cand.path, executable=True) is None:
            return cand.path, None
    ignored = f" ({'; '.join(refused)})" if refused else ""
    return None, f"{value!r} was not found on the absolute entries of PATH{ignored}"


def check_compiler(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge ``path`` as the C compiler for this interpreter (see the module docstring).

    A relative ``path`` is taken as an explicit bare name (``CC=gcc``) and looked up
    with ``compiler_from_setting``; callers that have the raw ``CC`` value should call
    that first, to report the absolute path they use.
    """
    if not path.is_absolute():
        resolved, problem = compiler_from_setting(host, str(path))
        if resolved is None:
            return Verdict(problem=problem)
        path = resolved
    problem = file_problem(path, executable=True) or insecure_reason(path)
    if problem:
        return Verdict(problem=problem)
    if ctx.recorded_version is not None:
        return Verdict(ctx.recorded_version)
    output, problem = run_output(
        path,
        ("-v",),
        env={**host.environ, "LC_ALL": "C", "LANGUAGE": ""},
        cache=host.output_cache,
    )
    if output is None:
        return Verdict(problem=problem)
    target = _TARGET.search(output)
    version = _VERSION.search(output)
    found = version.group(1) if version else None
    if target is None:
        return Verdict(found, "`-v` named no target triple (not gcc or clang?)")
    machine = triple_machine(target.group(1))
    if machine != host.machine:
        return Verdict(
            found,
            f"builds for {target.group(1)} ({machine}), but this Python is {host.machine}",
        )
    return Verdict(found)


LOCATORS: dict[str, Locator] = {"cc": Locator(steps=STEPS, check=check_compiler)}
