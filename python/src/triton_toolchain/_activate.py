"""``activate()``: make this process use the resolved toolchain, whoever asks first.

What it does, in order:

1. resolve, or reuse the activation record of an earlier process whose every observed
   fact still holds (``_record``: a few hundred ``stat`` calls instead of the resolver);
2. load the chosen driver by its absolute path (``_process.preload_driver``), so that
   every later ``dlopen("libcuda.so.1")`` by bare name, from torch's CUDA runtime,
   Triton, CuPy or ``cuda.bindings``, gets this one;
3. hand the plan to Triton (``_triton._apply``) once it is imported.

The import hook (``_hook``) calls ``on_import`` when ``triton``, ``torch`` or another
library that loads the driver starts importing (steps 1 and 2) and when ``triton`` has
finished (step 3), so a program that touches CUDA through torch before anything
imports Triton still gets the chosen driver.

Guarantees:

- What the user set is never overridden (``_triton._apply``); values this module wrote
  into the environment are remembered, so a second activation is not fooled into
  taking them for the user's.
- Idempotent and thread-safe (one lock); a second call with the same settings resolves
  nothing again.
- Before ``import triton`` nothing of Triton is imported.
- ``TRITON_TOOLCHAIN=off`` (or ``0``, ``false``, ``no``) turns every activation into a
  no-op, the automatic one included; ``on``, ``1``, ``true``, ``yes`` or unset is on;
  any other value is on, with a warning naming the accepted values.
- Pure standard library until something must be resolved or built: the record, the
  driver and the knobs cost no import of the resolver.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from . import _record
from ._process import Patches, Report, loaded_drivers, preload_driver

if TYPE_CHECKING:
    from ._model import Toolchain
    from ._triton._apply import TritonState

SWITCH = "TRITON_TOOLCHAIN"
OFF_VALUES = frozenset({"off", "0", "false", "no"})
ON_VALUES = frozenset({"", "on", "1", "true", "yes"})
# Top-level packages whose import loads, or may load, the NVIDIA driver.
DRIVER_USERS = frozenset({"triton", "torch", "cupy", "cuda", "numba", "jax"})

Mode = Literal["knobs", "environ", "pending", "off"]


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


def disabled(environ: Mapping[str, str] | None = None) -> bool:
    """``TRITON_TOOLCHAIN`` is ``off`` (or ``0``, ``false``, ``no``)."""
    return not switch(environ)[0]


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
    plan: Mapping[str, Any] | None
    applied: dict[str, str]
    kept: dict[str, str]
    driver: str | None
    notes: tuple[str, ...]

    def __init__(
        self,
        mode: Mode,
        plan: Mapping[str, Any] | None = None,
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
        from ._plan import full_toolchain

        return full_toolchain(self.plan)

    def __repr__(self) -> str:
        driver = f", driver {self.driver}" if self.driver else ""
        notes = f", {len(self.notes)} notes" if self.notes else ""
        return (
            f"<Activation {self.mode}: {len(self.applied)} applied, {len(self.kept)} kept"
            f"{driver}{notes}>"
        )


class _State:
    """This process's activation (one, under ``_LOCK``)."""

    def __init__(self) -> None:
        self.env: dict[str, str] = {}  # variables this module wrote
        self.memo: tuple[object, dict[str, Any]] | None = None  # (inputs, plan) last resolved
        self.plan: dict[str, Any] | None = None  # the plan in force
        self.requested = False  # activate() was called (the hook applies it on import)
        self.triton_ready = False
        self.triton: TritonState | None = None
        self.driver: str | None = None
        self.driver_notes: tuple[str, ...] = ()
        self.mapped: list[str] | None = None  # the drivers mapped when last resolved
        self.last: Activation | None = None
        self.torch_patches = Patches()
        self.torch_report = Report()  # what torch got, cumulatively


_LOCK = threading.RLock()
_STATE = _State()


def current() -> Activation | None:
    """The last activation of this process, or ``None``; what torch's modules got since
    (they are applied to as they are imported) included."""
    with _LOCK:
        last = _STATE.last
        if last is None or last.plan is None:
            return last
        applied = {**last.applied, **_STATE.torch_report.applied}
        kept = {**last.kept, **_STATE.torch_report.kept}
        return Activation(last.mode, last.plan, applied, kept, _STATE.driver, last.notes)


def user_environ() -> dict[str, str]:
    """``os.environ`` without the values this module wrote: what the user set."""
    with _LOCK:
        return {k: v for k, v in os.environ.items() if _STATE.env.get(k) != v}


def _plan_now() -> dict[str, Any]:
    with _LOCK:
        if _STATE.plan is None:
            from ._errors import ToolchainError

            raise ToolchainError("triton-toolchain was not activated")
        return _STATE.plan


def resolved_plan(arch: int | None) -> dict[str, Any]:
    """The plan for ``arch`` and the user's environment: remembered in this process,
    else from a valid activation record, else resolved (and recorded)."""
    environ = user_environ()
    inputs = (arch, tuple(sorted(environ.items())))
    if _STATE.memo is not None and _STATE.memo[0] == inputs:
        _STATE.mapped = None  # not read now: the driver load reads it again
        return _STATE.memo[1]
    key = _record.identity(arch)
    # What this process loaded is no fact of the machine: with a driver mapped, resolve.
    _STATE.mapped = loaded_drivers()
    plan = None if _STATE.mapped else _record.lookup(key, environ)
    if plan is None:
        from ._plan import resolve_plan

        plan, facts = resolve_plan(arch, environ)
        if not _STATE.mapped:
            from ._plan import without_history

            _record.store(key, facts, without_history(plan), environ)
    _STATE.memo = (inputs, plan)
    return plan


def loaded_by_shim() -> frozenset[str]:
    """The driver this module loaded into the process (not someone else's)."""
    with _LOCK:
        return frozenset({os.path.realpath(_STATE.driver)} if _STATE.driver else ())


def _load_driver(plan: Mapping[str, Any]) -> None:
    """Load the plan's driver by its absolute path, once."""
    path = plan.get("driver")
    if path is None or _STATE.driver is not None:
        return
    notes = []
    try:
        _STATE.driver = preload_driver(path, _STATE.mapped)
    except (OSError, ValueError) as exc:
        notes.append(f"could not load the driver {path}: {exc}")
    if _STATE.driver and os.path.realpath(_STATE.driver) != os.path.realpath(path):
        notes.append(
            f"this process had already loaded {_STATE.driver}; it is used instead of {path}"
        )
    _STATE.driver_notes = tuple(notes)


def _errors(plan: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        f"{s['error']} (Triton stops with this error when it "
        f"{'compiles' if s['used_by'] == 'compile' else 'builds its launcher'})"
        for s in plan["settings"]
        if s["error"]
    )


def _triton_imported() -> bool:
    module = sys.modules.get("triton")
    if module is None:
        return False
    if _STATE.triton_ready:
        return True
    spec = getattr(module, "__spec__", None)
    return not getattr(spec, "_initializing", False)


def _activation(mode: Mode, plan: dict[str, Any], report: Report, *extra: str) -> Activation:
    """An ``Activation`` of ``report`` and what torch got so far."""
    applied = {**_STATE.torch_report.applied, **report.applied}
    kept = {**_STATE.torch_report.kept, **report.kept}
    notes = (*_errors(plan), *report.notes, *_STATE.driver_notes, *extra)
    return Activation(mode, plan, applied, kept, _STATE.driver, notes)


def _apply_triton(plan: dict[str, Any]) -> Activation:
    from ._triton._apply import TritonState, apply

    if _STATE.triton is None:
        _STATE.triton = TritonState()
    report = Report()
    mode = apply(_plan_now, _STATE.triton, _STATE.env, report)
    return _activation(mode, plan, report)  # type: ignore[arg-type]


def _apply_torch(name: str, *, finished: bool) -> None:
    """Hand the plan to torch: its environment when ``torch`` starts importing, its
    modules as they are imported (``_torch._apply``)."""
    from ._torch import _apply as torch_apply

    if not finished and name == "torch":
        torch_apply.before_torch(_plan_now(), _STATE.env, _STATE.torch_report)
    elif finished and name in torch_apply.WATCHED:
        torch_apply.after_import(name, _plan_now, _STATE.torch_patches, _STATE.torch_report)


def _catch_up_torch() -> None:
    """An activation after ``import torch``: what the hook would have done."""
    if "torch" not in sys.modules:
        return
    _apply_torch("torch", finished=False)
    from ._torch._apply import WATCHED

    for name in sorted(WATCHED & set(sys.modules)):
        _apply_torch(name, finished=True)


def activate(*, arch: int | None = None, toolchain: Toolchain | None = None) -> Activation:
    """Make this process use a resolution (see the module docstring).

    ``arch``: the target GPU (e.g. 90), passed to ``resolve()``; ``toolchain``: apply
    this resolution instead of resolving. Raises ``SettingError``/``ManifestError`` for
    a wrong ``arch``, ``TRITON_TOOLCHAIN_MANIFEST`` or manifest. A wrong explicit setting
    of one component is not raised here: it is in ``notes``, and the step that uses the
    component raises it; a component that is merely missing makes that step raise
    ``MissingComponentError``.

    Example::

        import triton_toolchain
        triton_toolchain.activate()      # before or after `import triton`
        triton_toolchain.activate().applied["knobs.nvidia.ptxas_blackwell"]
        # '/usr/local/cuda-13.0/bin/ptxas'
    """
    with _LOCK:
        on, _ = switch()
        if not on:
            _STATE.last = Activation(
                "off", notes=(f"{SWITCH}={os.environ.get(SWITCH)}: not applied",)
            )
            return _STATE.last
        if toolchain is not None:
            from ._plan import plan_of

            plan = plan_of(toolchain)
        else:
            plan = resolved_plan(arch)
        _STATE.plan, _STATE.requested = plan, True
        _load_driver(plan)
        from ._hook import install

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
    """Called by ``_hook`` when ``name`` starts (``finished=False``) or has finished
    importing. A library that loads the driver starting: resolve, load the driver, and
    for ``torch`` set what it reads from the environment. ``triton`` finished: apply to
    it; one of its NVIDIA backend modules finished (3.0-3.3 import them late): apply
    again; one of torch's watched modules finished: apply to it. Returns what is worth a
    warning (wrong settings); raises ``ToolchainError`` for a resolution that cannot be
    made."""
    with _LOCK:
        if not switch()[0]:
            return ()
        warnings: tuple[str, ...] = ()
        if not finished and name in DRIVER_USERS and _STATE.plan is None:
            _STATE.plan = resolved_plan(None)
            _load_driver(_STATE.plan)
            warnings = _errors(_STATE.plan)
            pending = "applied to Triton when it is imported"
            _STATE.last = _activation("pending", _STATE.plan, Report(), pending)
        if _STATE.plan is None:
            return warnings
        if name == "torch" or name.startswith("torch."):
            _apply_torch(name, finished=finished)
        elif finished and name == "triton":
            _STATE.triton_ready = _STATE.requested = True
            _STATE.last = _apply_triton(_STATE.plan)
        elif finished and _STATE.requested and _triton_imported():
            _STATE.last = _apply_triton(_STATE.plan)
        return warnings
