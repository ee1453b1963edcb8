"""The errors Triton's guarded lookups raise (``_triton``), instead of a ptxas failure,
an LLVM abort, a misleading ``RuntimeError`` or a silent fall-back.

- a wrong explicit setting of a component the step uses (``setting_error``);
- Triton finds no ptxas, or the one it would run cannot assemble the target (a 12.4
  ptxas for sm_100a), or this Triton cannot use its release (3.3 rejects CUDA 13: its
  own ``ptx_get_version`` raises), or it is not the one the shim chose (Triton fell
  back to its bundled binary because the chosen one did not run, or a strict manifest
  gives none) (``ptxas_error``);
- no driver where Triton asks for its directories (``missing_driver``);
- a file Triton's own lookup would run that the trust rule refuses (``trusted_lookup``,
  judged before the lookup runs anything: Triton runs ``--version`` of each file it
  tries).

What ``doctor`` asks of the installed Triton is ``_doctor``'s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..runtime import Plan, _trust
from ..runtime._errors import MissingComponentError, SettingError
from ._catalog import (
    COMPONENT,
    DRIVER_SONAME,
    PTXAS_FAMILY,
    arch_problem,
    component_fix,
    major_minor,
    ptxas_for,
    triton_release,
)
from ._model import Rejection, Toolchain


def full_toolchain(plan: Plan) -> Toolchain:
    """``_plan.full_toolchain``: the resolver loads for an error's whole story only, not
    at every compile (``_guards`` loads at the first; the resolver's modules would add
    about a millisecond to it)."""
    from ._plan import full_toolchain as full  # noqa: PLC0415  an error only

    return full(plan)


def runs_ptxas_blackwell(arch: int | None) -> bool:
    """Whether the imported Triton takes ptxas-blackwell for ``sm_<arch>``
    (``_catalog.ptxas_for``); no for an unknown target."""
    release = triton_release(imported_triton_version())
    return arch is not None and ptxas_for(arch, release) == "ptxas-blackwell"


def setting_error(plan: Plan, used_by: str) -> SettingError | None:
    """The error for the wrong explicit settings of components that ``used_by``
    (``"compile"`` or ``"build"``) needs, or ``None``."""
    errors = [s["error"] for s in plan["settings"] if s["error"] and s["used_by"] == used_by]
    return SettingError("; ".join(errors)) if errors else None


def tool_fields(tool: object) -> tuple[str | None, str | None]:
    """``(path, release)`` of what ``get_ptxas`` returned: a ``knobs.NvidiaTool``
    (3.4+) or a ``(path, version)`` tuple (3.0-3.3)."""
    if isinstance(tool, tuple) and len(tool) == 2:
        return str(tool[0]), str(tool[1])
    path, version = getattr(tool, "path", None), getattr(tool, "version", None)
    return (str(path) if path else None), (str(version) if version else None)


def imported_triton_version() -> tuple[int, int] | None:
    """``(major, minor)`` of the imported Triton (``_catalog.major_minor``), or ``None``
    where Triton is not imported (``_discovery._host.triton_version`` reads an installed
    Triton's without importing it)."""
    module = sys.modules.get("triton")
    return major_minor(str(getattr(module, "__version__", "")))


def usable_release(release: str, namespace: dict[str, Any]) -> str | None:
    """Why this Triton cannot use ptxas ``release`` (its ``ptx_get_version`` refuses it)."""
    ptx_get_version = namespace.get("ptx_get_version")
    if not callable(ptx_get_version):
        return None
    try:
        ptx_get_version(release)
    except (RuntimeError, ValueError, AssertionError):
        version = imported_triton_version()
        name = f"Triton {version[0]}.{version[1]}" if version else "this Triton"
        return (
            f"{name} cannot use a CUDA {release} ptxas (it knows no PTX version for that release)"
        )
    return None


def _target(arch: int | None) -> str:
    """``" for sm_90"``, or ``""`` where Triton does not pass the target (3.4, 3.5)."""
    return f" for sm_{arch}" if arch is not None else ""


def _user_fix(arch: int | None, plan: Plan | None) -> str | None:
    """The fix where the user set the ptxas Triton runs for ``sm_<arch>`` (``None``:
    for every target): change or unset that setting, not "set" it."""
    row = triton_release(imported_triton_version())
    component = "ptxas" if arch is None else ptxas_for(arch, row)
    settings = plan["settings"] if plan is not None else []
    setting = next((s for s in settings if s["component"] == component), None)
    if setting is None or not setting["user"]:
        return None
    doctor = "triton-toolchain doctor" + (f" --arch {arch}" if arch is not None else "")
    # A ptxas for an architecture a later CUDA dropped: which one can (sm_70: CUDA 12's).
    which = component_fix(component, arch, row)
    which = f" ({which})" if which != COMPONENT[component].fix else ""
    return (
        f"{COMPONENT[component].variable} is set to {setting['value']!r}, which Triton runs"
        f"{_target(arch) or ' for every target'}: point it at a ptxas that can assemble "
        f"it{which}, or unset it to let triton-toolchain choose; `{doctor}` lists every ptxas "
        "found and which fit"
    )


def _fixes(arch: int | None, plan: Plan | None = None) -> str:
    user = _user_fix(arch, plan)
    if user is not None:
        return user
    if arch is None:  # 3.4, 3.5: one ptxas for every target
        spec = COMPONENT["ptxas"]
        return (
            f"set {spec.variable} (ptxas, what this Triton runs for every target): "
            f"{spec.fix}; `triton-toolchain doctor` lists every ptxas found and why each "
            "was rejected"
        )
    row = triton_release(imported_triton_version())
    component = ptxas_for(arch, row)
    spec = COMPONENT[component]
    return (
        f"set {spec.variable} ({component}, what this Triton runs for sm_{arch}): "
        f"{component_fix(component, arch, row)}; "
        f"`triton-toolchain doctor --arch {arch}` lists every ptxas found and why each was "
        "rejected"
    )


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def no_ptxas(arch: int | None, exc: BaseException) -> MissingComponentError:
    """The error for Triton finding no ptxas at all for ``sm_<arch>``."""
    return MissingComponentError(
        f"Triton found no ptxas{_target(arch)} ({exc}).\n  fix: {_fixes(arch)}"
    )


def ptxas_error(
    arch: int | None, tool: object, plan: Plan, namespace: dict[str, Any]
) -> MissingComponentError | None:
    """The error for the ptxas Triton chose for ``sm_<arch>`` (``tool``), or ``None``
    when it is fine. ``arch`` is ``None`` where Triton does not pass the target (3.4,
    3.5): then only what holds for every target is checked."""
    path, release = tool_fields(tool)
    if release:
        fits = arch_problem(arch, release) if arch is not None else None
        problem = fits or usable_release(release, namespace)
        if problem:
            what = f"to assemble sm_{arch}" if arch is not None else "for every target"
            component = (
                "ptxas"
                if arch is None
                else ptxas_for(arch, triton_release(imported_triton_version()))
            )
            return MissingComponentError(
                f"Triton would run {path} (CUDA release {release}) {what}: "
                f"{problem}.\n  fix: {_fixes(arch, plan)}{trust_story(plan, component, path or '')}"
            )
    tc = Toolchain.from_dict(plan["toolchain"])
    # ptxas-blackwell is in the plan once Triton takes it (the guard completes the plan
    # first: its part, ``target``, pending until then); before, Triton runs ptxas.
    present = [tc.choices[n] for n in PTXAS_FAMILY if n in tc.choices]
    chosen = [c.path for c in present if c.path is not None]
    if path is None or any(_same_file(path, c) for c in chosen):
        return None
    if tc.strict:
        tc = full_toolchain(plan)
        missing = [tc[n] for n in PTXAS_FAMILY if tc[n].path is None]
        detail = "\n".join(c.explain(strict_manifest=tc.manifest) for c in missing)
        return MissingComponentError(
            f"Triton fell back to {path}{_target(arch)}, which the strict manifest "
            f"{tc.manifest} does not give (discovery is off).\n{detail}"
        )
    if chosen:
        return MissingComponentError(
            f"Triton fell back to {path}{_target(arch)}: the chosen {' or '.join(chosen)} "
            f"did not run when Triton asked its version (was it removed or changed since?).\n"
            f"  fix: run `triton-toolchain doctor{f' --arch {arch}' if arch else ''}`"
        )
    return None


def missing_driver(plan: Plan) -> MissingComponentError:
    """The explanation of the missing driver, as ``Toolchain.require`` gives it."""
    tc = full_toolchain(plan)
    try:
        tc.require("libcuda")
    except MissingComponentError as exc:
        return exc
    return MissingComponentError("no NVIDIA driver was found")  # pragma: no cover


def no_active_driver(plan: Plan, triton_says: str) -> RuntimeError:
    """Triton's "0 active drivers" when the shim found no usable driver, still Triton's
    ``RuntimeError`` with Triton's words first, then what the shim found (how many places
    it looked at, the first candidate it rejected and why), the fix, and where to read
    more."""
    choice = full_toolchain(plan)["libcuda"]
    if choice.rejected:
        more = len(choice.rejected) - 1
        found = f"it rejected {choice.rejected[0]}" + (f" (and {more} more)" if more else "")
    else:
        found = f"none of the {len(choice.searched)} places it looked at holds {DRIVER_SONAME}"
    return RuntimeError(
        f"{triton_says} triton-toolchain found no usable NVIDIA driver, so Triton's CUDA "
        f"backend is not active: {found}; fix: {COMPONENT['libcuda'].fix}. Run "
        "`triton-toolchain doctor` for what this machine can do (compile kernels without a "
        "driver: `doctor --for compile`), `doctor -v` for every place looked at."
    )


def lookup_candidates(component: str, namespace: dict[str, Any]) -> list[str]:
    """The files Triton's own lookup of ``component`` runs ``--version`` of, in its
    order, until one answers: the knob's value (else its variable), then the bundled
    binary (3.4+: ``knobs.nvidia.<tool>``, an ``env_nvidia_tool``); on 3.0-3.3
    ``_path_to_binary``'s variable, then ``backends/nvidia/bin``."""
    knobs = namespace.get("knobs")
    nvidia = getattr(knobs, "nvidia", None)
    attr = component.replace("-", "_")
    owner = next((c for c in type(nvidia).__mro__ if attr in vars(c)), None) if nvidia else None
    descriptor = vars(owner)[attr] if owner is not None else None
    if descriptor is not None and hasattr(descriptor, "default_path"):
        assigned = vars(nvidia).get(attr)
        value = assigned if isinstance(assigned, str) else os.environ.get(descriptor.key)
        paths = [value, descriptor.default_path]
    else:
        module_file = namespace.get("__file__")
        bundled = (
            os.path.join(os.path.dirname(module_file), "bin", component) if module_file else None
        )
        paths = [os.environ.get(f"TRITON_{component.upper().replace('-', '_')}_PATH"), bundled]
    return [p for p in paths if p and os.path.exists(p)]


def trust_refusals(plan: Plan | None, component: str, *skip: str) -> list[Rejection]:
    """The candidates for ``component`` the resolution refused because others could
    change them, but ``skip`` (said already): why a later one was taken."""
    if plan is None:
        return []
    return [
        r
        for r in full_toolchain(plan)[component].rejected
        if r.reason.startswith(_trust.UNTRUSTED) and r.path not in skip
    ]


def trust_story(plan: Plan | None, component: str, *skip: str) -> str:
    """``trust_refusals``, a line each with its fix (``""`` for none)."""
    return "".join(
        f"\n  refused first: {r}\n    fix: {_trust.fix_for(r.reason)}"
        for r in trust_refusals(plan, component, *skip)
    )


def trusted_lookup(
    component: str, namespace: dict[str, Any], plan: Plan | None
) -> tuple[str, str] | None:
    """Before Triton's lookup of ``component`` runs anything: ``None`` when every file it
    may run is trusted (Triton's lookup then runs); ``(path, release)`` of its first file
    when that one is trusted and a later one is not (asked by the shim, so that
    Triton's fall-back never runs the other); else ``MissingComponentError`` naming the
    file, who can change it and the fix."""
    candidates = lookup_candidates(component, namespace)
    refused = {p: why for p in candidates if (why := _trust.untrusted(p))}
    if not refused:
        return None
    first = candidates[0]
    if first not in refused:
        from ._discovery._host import Host  # noqa: PLC0415  only where one is refused
        from ._discovery._tools import tool_release  # noqa: PLC0415  only where one is refused

        release, problem = tool_release(Path(first), Host.current())
        if release is not None:
            return first, release
        path = next(iter(refused))
        refusal = f"Triton would then run {path}: {refused[path]}"
        raise MissingComponentError(
            f"{first}, the {component} Triton takes first, did not answer ({problem}); "
            f"{refusal}.\n  fix: {_trust.fix_for(refused[path])}"
        )
    raise MissingComponentError(
        f"Triton would run {first} as {component}: {refused[first]}.\n"
        f"  fix: {_trust.fix_for(refused[first])}{trust_story(plan, component, first)}"
    )


def hip_runtime(triton_lookup: Callable[[], str]) -> str:
    """The HIP runtime Triton's AMD launcher is to open (``_triton.hip_lookup``): the AMD
    backend resolved for this process's user environment (``resolve_all(backend="amd")``;
    ``TRITON_LIBHIP_PATH`` is its explicit setting). A wrong setting is the shim's
    ``SettingError``, none usable a ``MissingComponentError`` with every place looked at
    and every rejection (a ROCm too old for this Triton among them). Where TheRock's
    ``rocm_sdk`` is installed and the variable unset, Triton's own lookup
    (``triton_lookup``), which takes TheRock's library first."""
    from ..runtime import user_environ  # noqa: PLC0415  an AMD launcher build only
    from ._discovery._host import Host  # noqa: PLC0415
    from ._resolve import resolve_all  # noqa: PLC0415

    host = Host.current(user_environ())
    therock = host.triton is not None and host.triton.therock_first and host.rocm_sdk_dirs
    if therock and not host.environ.get("TRITON_LIBHIP_PATH"):
        return triton_lookup()  # TheRock's, which Triton takes first (its own mixing check)
    choice = resolve_all(host=host, backend="amd")["libamdhip64"]
    if choice.error:
        raise SettingError(choice.error)
    if choice.path is None:
        raise MissingComponentError(choice.explain())
    return choice.path
