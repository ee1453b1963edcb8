"""The shim in this process: the import hook and the activation, by hand
(``activate()``) or at import. What it needs of the process (the patches, the report,
the drivers mapped and loading one, the user's environment) is the package's
(``runtime``).

**The hook.** The wheel installs ``triton_toolchain.pth`` into site-packages. Its one line
costs a few microseconds at interpreter start: unless ``TRITON_TOOLCHAIN`` is ``off``
(``0``, ``false``, ``no``), it puts a stub finder at the front of ``sys.meta_path`` that
returns ``None`` for every module but the libraries that load the NVIDIA driver
(``triton``, ``torch``, ``cupy``, ``cuda`` for ``cuda.bindings``, ``numba``, ``jax``), and
for them imports this module and hands over to ``find_spec`` here. ``Finder`` (installed
once, in place of the stub) lets the other finders find the spec of the watched modules
(and of Triton's NVIDIA backend modules, which 3.0-3.3 import late, and of torch's modules
the torch adapter applies to) and wraps the loader: before the module's code runs,
``on_import(name, finished=False)``; after, ``on_import(name, finished=True)``. The
module's ``__loader__`` and ``__spec__.loader`` are the original loader again before its
code runs. ``python -S`` and embedded interpreters skip ``.pth`` files; there,
``activate()`` installs the same finder (or applies at once when ``triton`` is imported).

**The activation**, in order:

1. resolve, or reuse the activation record of an earlier process whose every observed
   fact still holds (``_record``: a few hundred ``stat`` calls instead of the resolver).
   ``import triton`` resolves only the import's part of the plan (``_catalog.Part``);
   the others stay pending in the plan (``plan["pending"]``) and ``complete`` adds each
   when it is first needed: torch's (the C++ compiler, OpenMP, the CUDA home) at
   ``import torch``, so a process that never imports torch runs none of its tools; the
   launcher's (the C compiler, ``Python.h``) at Triton's first launcher build; the
   target's and the SASS dump's when Triton is about to take their tools. Processes
   that miss at once resolve one at a time, the others reading the first one's record
   (``_observe.resolving_alone``);
2. load the chosen driver by its absolute path (``runtime.preload_driver``), so that
   every later ``dlopen("libcuda.so.1")`` by bare name, from torch's CUDA runtime,
   Triton, CuPy or ``cuda.bindings``, gets this one, unless a ``libcuda`` is mapped
   already (``/proc/self/maps``): two drivers in one process cannot work;
3. hand the plan to the adapters: torch's environment when ``torch`` starts importing,
   its modules as they are imported (``_torch``), Triton's knobs and guards once
   ``triton`` has finished (``_triton``). The adapters record what they replace in
   ``runtime.Patches`` (made once, never over a replacement someone else installed
   after ours; the replacement carries the original in ``ORIGINAL``) and what they did
   in ``runtime.Report``.

Guarantees:

- An activation error never breaks an import: it becomes a ``RuntimeWarning`` and the
  library keeps its own defaults.
- What the user set is never overridden; values this module wrote into the environment
  are remembered, so a second activation is not fooled into taking them for the user's.
- Idempotent and thread-safe (one lock); a second call with the same settings resolves
  nothing again. Before ``import triton`` nothing of Triton is imported.
- ``TRITON_TOOLCHAIN=off`` (or ``0``, ``false``, ``no``) turns every activation into a
  no-op, the automatic one included; ``on``, ``1``, ``true``, ``yes`` or unset is on; any
  other value is on, with a warning naming the accepted values.
- Pure standard library, plain classes, few modules (this one, the package's own,
  ``_record``, ``_trust``): this is what every process that imports Triton or torch pays
  for (each module imported costs ~0.1 ms). The resolver, the catalog and the builder
  load only on a miss, for ``doctor`` or for a build: the imports of them here are
  inside the functions that need them.
"""

from __future__ import annotations

import os
import sys
import typing
import warnings
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from . import (
    BACKENDS,
    LOCK,
    SHIM,
    Part,
    Patches,
    Plan,
    Report,
    _record,
    loaded_drivers,
    preload_driver,
    user_environ,
)

if TYPE_CHECKING:  # the resolver's, loaded on a miss only
    from ..resolver._model import Toolchain
    from ._triton import TritonState

Mode = Literal["knobs", "environ", "pending", "off"]

# ---------------------------------------------------------------------------- the switch

SWITCH = "TRITON_TOOLCHAIN"
OFF = ("off", "0", "false", "no")
OFF_VALUES = frozenset(OFF)
ON_VALUES = frozenset({"", "on", "1", "true", "yes"})


def switch(environ: Mapping[str, str] | None = None) -> tuple[bool, str | None]:
    """Whether the shim is on, and a complaint about a value it does not know."""
    value = (os.environ if environ is None else environ).get(SWITCH, "").strip().lower()
    if value in OFF_VALUES:
        return False, None
    if value in ON_VALUES:
        return True, None
    return True, (
        f"{SWITCH}={value!r} is not one of on, 1, true, yes (on) or off, 0, false, no (off); "
        "the shim stays on"
    )


# ----------------------------------------------------------------------- the import hook

MARK = "_triton_toolchain_hook"
# The first use of each cache (``_caches``): module -> (the cache, the functions every use
# of it goes through). Triton reads and writes its cache through ``get_cache_manager``
# (``triton/runtime/cache.py``, 3.9); Inductor names its cache with ``cache_dir()``, and
# its on-disk caching layer with ``default_cache_dir()``, which ignores
# TORCHINDUCTOR_CACHE_DIR (``torch/_inductor/runtime/{cache_dir_utils,caching/
# implementations}.py``, 2.13).
CACHE_GUARDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "triton.runtime.cache": ("triton", ("get_cache_manager",)),
    "torch._inductor.runtime.cache_dir_utils": ("inductor", ("cache_dir", "default_cache_dir")),
}
# Top-level packages whose import loads, or may load, the NVIDIA driver: the stub hands
# over for them.
STUB_NAMES = ("triton", "torch", "cupy", "cuda", "numba", "jax")
DRIVER_USERS = frozenset(STUB_NAMES)
# Watched once the finder is installed: those, the modules of Triton's backends
# (``runtime.BACKENDS``; 3.0-3.3 import them late), and the torch modules the torch adapter
# applies to (``_torch.WATCHED``).
WATCHED = frozenset(
    {
        *STUB_NAMES,
        *(f"{b.triton_package}.{m}" for b in BACKENDS.values() for m in ("compiler", "driver")),
        "torch.utils.cpp_extension",
        "torch._inductor.cpp_builder",
        "torch._inductor.codecache",
        *CACHE_GUARDS,
    }
)
_STUB = (
    "class _TritonToolchainStub:\n"
    f"    {MARK} = True\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    f"        if name not in {STUB_NAMES!r}:\n"
    "            return None\n"
    "        try:\n"
    "            from triton_toolchain.runtime._activate import find_spec\n"
    "        except ImportError:\n"
    "            return None\n"
    "        return find_spec(name, path, target)\n"
    "sys.meta_path.insert(0, _TritonToolchainStub())"
)
# The .pth line, exactly as installed (a test checks the file against it). ``site`` may
# read the same site-packages twice (a venv's ``lib64`` symlink to ``lib``): the stub is
# installed once.
PTH_LINE = (
    f"import os, sys; os.environ.get({SWITCH!r}, '').strip().lower() in {OFF!r} or "
    f"any(getattr(f, {MARK!r}, False) for f in sys.meta_path) or exec({_STUB!r})"
)
_WARNED: set[str] = set()


def _warn(text: str) -> None:
    if text not in _WARNED:
        from ._errors import printable  # noqa: PLC0415  a warning only

        _WARNED.add(text)
        warnings.warn(printable(text), RuntimeWarning, stacklevel=4)


def _notify(name: str, *, finished: bool) -> None:
    """``on_import``, with every problem turned into a warning."""
    try:
        on, problem = switch()
        if problem:
            _warn(f"triton-toolchain: {problem}")
        for error in on_import(name, finished=finished) if on else ():
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


# ------------------------------------------------------------------------ the activation


class Activation:
    """What one ``activate()`` did (read-only).

    ``mode``: ``"knobs"`` (Triton 3.4+), ``"environ"`` (3.0-3.3), ``"pending"`` (Triton not
    imported yet: applied on import) or ``"off"`` (``TRITON_TOOLCHAIN=off``).
    ``applied`` maps each setting made (``"knobs.nvidia.ptxas"``, ``"env:CC"``,
    ``"knobs.build.impl"``, ``"patch:...get_ptxas"``) to its value; ``kept`` maps each
    setting left alone to the reason (``"set by the user"``); ``driver`` is the driver
    library loaded in this process, if any; ``toolchain`` the resolution applied.
    """

    __slots__ = ("applied", "driver", "kept", "mode", "notes", "plan")
    mode: Mode
    plan: Plan | None
    applied: dict[str, str]
    kept: dict[str, str]
    driver: str | None
    notes: tuple[str, ...]

    def __init__(
        self,
        mode: Mode,
        plan: Plan | None = None,
        applied: Mapping[str, str] | None = None,
        kept: Mapping[str, str] | None = None,
        driver: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        set_ = object.__setattr__
        set_(self, "mode", mode)
        set_(self, "plan", plan)
        set_(self, "applied", dict(applied or {}))
        set_(self, "kept", dict(kept or {}))
        set_(self, "driver", driver)
        set_(self, "notes", tuple(notes))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Activation is read-only: {name}")

    @property
    def toolchain(self) -> Toolchain | None:
        """The resolution applied, with its whole history (``_plan.full_toolchain``)."""
        if self.plan is None:
            return None
        from ..resolver._plan import full_toolchain  # noqa: PLC0415  the resolver: when asked only

        return full_toolchain(self.plan)

    def __repr__(self) -> str:
        driver = f", driver {self.driver}" if self.driver else ""
        notes = f", {len(self.notes)} notes" if self.notes else ""
        return (
            f"<Activation {self.mode}: {len(self.applied)} applied, {len(self.kept)} kept"
            f"{driver}{notes}>"
        )


# The parts of a plan (``_catalog.Part``) a first resolution takes at once; the others
# stay pending until ``complete``. `import triton`: the import's; `import torch` before
# Triton, and ``activate()``: torch's and the launcher's too, so that a worker that
# imports both resolves once.
AT_TRITON: tuple[Part, ...] = ("import",)
AT_TORCH: tuple[Part, ...] = ("import", "torch", "launcher")


class _State:
    """This process's activation (one, under ``runtime.LOCK``; the variables written and
    the driver loaded are ``runtime.SHIM``'s)."""

    def __init__(self) -> None:
        self.memo: tuple[object, Plan] | None = None  # (inputs, plan) last resolved
        self.plan: Plan | None = None  # the plan in force
        self.environ: dict[str, str] = {}  # the user's variables it was made from
        self.requested = False  # activate() was called (the hook applies it on import)
        self.triton_ready = False
        self.triton: TritonState | None = None
        self.driver_notes: tuple[str, ...] = ()
        self.mapped: list[str] | None = None  # the drivers mapped when last resolved
        self.last: Activation | None = None
        self.torch_patches = Patches()
        self.torch_report = Report()  # what torch got, cumulatively
        self.cache_patches = Patches()
        self.cache_report = Report()  # the cache directories set and guarded


_STATE = _State()


def current() -> Activation | None:
    """The last activation of this process, or ``None``; what torch's modules got since
    (they are applied to as they are imported) included."""
    with LOCK:
        last = _STATE.last
        if last is None or last.plan is None:
            return last
        applied = {**last.applied, **_STATE.torch_report.applied}
        kept = {**last.kept, **_STATE.torch_report.kept}
        return Activation(last.mode, last.plan, applied, kept, SHIM.driver, last.notes)


def _plan_now() -> Plan:
    with LOCK:
        if _STATE.plan is None:
            from ._errors import ToolchainError  # noqa: PLC0415  for an error only

            raise ToolchainError("triton-toolchain was not activated")
        return _STATE.plan


def resolved_plan(
    arch: int | None, parts: tuple[Part, ...] | None = None, environ: dict[str, str] | None = None
) -> Plan:
    """The plan of ``parts`` (``_catalog.Part``; ``None``: every part) for ``arch`` and
    the user's environment (``environ``: ``user_environ()`` as the caller has just read
    it): remembered in this process, else from a valid activation record, else resolved
    (and recorded)."""
    environ = user_environ() if environ is None else environ
    inputs = (arch, parts, tuple(sorted(environ.items())))
    if _STATE.memo is not None and _STATE.memo[0] == inputs:
        _STATE.mapped = None  # not read now: the driver load reads it again
        return _STATE.memo[1]
    key = _record.identity(arch, "all" if parts is None else " ".join(parts))
    # What this process loaded is no fact of the machine: with a driver mapped, resolve.
    # A pending part holds no driver (the import's does), so it is kept all the same.
    _STATE.mapped = loaded_drivers()
    mapped = bool(_STATE.mapped) and (parts is None or "import" in parts)
    if mapped:
        # Another driver is in the process: this resolution is its own, never kept.
        from ..resolver._plan import resolve_plan  # noqa: PLC0415  a miss only

        plan = resolve_plan(arch, environ, parts=parts, mapped=_STATE.mapped)[0]
    else:
        # The record checks a plan against its schema (``runtime.Plan``) before it returns one.
        kept = _record.lookup(key, environ)
        plan = kept if kept is not None else _resolve_and_store(key, arch, parts, environ)
    _STATE.memo = (inputs, plan)
    return plan


def _resolve_and_store(
    key: list[Any], arch: int | None, parts: tuple[Part, ...] | None, environ: Mapping[str, str]
) -> Plan:
    """Resolve and keep the record, one process at a time (``_observe.resolving_alone``).
    The record is looked up again once the lock is held: another process may have stored
    it since this one missed, whether this one had to wait for it or came just after."""
    # A miss: the resolver and the record's writing side load now, never on a hit.
    from ..resolver._observe import resolving_alone, store  # noqa: PLC0415  a miss only

    with resolving_alone(environ):
        plan = _record.lookup(key, environ)
        if plan is None:
            from ..resolver._plan import resolve_plan, without_history  # noqa: PLC0415  a miss only

            plan, facts = resolve_plan(arch, environ, parts=parts, mapped=_STATE.mapped)
            store(key, facts, without_history(plan), environ)
        return plan


def _load_driver(plan: Plan) -> None:
    """Load the plan's drivers (one per backend) by their absolute paths, once."""
    if SHIM.driver is not None:
        return
    notes = []
    for driver in plan["drivers"].values():
        path = driver["library"]
        if path is None:
            continue
        try:
            SHIM.driver = preload_driver(path, _STATE.mapped)
        except (OSError, ValueError) as exc:
            notes.append(f"could not load the driver {path}: {exc}")
        if SHIM.driver and os.path.realpath(SHIM.driver) != os.path.realpath(path):
            notes.append(
                f"this process had already loaded {SHIM.driver}; it is used instead of {path}"
            )
    _STATE.driver_notes = tuple(notes)


# Where a wrong explicit setting stops, by the component's ``used_by`` (``_catalog``).
STOPS: dict[str, str] = {
    "compile": "Triton stops with this error when it compiles a kernel",
    "build": "Triton stops with this error when it builds its launcher",
    "inductor": "torch.compile stops with this error when it builds CPU kernels",
    "extension": "torch.utils.cpp_extension stops with this error when it builds",
}


def _errors(plan: Plan) -> tuple[str, ...]:
    return tuple(
        f"{s['error']} ({STOPS.get(s['used_by'], 'what uses it stops with this error')}; "
        "`triton-toolchain doctor` shows every setting)"
        for s in plan["settings"]
        if s["error"]
    ) + tuple(
        f"{c['error']} (its first use stops with this error; `triton-toolchain doctor` "
        "shows each cache)"
        for c in plan["caches"].values()
        if c["error"]
    )


def _triton_imported() -> bool:
    module = sys.modules.get("triton")
    if module is None:
        return False
    if _STATE.triton_ready:
        return True
    spec = getattr(module, "__spec__", None)
    return not getattr(spec, "_initializing", False)


def _activation(mode: Mode, plan: Plan, report: Report, *extra: str) -> Activation:
    """An ``Activation`` of ``report`` and what torch got so far."""
    caches = _STATE.cache_report
    applied = {**caches.applied, **_STATE.torch_report.applied, **report.applied}
    kept = {**caches.kept, **_STATE.torch_report.kept, **report.kept}
    notes = (*_errors(plan), *caches.notes, *report.notes, *_STATE.driver_notes, *extra)
    return Activation(mode, plan, applied, kept, SHIM.driver, notes)


def _apply_triton(plan: Plan) -> Activation:
    from ._triton import TritonState, apply  # noqa: PLC0415  once Triton is imported only

    if _STATE.triton is None:
        _STATE.triton = TritonState()
    report = Report()
    mode = apply(_plan_now, _STATE.triton, SHIM.env, report, complete=complete)
    return _activation(mode, plan, report)


def with_part(plan: Plan, part: Plan) -> Plan:
    """``plan`` completed with ``part`` (a plan of one of its pending parts): the
    settings and components that ``plan`` lacks, and torch's part where ``part`` has it;
    pending, what neither holds. What ``plan`` already handed to Triton stays as it
    was. Plain data, here: a hit loads none of ``_plan``."""
    have = {s["component"] for s in plan["settings"]}
    components = plan["toolchain"]["components"]
    return {
        **plan,
        "toolchain": {
            **plan["toolchain"],
            "components": {
                **components,
                **{n: c for n, c in part["toolchain"]["components"].items() if n not in components},
            },
        },
        "history": plan["history"] and part["history"],
        "settings": [
            *plan["settings"],
            *(s for s in part["settings"] if s["component"] not in have),
        ],
        "pending": [p for p in plan["pending"] if p in part["pending"]],
        "torch": part["torch"] if part["torch"] is not None else plan["torch"],
        "caches": plan["caches"] or part["caches"],
    }


def _in_force(plan: Plan, environ: dict[str, str] | None = None) -> Plan:
    """Make ``plan`` the plan in force, made from the user's variables as they are now
    (``environ``: ``user_environ()`` as the caller read it for ``plan``)."""
    _STATE.plan, _STATE.environ = plan, user_environ() if environ is None else environ
    return plan


def _settings_changed(plan: Plan) -> bool:
    """Whether the user set, changed or unset a variable of ``plan``'s settings since it
    was made (``os.environ`` changed after ``import triton``, as torch's and vLLM's
    helpers do before the first compile)."""
    now = user_environ()
    return any(
        now.get(v) != _STATE.environ.get(v) for s in plan["settings"] if (v := s["variable"])
    )


def _refresh(plan: Plan) -> Plan:
    """``plan``, or, where the user changed one of its variables since, the plan of the
    same parts made again from the variables as they are now, and applied to Triton: a
    setting is judged the same whenever it is made, and the user's wins over the knob the
    shim assigned, as it would in stock Triton."""
    if not _settings_changed(plan):
        return plan
    held = tuple(p for p in typing.get_args(Part) if p not in plan["pending"])
    plan = _in_force(resolved_plan(plan["toolchain"].get("arch"), held))
    if _STATE.triton is not None:
        _STATE.last = _apply_triton(plan)
    return plan


def complete(part: Part) -> tuple[str, ...]:
    """Take in the variables the user changed since the plan was made (``_refresh``;
    ``complete("import")`` does only that: that part is never pending), then complete
    the plan in force with ``part`` where it is pending (``plan["pending"]``):
    its plan taken from a record or resolved (``resolved_plan``, kept even where a
    driver is mapped: a pending part holds none), merged (``with_part``), and applied to
    Triton again where it brings a setting Triton has a knob for (ptxas-blackwell, the
    SASS tools), so that Triton's knob or variable holds it when Triton reads it.
    Returns what is worth a warning in that part.

    Called when torch is imported (``"torch"``), before Triton's first launcher build
    (``"launcher"``: ``_triton.LauncherBuild``), and by the guarded lookups before
    Triton takes ptxas-blackwell for a target (``"target"``: ``get_ptxas``) or cuobjdump
    for a SASS dump (``"sass"``: ``tools.disasm.path_to_cuobjdump``)."""
    with LOCK:
        if _STATE.plan is None:
            return ()
        before = _errors(_STATE.plan)
        plan = _refresh(_STATE.plan)
        if part not in plan["pending"]:
            return tuple(e for e in _errors(plan) if e not in before)
        _STATE.plan = with_part(plan, resolved_plan(plan["toolchain"].get("arch"), (part,)))
        added = tuple(e for e in _errors(_STATE.plan) if e not in before)
        last = _STATE.last
        if last is not None and last.plan is plan:
            notes = (*last.notes, *added)
            _STATE.last = Activation(
                last.mode, _STATE.plan, last.applied, last.kept, last.driver, notes
            )
        have = {s["component"] for s in plan["settings"]}
        knobs = [s for s in _STATE.plan["settings"] if s["component"] not in have and s["knob"]]
        if knobs and _STATE.triton is not None:
            _STATE.last = _apply_triton(_STATE.plan)
        return added


def _set_caches(plan: Plan) -> None:
    """The plan's cache directories the shim chose, in their libraries' variables
    (``_caches``), once."""
    chosen = any(c["apply"] for c in plan["caches"].values())
    if chosen and not _STATE.cache_report.applied and not _STATE.cache_report.kept:
        from . import _caches  # noqa: PLC0415  at the first activation only

        _caches.apply_env(plan, SHIM.env, _STATE.cache_report)


def _apply_torch(name: str, *, finished: bool) -> None:
    """Hand the plan to torch: its environment when ``torch`` starts importing, its
    modules as they are imported (``_torch``)."""
    from . import _torch  # noqa: PLC0415  once torch is imported only

    if not finished and name == "torch":
        _torch.before_torch(_plan_now(), SHIM.env, _STATE.torch_report)
    elif finished and name in _torch.WATCHED:
        _torch.after_import(name, _plan_now, _STATE.torch_patches, _STATE.torch_report)


def _catch_up_torch() -> None:
    """An activation after ``import torch``: what the hook would have done."""
    if "torch" not in sys.modules:
        return
    _apply_torch("torch", finished=False)
    from . import _torch  # noqa: PLC0415  once torch is imported only

    for name in sorted(_torch.WATCHED & set(sys.modules)):
        _apply_torch(name, finished=True)


def activate(*, arch: int | None = None, toolchain: Toolchain | None = None) -> Activation:
    """Make this process use a resolution (see the module docstring).

    ``arch``: the target GPU (e.g. 90), passed to ``resolve()``; ``toolchain``: apply
    this resolution instead of resolving. Raises ``SettingError``/``ManifestError`` for
    a wrong ``arch``, ``TRITON_TOOLCHAIN_MANIFEST`` or manifest. A wrong explicit setting
    of one component is not raised here: it is in ``notes``, and the step that uses the
    component raises it; a component that is merely missing makes that step raise
    ``MissingComponentError``. What Triton reads only when it takes it (ptxas-blackwell,
    cuobjdump, nvdisasm: the plan's pending ``target`` and ``sass`` parts) is resolved
    and applied then (``complete``), as after the hook's activation.

    Example::

        import triton_toolchain
        triton_toolchain.activate()      # before or after `import triton`
        triton_toolchain.activate().applied["knobs.nvidia.ptxas"]
        # '/usr/local/cuda-13.0/bin/ptxas'
    """
    with LOCK:
        on, _ = switch()
        if not on:
            _STATE.last = Activation(
                "off", notes=(f"{SWITCH}={os.environ.get(SWITCH)}: not applied",)
            )
            return _STATE.last
        if toolchain is not None:
            from ..resolver._plan import plan_of  # noqa: PLC0415  the caller resolved: loaded already

            plan = plan_of(toolchain)
        else:
            plan = resolved_plan(arch, AT_TORCH)  # as `import torch` resolves: one record
        _STATE.requested = True
        _in_force(plan)
        _load_driver(plan)
        _set_caches(plan)
        # Also after `import triton`: Triton 3.0-3.3 import backend modules later.
        install()
        _catch_up_torch()
        if not _triton_imported():
            pending = "applied to Triton when it is imported"
            _STATE.last = _activation("pending", plan, Report(), pending)
        else:
            _STATE.last = _apply_triton(plan)
        return _STATE.last


def on_import(name: str, *, finished: bool) -> tuple[str, ...]:
    """Called by the hook when ``name`` starts (``finished=False``) or has finished
    importing. A library that loads the driver starting: resolve, load the driver, and
    for ``torch`` set what it reads from the environment. ``triton`` finished: apply to
    it; one of its NVIDIA backend modules finished (3.0-3.3 import them late): apply
    again; one of torch's watched modules finished: apply to it. Returns what is worth a
    warning (wrong settings); raises ``ToolchainError`` for a resolution that cannot be
    made. (The hook, ``_notify``, calls it only while the shim is on.)"""
    with LOCK:
        warnings: tuple[str, ...] = ()
        if not finished and name in DRIVER_USERS and _STATE.plan is None:
            # torch's part only for torch (what no other import needs: no process for it).
            environ = user_environ()
            parts = AT_TORCH if name == "torch" else AT_TRITON
            plan = _in_force(resolved_plan(None, parts, environ), environ)
            _load_driver(plan)
            _set_caches(plan)
            warnings = _errors(plan)
            pending = "applied to Triton when it is imported"
            _STATE.last = _activation("pending", plan, Report(), pending)
        if _STATE.plan is None:
            return warnings
        guarded = CACHE_GUARDS.get(name) if finished else None
        cache = _STATE.plan["caches"].get(guarded[0]) if guarded else None
        if (
            guarded
            and cache
            and (cache["source"] != "default" or cache["error"] or cache["warning"])
        ):
            from . import _caches  # noqa: PLC0415  only for a cache worth a word

            _caches.after_import(
                name, guarded, _plan_now, _STATE.cache_patches, _STATE.cache_report
            )
        if name == "torch" or name.startswith("torch."):
            warnings += complete("torch")
            _apply_torch(name, finished=finished)
        elif finished and name == "triton":
            _STATE.triton_ready = _STATE.requested = True
            _STATE.last = _apply_triton(_STATE.plan)
        elif finished and _STATE.requested and _triton_imported():
            _STATE.last = _apply_triton(_STATE.plan)
        return warnings
