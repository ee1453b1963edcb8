"""What ``doctor`` asks of the installed Triton (never the activation: this imports
Triton's NVIDIA compiler module).

Above the adapter (``_triton``), whose Triton namespaces it reads, and its checks
(``_guards``, ``_fit``), which the adapter loads when Triton compiles.
"""

from __future__ import annotations

import importlib
import importlib.util

from ..resolver._catalog import PTXAS_FAMILY, triton_release
from ..resolver._fit import driver_problem
from ..resolver._guards import imported_triton_version, usable_release
from ..resolver._model import Toolchain
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
