"""The plan's cache directories (``resolver._caches``) applied: through each library's
own variable, and at the first use of each cache.

- Where the library's default is unusable, the shim's private directory is set in the
  library's variable (``TRITON_CACHE_DIR``, ``TORCHINDUCTOR_CACHE_DIR``) before the
  library is imported, unless the user set it: Triton reads it at every
  ``knobs.cache.dir`` (``triton/knobs.py``, 3.9), Inductor at every ``cache_dir()``
  (``torch/_inductor/runtime/cache_dir_utils.py``, 2.13), and both pass it to their
  compile workers. Only then: a variable set changes where Inductor puts Triton's
  kernels (``triton_cache_dir``), so nothing is set where the defaults work.
- The first use of each cache is guarded (``_activate.CACHE_GUARDS``: Triton's
  ``get_cache_manager``, through which it reads and writes its cache, and Inductor's
  ``cache_dir`` and ``default_cache_dir``, which its on-disk caching layer uses whatever
  TORCHINDUCTOR_CACHE_DIR says, and which names the judged directory where the default
  is not it; both modules are patched as soon as they are imported, before their
  importers take the names): a cache that is an ``error`` (an explicit directory others
  can change, none usable) raises the shim's ``SettingError`` there, so nothing of it is
  loaded; a
  ``said`` line or a ``warning`` is a ``RuntimeWarning`` once per process.

Pure standard library; imported only for a plan with a cache worth a word (chosen by
the shim, refused, or slow): a warm process whose caches are the defaults loads none of
it.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

from . import ORIGINAL, Patches, Plan, Report
from ._errors import SettingError

PlanGetter = Callable[[], Plan]

_SAID: set[str] = set()


def apply_env(plan: Plan, env: dict[str, str], report: Report) -> None:
    """Set each cache the shim chose in its library's variable (see the module
    docstring); ``env`` remembers what this process wrote."""
    for name, cache in plan["caches"].items():
        variable, path = cache["variable"], cache["path"]
        if not cache["apply"] or path is None:
            continue
        if variable in os.environ and env.get(variable) != os.environ[variable]:
            report.kept[f"env:{variable}"] = "set by the user"
            continue
        os.environ[variable] = env[variable] = path
        report.applied[f"env:{variable}"] = path
        if cache["said"]:
            report.notes.append(f"{name} cache: {cache['said']}")


def check(plan: Plan, name: str) -> None:
    """Before the first use of the cache ``name``: its error raised, its line said once."""
    cache = plan["caches"].get(name)
    if cache is None:
        return
    if cache["error"]:
        raise SettingError(f"triton-toolchain: {cache['error']}")
    line = cache["said"] or cache["warning"]
    if line and name not in _SAID:
        _SAID.add(name)
        warnings.warn(f"triton-toolchain: {line}", RuntimeWarning, stacklevel=3)


def guard(
    original: Callable[..., Any], plan: PlanGetter, name: str, *, default: bool = False
) -> Callable[..., Any]:
    """``original``, checked first (``check``); ``default``: a function naming the
    library's default directory, which then names the plan's directory where that is
    not the default (Inductor's ``default_cache_dir``)."""

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        now = plan()
        check(now, name)
        cache = now["caches"].get(name)
        if default and cache is not None and cache["path"] and cache["source"] != "default":
            return cache["path"]
        return original(*args, **kwargs)

    setattr(guarded, ORIGINAL, original)
    return guarded


def _guard_of(
    plan: PlanGetter, name: str, default: bool, original: Callable[..., Any]
) -> Callable[..., Any]:
    return guard(original, plan, name, default=default)


def after_import(
    module_name: str,
    guarded: tuple[str, tuple[str, ...]],
    plan: PlanGetter,
    patches: Patches,
    report: Report,
) -> None:
    """Guard the functions of ``guarded`` (the cache, the functions:
    ``_activate.CACHE_GUARDS``) of the module ``module_name`` just imported."""
    module = sys.modules.get(module_name)
    if module is None:
        return
    name, attrs = guarded
    namespace = vars(module)
    for attr in attrs:
        make = functools.partial(_guard_of, plan, name, attr.startswith("default_"))
        if callable(namespace.get(attr)) and patches.patch(module_name, namespace, attr, make):
            report.applied[f"patch:{module_name}.{attr}"] = f"checks the {name} cache"
