"""``activate()``: make Triton use a resolution, and ``run_with_toolchain()``: run a
program with it exported.

How Triton is told, by release (read from each release's ``knobs.py``,
``runtime/build.py`` and ``backends/nvidia/{compiler,driver}.py``):

- Triton 3.4 and newer (``triton.knobs`` exists): ``knobs.nvidia.ptxas``,
  ``ptxas_blackwell`` (where the release has it), ``cuobjdump``, ``nvdisasm``,
  ``libdevice_path``, ``libcuda_path`` (the run-time driver's directory, else the link
  directory: Triton then never runs ``/sbin/ldconfig``), and ``knobs.build.impl`` (the
  launcher build, ``_build.LauncherBuild``). Triton copies each assignment into the
  environment (``knobs.propagate_env``), so child processes see the same values.
- Triton 3.0 to 3.3: the environment variables (``TRITON_PTXAS_PATH``, 3.3's
  ``TRITON_PTXAS-BLACKWELL_PATH`` -- its ``_path_to_binary`` upper-cases the binary's
  name, hyphen included --, ``TRITON_LIBCUDA_PATH``, ``TRITON_LIBDEVICE_PATH``, ``CC``, ...)
  and, because those releases have no ``build.impl``, the module global
  ``triton.backends.nvidia.driver._build`` (which ``compile_module_from_src`` calls by
  name with the signature ``build.impl`` later adopted) is replaced by the same launcher
  build, but only while it is still Triton's own ``triton.runtime.build._build``.
- Every release: ``triton.backends.nvidia.compiler.get_ptxas`` (the one function through
  which Triton picks its ptxas, for the cache key, the PTX version and the assembler
  run) is wrapped: it returns what Triton chose, unchanged, or raises
  ``MissingComponentError`` when that ptxas cannot assemble the target (say a 12.4 ptxas
  for sm_100a) or Triton finds none, instead of an LLVM or ptxas failure later.
- Triton's ``lru_cache``\\ s of these lookups (``libcuda_dirs``, ``library_dirs``,
  ``_path_to_binary``, ``get_ptxas``, ``get_ptxas_version``, ``_find_compiler``,
  ``CUDABackend.hash``) are cleared, so an activation after Triton has been used takes
  effect.
- The chosen driver is loaded by its absolute path (``_build.preload_driver``).
- With neither a driver nor a link stub, ``driver.libcuda_dirs`` raises the shim's
  explanation instead of running ``/sbin/ldconfig``.

Guarantees:

- What the user set explicitly is never overridden: a variable set in the environment
  by someone else than this module, a knob the user assigned, a ``build.impl`` that is
  not ours. Values this module wrote (directly or through ``propagate_env``) are
  remembered, so a second activation is not fooled into taking them for the user's.
  When the user sets a variable after an activation, the knob this module assigned is
  withdrawn so that the user's variable takes effect.
- Idempotent and thread-safe (one lock); a second call with the same settings resolves
  nothing again.
- Before ``import triton`` nothing of Triton is imported: the resolution is made (its
  errors raise now) and applied when ``triton`` has been imported (``_hook``).
- ``TRITON_TOOLCHAIN=off`` (or ``0``, ``false``, ``no``) turns every activation into a
  no-op, including the automatic one.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

from ._build import LauncherBuild, preload_driver
from ._catalog import SPECS_TUPLE
from ._env import merged_env, toolchain_env
from ._errors import ToolchainError
from ._host import Host
from ._manifest import MANIFEST_VARIABLE
from ._model import Toolchain
from ._patches import (
    BUILD,
    Namespace,
    Patches,
    clear_triton_caches,
    guard_get_ptxas,
    namespaces,
    no_driver_dirs,
)

SWITCH = "TRITON_TOOLCHAIN"
OFF_VALUES = frozenset({"off", "0", "false", "no"})
# Triton 3.0-3.3 spell ptxas-blackwell's variable with the hyphen of the binary's name.
LEGACY_BLACKWELL_VARIABLE = "TRITON_PTXAS-BLACKWELL_PATH"

Mode = Literal["knobs", "environ", "pending", "off"]

# Variable -> knob (``"nvidia.ptxas"``) for every component Triton has a knob for.
KNOB_OF: dict[str, str] = {s.env: s.knob for s in SPECS_TUPLE if s.env and s.knob}
# Knobs this module assigns on Triton 3.4+ (the build itself goes through build.impl).
APPLIED_KNOBS: tuple[str, ...] = tuple(
    k for k in dict.fromkeys(KNOB_OF.values()) if k.startswith("nvidia.")
)


@dataclass(frozen=True)
class Activation:
    """What one ``activate()`` did.

    ``mode``: ``"knobs"`` (Triton 3.4+), ``"environ"`` (3.0-3.3), ``"pending"`` (Triton not
    imported yet: applied on import) or ``"off"`` (``TRITON_TOOLCHAIN=off``).
    ``applied`` maps each setting made (``"knobs.nvidia.ptxas"``, ``"env:CC"``,
    ``"knobs.build.impl"``, ``"patch:...get_ptxas"``) to its value; ``kept`` maps each
    setting left alone to the reason (``"set by the user"``); ``driver`` is the driver
    library loaded in this process, if any.
    """

    mode: Mode
    toolchain: Toolchain | None = None
    applied: Mapping[str, str] = field(default_factory=dict)
    kept: Mapping[str, str] = field(default_factory=dict)
    driver: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class _State:
    env: dict[str, str] = field(default_factory=dict)  # variables this module wrote
    knobs: dict[str, object] = field(default_factory=dict)  # knob -> value assigned
    patches: Patches = field(default_factory=Patches)
    resolved: tuple[tuple[object, ...], Toolchain] | None = None
    toolchain: Toolchain | None = None
    arch: int | None = None
    requested: bool = False  # activate() was called (the hook applies it on import)
    triton_ready: bool = False
    last: Activation | None = None
    impl: LauncherBuild | None = None


_LOCK = threading.RLock()
_STATE = _State()


def disabled(environ: Mapping[str, str] | None = None) -> bool:
    """``TRITON_TOOLCHAIN`` is ``off`` (or ``0``, ``false``, ``no``)."""
    env = os.environ if environ is None else environ
    return env.get(SWITCH, "").strip().lower() in OFF_VALUES


def current() -> Activation | None:
    """The last activation of this process, or ``None``."""
    with _LOCK:
        return _STATE.last


def _toolchain_now() -> Toolchain:
    with _LOCK:
        if _STATE.toolchain is None:
            raise ToolchainError("triton-toolchain was not activated")
        return _STATE.toolchain


def user_environ() -> dict[str, str]:
    """``os.environ`` without the values this module wrote: what the user set."""
    with _LOCK:
        return {k: v for k, v in os.environ.items() if _STATE.env.get(k) != v}


def _resolve(arch: int | None) -> Toolchain:
    from ._resolve import resolve

    environ = user_environ()
    key = (arch, tuple(sorted(environ.items())))
    if _STATE.resolved is not None and _STATE.resolved[0] == key:
        return _STATE.resolved[1]
    tc = resolve(arch, host=dataclasses.replace(Host.current(), environ=environ))
    _STATE.resolved = (key, tc)
    return tc


def activate(*, arch: int | None = None, toolchain: Toolchain | None = None) -> Activation:
    """Apply a resolution to Triton (see the module docstring for how, per release).

    ``arch``: the target GPU (e.g. 90), passed to ``resolve()``; ``toolchain``: apply
    this resolution instead of resolving. Raises ``SettingError``/``ManifestError`` for
    wrong settings (the resolver's errors); a component that is merely missing is not an
    error here: Triton's step that needs it raises ``MissingComponentError``.

    Example::

        import triton_toolchain
        triton_toolchain.activate()      # before or after `import triton`
        triton_toolchain.activate().applied["knobs.nvidia.ptxas_blackwell"]
        # '/usr/local/cuda-13.0/bin/ptxas'
    """
    with _LOCK:
        if disabled():
            _STATE.last = Activation(
                "off", notes=(f"{SWITCH}={os.environ.get(SWITCH)}: not applied",)
            )
            return _STATE.last
        tc = toolchain if toolchain is not None else _resolve(arch)
        _STATE.toolchain, _STATE.arch, _STATE.requested = tc, arch, True
        from ._hook import install

        # Also after `import triton`: Triton 3.0-3.3 import backend modules later.
        install()
        if not _triton_imported():
            _STATE.last = Activation("pending", tc, notes=("applied when triton is imported",))
            return _STATE.last
        _STATE.last = _apply(tc)
        return _STATE.last


def _triton_imported() -> bool:
    module = sys.modules.get("triton")
    if module is None:
        return False
    if _STATE.triton_ready:
        return True
    spec = getattr(module, "__spec__", None)
    return not getattr(spec, "_initializing", False)


def on_import(name: str) -> None:
    """Called by ``_hook`` right after ``name`` (``triton`` or one of its NVIDIA backend
    modules) finished importing. Activates on ``triton``; patches later backend modules
    (Triton 3.0-3.3 import them lazily)."""
    with _LOCK:
        if name == "triton":
            _STATE.triton_ready = True
            if disabled():
                return
            if _STATE.requested and _STATE.toolchain is not None:
                _STATE.last = _apply(_STATE.toolchain)
                return
            try:
                activate(arch=None)
            except ToolchainError:
                # A wrong setting: Triton keeps its defaults, but a ptxas that cannot
                # serve a target still stops with an explanation, not an LLVM abort.
                _patch_get_ptxas(_Report())
                raise
        elif disabled() or not _triton_imported():
            return
        elif (
            _STATE.toolchain is not None
            and _STATE.last is not None
            and _STATE.last.mode in ("knobs", "environ")
        ):
            _STATE.last = _apply(_STATE.toolchain)
        else:
            _patch_get_ptxas(_Report())


# --- applying --------------------------------------------------------------------------


@dataclass
class _Report:
    applied: dict[str, str] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _apply(tc: Toolchain) -> Activation:
    knobs = sys.modules.get("triton.knobs")
    use_knobs = hasattr(knobs, "nvidia") and hasattr(knobs, "build")
    report = _Report()
    wanted = {k: v for k, v in toolchain_env(tc).items() if k != MANIFEST_VARIABLE}
    if knobs is not None and use_knobs:
        _apply_knobs(knobs, wanted, report)
        _apply_impl(knobs, report)
    else:
        if tc["ptxas-blackwell"].path and "TRITON_PTXAS_BLACKWELL_PATH" in wanted:
            wanted[LEGACY_BLACKWELL_VARIABLE] = wanted["TRITON_PTXAS_BLACKWELL_PATH"]
        _apply_environ(wanted, report)
        _patch_build(report)
    _patch_get_ptxas(report)
    _patch_libcuda_dirs(tc, report)
    clear_triton_caches()
    driver = None
    if tc["libcuda"].path:
        try:
            driver = preload_driver(tc["libcuda"].path)
        except OSError as exc:
            report.notes.append(f"could not load the driver {tc['libcuda'].path}: {exc}")
        if driver and os.path.realpath(driver) != os.path.realpath(tc["libcuda"].path):
            report.notes.append(
                f"this process had already loaded {driver}; it is used instead of "
                f"{tc['libcuda'].path}"
            )
    return Activation(
        "knobs" if use_knobs else "environ",
        tc,
        dict(report.applied),
        dict(report.kept),
        driver,
        tuple(report.notes),
    )


def _ours_in_env(key: str) -> bool:
    return key in _STATE.env and os.environ.get(key) == _STATE.env[key]


def _user_env(key: str) -> bool:
    return bool(os.environ.get(key)) and not _ours_in_env(key)


def _withdraw_env(key: str) -> None:
    if _ours_in_env(key):
        del os.environ[key]
    _STATE.env.pop(key, None)


def _apply_environ(wanted: Mapping[str, str], report: _Report) -> None:
    for key in sorted(set(wanted) | set(_STATE.env)):
        value = wanted.get(key)
        if _user_env(key):
            report.kept[f"env:{key}"] = "set by the user"
            _STATE.env.pop(key, None)
        elif value is None:
            _withdraw_env(key)
        else:
            os.environ[key] = value
            _STATE.env[key] = value
            report.applied[f"env:{key}"] = value


def _knob_target(knobs: ModuleType, knob: str) -> tuple[Any, str] | None:
    group_name, _, attr = knob.partition(".")
    group = getattr(knobs, group_name, None)
    # Look in the classes' dictionaries: reading a knob descriptor from the class fails.
    if group is None or not any(attr in vars(c) for c in type(group).__mro__):
        return None  # e.g. ptxas_blackwell where a release lacks it
    return group, attr


def _apply_knobs(knobs: ModuleType, wanted: Mapping[str, str], report: _Report) -> None:
    env_of = {knob: key for key, knob in KNOB_OF.items() if knob in APPLIED_KNOBS}
    for knob in APPLIED_KNOBS:
        target = _knob_target(knobs, knob)
        if target is None:
            continue
        group, attr = target
        key = env_of[knob]
        value = wanted.get(key)
        assigned = group.__dict__.get(attr, _UNSET)
        ours = knob in _STATE.knobs and assigned == _STATE.knobs[knob]
        if assigned is not _UNSET and not ours:
            report.kept[f"knobs.{knob}"] = "assigned by the user"
            _STATE.knobs.pop(knob, None)
            continue
        if _user_env(key):
            report.kept[f"knobs.{knob}"] = f"{key} set by the user"
            if ours:
                delattr(group, attr)  # Triton then reads the user's variable
            _STATE.knobs.pop(knob, None)
            _STATE.env.pop(key, None)
            continue
        if value is None:
            if ours:
                delattr(group, attr)
            _STATE.knobs.pop(knob, None)
            _withdraw_env(key)
            continue
        if not ours:
            setattr(group, attr, value)  # propagate_env writes the variable too
        _STATE.knobs[knob] = value
        if os.environ.get(key) == value:
            _STATE.env[key] = value
        report.applied[f"knobs.{knob}"] = value


_UNSET = object()


def _apply_impl(knobs: ModuleType, report: _Report) -> None:
    current_impl = knobs.build.impl
    if _STATE.impl is None:
        _STATE.impl = LauncherBuild(_toolchain_now)
    if current_impl is not None and current_impl is not _STATE.impl:
        report.kept["knobs.build.impl"] = f"assigned by the user ({current_impl!r})"
        return
    knobs.build.impl = _STATE.impl
    report.applied["knobs.build.impl"] = repr(_STATE.impl)


# --- replacements of Triton's module globals (see _patches) ------------------------------


def _patch_build(report: _Report) -> None:
    """Triton 3.0-3.3: the launcher build, where ``_build`` is still Triton's own."""
    triton_build = getattr(sys.modules.get(BUILD), "_build", None)
    if _STATE.impl is None:
        _STATE.impl = LauncherBuild(_toolchain_now)
    impl = _STATE.impl
    for where, namespace in namespaces("driver"):
        if "_build" not in namespace:
            continue
        if (where, "_build") not in _STATE.patches.made and namespace["_build"] is not triton_build:
            report.kept[f"patch:{where}._build"] = "replaced by someone else"
        elif _STATE.patches.patch(where, namespace, "_build", lambda _original: impl):
            report.applied[f"patch:{where}._build"] = "launcher build (no build.impl before 3.4)"


def _patch_get_ptxas(report: _Report) -> None:
    for where, namespace in namespaces("compiler"):

        def make(original: Any, namespace: Namespace = namespace) -> object:
            return guard_get_ptxas(original, _toolchain_now, namespace)

        if _STATE.patches.patch(where, namespace, "get_ptxas", make):
            report.applied[f"patch:{where}.get_ptxas"] = (
                "refuses a ptxas that cannot serve the target"
            )


def _patch_libcuda_dirs(tc: Toolchain, report: _Report) -> None:
    restore = bool(
        tc["libcuda"].path or tc["libcuda-link"].path or _user_env("TRITON_LIBCUDA_PATH")
    )
    for where, namespace in namespaces("driver"):
        if restore:
            _STATE.patches.unpatch(where, namespace, "libcuda_dirs")
        elif _STATE.patches.patch(where, namespace, "libcuda_dirs", lambda _o: no_driver_dirs(tc)):
            report.applied[f"patch:{where}.libcuda_dirs"] = (
                "explains the missing driver instead of running ldconfig"
            )


# --- running a program ------------------------------------------------------------------


def run_with_toolchain(argv: list[str], *, arch: int | None = None) -> int:
    """``triton-toolchain run -- CMD ARGS...``: replace this process by ``CMD`` with the
    toolchain's variables exported (``_env.toolchain_env``) where the environment does
    not already set them: what the user set always wins. The non-Nix twin of the Nix
    wrapper. Returns only on failure: 127 when ``CMD`` cannot be found, 126 when it
    cannot be run (as shells do)."""
    import shutil

    from ._checks import split_search_path
    from ._resolve import resolve

    tc = resolve(arch, host=dataclasses.replace(Host.current(), environ=user_environ()))
    env = merged_env(tc, os.environ)
    program = argv[0]
    if os.sep not in program:
        # Only absolute PATH entries: an empty or relative one would run a program from
        # the current directory.
        dirs, _ = split_search_path(env.get("PATH", os.defpath))
        found = shutil.which(program, path=os.pathsep.join(map(str, dirs)))
        if found is None:
            print(f"triton-toolchain run: {program}: command not found", file=sys.stderr)
            return 127
        program = found
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(program, argv, env)  # noqa: S606  a resolved absolute path, no shell
    except OSError as exc:
        print(f"triton-toolchain run: {program}: {exc.strerror or exc}", file=sys.stderr)
        return 126 if os.path.exists(program) else 127
    return 0  # pragma: no cover  (execve does not return)
