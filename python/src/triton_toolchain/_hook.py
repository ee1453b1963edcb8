"""Automatic activation: when a library that loads the NVIDIA driver starts importing
(``triton``, ``torch``, ``cupy``, ``cuda`` for ``cuda.bindings``, ``numba``, ``jax``), and
when ``triton`` has finished importing.

The wheel installs ``triton_toolchain.pth`` into site-packages. Its one line costs a few
microseconds at interpreter start: unless ``TRITON_TOOLCHAIN`` is ``off`` (``0``,
``false``, ``no``), it puts a stub finder at the front of ``sys.meta_path`` that returns
``None`` for every module but those libraries, and for them imports this module (and
only then the package) and hands over to ``find_spec`` here. Nothing else is imported at
start-up: ``import triton_toolchain`` itself would cost milliseconds.

``Finder`` (installed once, in place of the stub) lets the other finders find the spec
of the watched modules (and of Triton's NVIDIA backend modules, which 3.0-3.3 import
late) and wraps the loader: before the module's code runs,
``_activate.on_import(name, finished=False)`` resolves and loads the chosen driver by
its absolute path, before the library can load one by bare name; after it has run,
``on_import(name, finished=True)`` applies the toolchain to Triton. The module's
``__loader__`` and ``__spec__.loader`` are the original loader again before its code
runs. An activation error never breaks an import: it becomes a ``RuntimeWarning`` and
the library keeps its own defaults.

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
# The top-level packages the stub hands over for (``_activate.DRIVER_USERS``), and the
# modules watched once the finder is installed.
STUB_NAMES = ("triton", "torch", "cupy", "cuda", "numba", "jax")
# Triton's NVIDIA backend modules (3.0-3.3 import them late), and the torch modules the
# torch adapter applies to (``_torch._apply.WATCHED``).
WATCHED = frozenset(
    {
        *STUB_NAMES,
        "triton.backends.nvidia.compiler",
        "triton.backends.nvidia.driver",
        "torch.utils.cpp_extension",
        "torch._inductor.cpp_builder",
        "torch._inductor.codecache",
    }
)
_STUB = (
    "class _TritonToolchainStub:\n"
    "    _triton_toolchain_hook = True\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    f"        if name not in {STUB_NAMES!r}:\n"
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
_WARNED: set[str] = set()


def _warn(text: str) -> None:
    if text not in _WARNED:
        _WARNED.add(text)
        warnings.warn(text, RuntimeWarning, stacklevel=4)


def _notify(name: str, *, finished: bool) -> None:
    """``_activate.on_import``, with every problem turned into a warning."""
    try:
        from . import _activate

        problem = _activate.switch()[1]
        if problem:
            _warn(f"triton-toolchain: {problem}")
        for error in _activate.on_import(name, finished=finished):
            _warn(f"triton-toolchain: {error}")
    except Exception as exc:
        library = name.split(".", maxsplit=1)[0]
        _warn(
            f"triton-toolchain did not configure {library} ({type(exc).__name__}: {exc}); it "
            "uses its own defaults. Run `triton-toolchain doctor`, or set TRITON_TOOLCHAIN=off "
            "to turn the shim off"
        )


class _Loader:
    """Runs ``on_import`` before and after the real loader."""

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
        _notify(self._name, finished=False)
        self._loader.exec_module(module)
        _notify(self._name, finished=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def after_triton_import() -> None:
    """Activate for a Triton that has just run its ``__init__``: what the ``.pth`` hook
    does once ``import triton`` finishes, for Tritons that call the shim themselves at
    the end of ``triton/__init__.py`` (the Nix overlay does, since ``.pth`` files are not
    read from ``PYTHONPATH``). Idempotent; never raises: an error becomes a
    ``RuntimeWarning`` and Triton keeps its own defaults."""
    _notify("triton", finished=False)
    _notify("triton", finished=True)


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
