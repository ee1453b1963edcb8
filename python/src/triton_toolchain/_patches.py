"""The module globals of Triton that ``activate()`` replaces, and Triton's caches it clears.

Each replacement is recorded with the original, made once, and never made over a
replacement someone else installed after ours (``Patches.patch``):

- ``triton.backends.nvidia.compiler.get_ptxas(arch)`` (every release): the one function
  through which Triton picks the ptxas it hashes, takes the PTX version from, and runs.
  ``guard_get_ptxas`` returns what Triton chose, unchanged, or raises
  ``MissingComponentError`` when (a) Triton finds no ptxas, (b) the chosen one cannot
  assemble ``sm_<arch>`` (a 12.4 ptxas for sm_100a), (c) this Triton cannot use its
  release (Triton 3.3 rejects CUDA 13 with "Triton only support CUDA 10.0 or higher"),
  or (d) a strict manifest is active and Triton fell back to a ptxas the shim did not
  choose (its silent fallback to the bundled binary). Without the guard these end in a
  ptxas error, a misleading ``RuntimeError`` or an LLVM failure.
- ``triton.backends.nvidia.driver._build`` (3.0-3.3, no ``build.impl``): the launcher
  build, only while it is still ``triton.runtime.build._build``.
- ``triton.backends.nvidia.driver.libcuda_dirs``: only when neither a driver nor a link
  stub was found: it raises the shim's explanation instead of running ``/sbin/ldconfig``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ._catalog import SPECS, arch_problem
from ._errors import MissingComponentError
from ._model import Toolchain

COMPILER = "triton.backends.nvidia.compiler"
DRIVER = "triton.backends.nvidia.driver"
BUILD = "triton.runtime.build"
ORIGINAL = "__triton_toolchain_original__"
# Triton's lru_caches that hold toolchain lookups, per module (and runtime/build.py's
# ``_find_compiler``).
TRITON_CACHES: dict[str, tuple[str, ...]] = {
    "driver": ("libcuda_dirs", "library_dirs"),
    "compiler": ("_path_to_binary", "get_ptxas", "get_ptxas_version"),
}

ToolchainGetter = Callable[[], Toolchain]


Namespace = dict[str, Any]


def _class_globals(cls: object) -> Namespace | None:
    """The globals of the module that defined ``cls`` (through one of its functions)."""
    for value in vars(cls).values():
        func = getattr(value, "__func__", value)
        if inspect.isfunction(func):
            return func.__globals__
    return None


def namespaces(kind: Literal["compiler", "driver"]) -> list[tuple[str, Namespace]]:
    """The global namespaces of Triton's NVIDIA ``compiler`` or ``driver`` module, as
    already imported (nothing is imported here).

    Usually one: ``sys.modules["triton.backends.nvidia.<kind>"]``. Triton 3.0-3.3 load the
    backend's modules a second time, anonymously (``_discover_backends`` runs
    ``spec_from_file_location("nvidia", ...)`` and never registers them), and compile and
    launch with those: their namespace is reached through the classes in
    ``triton.backends.backends["nvidia"]``.
    """
    found: list[tuple[str, Namespace]] = []
    module = sys.modules.get(COMPILER if kind == "compiler" else DRIVER)
    if module is not None:
        found.append((module.__name__, vars(module)))
    registry = getattr(sys.modules.get("triton.backends"), "backends", None)
    backend = registry.get("nvidia") if isinstance(registry, dict) else None
    cls = getattr(backend, kind, None)
    namespace = _class_globals(cls) if cls is not None else None
    if namespace is not None and all(namespace is not ns for _, ns in found):
        found.append((f"triton.backends.backends['nvidia'].{kind}", namespace))
    return found


@dataclass
class Patches:
    """The replacements made in this process: ``(namespace, name) -> (original, ours)``."""

    made: dict[tuple[str, str], tuple[object, object]] = field(default_factory=dict)

    def patch(
        self, where: str, namespace: Namespace, attr: str, make: Callable[[Any], object]
    ) -> bool:
        """Replace ``namespace[attr]`` by ``make(original)`` unless it is absent or someone
        replaced ours since. True when ours is in place."""
        if attr not in namespace:
            return False
        key = (where, attr)
        present = namespace[attr]
        if key in self.made:
            original, ours = self.made[key]
            if present is ours:
                return True
            if present is not original:
                return False
        replacement = make(present)
        self.made[key] = (present, replacement)
        namespace[attr] = replacement
        return True

    def unpatch(self, where: str, namespace: Namespace, attr: str) -> None:
        """Put the original back, if ours is still in place."""
        key = (where, attr)
        if key in self.made:
            original, ours = self.made.pop(key)
            if namespace.get(attr) is ours:
                namespace[attr] = original


def tool_fields(tool: object) -> tuple[str | None, str | None]:
    """``(path, release)`` of what ``get_ptxas`` returned: a ``knobs.NvidiaTool``
    (3.4+) or a ``(path, version)`` tuple (3.0-3.3)."""
    if isinstance(tool, tuple) and len(tool) == 2:
        return str(tool[0]), str(tool[1])
    path, version = getattr(tool, "path", None), getattr(tool, "version", None)
    return (str(path) if path else None), (str(version) if version else None)


def _components_for(path: str | None, tc: Toolchain | None) -> list[str]:
    """Which ptxas components hold ``path`` (in the toolchain or the environment);
    both when none does."""
    names = [
        name
        for name in ("ptxas-blackwell", "ptxas")
        if path
        and (
            (tc is not None and tc[name].path == path)
            or os.environ.get(str(SPECS[name].env)) == path
        )
    ]
    return names or ["ptxas-blackwell", "ptxas"]


def _fixes(names: list[str], arch: int) -> str:
    fixes = "; or ".join(f"set {SPECS[n].env} ({n}): {SPECS[n].fix}" for n in names)
    return (
        f"{fixes}; `triton-toolchain doctor --arch {arch}` lists every ptxas found and why "
        f"each was rejected"
    )


def _usable_release(release: str, namespace: Namespace) -> str | None:
    """Why this Triton cannot use ptxas ``release`` (its ``ptx_get_version`` refuses it)."""
    ptx_get_version = namespace.get("ptx_get_version")
    if not callable(ptx_get_version):
        return None
    try:
        ptx_get_version(release)
    except (RuntimeError, ValueError, AssertionError):
        import importlib.metadata

        try:
            triton_version = importlib.metadata.version("triton")
        except importlib.metadata.PackageNotFoundError:
            triton_version = "this release"
        return (
            f"Triton {triton_version} cannot use a CUDA {release} ptxas (it knows no PTX "
            f"version for that release)"
        )
    return None


def unusable_tools(tc: Toolchain) -> tuple[str, ...]:
    """What the installed Triton itself refuses of the chosen ptxas releases, asked of
    its own ``ptx_get_version`` (e.g. Triton 3.3 knows no PTX version for CUDA 13).
    Imports Triton's NVIDIA compiler module: for ``doctor``, not for activation."""
    if importlib.util.find_spec("triton") is None:
        return ()
    try:
        importlib.import_module(COMPILER)
    except Exception as exc:  # a broken Triton install is worth a line, not a traceback
        return (f"Triton's NVIDIA compiler cannot be imported ({type(exc).__name__}: {exc})",)
    spaces = namespaces("compiler")
    if not spaces:
        return ()
    namespace = spaces[0][1]
    problems = []
    for name in ("ptxas", "ptxas-blackwell"):
        choice = tc[name]
        if choice.path is not None and choice.version is not None:
            problem = _usable_release(choice.version, namespace)
            if problem:
                problems.append(f"{name} {choice.path}: {problem}")
    return tuple(problems)


def check_ptxas(
    arch: int, tool: object, tc: Toolchain | None, namespace: Namespace
) -> MissingComponentError | None:
    """The error for the ptxas Triton chose for ``sm_<arch>``, or ``None`` when it is fine.
    ``namespace`` is the compiler module's (for its ``ptx_get_version``)."""
    path, release = tool_fields(tool)
    if release:
        problem = arch_problem(arch, release) or _usable_release(release, namespace)
        if problem:
            return MissingComponentError(
                f"Triton would run {path} (CUDA release {release}) to assemble sm_{arch}: "
                f"{problem}.\n  fix: {_fixes(_components_for(path, tc), arch)}"
            )
    if (
        tc is not None
        and tc.strict
        and path not in {tc[n].path for n in ("ptxas", "ptxas-blackwell")}
    ):
        from ._explain import explain_missing

        missing = [tc[n] for n in ("ptxas-blackwell", "ptxas") if tc[n].path is None]
        detail = "\n".join(explain_missing(c, tc) for c in missing)
        return MissingComponentError(
            f"Triton fell back to {path} for sm_{arch}, which the strict manifest "
            f"{tc.manifest} does not give (discovery is off).\n{detail}"
        )
    return None


def guard_get_ptxas(
    original: Callable[[int], object], toolchain: ToolchainGetter, namespace: Namespace
) -> Callable[[int], object]:
    """``get_ptxas`` that returns ``original(arch)`` or raises (see the module docstring)."""

    @functools.wraps(original)
    def get_ptxas(arch: int) -> object:
        try:
            tool = original(arch)
        except RuntimeError as exc:  # Triton's "Cannot find ptxas"
            component = "ptxas-blackwell" if arch >= 90 else "ptxas"
            raise MissingComponentError(
                f"Triton found no ptxas for sm_{arch} ({exc}).\n  fix: {SPECS[component].fix}"
            ) from exc
        try:
            tc: Toolchain | None = toolchain()
        except Exception:
            tc = None
        error = check_ptxas(arch, tool, tc, namespace) if isinstance(arch, int) else None
        if error is not None:
            raise error
        return tool

    setattr(get_ptxas, ORIGINAL, original)
    return get_ptxas


def no_driver_dirs(tc: Toolchain) -> Callable[[], list[str]]:
    """A ``libcuda_dirs`` that raises the shim's explanation of the missing driver."""

    def libcuda_dirs() -> list[str]:
        tc.require("libcuda")
        return []  # pragma: no cover  (require raised)

    return libcuda_dirs


def clear_triton_caches() -> None:
    """Empty Triton's caches of toolchain lookups (``TRITON_CACHES``, ``CUDABackend.hash``)
    in every namespace already imported; imports nothing."""
    for kind in ("compiler", "driver"):
        for _, namespace in namespaces(kind):
            for name in TRITON_CACHES.get(kind, ()):
                func = namespace.get(name)
                for f in (func, getattr(func, ORIGINAL, None)):
                    clear = getattr(f, "cache_clear", None)
                    if callable(clear):
                        clear()
            backend = namespace.get("CUDABackend")
            clear = getattr(getattr(backend, "hash", None), "cache_clear", None)
            if callable(clear):
                clear()
    find_compiler = getattr(sys.modules.get(BUILD), "_find_compiler", None)
    clear = getattr(find_compiler, "cache_clear", None)
    if callable(clear):
        clear()
