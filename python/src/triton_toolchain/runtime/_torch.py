"""The torch adapter: TorchInductor's CPU toolchain (C++ compiler, ``Python.h``, OpenMP)
and ``torch.utils.cpp_extension``'s CUDA home, from the same plan as Triton's (``_plan``'s
``"torch"`` part), applied without importing any of torch.

Where each torch release (2.4 to 2.14) keeps what the shim sets, read from its
``torch/_inductor/{config,cpp_builder,codecache}.py`` and ``torch/utils/cpp_extension.py``:

- The C++ compiler: ``torch._inductor.config.cpp.cxx``, whose default is
  ``os.environ.get("CXX", "g++")``, read once when that module is first imported (not
  by ``import torch``; by ``torch.compile``). So ``CXX`` is set in the environment when
  ``torch`` starts importing, where the user has not set it (and inherited by Inductor's
  compile workers). A command line (``ccache g++``) is never set: torch before 2.14 runs
  ``[cxx, "--version"]`` and refuses it.
- ``Python.h`` and ``omp.h``: Inductor passes ``-I<sysconfig include>`` and
  ``-fopenmp ... -lgomp``, and reads no variable for either; its compiles inherit the
  environment, so a directory the compiler needs and would not find (``Python.h`` not
  where ``sysconfig`` says, an ``omp.h`` outside the compiler's own) is appended to
  ``CPATH``, after the user's entries.
- ``torch.utils.cpp_extension.CUDA_HOME``: computed at that module's import from
  ``CUDA_HOME``, ``CUDA_PATH``, ``which nvcc``, ``/usr/local/cuda`` (``None`` for a CPU
  build) and read at every build: where torch found none, the resolved toolkit root is
  assigned once the module is imported.
- Failures: ``cpp_builder._run_compile_cmd`` and ``get_cpp_compiler`` (2.5+),
  ``codecache.compile_file`` and ``cpp_compiler`` (2.4) are wrapped: when one fails and
  the resolution says why (no ``Python.h``, no C++ compiler, no OpenMP, a wrong ``CXX``),
  the shim's explanation is raised from torch's error instead of a compiler dump.

Guarantees: nothing the user set is replaced (``CXX`` set, a ``CPATH`` entry already
there, a ``CUDA_HOME`` torch found); every variable written is remembered in ``env``;
pure standard library.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from . import ORIGINAL, Patches, Plan, Report

PlanGetter = Callable[[], Plan]

# Functions whose failure the shim explains, per torch module (releases that lack one
# simply do not have it).
GUARDED: dict[str, tuple[str, ...]] = {
    "torch._inductor.cpp_builder": ("_run_compile_cmd", "get_cpp_compiler"),
    "torch._inductor.codecache": ("compile_file", "cpp_compiler"),
}
EXTENSIONS = "torch.utils.cpp_extension"
WATCHED = frozenset({*GUARDED, EXTENSIONS})
# Components whose absence or wrong setting explains a failed Inductor C++ build.
INDUCTOR_COMPONENTS = ("cxx", "python-headers", "openmp")


def before_torch(plan: Plan, env: dict[str, str], report: Report) -> None:
    """Set what Inductor reads from the environment (see the module docstring); nothing
    for a plan without torch's part."""
    torch = plan["torch"]
    if torch is None:
        return
    cxx = torch["CXX"]
    if cxx:
        if os.environ.get("CXX") and env.get("CXX") != os.environ["CXX"]:
            report.kept["env:CXX"] = "set by the user"
        elif "torch._inductor.config" in sys.modules:
            report.kept["env:CXX"] = "torch._inductor.config was imported before the shim"
        else:
            os.environ["CXX"] = env["CXX"] = cxx
            report.applied["env:CXX"] = cxx
    extra = [d for d in torch["CPATH"] if d]
    if extra:
        current = os.environ.get("CPATH", "")
        entries = [e for e in current.split(os.pathsep) if e]
        added = [d for d in extra if d not in entries]
        if added:
            os.environ["CPATH"] = env["CPATH"] = os.pathsep.join([*entries, *added])
            report.applied["env:CPATH"] = os.environ["CPATH"]


def _explained(plan: PlanGetter) -> Exception | None:
    """The shim's explanation of a failed Inductor build, when the resolution has one."""
    # At a failed build only: the errors' module and the resolver stay off the import path.
    from ..resolver._plan import full_toolchain  # noqa: PLC0415  a failure only
    from ._errors import MissingComponentError, SettingError  # noqa: PLC0415  a failure only

    tc = full_toolchain(plan())
    errors = [tc[n].error for n in INDUCTOR_COMPONENTS if tc[n].error]
    if errors:
        return SettingError("; ".join(e for e in errors if e))
    missing = [tc[n] for n in INDUCTOR_COMPONENTS if tc[n].path is None]
    if missing:
        return MissingComponentError(
            "TorchInductor cannot build its C++ kernels here:\n"
            + "\n".join(c.explain() for c in missing)
        )
    return None


def guard(original: Callable[..., Any], plan: PlanGetter) -> Callable[..., Any]:
    """``original``, whose failure becomes the shim's explanation when it has one."""

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except Exception as exc:
            better = _explained(plan)
            if better is None:
                raise
            raise better from exc

    setattr(guarded, ORIGINAL, original)
    return guarded


def after_import(name: str, plan: PlanGetter, patches: Patches, report: Report) -> None:
    """Apply to the torch module ``name`` that has just been imported."""
    module = sys.modules.get(name)
    if module is None:
        return
    if name == EXTENSIONS:
        torch = plan()["torch"]
        home = torch["CUDA_HOME"] if torch is not None else None
        if home and getattr(module, "CUDA_HOME", "") is None:
            setattr(module, "CUDA_HOME", home)  # noqa: B010  a module of torch
            report.applied[f"{EXTENSIONS}.CUDA_HOME"] = home
        return
    namespace = vars(module)
    for attr in GUARDED.get(name, ()):
        if callable(namespace.get(attr)) and patches.patch(
            name, namespace, attr, lambda original: guard(original, plan)
        ):
            report.applied[f"patch:{name}.{attr}"] = "explains a failed C++ build"
