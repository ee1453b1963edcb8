"""Automatic activation: run ``activate()`` right after ``import triton`` finishes.

The wheel installs ``triton_toolchain.pth`` into site-packages. Its one line costs a few
microseconds at interpreter start: unless ``TRITON_TOOLCHAIN`` is ``off`` (``0``,
``false``, ``no``), it puts a stub finder at the front of ``sys.meta_path`` that returns
``None`` for every module but ``triton``, and for ``triton`` imports this module (and
only then the package) and hands over to ``find_spec`` here. Nothing else is imported at
start-up: ``import triton_toolchain`` itself would cost tens of milliseconds.

``Finder`` (installed once, in place of the stub) lets the other finders find the spec
of ``triton`` and of its NVIDIA backend modules, and wraps the loader: after the module's
code has run, ``_activate.on_import(name)`` applies the toolchain; the module's
``__loader__`` and ``__spec__.loader`` are the original loader again before its code
runs. An activation error never breaks ``import triton``: it becomes a
``RuntimeWarning`` and Triton keeps its own defaults.

``python -S`` (no site processing) and embedded interpreters skip ``.pth`` files; there,
``triton_toolchain.activate()`` installs the same finder (or applies at once when
``triton`` is already imported).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

MARK = "_triton_toolchain_hook"
# Triton 3.0-3.3 import their NVIDIA backend modules lazily, after `triton`.
WATCHED = frozenset({"triton", "triton.backends.nvidia.compiler", "triton.backends.nvidia.driver"})
_STUB = (
    "class _TritonToolchainStub:\n"
    "    _triton_toolchain_hook = True\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    "        if name != 'triton':\n"
    "            return None\n"
    "        try:\n"
    "            from triton_toolchain._hook import find_spec\n"
    "        except ImportError:\n"
    "            return None\n"
    "        return find_spec(name, path, target)\n"
    "sys.meta_path.insert(0, _TritonToolchainStub())"
)
# The .pth line, exactly as installed (a test checks the file against it). ``site`` may
# read the same site-packages twice (a venv's ``lib64`` symlink to ``lib``): the stub is
# installed once.
PTH_LINE = (
    'import os, sys; os.environ.get("TRITON_TOOLCHAIN", "").strip().lower() in '
    '("off", "0", "false", "no") or any(getattr(f, "_triton_toolchain_hook", False) '
    f"for f in sys.meta_path) or exec({_STUB!r})"
)


class _Loader:
    """Runs the real loader, then ``_activate.on_import``."""

    def __init__(self, loader: Any, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        self._loader.exec_module(module)
        _after_import(self._name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def _after_import(name: str) -> None:
    try:
        from . import _activate

        _activate.on_import(name)
    except Exception as exc:
        warnings.warn(
            f"triton-toolchain did not configure Triton ({type(exc).__name__}: {exc}); Triton "
            f"uses its own defaults. Run `triton-toolchain doctor`, or set TRITON_TOOLCHAIN=off "
            f"to turn the shim off",
            RuntimeWarning,
            stacklevel=3,
        )


def after_triton_import() -> None:
    """Activate for a Triton that has just run its ``__init__``: what the ``.pth`` hook
    does once ``import triton`` finishes, for Tritons that call the shim themselves at
    the end of ``triton/__init__.py`` (the Nix overlay does, since ``.pth`` files are not
    read from ``PYTHONPATH``). Idempotent; never raises: an error becomes a
    ``RuntimeWarning`` and Triton keeps its own defaults."""
    _after_import("triton")


class Finder:
    """The meta-path finder of the watched modules (see the module docstring)."""

    _triton_toolchain_hook = True

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in WATCHED:
            return None
        for finder in list(sys.meta_path):
            if getattr(finder, MARK, False):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec: ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, fullname)  # type: ignore[assignment]
        return spec


def install() -> Finder:
    """Put ``Finder`` first on ``sys.meta_path`` (once), removing the ``.pth`` stub."""
    for finder in sys.meta_path:
        if isinstance(finder, Finder):
            return finder
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, MARK, False)]
    finder = Finder()
    sys.meta_path.insert(0, finder)
    return finder


def find_spec(
    name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
) -> ModuleSpec | None:
    """The stub's hand-over: install ``Finder`` and answer with it."""
    return install().find_spec(name, path, target)
