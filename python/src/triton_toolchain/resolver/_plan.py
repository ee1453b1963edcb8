"""From a resolution to an activation plan: plain data saying what to hand to Triton and
torch, so that applying it needs neither the resolver nor the catalog (the fast path
applies a plan read back from the activation record).

A plan (JSON; its shape is the ``TypedDict``s of ``runtime``, ``Plan`` and the
types it holds, so mypy checks every reader; at run time it is a plain ``dict``, which the
activation record stores as JSON and checks against the same types)::

    {"toolchain": Toolchain.to_dict(), "history": true,
     "settings": [{"component": "ptxas", "knob": "nvidia.ptxas",
                   "variable": "TRITON_PTXAS_PATH", "value": "/usr/.../ptxas",
                   "user": false, "error": null, "used_by": "compile"}, ...],
     "drivers": {"nvidia": {"library": "/usr/lib/x86_64-linux-gnu/libcuda.so.1" or null,
                            "link": "/usr/lib/x86_64-linux-gnu" or null, "user": false}},
     "pending": ["launcher", "target", "sass"],
     "torch": {"CXX": "/usr/bin/g++" or null, "CPATH": ["/opt/py/include/python3.12"],
               "CUDA_HOME": "/usr/local/cuda-13.0" or null},
     "caches": {"triton": {"variable": "TRITON_CACHE_DIR", "path": ..., ...}, ...}}

``history``: the toolchain keeps the places looked at and the rejected candidates (a
plan in an activation record does not: ``without_history``). ``user``: the variable
holds the user's own setting (Triton reads it itself; nothing is assigned over it);
``error``: that setting is wrong, and Triton's step ``used_by`` stops with this
message. ``drivers``: per backend whose driver was resolved (``runtime.BACKENDS``), the driver
library, its link directory and whether the user's variable names it. ``pending``: the
later parts of the plan (``_catalog.Part``) it does not hold yet, which the activation
completes when they are first needed (``_activate.complete``); never the driver's
(``tests/test_plan.py``). ``torch``: what ``_torch`` sets: ``CXX`` (the resolved C++
compiler where it is one program and not the user's own), the directories Inductor's
compiles need on ``CPATH`` (``Python.h`` where ``sysconfig`` does not say, an ``omp.h``
that is not the compiler's own), and ``cpp_extension``'s ``CUDA_HOME``. ``caches``:
Triton's and Inductor's cache directories as judged (``_caches``; a resolution with the
import's part has them, a later part's plan none).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..runtime import (
    Driver,
    Part,
    Plan,
    Setting,
    ToolchainData,
    TorchPart,
    loaded_by_shim,
    user_environ,
)
from ..runtime._errors import ToolchainError
from ._caches import caches_for
from ._catalog import (
    AT_IMPORT_IF_IN_MANIFEST,
    AT_IMPORT_IF_NAMED,
    COMPONENTS,
    PARTS,
    part_components,
)
from ._discovery import _fs
from ._discovery._compiler import command_argv
from ._discovery._host import Host, python_include_dir
from ._model import Choice, SourceKind, Toolchain
from ._observe import recording
from ._resolve import resolve_all


def plan_of(tc: Toolchain) -> Plan:
    """The plan that applies ``tc`` (see the module docstring): the parts some of whose
    components ``tc`` lacks are pending, and have no settings yet."""
    specs = [spec for spec in COMPONENTS if spec.name in tc.choices]
    users = {
        spec.variable
        for spec in specs
        if spec.variable
        and (source := tc[spec.name].source) is not None
        and source.kind is SourceKind.ENV
    }
    settings: list[Setting] = []
    drivers: dict[str, Driver] = {}
    for spec in specs:
        link = tc.choices.get(spec.link or "")
        if spec.kind == "driver" and spec.backend is not None:
            drivers[spec.backend] = {
                "library": tc[spec.name].path,
                "link": link.path if link else None,
                "user": spec.variable in users,
            }
        if not (spec.variable or spec.knob):
            continue
        choice = tc[spec.name]
        value = choice.path
        if value is not None and spec.variable_names_dir:
            value = os.path.dirname(value)
        if spec.kind == "driver" and value is None and link is not None:
            value = link.path  # Triton then never runs /sbin/ldconfig
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
    pending: list[Part] = [
        p for p in PARTS if p != "import" and not part_components(p) <= tc.choices.keys()
    ]
    return {
        "toolchain": tc.to_dict(),
        "history": True,
        "settings": settings,
        "drivers": drivers,
        "pending": pending,
        "torch": None if "torch" in pending else _torch_part(tc),
        "caches": {},
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


def left_out(parts: tuple[Part, ...], host: Host) -> frozenset[str]:
    """What a resolution of ``parts`` leaves out on ``host``: the components of no part
    of ``parts``. A resolution at the import (``"import"`` among them) keeps those of
    the parts of ``AT_IMPORT_IF_NAMED`` that a variable names (each read is a fact of
    the record)."""
    wanted = set(parts)
    out = {spec.name for spec in COMPONENTS if not wanted.intersection(spec.parts)}
    if "import" in wanted:
        out -= {
            spec.name
            for spec in COMPONENTS
            if AT_IMPORT_IF_NAMED.intersection(spec.parts)
            and any(host.environ.get(v) for v in (spec.variable, *spec.also_read) if v)
        }
    return frozenset(out)


def in_manifest_at_import(parts: tuple[Part, ...]) -> frozenset[str]:
    """What a resolution of ``parts`` takes all the same where the manifest names it:
    at the import, the components of the parts of ``AT_IMPORT_IF_IN_MANIFEST``."""
    if "import" not in parts:
        return frozenset()
    return frozenset(s.name for s in COMPONENTS if AT_IMPORT_IF_IN_MANIFEST.intersection(s.parts))


def resolve_plan(
    arch: int | None,
    environ: Mapping[str, str],
    *,
    parts: tuple[Part, ...] | None = None,
    mapped: list[str] | None = None,
) -> tuple[Plan, Any]:
    """Resolve the components of ``parts`` (``left_out``; ``None``: every part) for this
    process with ``environ``: the plan and the facts it rests on. ``mapped``: the
    drivers mapped into this process, as the caller has just read them (``Host.mapped``;
    ``None``: read again)."""
    parts = PARTS if parts is None else parts
    with recording() as facts:  # the host's facts (Triton's package) included
        host = Host.current(environ, mapped=None if mapped is None else tuple(mapped))
        tc = resolve_all(
            arch,
            host=host,
            leave_out=left_out(parts, host),
            unless_in_manifest=in_manifest_at_import(parts),
        )
        plan = plan_of(tc)
        if "import" in parts:
            plan["caches"] = caches_for(host)
    return plan, facts


def full_toolchain(plan: Plan) -> Toolchain:
    """The resolution behind ``plan`` with its whole history (the places looked at, the
    rejected candidates), for an explanation when something fails or is asked about. A
    plan from an activation record has none: resolved again for this process's user
    environment (nothing has changed, or the record would not have been reused), the
    driver the shim loaded not counted as one loaded by someone else; the plan's own
    when that fails. A plan with a part pending (`import triton`'s leaves torch's and the
    launcher's pending) is resolved again too, whole."""
    if plan["history"] and not plan["pending"]:
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
