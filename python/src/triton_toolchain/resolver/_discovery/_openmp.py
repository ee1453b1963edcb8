"""Locator of ``openmp``: the directory holding ``omp.h`` that TorchInductor's CPU
kernels compile against. On Linux every torch release from 2.4 on builds them with
``-fopenmp ... -lgomp`` whatever the compiler, and adds no include directory for
``omp.h``: the compiler must find it, or ``CPATH`` must name its directory.

Search order (first accepted wins):

1. where the chosen C++ compiler (``cxx``) keeps its own: gcc's
   ``-print-file-name=include/omp.h``, clang's ``-print-resource-dir``/``include``
   (source ``discovered:compiler``: nothing needs to be added for it);
2. ``$CONDA_PREFIX/include`` (conda's ``llvm-openmp``);
3. gcc's directories ``/usr/lib/gcc/<multiarch>/<version>/include`` and LLVM's
   ``/usr/lib/llvm-<N>/lib/clang/<version>/include``, newest first; ``/usr/include``.

Check: ``omp.h`` is a regular file nobody but root and this user can change, and the
chosen compiler really builds and links a small OpenMP shared object with it
(``<cxx> -fopenmp -I<dir> probe.cpp -shared -fPIC -lgomp``), asked once per version of
the compiler and of ``omp.h`` (``_answers``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .._catalog import MACHINES
from . import _answers, _fs
from ._compiler import command_argv
from ._host import Host
from ._run import ask, collect
from ._search import Candidate, Context, Locator, Step, Verdict, discovered

OMP_H = "omp.h"
PROBE = """#include <omp.h>
extern "C" int triton_toolchain_threads(void) {
    int n = 0;
    #pragma omp parallel reduction(+ : n)
    n += 1;
    return n + omp_get_max_threads() * 0;
}
"""
PROBE_TIMEOUT_S = 60.0
_VERSION_IN_NAME = r"[0-9]+(?:\.[0-9]+)*"


def _compiler(ctx: Context) -> list[str] | None:
    cxx = ctx.chosen.get("cxx")
    return command_argv(cxx.path) if cxx is not None and cxx.path else None


def compiler_own(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The directories the chosen C++ compiler names for its own ``omp.h``."""
    argv = _compiler(ctx)
    if argv is None:
        return
    program, args = Path(argv[0]), tuple(argv[1:])
    for question, suffix in (
        ("-print-file-name=include/omp.h", ""),
        ("-print-resource-dir", "include"),
    ):
        output, _ = ask(program, (*args, question), answers=host.answers, depends_on=_later(argv))
        answer = (output or "").strip().splitlines()[-1:] or [""]
        if answer[0].startswith("/"):
            found = Path(answer[0]) / suffix if suffix else Path(answer[0]).parent
            yield discovered("compiler", found)


def _later(argv: list[str]) -> tuple[Path, ...]:
    return tuple(Path(w) for w in argv[1:] if w.startswith("/"))


def _newest(paths: list[Path]) -> list[Path]:
    def key(path: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(_VERSION_IN_NAME, str(path))[:4])

    return sorted(paths, key=key, reverse=True)


def conda_include(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``$CONDA_PREFIX/include``."""
    prefix = host.environ.get("CONDA_PREFIX")
    if prefix and Path(prefix).is_absolute():
        yield discovered("CONDA_PREFIX", Path(prefix) / "include")


def system_dirs(host: Host, ctx: Context) -> Iterator[Candidate]:
    """gcc's and LLVM's include directories, newest first, then ``/usr/include``."""
    facts = MACHINES.get(host.machine)
    if facts is not None:
        for d in _newest(host.glob(f"/usr/lib/gcc/{facts.multiarch}/*/include")):
            yield discovered("gcc", d)
    for d in _newest(host.glob("/usr/lib/llvm-*/lib/clang/*/include")):
        yield discovered("llvm", d)
    yield discovered("system", host.at("/usr/include"))


STEPS: tuple[Step, ...] = (compiler_own, conda_include, system_dirs)
_PROBE_QUESTION = "(openmp probe, v1)"


def _probe(argv: list[str], include: Path) -> str | None:
    """Build a small OpenMP shared object; ``None`` when it builds, else why not."""
    with tempfile.TemporaryDirectory(prefix="triton-toolchain-openmp-") as tmp:
        source = os.path.join(tmp, "probe.cpp")
        with open(source, "w", encoding="utf-8") as f:
            f.write(PROBE)
        command = [
            *argv,
            "-fopenmp",
            f"-I{include}",
            source,
            "-shared",
            "-fPIC",
            "-o",
            os.path.join(tmp, "probe.so"),
            "-lgomp",
        ]
        status, raw, problem = collect(command, None, PROBE_TIMEOUT_S)
    if problem is None and status == 0:
        return None
    lines = raw.decode("utf-8", "replace").strip().splitlines()
    first = next((ln for ln in lines if "error" in ln.lower()), lines[-1] if lines else "")
    what = problem or f"exit status {status}"
    return f"the C++ compiler cannot build with it ({what}: {first.strip()[:200]})"


def check_openmp(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge the directory ``path`` (see the module docstring)."""
    problem = _fs.file_problem(path, directory=True)
    if problem:
        return Verdict(problem=problem)
    header = path / OMP_H
    problem = _fs.file_problem(header) or _fs.untrusted(header)
    if problem:
        return Verdict(problem=f"{OMP_H} {problem}" if problem == "does not exist" else problem)
    if ctx.manifest and not host.verify:
        return Verdict()
    argv = _compiler(ctx)
    if argv is None:
        return Verdict(problem="no C++ compiler (cxx) to build with it")
    question = (
        *argv,
        _PROBE_QUESTION,
        *(_answers.version_of(Path(w)) for w in argv if w.startswith("/")),
    )
    remembered = _answers.recall(host.answers, header, question)
    if remembered is None:
        why = _probe(argv, path)
        _answers.remember(host.answers, header, question, why is None, why or "ok")
    else:
        why = None if remembered[0] else remembered[1]
    return Verdict(problem=why)


LOCATORS: dict[str, Locator] = {"openmp": Locator(steps=STEPS, check=check_openmp)}
