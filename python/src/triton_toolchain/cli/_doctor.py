"""What ``doctor`` asks of the installed Triton (never the activation: this imports
Triton's NVIDIA compiler module).

Above the adapter (``_triton``), whose Triton namespaces it reads, and its checks
(``_guards``, ``_fit``), which the adapter loads when Triton compiles.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

from ..resolver._catalog import PTXAS_FAMILY, triton_release
from ..resolver._fit import Prediction, driver_problem, predicted
from ..resolver._guards import imported_triton_version, usable_release
from ..resolver._model import Rejection, Source, SourceKind, Toolchain
from ..runtime._triton import namespaces


def unusable_tools(tc: Toolchain) -> tuple[str, ...]:
    """What the installed Triton itself refuses of the chosen ptxas releases it runs,
    asked of its own ``ptx_get_version`` (e.g. Triton 3.3 knows no PTX version for CUDA
    13), and the chosen ptxas whose cubins the chosen driver cannot load
    (``_fit.driver_problem``: ``cuDriverGetVersion`` read in a child process); a
    ptxas-blackwell is not judged where the release runs none (``TritonRelease.uses``).
    Imports Triton's NVIDIA compiler module: for ``doctor``, not for activation."""
    if importlib.util.find_spec("triton") is None:
        return ()
    try:
        importlib.import_module("triton.backends.nvidia.compiler")
    except Exception as exc:  # a broken Triton install is worth a line, not a traceback
        return (f"Triton's NVIDIA compiler cannot be imported ({type(exc).__name__}: {exc})",)
    spaces = namespaces("compiler", "nvidia")
    if not spaces:
        return ()
    release = triton_release(imported_triton_version())
    problems = []
    for name in PTXAS_FAMILY:
        choice = tc[name]
        used = release is None or release.uses(name)
        if used and choice.path is not None and choice.version is not None:
            problem = usable_release(choice.version, spaces[0][1])
            if problem:
                problems.append(f"{name} {choice.path}: {problem}")
            unloadable = driver_problem(choice.version, tc["libcuda"].path)
            if unloadable:
                problems.append(f"{name} {choice.path}: {unloadable[0]}; fix: {unloadable[1]}")
    return tuple(problems)


def runs_for(arch: int) -> Prediction | None:
    """What Triton's compile for ``sm_<arch>`` runs in a process of this environment
    (``_fit.predicted``): the plan this process's activation holds, as `import triton`
    makes it, completed with the target's part as the compile completes it. ``None``
    where Triton's NVIDIA compiler cannot be imported or the shim is off (stock Triton
    then decides alone)."""
    if importlib.util.find_spec("triton") is None:
        return None
    try:
        importlib.import_module("triton.backends.nvidia.compiler")
    except Exception:  # unusable_tools says why
        return None
    from ..runtime import _activate  # noqa: PLC0415  the activation of this process

    activation = _activate.activate()
    spaces = namespaces("compiler")
    if activation.plan is None or not spaces:
        return None
    _activate.complete("target")
    current = _activate.current()
    plan = current.plan if current is not None else None
    return predicted(arch, plan, spaces[0][1]) if plan is not None else None


def as_run(tc: Toolchain, runs: Prediction) -> Toolchain:
    """``tc`` whose row for the component Triton runs for the target names the binary
    that assembles (``runs``), where the compile-time fit takes another than the one
    resolved: the one replaced is listed as rejected with the reason the compile gives."""
    choice = tc[runs.component]
    if runs.path is None or choice.path is None or _same(runs.path, choice.path):
        return tc
    holder = next((c for c in tc if c.path and _same(c.path, runs.path)), None)
    source = (holder.source if holder else None) or Source(SourceKind.DISCOVERED, "fit")
    why = "; ".join(runs.warnings) or f"not the one Triton runs for sm_{runs.arch}"
    replaced = choice._replace(
        path=runs.path,
        version=runs.release,
        source=source,
        rejected=(Rejection(choice.path, why, choice.source or source), *choice.rejected),
    )
    return tc.replace(choices={**tc.choices, runs.component: replaced})


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def judged_for(
    tc: Toolchain, arch: int | None, asks_ptxas: bool
) -> tuple[Toolchain, tuple[str, ...], Prediction | None]:
    """What ``doctor`` shows of the ptxas family: for a target, what the compile for it
    runs (``runs_for``; the component's row names that binary, the compile's warnings
    are notes and its error blocks); without one, ``unusable_tools``. Returns the
    toolchain to show, what Triton refuses, and the prediction."""
    if not asks_ptxas:
        return tc, (), None
    runs = runs_for(arch) if arch is not None else None
    if runs is None:
        return tc, unusable_tools(tc), None
    refused = (f"for sm_{arch}, {runs.error}",) if runs.error else ()
    at_compile = tuple(f"at the compile for sm_{arch}: {w}" for w in runs.warnings)
    return as_run(tc, runs).replace(notes=(*tc.notes, *at_compile)), refused, runs
