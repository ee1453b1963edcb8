"""From a resolution to an activation plan: plain data saying what to hand to Triton and
torch, so that applying it needs neither the resolver nor the catalog (the fast path
applies a plan read back from the activation record).

A plan (JSON; its shape is the ``TypedDict``s of ``runtime._schema``, ``Plan`` and the
types it holds, so mypy checks every reader; at run time it is a plain ``dict``, which the
activation record stores as JSON and checks against the same types)::

    {"toolchain": Toolchain.to_dict(), "history": true,
     "settings": [{"component": "ptxas", "knob": "nvidia.ptxas",
                   "variable": "TRITON_PTXAS_PATH", "value": "/usr/.../ptxas",
                   "user": false, "error": null, "used_by": "compile"}, ...],
     "driver": "/usr/lib/x86_64-linux-gnu/libcuda.so.1" or null,
     "link": "/usr/lib/x86_64-linux-gnu" or null,
     "torch": {"CXX": "/usr/bin/g++" or null, "CPATH": ["/opt/py/include/python3.12"],
               "CUDA_HOME": "/usr/local/cuda-13.0" or null}}

``history``: the toolchain keeps the places looked at and the rejected candidates (a
plan in an activation record does not: ``without_history``). ``user``: the variable
holds the user's own setting (Triton reads it itself; nothing is assigned over it);
``error``: that setting is wrong, and Triton's step ``used_by`` stops with this
message. ``torch``: what ``_torch`` sets: ``CXX`` (the resolved C++
compiler where it is one program and not the user's own), the directories Inductor's
compiles need on ``CPATH`` (``Python.h`` where ``sysconfig`` does not say, an ``omp.h``
that is not the compiler's own), and ``cpp_extension``'s ``CUDA_HOME``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from ..runtime._errors import ToolchainError
from ..runtime._process import loaded_by_shim, user_environ
from ..runtime._schema import Plan, Setting, ToolchainData, TorchPart
from ._catalog import (
    COMPONENT_NAMES,
    COMPONENTS,
    LAUNCHER_ONLY,
    SASS_ONLY,
    TARGET_ONLY,
    TORCH_ONLY,
    TORCH_PART,
)
from ._discovery import _fs
from ._discovery._compiler import command_argv
from ._discovery._host import Host, python_include_dir
from ._model import Choice, SourceKind, Toolchain
from ._observe import recording
from ._resolve import resolve_all


def plan_of(tc: Toolchain) -> Plan:
    """The plan that applies ``tc`` (see the module docstring); a resolution without
    ``TORCH_ONLY`` (`import triton`'s) has no settings for them and ``"torch": None``."""
    specs = [spec for spec in COMPONENTS if spec.name in tc.choices]
    users = {
        spec.variable
        for spec in specs
        if spec.variable
        and (source := tc[spec.name].source) is not None
        and source.kind is SourceKind.ENV
    }
    settings: list[Setting] = []
    for spec in specs:
        if not (spec.variable or spec.knob):
            continue
        choice = tc[spec.name]
        value = choice.path
        if value is not None and spec.variable_names_dir:
            value = os.path.dirname(value)
        if spec.kind == "driver" and value is None:
            value = tc["libcuda-link"].path  # Triton then never runs /sbin/ldconfig
        settings.append(
            {
                "component": spec.name,
                "knob": spec.knob,
                "variable": spec.variable,
                "value": value,
                "user": spec.variable in users,
                "error": choice.error,
                "used_by": spec.used_by,
            }
        )
    return {
        "toolchain": tc.to_dict(),
        "history": True,
        "settings": settings,
        "driver": tc.choices["libcuda"].path if "libcuda" in tc.choices else None,
        "link": tc.choices["libcuda-link"].path if "libcuda-link" in tc.choices else None,
        "torch": _torch_part(tc) if tc.choices.keys() >= TORCH_PART else None,
    }


def _shim_found(choice: Choice) -> str | None:
    """The path of a component the shim found (not the user's own setting), or ``None``."""
    if choice.path is None or choice.source is None or choice.source.kind is SourceKind.ENV:
        return None
    return choice.path


def _torch_part(tc: Toolchain) -> TorchPart:
    cxx = _shim_found(tc["cxx"])
    if cxx is not None and len(command_argv(cxx)) != 1:
        cxx = None
    cpath = []
    headers = tc["python-headers"].path
    if headers and not _fs.is_file(python_include_dir() / "Python.h"):
        cpath.append(headers)
    openmp = tc["openmp"]
    if openmp.path and openmp.source is not None and openmp.source.detail != "compiler":
        cpath.append(openmp.path)
    return {"CXX": cxx, "CPATH": cpath, "CUDA_HOME": _shim_found(tc["cuda-home"])}


# What Triton reads only when it takes it: ptxas-blackwell for a target from its switch
# on, the SASS dump's tools (``_activate._complete_and_apply`` resolves them then).
TAKEN_LATER = TARGET_ONLY | SASS_ONLY
# What a plan holds (``resolve_plan``): every component; what `import triton` needs (all
# but ``TORCH_ONLY``, ``LAUNCHER_ONLY`` and ``TAKEN_LATER``: no C++ compiler, OpenMP,
# CUDA home, C compiler, ``Python.h``, ptxas-blackwell, cuobjdump or nvdisasm asked
# for); what `import torch` before Triton and ``activate()`` resolve, ``"eager"`` (all
# but ``TAKEN_LATER``); and each part alone (what ``_activate.with_part`` adds when
# torch is imported after Triton, before Triton's first launcher build, before its
# first compile that runs ptxas-blackwell, or before its first SASS dump).
Scope = Literal["all", "triton", "eager", "torch", "launcher", "target", "sass"]
_NAMES = frozenset(COMPONENT_NAMES)
LEFT_OUT: dict[str, frozenset[str]] = {
    "all": frozenset(),
    "triton": TORCH_ONLY | LAUNCHER_ONLY | TAKEN_LATER,
    "eager": TAKEN_LATER,
    "torch": _NAMES - TORCH_PART,
    "launcher": _NAMES - LAUNCHER_ONLY,
    "target": _NAMES - TARGET_ONLY,
    "sass": _NAMES - SASS_ONLY,
}
# Left out of a scope unless a variable names them: a user's setting is checked at once.
UNLESS_NAMED: dict[str, frozenset[str]] = {
    "triton": LAUNCHER_ONLY | TAKEN_LATER,
    "eager": TAKEN_LATER,
}
# Left out of a scope unless the manifest names them: a packager's tools are judged at
# once (their versions are recorded: no process runs), and Triton's knobs and variables
# hold them from the import on.
UNLESS_IN_MANIFEST: dict[str, frozenset[str]] = {"triton": TAKEN_LATER, "eager": TAKEN_LATER}


def left_out(scope: Scope, host: Host) -> frozenset[str]:
    """What ``scope`` leaves out on ``host`` (``LEFT_OUT``, less what ``UNLESS_NAMED``
    keeps because one of its variables is set: each read is a fact of the record)."""
    named = {
        spec.name
        for spec in COMPONENTS
        if spec.name in UNLESS_NAMED.get(scope, ())
        and any(host.environ.get(v) for v in (spec.variable, *spec.also_read) if v)
    }
    return LEFT_OUT[scope] - named


def resolve_plan(
    arch: int | None,
    environ: Mapping[str, str],
    *,
    scope: Scope = "all",
    mapped: list[str] | None = None,
) -> tuple[Plan, Any]:
    """Resolve ``scope`` for this process with ``environ``: the plan and the facts it
    rests on. ``mapped``: the drivers mapped into this process, as the caller has just
    read them (``Host.mapped``; ``None``: read again)."""
    with recording() as facts:  # the host's facts (Triton's package) included
        host = Host.current(environ, mapped=None if mapped is None else tuple(mapped))
        unless = UNLESS_IN_MANIFEST.get(scope, frozenset())
        tc = resolve_all(
            arch, host=host, leave_out=left_out(scope, host), unless_in_manifest=unless
        )
        plan = plan_of(tc)
    return plan, facts


def full_toolchain(plan: Plan) -> Toolchain:
    """The resolution behind ``plan`` with its whole history (the places looked at, the
    rejected candidates), for an explanation when something fails or is asked about. A
    plan from an activation record has none: resolved again for this process's user
    environment (nothing has changed, or the record would not have been reused), the
    driver the shim loaded not counted as one loaded by someone else; the plan's own
    when that fails. A plan without some part (`import triton`'s leaves out torch's and
    the launcher's) is resolved again too, whole."""
    if plan["history"] and plan["toolchain"]["components"].keys() >= set(COMPONENT_NAMES):
        return Toolchain.from_dict(plan["toolchain"])
    arch = plan["toolchain"].get("arch")
    host = Host.current(user_environ()).replace(loaded_by_shim=loaded_by_shim())
    try:
        return resolve_all(arch, host=host)
    except ToolchainError:
        return Toolchain.from_dict(plan["toolchain"])


def without_history(plan: Plan) -> Plan:
    """``plan`` as an activation record keeps it: what applying needs, without the places
    looked at and the rejected candidates (doctor's; they would make every record, read
    by every process, several times larger)."""
    components = plan["toolchain"]["components"]
    toolchain: ToolchainData = {
        **plan["toolchain"],
        "components": {n: {**c, "searched": [], "rejected": []} for n, c in components.items()},
    }
    return {**plan, "toolchain": toolchain, "history": False}
