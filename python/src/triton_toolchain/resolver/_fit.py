"""The ptxas for one architecture, checked and chosen when Triton compiles for it (the
architecture is known then, not at import).

``fitted_tool(arch, tool, plan, namespace)`` is called by the guarded ``get_ptxas``
with what Triton is about to run for ``sm_<arch>`` (``tool``: a ``knobs.NvidiaTool`` on
3.4+, a ``(path, version)`` pair before) once the release checks of ``_guards`` passed,
and returns the tool to use:

- it fits when the binary assembles the PTX ``.version`` this Triton computes with its
  release (Triton's own ``ptx_get_version``, from ``namespace``) for the target
  (``_discovery._probe.assemble``), and the driver the plan chose loads its cubins
  (``cuDriverGetVersion`` read from that ``libcuda`` in a child process, NVIDIA's rule
  in ``_catalog.driver_loads``); then ``tool`` is returned unchanged;
- one the user set (its variable) that does not fit is a ``SettingError`` naming the
  variable, the value, the versions and the fixes, and so is one a strict manifest gives
  (naming the manifest and its entry: strict means no discovery); one the shim found is
  replaced by
  the next candidate of discovery that fits (a warning says so), else a
  ``MissingComponentError`` with the versions and the fixes;
- where only ``TRITON_PTXAS_PATH`` is set and Triton is about to run ``ptxas-blackwell``,
  a warning naming both variables is given once per process, and the user's ptxas is
  used where it fits and no advisory names it for the target;
- a known-bad build for the target (``_catalog.ADVISORIES``) is a warning, once; one the
  shim found gives way to one that fits without an advisory, where there is one.

Each decision is remembered for the process (per architecture, tool and driver), and
the probe's and the driver's answers across processes (``_discovery._answers``): a
compile pays for them once per ptxas file and architecture.
"""

import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, NamedTuple

from ..runtime import Plan, Setting, _trust
from ..runtime._errors import MissingComponentError, SettingError
from ..runtime._record import cache_dir
from ._catalog import (
    COMPONENT,
    DRIVER_SONAME,
    MIN_DRIVER,
    TRITON_RELEASES,
    advisories_for,
    advisory_text,
    arch_name,
    arch_problem,
    component_fix,
    driver_loads,
    parse_release,
    ptxas_for,
    triton_ptx_version,
    triton_release,
    triton_target,
)
from ._discovery import LOCATORS
from ._discovery._host import Host
from ._discovery._probe import NOT_ASKED, assemble, driver_cuda
from ._discovery._search import Context, search
from ._discovery._tools import tool_release
from ._guards import (
    imported_triton_version,
    ptxas_error,
    setting_error,
    tool_fields,
    trust_refusals,
)

ANY_TARGET = 80
_DECIDED: dict[tuple[object, ...], object] = {}
_WARNED: set[str] = set()


class FitWarning(UserWarning):
    """A ptxas choice made at compile time that the user should know about."""


def _outside_level() -> int:
    """The ``stacklevel`` of the first frame outside the shim and Triton: the line of the
    user's code that compiled (``triton.compile``, a ``@triton.jit`` call, torch)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in (
        "triton_toolchain",
        "triton",
        "functools",
    ):
        frame, level = frame.f_back, level + 1
    return level


def _warn_once(text: str, key: str | None = None) -> None:
    """Warn with ``text`` unless this process already gave it (or one of ``key``)."""
    key = key or text
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(f"triton-toolchain: {text}", FitWarning, stacklevel=_outside_level())


def _answers() -> Path | None:
    directory = cache_dir(os.environ)
    return Path(directory) if directory else None


def _same_shape(tool: object, path: str, release: str) -> object:
    """What ``get_ptxas`` returns, for another binary: a pair, or ``type(tool)(path,
    version)`` (``knobs.NvidiaTool``); ``tool`` itself where its type takes no such
    arguments."""
    if isinstance(tool, tuple):
        return (path, release)
    maker: Any = type(tool)
    try:
        return maker(path, release)
    except TypeError:
        return tool


def _ptx_version(
    namespace: dict[str, Any], triton: tuple[int, int] | None, release: str
) -> int | None:
    """Triton's own ``ptx_get_version(release)``, else the catalog's table."""
    own: Callable[[str], int] | None = namespace.get("ptx_get_version")
    if callable(own):
        try:
            return int(own(release))
        except (RuntimeError, ValueError, AssertionError, TypeError):
            return None
    return triton_ptx_version(triton, release) if triton else None


# Where CUDA's forward-compatibility package puts its driver library (cuda-compat-X-Y:
# ``/usr/local/cuda-X.Y/compat``), and under the toolkits the variables name.
COMPAT_PLACES = ("/usr/local/cuda/compat", "/usr/local/cuda-*/compat")
COMPAT_VARIABLES = ("CUDA_HOME", "CUDA_PATH")
# NVIDIA's CUDA Compatibility guide, "Forward Compatibility": where the package may be used.
COMPAT_RULE = (
    "NVIDIA's CUDA Compatibility guide, Forward Compatibility: on data-centre GPUs (H100, "
    "H200, GH200, B200, ...), select NGC Server Ready RTX cards and Jetson only"
)


def compat_driver(needed: int) -> tuple[str, tuple[int, int]] | None:
    """A forward-compatibility driver library installed here that loads cubins of CUDA
    ``needed``.x: ``(its directory, the CUDA release it supports)``, the first of
    ``COMPAT_PLACES`` and the variables' toolkits that the trust rule passes and that
    answers ``cuDriverGetVersion`` with that release or newer."""
    host = Host.current()
    named = [Path(v, "compat") for n in COMPAT_VARIABLES if (v := host.environ.get(n))]
    found = [p for pattern in COMPAT_PLACES for p in reversed(host.glob(pattern))]
    for directory in (*named, *found):
        if (directory / DRIVER_SONAME).exists():
            supported = driver_cuda(directory / DRIVER_SONAME, answers=_answers())[0]
            if supported is not None and supported[0] >= needed:
                return str(directory), supported
    return None


def _older_triton(arch: int, component: str) -> str | None:
    """The newest Triton release before the imported one that runs ``ptxas``, not
    ``component`` (ptxas-blackwell), for ``sm_<arch>`` (``"3.8"`` where 3.9 moved sm_90
    to its CUDA 13 ptxas, triton-lang/triton#11854), with the advisories that name its
    bundled ptxas there; ``None`` where the imported release did not move it."""
    row = triton_release(imported_triton_version())
    earlier = [r for r in TRITON_RELEASES if row is not None and r.first < row.first]
    if (
        row is None
        or component == "ptxas"
        or not earlier
        or ptxas_for(arch, earlier[-1]) != "ptxas"
    ):
        return None
    named = [a.reference for a in advisories_for("ptxas", "12.9", arch, earlier[-1])]
    known = f" (its CUDA 12 ptxas there is named by {', '.join(named)})" if named else ""
    return f"Triton {row.first[0]}.{row.first[1] - 1} or older{known}"


def driver_problem(
    release: str, driver: str | None, arch: int | None = None
) -> tuple[str, str] | None:
    """``(problem, fix)`` when the driver library ``driver`` cannot load the cubins of a
    ptxas of CUDA ``release``; ``None`` when it can or the driver answers no release
    (doctor says the fit was not checked). A query cut short fails closed. The fix
    lists the remedies in order: a forward-compatibility driver installed here
    (``compat_driver``, where NVIDIA's rule allows it), a newer driver, and, where the
    imported Triton moved ``sm_<arch>`` to a newer ptxas, the release before it; else a
    ptxas of the driver's CUDA release."""
    version = parse_release(release)
    if driver is None or version is None:
        return None
    supported, why = driver_cuda(Path(driver), answers=_answers())
    if why is not None and why.startswith(NOT_ASKED):  # cut short: fail closed
        return (
            f"whether the driver {driver} loads cubins of a CUDA {release} ptxas is not "
            f"known ({why})",
            "run it again: the driver is asked again",
        )
    if supported is None or driver_loads(version, supported):
        return None
    d = f"{supported[0]}.{supported[1]}"
    floor = MIN_DRIVER.get(version[0], "")
    problem = (
        f"the driver {driver} supports CUDA {d}, and cubins of a CUDA {release} ptxas do not "
        f"load on it (NVIDIA's minor version compatibility holds within a major release: a "
        f"CUDA {version[0]}.x cubin needs a driver of CUDA {version[0]}.0 or newer)"
    )
    remedies = []
    compat = compat_driver(version[0])
    if compat is not None:
        c = f"{compat[1][0]}.{compat[1][1]}"
        remedies.append(
            f"set TRITON_LIBCUDA_PATH={compat[0]}, the CUDA {c} forward-compatibility driver "
            f"installed there ({COMPAT_RULE})"
        )
    remedies.append(
        f"install an NVIDIA driver of CUDA {version[0]} or newer"
        + (f" (release {floor} or newer)" if floor else "")
    )
    component = ptxas_for(arch, triton_release(imported_triton_version())) if arch else "ptxas"
    older = _older_triton(arch, component) if arch is not None else None
    remedies.append(f"use {older}" if older else f"use a ptxas of CUDA {supported[0]}.x or older")
    return problem, "; or ".join(remedies)


def judge(
    path: str, release: str, arch: int, namespace: dict[str, Any], driver: str | None
) -> tuple[str, str] | None:
    """``(problem, fix)`` for running the ptxas at ``path`` (CUDA ``release``) to assemble
    ``sm_<arch>`` for the imported Triton and the chosen driver, or ``None``."""
    triton = imported_triton_version()
    dropped = arch_problem(arch, release)
    if dropped is not None:  # a CUDA 13 ptxas for sm_70: a CUDA 12 one is the fix
        component = ptxas_for(arch, triton_release(triton))
        return dropped, component_fix(component, arch, triton_release(triton))
    ptx = _ptx_version(namespace, triton, release)
    name = f"Triton {triton[0]}.{triton[1]}" if triton else "this Triton"
    if ptx is None:
        return (
            f"{name} knows no PTX version for CUDA {release}",
            "use a ptxas of a CUDA release this Triton knows",
        )
    target = triton_target(triton, arch)
    problem = assemble(Path(path), ptx, target, answers=_answers())
    if problem is not None and problem.startswith(_trust.UNTRUSTED):  # not a version's fault
        return problem, _trust.fix_for(problem)
    if problem is not None:
        return (
            f"it cannot assemble PTX {ptx // 10}.{ptx % 10} for {target}, what {name} "
            f"writes with a CUDA {release} ptxas ({problem})",
            f"use a ptxas that accepts PTX {ptx // 10}.{ptx % 10}, or one of an older CUDA "
            f"release for which {name} writes a PTX version it accepts",
        )
    return driver_problem(release, driver, arch)


def _driver(plan: Plan) -> str | None:
    """The driver library of the ptxas family's backend in ``plan``."""
    driver = plan["drivers"].get(COMPONENT["ptxas"].backend or "")
    return driver["library"] if driver else None


def _setting(plan: Plan, component: str) -> Setting | None:
    return next((s for s in plan["settings"] if s["component"] == component), None)


def _strict_manifest(plan: Plan, component: str, path: str) -> str | None:
    """The strict manifest that gives ``path`` as ``component``, or ``None``. Its entry is
    used or refused by name, never replaced: strict means no discovery."""
    toolchain = plan["toolchain"]
    manifest, choice = toolchain["manifest"], toolchain["components"].get(component)
    if not toolchain["strict"] or manifest is None or choice is None:
        return None
    if choice["source"] != f"manifest:{manifest}" or choice["path"] is None:
        return None
    return manifest if os.path.realpath(choice["path"]) == os.path.realpath(path) else None


def _release_of(path: str) -> str | None:
    found, _problem = tool_release(Path(path), Host.current())
    return found


def _alternative(
    component: str, arch: int, namespace: dict[str, Any], driver: str | None, rejected: str
) -> tuple[str, str] | None:
    """The first candidate of discovery for ``component`` that fits ``sm_<arch>`` and
    that no advisory names for it: ``(path, release)``."""
    host = Host.current()
    locator, ctx = LOCATORS[component], Context(arch=arch)

    row = triton_release(imported_triton_version())

    def fits(p: Path) -> Any:
        verdict = locator.check(host, p, ctx)
        if verdict.problem is None and verdict.version is not None:
            if os.path.realpath(p) == os.path.realpath(rejected):
                return type(verdict)(verdict.version, "rejected already")
            advised = advisories_for(component, verdict.version, arch, row)
            if advised:  # never a fall-back to a known-bad build for this target
                return type(verdict)(verdict.version, advisory_text(advised[0], verdict.version))
            found = judge(str(p), verdict.version, arch, namespace, driver)
            if found is not None:
                return type(verdict)(verdict.version, found[0])
        return verdict

    choice = search(component, locator.steps, fits, host, ctx)
    return (choice.path, choice.version or "") if choice.path else None


def _blackwell_note(
    arch: int, plan: Plan, tool: object, namespace: dict[str, Any]
) -> object | None:
    """Only ``TRITON_PTXAS_PATH`` set, and Triton about to run ptxas-blackwell: warn once;
    the user's ptxas where it fits (returned), else ``None``."""
    ptxas, blackwell = _setting(plan, "ptxas"), _setting(plan, "ptxas-blackwell")
    if not (ptxas and ptxas["user"] and ptxas["value"]) or (blackwell and blackwell["user"]):
        return None
    row = triton_release(imported_triton_version())
    variable = (row.blackwell_variable if row else None) or COMPONENT["ptxas-blackwell"].variable
    path, _release = tool_fields(tool)
    user_path = str(ptxas["value"])
    release = _release_of(user_path)
    found = judge(user_path, release, arch, namespace, _driver(plan)) if release else None
    head = (
        f"TRITON_PTXAS_PATH is set but {variable} is not: for {arch_name(arch)} Triton runs "
        f"ptxas-blackwell ({path}), not TRITON_PTXAS_PATH"
    )
    advised = advisories_for("ptxas-blackwell", release, arch, row) if release else ()
    if release and found is None and advised:  # the advisory holds whichever variable names it
        said = "; ".join(advisory_text(a, release) for a in advised)
        _warn_once(
            f"{head}; your {user_path} is not used for it, Triton's choice stands: {said}. "
            f"Set {variable} to it to use it all the same.",
            key=f"only TRITON_PTXAS_PATH {' '.join(a.reference for a in advised)}",
        )
        return None
    if release and found is None:
        _warn_once(
            f"{head}; your {user_path} (CUDA {release}) fits {arch_name(arch)} and is used. "
            f"Set {variable} to choose the Blackwell assembler yourself.",
            key="only TRITON_PTXAS_PATH",
        )
        return _same_shape(tool, user_path, release)
    why = found[0] if found else "its release could not be read"
    _warn_once(
        f"{head}; your {user_path} does not fit {arch_name(arch)} ({why}), so Triton's choice "
        f"stands. Set {variable} as well to choose it.",
        key="only TRITON_PTXAS_PATH",
    )
    return None


def _decide(
    arch: int, tool: object, plan: Plan, namespace: dict[str, Any], any_target: bool
) -> object:
    path, release = tool_fields(tool)
    if path is None or release is None:
        return tool
    target = "any target" if any_target else triton_target(imported_triton_version(), arch)
    component = ptxas_for(arch, triton_release(imported_triton_version()))
    if component == "ptxas-blackwell":
        user_choice = _blackwell_note(arch, plan, tool, namespace)
        if user_choice is not None:
            return user_choice
    setting = _setting(plan, component)
    explicit = bool(setting and setting["user"])
    manifest = _strict_manifest(plan, component, path)
    found = judge(path, release, arch, namespace, _driver(plan))
    row = triton_release(imported_triton_version())
    # With no target known (3.0-3.2, 3.4/3.5) no advisory is given here: `doctor` shows them.
    advised = (
        advisories_for(component, release, arch, row) if found is None and not any_target else ()
    )
    # One warning per tool and advisories, at the first compile they concern.
    said = f"{path} (as {component} for {target}): " + "; ".join(
        advisory_text(a, release) for a in advised
    )
    key = f"advisory {path} {' '.join(a.reference for a in advised)}"
    if found is None and (explicit or manifest or not advised):
        if advised:
            names = f"the strict manifest {manifest}" if manifest and not explicit else None
            names = names or (setting["variable"] if setting else component)
            _warn_once(f"{said}; it is used because {names} names it", key=key)
        return tool
    if manifest is not None and not explicit and found is not None:
        problem, fix = found
        raise SettingError(
            f"the strict manifest {manifest} gives {path} (CUDA {release}) as "
            f"components.{component}, and it does not fit {target}: {problem}.\n"
            f"  fix: {fix}, and give it in {manifest} as components.{component}; or drop "
            '"strict" from the manifest to let triton-toolchain choose; '
            f"`triton-toolchain check-manifest {manifest}` judges the manifest"
        )
    other = _alternative(component, arch, namespace, _driver(plan), path)
    if found is None:  # a known-bad build the shim found: another that fits, if any
        if other is None:
            _warn_once(f"{said}; it is used: no other ptxas found fits without one", key=key)
            return tool
        _warn_once(f"{said}; using {other[0]} (CUDA {other[1]}) instead", key=key)
        return _same_shape(tool, *other)
    problem, fix = found
    here = f" (one that fits here: {other[0]}, CUDA {other[1]})" if other else ""
    doctor = "`triton-toolchain doctor" + ("" if any_target else f" --arch {arch}")
    doctor += "` lists every ptxas found and which fit"
    if explicit and setting is not None:
        variable = setting["variable"]
        raise SettingError(
            f"{variable}={path!r} (CUDA {release}) does not fit {target}: {problem}.\n"
            f"  fix: {fix}{here}, and set {variable} to it, or unset {variable} to let "
            f"triton-toolchain choose; {doctor}"
        )
    if other is not None:
        _warn_once(
            f"{path} (CUDA {release}) does not fit {target}: {problem}; using "
            f"{other[0]} (CUDA {other[1]}), which does"
        )
        replaced = _same_shape(tool, *other)
        if replaced is not tool:
            return replaced
    refused = trust_refusals(plan, component, path)
    if refused:  # the real cause first: the one before it may not be run
        first = refused[0]
        raise MissingComponentError(
            f"{first.path}, the {component} found first, was refused: {first.reason}; the "
            f"next, {path} (CUDA {release}), does not fit {target}: {problem}.\n"
            f"  fix: {_trust.fix_for(first.reason)}; or {fix}; {doctor}"
        )
    raise MissingComponentError(
        f"Triton would run {path} (CUDA {release}) to assemble {target}: {problem}, "
        f"and no other ptxas found fits.\n  fix: {fix}; {doctor}"
    )


def fitted_tool(arch: int | None, tool: object, plan: Plan, namespace: dict[str, Any]) -> object:
    """The tool to run for ``sm_<arch>`` (see the module docstring); raises the shim's
    error where none fits. ``arch`` ``None``: the release's lookup takes no target
    (Triton 3.0-3.2 ``_path_to_binary("ptxas")``, 3.4/3.5 ``get_ptxas()``); then the
    PTX version and the driver are checked, with ``sm_80`` (which every CUDA 11+ ptxas
    assembles) as the probe's target."""
    any_target = arch is None
    arch = ANY_TARGET if arch is None else arch
    if not isinstance(arch, int) or isinstance(arch, bool):
        return tool
    settings = tuple((s["component"], s["value"], s["user"]) for s in plan["settings"])
    key = (arch, any_target, repr(tool), _driver(plan), settings, id(namespace))
    if key not in _DECIDED:
        try:
            _DECIDED[key] = _decide(arch, tool, plan, namespace, any_target)
        except (SettingError, MissingComponentError) as exc:
            _DECIDED[key] = exc
    decided = _DECIDED[key]
    if isinstance(decided, BaseException):
        raise type(decided)(str(decided))
    return decided


class Prediction(NamedTuple):
    """What Triton's compile for ``sm_<arch>`` runs with the shim: the component it takes
    (``ptxas`` or ``ptxas-blackwell``), the binary that assembles and its release, the
    warnings it gives; or the error it stops with (``path`` ``None``)."""

    arch: int
    component: str
    path: str | None
    release: str | None
    warnings: tuple[str, ...]
    error: str | None


def predicted(arch: int, plan: Plan, namespace: dict[str, Any]) -> Prediction:
    """What the guarded lookup (``_triton.guard_get_ptxas``, ``guard_path_to_binary``)
    does for ``sm_<arch>`` with ``plan`` (which holds the ``target`` part), by the same
    calls: the setting's error, ``_guards.ptxas_error``, then ``fitted_tool``, for the
    tool Triton's knob or variable gives. ``doctor --arch`` and ``which --arch`` say
    this, so what they name is what runs."""
    row = triton_release(imported_triton_version())
    component = ptxas_for(arch, row)
    setting = _setting(plan, component)
    path = setting["value"] if setting else None
    lookup = row.ptxas_lookup if row is not None else "get_ptxas(arch)"
    given = None if lookup == "get_ptxas()" else arch
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _WARNED.clear()
        _DECIDED.clear()
        try:
            # ``get_ptxas`` stops at a wrong setting first; ``_path_to_binary`` (3.0-3.2,
            # which run no ptxas-blackwell) judges the ptxas it takes only.
            guarded = lookup != "_path_to_binary"
            error: Exception | None = setting_error(plan, "compile") if guarded else None
            release = _release_of(path) if path and error is None else None
            if error is None and (path is None or release is None):
                error = MissingComponentError(f"no {component} that runs was found")
            if error is None:
                error = ptxas_error(given, (path, release), plan, namespace)
            if error is None:
                path, release = tool_fields(fitted_tool(given, (path, release), plan, namespace))
        except (SettingError, MissingComponentError) as exc:
            error = exc
    said = tuple(str(w.message) for w in caught if issubclass(w.category, FitWarning))
    if error is not None:
        text = f"{type(error).__name__}: {error}"
        return Prediction(arch, component, None, None, said, text)
    return Prediction(arch, component, path, release, said, None)
