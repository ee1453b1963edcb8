"""The Triton adapter: a plan (``_plan``) applied to the imported Triton, knobs on 3.4+,
and the lookups every release has, guarded.

This module is on the activation fast path; its submodules load when needed: ``_legacy``
(environment and module globals on 3.0-3.3), ``_guards`` (the errors Triton's ptxas and
driver lookups raise instead of guessing), ``_fit`` (the ptxas for the target, asked of
the binary, at compile time), ``_build`` (the launcher build).

How Triton is told, by release (read from each release's ``knobs.py``,
``runtime/build.py`` and ``backends/nvidia/{compiler,driver}.py``):

- Triton 3.4 and newer (``triton.knobs`` with ``build.impl``): ``knobs.nvidia.ptxas``,
  ``ptxas_blackwell`` (3.6+), ``cuobjdump``, ``nvdisasm``, ``libdevice_path``,
  ``libcuda_path`` (the run-time driver's directory, else the link directory: Triton
  then never runs ``/sbin/ldconfig``), and ``knobs.build.impl`` (the launcher build).
  Triton copies each assignment into the environment (``knobs.propagate_env``), so
  child processes see the same values.
- Triton 3.0 to 3.3: the environment (``_legacy``), and ``driver._build`` replaced by
  the launcher build (``replace_build``).
- What a plan leaves pending until Triton takes it (ptxas-blackwell, part ``target``;
  cuobjdump and nvdisasm, part ``sass``: ``_catalog.Part``): the guarded ``get_ptxas``
  and ``tools.disasm.path_to_cuobjdump`` (3.2+, ``guard_sass``) have the activation
  complete the plan and apply it again first (``complete``), then Triton's lookup reads
  it; the launcher build completes the launcher's part first (``LauncherBuild``).
- Each backend of ``runtime.BACKENDS`` present: its knob group's knobs, its
  ``compiler`` and ``driver`` modules' lookups (those a backend lacks are skipped), its
  driver from the plan's ``drivers``.
- Every release that has it (3.3 and newer; ``TritonRelease.ptxas_lookup``):
  ``compiler.get_ptxas`` (through which Triton picks the ptxas it hashes, takes the PTX
  version from, and runs) is wrapped, with the signature it has: it raises the shim's error for a
  wrong explicit setting of a compile-time component, for a ptxas that cannot assemble
  the target or that this Triton cannot use, and for Triton's silent fall-back to a
  ptxas a strict manifest does not give (``_guards``); then the binary itself is asked
  whether it fits the target and the driver (``_fit``: a discovered one that does not
  gives way to one that does, the user's is an error). Triton 3.0-3.2 have no
  ``get_ptxas``: their ``_path_to_binary("ptxas")`` is guarded the same way. Without a
  driver,
  ``driver.libcuda_dirs`` explains instead of running ``/sbin/ldconfig`` and
  ``driver._cuda_driver_is_active`` answers no instead of loading ``libcuda.so.1`` by
  bare name (from an empty ``LD_LIBRARY_PATH`` entry: the current directory), and
  Triton's ``0 active drivers`` ``RuntimeError`` (``runtime.driver._create_driver``)
  goes on to say what the shim found and to run ``triton-toolchain doctor``.
- Triton's ``lru_cache``\\ s of these lookups are cleared, so an activation after
  Triton has been used takes effect.

Guarantees: a knob the user assigned, a variable the user set (``plan["settings"][i]
["user"]``) and a ``build.impl`` that is not ours are never replaced; values this module
wrote are remembered (``TritonState``), so a second application is not fooled into
taking them for the user's, and a knob it assigned is withdrawn when the user sets the
variable later. Pure standard library; the checks behind the guards load on first use.
"""

from __future__ import annotations

import functools
import os
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any, Literal

from . import BACKENDS, ORIGINAL, Namespace, Part, Patches, Plan, Report

PlanGetter = Callable[[], Plan]
# Completes the plan in force with a pending part (``_activate.complete``).
Complete = Callable[[Part], object]

BUILD = "triton.runtime.build"
RUNTIME_DRIVER = "triton.runtime.driver"
# Triton's lru_caches that hold toolchain lookups, per module.
TRITON_CACHES: dict[str, tuple[str, ...]] = {
    "driver": ("libcuda_dirs", "library_dirs"),
    "compiler": ("_path_to_binary", "get_ptxas", "get_ptxas_version"),
}

_UNSET = object()


class TritonState:
    """What this process wrote into Triton: knob -> value, and the patches."""

    def __init__(self) -> None:
        self.knobs: dict[str, object] = {}
        self.patches = Patches()
        self.impl: object | None = None


def _class_globals(cls: object) -> Namespace | None:
    """The globals of the module that defined ``cls`` (through one of its functions)."""
    for value in vars(cls).values():
        func = getattr(value, "__func__", value)
        if isinstance(func, types.FunctionType):
            return func.__globals__
    return None


def namespaces(
    kind: Literal["compiler", "driver"], backend: str | None = None
) -> list[tuple[str, Namespace]]:
    """The global namespaces of the ``compiler`` or ``driver`` module of Triton's
    ``backend`` (``None``: of each of ``runtime.BACKENDS``), as already imported
    (nothing is imported here).

    Usually one per backend: ``sys.modules["triton.backends.nvidia.<kind>"]``. Triton 3.0-3.3
    load the backend's modules a second time, anonymously (``_discover_backends`` runs
    ``spec_from_file_location("nvidia", ...)`` and never registers them), and compile and
    launch with those: their namespace is reached through the classes in
    ``triton.backends.backends["nvidia"]``.
    """
    found: list[tuple[str, Namespace]] = []
    registry = getattr(sys.modules.get("triton.backends"), "backends", None)
    for name in BACKENDS if backend is None else (backend,):
        module = sys.modules.get(f"{BACKENDS[name].triton_package}.{kind}")
        if module is not None:
            found.append((module.__name__, vars(module)))
        cls = getattr(registry.get(name) if isinstance(registry, dict) else None, kind, None)
        namespace = _class_globals(cls) if cls is not None else None
        if namespace is not None and all(namespace is not ns for _, ns in found):
            found.append((f"triton.backends.backends[{name!r}].{kind}", namespace))
    return found


def clear_caches() -> None:
    """Empty Triton's caches of toolchain lookups in every namespace already imported
    (``TRITON_CACHES``, ``CUDABackend.hash``, ``runtime.build._find_compiler``)."""
    kinds: tuple[Literal["compiler", "driver"], ...] = ("compiler", "driver")
    for kind in kinds:
        for _, namespace in namespaces(kind, "nvidia"):  # the AMD lookup has its own
            for name in TRITON_CACHES[kind]:
                func = namespace.get(name)
                for f in (func, getattr(func, ORIGINAL, None)):
                    clear = getattr(f, "cache_clear", None)
                    if callable(clear):
                        clear()
            clear = getattr(
                getattr(namespace.get("CUDABackend"), "hash", None), "cache_clear", None
            )
            if callable(clear):
                clear()
    clear = getattr(getattr(sys.modules.get(BUILD), "_find_compiler", None), "cache_clear", None)
    if callable(clear):
        clear()


class LauncherBuild:
    """The callable given to ``triton.knobs.build.impl`` (and, on 3.0-3.3, put in place
    of ``driver._build``): ``impl(name, src, srcdir, library_dirs, include_dirs,
    libraries) -> path of the .so``, built with the plan's toolchain (``_build``) at
    every call, so a later activation applies to the next build; the launcher's part of
    the plan completed first where it is pending (``complete``; its errors are raised
    by the build)."""

    def __init__(self, plan: PlanGetter, complete: Complete | None = None) -> None:
        self._plan = plan
        self._complete = complete

    def __call__(
        self,
        name: str,
        src: str,
        srcdir: str,
        library_dirs: list[str],
        include_dirs: list[str],
        libraries: list[str],
        /,
    ) -> str:
        from ..resolver._build import build_module  # noqa: PLC0415  the builder: at a build only

        if self._complete is not None:
            self._complete("launcher")
        return build_module(self._plan(), name, src, srcdir, library_dirs, include_dirs, libraries)

    def __repr__(self) -> str:
        return "<triton_toolchain launcher build>"


def _knob_target(knobs: Any, knob: str) -> tuple[Any, str] | None:
    group_name, _, attr = knob.partition(".")
    group = getattr(knobs, group_name, None)
    # Look in the classes' dictionaries: reading a knob descriptor from the class fails.
    if group is None or not any(attr in vars(c) for c in type(group).__mro__):
        return None  # e.g. ptxas_blackwell where a release lacks it
    return group, attr


def apply_knobs(
    knobs: Any, plan: Plan, state: TritonState, env: dict[str, str], report: Report
) -> None:
    """Assign the plan's knobs (see the module docstring). ``env`` holds the variables
    this process wrote (Triton's ``propagate_env`` writes them for us)."""
    for setting in plan["settings"]:
        knob, variable, value = setting["knob"], setting["variable"], setting["value"]
        if knob is None or variable is None or knob.partition(".")[0] not in BACKENDS:
            continue  # a backend's knobs only (every knob of the catalog's has its variable)
        target = _knob_target(knobs, knob)
        if target is None:
            continue
        group, attr = target
        assigned = group.__dict__.get(attr, _UNSET)
        ours = knob in state.knobs and assigned == state.knobs[knob]
        if assigned is not _UNSET and not ours:
            report.kept[f"knobs.{knob}"] = "assigned by the user"
            state.knobs.pop(knob, None)
            continue
        if setting["user"] or setting["error"]:
            why = f"{variable} set by the user" + (
                " (wrong: see the error)" if setting["error"] else ""
            )
            report.kept[f"knobs.{knob}"] = why
            if ours:
                delattr(group, attr)  # Triton then reads the user's variable
            state.knobs.pop(knob, None)
            env.pop(variable, None)
            continue
        if value is None:
            if ours:
                delattr(group, attr)
                if variable and os.environ.get(variable) == env.get(variable):
                    os.environ.pop(variable, None)
            state.knobs.pop(knob, None)
            env.pop(variable, None)
            continue
        if not ours or assigned != value:
            setattr(group, attr, value)  # propagate_env writes the variable too
        state.knobs[knob] = value
        if variable and os.environ.get(variable) == value:
            env[variable] = value
        report.applied[f"knobs.{knob}"] = value


def apply_impl(
    knobs: Any, plan: PlanGetter, state: TritonState, report: Report, complete: Complete | None
) -> None:
    """``knobs.build.impl``: the launcher build, unless someone else's is there."""
    if state.impl is None:
        state.impl = LauncherBuild(plan, complete)
    current = knobs.build.impl
    if current is not None and current is not state.impl:
        report.kept["knobs.build.impl"] = f"assigned by the user ({current!r})"
        return
    knobs.build.impl = state.impl
    report.applied["knobs.build.impl"] = repr(state.impl)


def _checked(check: Callable[[], Exception | None]) -> Exception | None:
    """The shim's own error from ``check``, or ``None``. A check that fails with any
    other exception is a bug of the shim: it must not break a compile that works
    without it, so Triton goes on as it would have and the bug is reported as an
    ``AdapterBugWarning`` (the tests turn it into a failure). Runs when Triton
    compiles, never at import: the errors' module loads here."""
    from ._errors import AdapterBugWarning, ToolchainError  # noqa: PLC0415  at a compile only

    try:
        return check()
    except ToolchainError as exc:
        return exc
    except Exception as exc:
        warnings.warn(
            f"triton-toolchain: its check of Triton's ptxas failed ({type(exc).__name__}: "
            f"{exc}); Triton goes on as without the shim. Please report this.",
            AdapterBugWarning,
            stacklevel=3,
        )
        return None


def _complete_first(complete: Complete | None, part: Part) -> None:
    """``complete(part)``, its error raised (``_checked``)."""
    if complete is not None:

        def check() -> None:
            complete(part)

        error = _checked(check)
        if error is not None:
            raise error


def guard_get_ptxas(
    original: Callable[..., object],
    plan: PlanGetter,
    namespace: Namespace,
    complete: Complete | None = None,
) -> Callable[..., object]:
    """``get_ptxas`` returning what ``original`` returns, called with the arguments
    Triton gave (``get_ptxas(arch)`` on 3.3 and 3.6+, ``get_ptxas()`` on 3.4 and 3.5:
    ``TritonRelease.ptxas_lookup``), or raising the shim's error
    (``_guards.ptxas_error``); the target is known where Triton passes it. Where Triton
    is about to take ptxas-blackwell for it, ``complete`` first completes and applies
    the plan with it (`import triton` leaves its part, ``target``, pending)."""

    @functools.wraps(original)
    def get_ptxas(*args: object, **kwargs: object) -> object:
        from ..resolver._guards import no_ptxas, runs_ptxas_blackwell, setting_error  # noqa: PLC0415

        given = args[0] if args else kwargs.get("arch")
        arch = given if isinstance(given, int) else None
        # "target": ptxas-blackwell's part; "import" (never pending): only the variables
        # the user changed since the plan was made (``_activate.complete``).
        _complete_first(complete, "target" if runs_ptxas_blackwell(arch) else "import")
        error = _checked(lambda: setting_error(plan(), "compile"))
        if error is not None:
            raise error
        component = "ptxas-blackwell" if runs_ptxas_blackwell(arch) else "ptxas"
        try:
            tool = _looked_up(component, namespace, plan, lambda: original(*args, **kwargs))
        except RuntimeError as exc:  # Triton's "Cannot find ptxas"
            raise no_ptxas(arch, exc) from exc
        return _judged(arch, tool, plan, namespace)

    setattr(get_ptxas, ORIGINAL, original)
    return get_ptxas


def _looked_up(
    component: str,
    namespace: Namespace,
    plan: PlanGetter | None,
    lookup: Callable[[], object],
    *,
    as_path: bool = False,
) -> object:
    """Triton's own lookup (``lookup()``), which runs ``--version`` of each file it tries,
    once the trust rule has passed every file it may try (``_guards.trusted_lookup``);
    else the first of them, asked by the shim, where that one passed, or the shim's
    error naming the file and who can change it."""
    found: list[tuple[str, str] | None] = []

    def check() -> Exception | None:
        from ..resolver._guards import trusted_lookup  # noqa: PLC0415  at a compile only

        found.append(trusted_lookup(component, namespace, plan() if plan else None))
        return None

    error = _checked(check)
    if error is not None:
        raise error
    if not found or found[0] is None:
        return lookup()
    if as_path:
        return found[0][0]
    maker = getattr(namespace.get("knobs"), "NvidiaTool", None)
    return maker(*found[0]) if maker is not None else found[0]


def _judged(arch: int | None, tool: object, plan: PlanGetter, namespace: Namespace) -> object:
    """The ptxas Triton chose (``tool``) judged for ``sm_<arch>`` (``_guards.ptxas_error``),
    then fitted (``_fitted``): what the guards return, or the shim's error raised."""
    from ..resolver._guards import ptxas_error  # noqa: PLC0415  at a compile only

    problem = _checked(lambda: ptxas_error(arch, tool, plan(), namespace))
    if problem is not None:
        raise problem
    return _fitted(arch, tool, plan, namespace)


def _fitted(arch: int | None, tool: object, plan: PlanGetter, namespace: Namespace) -> object:
    """The ptxas to run for ``sm_<arch>`` (``_fit.fitted_tool``: the binary probed, the
    driver's CUDA version matched), the shim's error raised, a bug of the check reported
    as ``_checked`` does."""
    chosen = [tool]

    def fit() -> Exception | None:
        from ..resolver._fit import fitted_tool  # noqa: PLC0415  at a compile only

        chosen[0] = fitted_tool(arch, tool, plan(), namespace)
        return None

    problem = _checked(fit)
    if problem is not None:
        raise problem
    return chosen[0]


DISASM = "triton.tools.disasm"


def guard_sass(original: Callable[..., object], complete: Complete) -> Callable[..., object]:
    """``tools.disasm.path_to_cuobjdump`` (3.2+, which ``get_sass``, behind
    ``kernel.asm["sass"]``, calls by name): ``complete`` first completes and applies the
    plan with the SASS dump's tools (`import triton` leaves their part, ``sass``,
    pending), then Triton's own lookup answers."""

    @functools.wraps(original)
    def path_to_cuobjdump(*args: object, **kwargs: object) -> object:
        _complete_first(complete, "sass")
        knobs = {"knobs": sys.modules.get("triton.knobs")}
        lookup = lambda: original(*args, **kwargs)  # noqa: E731
        return _looked_up("cuobjdump", knobs, None, lookup, as_path=True)

    setattr(path_to_cuobjdump, ORIGINAL, original)
    return path_to_cuobjdump


def guard_path_to_binary(
    original: Callable[[str], object], plan: PlanGetter, namespace: Namespace
) -> Callable[[str], object]:
    """Triton 3.0-3.2 have no ``get_ptxas``: ``_path_to_binary("ptxas")`` is where they
    take the ptxas they run (and its release, for the PTX version), and it takes no
    target. The callers that assemble, ``make_ptx`` and ``make_cubin`` (frozen in those
    releases), hold it in their ``capability`` argument: it is read from the caller's
    frame (read only); elsewhere (``get_ptxas_version``) the checks are those for any
    target. The same checks as ``guard_get_ptxas``; other binaries pass through."""

    @functools.wraps(original)
    def _path_to_binary(binary: str) -> object:
        if binary != "ptxas":
            return original(binary)
        tool = _looked_up(binary, namespace, plan, lambda: original(binary))
        capability = sys._getframe(1).f_locals.get("capability")
        arch = capability if type(capability) is int else None
        return _judged(arch, tool, plan, namespace)

    setattr(_path_to_binary, ORIGINAL, original)
    return _path_to_binary


def no_driver_dirs(plan: PlanGetter) -> Callable[[], list[str]]:
    """A ``libcuda_dirs`` that raises the shim's explanation of the missing driver."""

    def libcuda_dirs() -> list[str]:
        from ..resolver._guards import missing_driver, setting_error  # noqa: PLC0415  at a build only

        current = plan()
        # A wrong setting of the user's (CC, TRITON_LIBCUDA_PATH) is what to fix first.
        raise setting_error(current, "build") or missing_driver(current)

    return libcuda_dirs


def no_driver_probe(original: Callable[[], bool]) -> Callable[[], bool]:
    """``_cuda_driver_is_active`` where the shim found no usable driver: no, without
    loading ``libcuda.so.1`` by bare name (which an empty ``LD_LIBRARY_PATH`` entry
    would take from the current directory)."""

    @functools.wraps(original)
    def _cuda_driver_is_active() -> bool:
        return False

    setattr(_cuda_driver_is_active, ORIGINAL, original)
    return _cuda_driver_is_active


def no_driver_selection(plan: PlanGetter) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Triton's ``runtime.driver._create_driver`` (every release 3.0-3.9), whose ``0
    active drivers ([]). There should only be one.`` gains, where the shim found no
    usable driver, what the shim found and ``triton-toolchain doctor``
    (``_guards.no_active_driver``); any other outcome is Triton's own."""

    def make(original: Callable[[], Any]) -> Callable[[], Any]:
        @functools.wraps(original)
        def _create_driver() -> Any:
            try:
                return original()
            except RuntimeError as exc:
                if not str(exc).startswith("0 active drivers"):
                    raise
                from ..resolver._guards import no_active_driver  # noqa: PLC0415  an error only

                raise no_active_driver(plan(), str(exc)) from exc

        setattr(_create_driver, ORIGINAL, original)
        return _create_driver

    return make


def patch_sass(state: TritonState, report: Report, complete: Complete) -> None:
    """Guard ``tools.disasm.path_to_cuobjdump`` (``guard_sass``) where Triton has it
    (3.2+; its ``compiler`` imports ``tools.disasm``)."""
    disasm = sys.modules.get(DISASM)
    if disasm is None:
        return
    made = state.patches.patch(
        DISASM, vars(disasm), "path_to_cuobjdump", lambda o: guard_sass(o, complete)
    )
    if made:
        report.applied[f"patch:{DISASM}.path_to_cuobjdump"] = (
            "resolves cuobjdump and nvdisasm when Triton first asks"
        )


# Triton's AMD backend's lookup of the HIP runtime (3.9 ``backends/amd/driver.py``), which
# its launcher (``HIPUtils``) calls once, on an AMD machine only.
HIP_LOOKUP = "_get_path_to_hip_runtime_dylib"


def hip_lookup(original: Callable[[], str]) -> Callable[[], str]:
    """``_get_path_to_hip_runtime_dylib`` answered by the shim: the HIP runtime the
    resolver chooses for the AMD backend (``_guards.hip_runtime``: Triton's own search
    order, then the layouts it misses, a ROCm too old for this Triton refused), or the
    shim's error naming what is missing and the fix. Resolved at the first call, never
    at the import."""

    @functools.wraps(original)
    @functools.lru_cache(maxsize=1)
    def _get_path_to_hip_runtime_dylib() -> str:
        from ..resolver._guards import hip_runtime  # noqa: PLC0415  an AMD launcher only

        return hip_runtime(original)

    setattr(_get_path_to_hip_runtime_dylib, ORIGINAL, original)
    return _get_path_to_hip_runtime_dylib


def patch_hip_lookup(state: TritonState, report: Report) -> None:
    """Replace the AMD backend's lookup of the HIP runtime (``hip_lookup``) where Triton
    has one."""
    for where, namespace in namespaces("driver", "amd"):
        if state.patches.patch(where, namespace, HIP_LOOKUP, hip_lookup):
            report.applied[f"patch:{where}.{HIP_LOOKUP}"] = (
                "the HIP runtime the shim chooses (TRITON_LIBHIP_PATH checked)"
            )


def patch_lookups(
    plan: PlanGetter, state: TritonState, report: Report, complete: Complete | None = None
) -> None:
    """Guard ``get_ptxas`` (``guard_get_ptxas``, given ``complete``), and the driver's
    lookups (``patch_driver_lookups``)."""
    for where, namespace in namespaces("compiler", "nvidia"):  # the ptxas family's

        def make(original: Any, namespace: Namespace = namespace) -> object:
            return guard_get_ptxas(original, plan, namespace, complete)

        if state.patches.patch(where, namespace, "get_ptxas", make):
            report.applied[f"patch:{where}.get_ptxas"] = (
                "refuses a ptxas that cannot serve the target"
            )
        if "get_ptxas" in namespace:
            continue  # 3.3+: get_ptxas is the lookup (3.3's calls _path_to_binary itself)

        def make_legacy(original: Any, namespace: Namespace = namespace) -> object:
            return guard_path_to_binary(original, plan, namespace)

        if state.patches.patch(where, namespace, "_path_to_binary", make_legacy):
            report.applied[f"patch:{where}._path_to_binary"] = (
                "refuses a ptxas that does not fit (3.0-3.2)"
            )
    patch_driver_lookups(plan, state, report)
    patch_hip_lookup(state, report)


def patch_driver_lookups(plan: PlanGetter, state: TritonState, report: Report) -> None:
    """For each backend without a driver (``plan["drivers"]``), replace ``libcuda_dirs``
    (also without a link directory), the by-name driver probe and, where no backend
    has one, Triton's driver selection; with one, put Triton's back."""
    drivers = plan()["drivers"]
    for backend in BACKENDS:
        driver = drivers.get(backend)
        found = driver is not None and (driver["library"] is not None or driver["user"])
        linked = found or (driver is not None and driver["link"] is not None)
        for where, namespace in namespaces("driver", backend):
            if found:
                state.patches.unpatch(where, namespace, "_cuda_driver_is_active")
            elif state.patches.patch(where, namespace, "_cuda_driver_is_active", no_driver_probe):
                report.applied[f"patch:{where}._cuda_driver_is_active"] = (
                    f"no driver found: nothing loads {BACKENDS[backend].driver_soname} by bare name"
                )
            if linked:
                state.patches.unpatch(where, namespace, "libcuda_dirs")
            elif state.patches.patch(
                where, namespace, "libcuda_dirs", lambda _o: no_driver_dirs(plan)
            ):
                report.applied[f"patch:{where}.libcuda_dirs"] = (
                    "explains the missing driver instead of running ldconfig"
                )
    # Triton selects the one active driver among its backends': none found, none active.
    found_any = any(d["library"] is not None or d["user"] for d in drivers.values())
    for where, namespace, attr in driver_selection():
        if found_any:
            state.patches.unpatch(where, namespace, attr)
        elif state.patches.patch(where, namespace, attr, no_driver_selection(plan)):
            report.applied[f"patch:{where}.{attr}"] = (
                "no driver found: Triton's '0 active drivers' says what the shim found"
            )


def driver_selection() -> list[tuple[str, Namespace, str]]:
    """Where Triton's ``runtime.driver`` keeps the function that selects the driver:
    the module's ``_create_driver`` (3.5+ call it by name), and on 3.0-3.4 the copy that
    ``driver.default``, a ``LazyProxy`` not yet used, holds as ``_init_fn`` (read through
    the instance's ``__dict__``: on 3.5+ ``default`` is a property that would select)."""
    module = sys.modules.get(RUNTIME_DRIVER)
    if module is None:
        return []
    found: list[tuple[str, Namespace, str]] = [(RUNTIME_DRIVER, vars(module), "_create_driver")]
    config = vars(module).get("driver")
    proxy = getattr(config, "__dict__", {}).get("default")
    state = getattr(proxy, "__dict__", None)
    if isinstance(state, dict) and "_init_fn" in state and state.get("_obj") is None:
        found.append((f"{RUNTIME_DRIVER}.driver.default", state, "_init_fn"))
    return found


def replace_build(
    plan: PlanGetter, state: TritonState, report: Report, complete: Complete | None
) -> None:
    """Triton 3.0-3.3, which have no ``build.impl``: ``driver._build``, which
    ``compile_module_from_src`` calls by name with the signature ``build.impl`` later
    adopted, becomes the launcher build, but only while it is still Triton's own
    ``triton.runtime.build._build``."""
    triton_build = getattr(sys.modules.get(BUILD), "_build", None)
    if state.impl is None:
        state.impl = LauncherBuild(plan, complete)
    impl = state.impl
    for where, namespace in namespaces("driver", "nvidia"):
        if "_build" not in namespace:
            continue
        if (where, "_build") not in state.patches.made and namespace["_build"] is not triton_build:
            report.kept[f"patch:{where}._build"] = "replaced by someone else"
        elif state.patches.patch(where, namespace, "_build", lambda _original: impl):
            report.applied[f"patch:{where}._build"] = "launcher build (no build.impl before 3.4)"


def apply(
    plan: PlanGetter,
    state: TritonState,
    env: dict[str, str],
    report: Report,
    *,
    complete: Complete | None = None,
) -> Literal["knobs", "environ"]:
    """Apply the plan to the imported Triton; the mode used (``"knobs"``/``"environ"``).
    ``complete``: completes the plan with a pending part (``_activate.complete``), called
    before a launcher build (``LauncherBuild``), before Triton takes ptxas-blackwell for
    a target (``guard_get_ptxas``) or cuobjdump for a SASS dump (``guard_sass``)."""
    knobs = sys.modules.get("triton.knobs")
    mode: Literal["knobs", "environ"]
    if knobs is not None and hasattr(knobs, "build") and any(hasattr(knobs, b) for b in BACKENDS):
        apply_knobs(knobs, plan(), state, env, report)
        apply_impl(knobs, plan, state, report, complete)
        mode = "knobs"
    else:
        from ._legacy import apply_environ  # noqa: PLC0415  Triton 3.0-3.3 only

        apply_environ(plan(), env, report)
        replace_build(plan, state, report, complete)
        mode = "environ"
    patch_lookups(plan, state, report, complete)
    if complete is not None:
        patch_sass(state, report, complete)
    clear_caches()
    return mode
