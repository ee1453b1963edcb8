"""From a resolution to an activation plan: plain data saying what to hand to Triton and
torch, so that applying it needs neither the resolver nor the catalog (the fast path
applies a plan read back from the activation record).

A plan (JSON-able)::

    {"toolchain": Toolchain.to_dict(),
     "settings": [{"component": "ptxas", "knob": "nvidia.ptxas",
                   "variable": "TRITON_PTXAS_PATH", "value": "/usr/.../ptxas",
                   "user": false, "error": null, "used_by": "compile"}, ...],
     "driver": "/usr/lib/x86_64-linux-gnu/libcuda.so.1" or null,
     "link": "/usr/lib/x86_64-linux-gnu" or null}

``user``: the variable holds the user's own setting (Triton reads it itself; nothing is
assigned over it); ``error``: that setting is wrong, and Triton's step ``used_by`` stops
with this message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ._catalog import COMPONENTS
from ._model import SourceKind, Toolchain


def plan_of(tc: Toolchain) -> dict[str, Any]:
    """The plan that applies ``tc`` (see the module docstring)."""
    users = {
        spec.variable
        for spec in COMPONENTS
        if spec.variable
        and tc[spec.name].source is not None
        and tc[spec.name].source.kind is SourceKind.ENV  # type: ignore[union-attr]
    }
    settings = []
    for spec in COMPONENTS:
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
        "settings": settings,
        "driver": tc["libcuda"].path,
        "link": tc["libcuda-link"].path,
    }


def resolve_plan(arch: int | None, environ: Mapping[str, str]) -> tuple[dict[str, Any], Any]:
    """Resolve for this process with ``environ``: the plan and the facts it rests on."""
    from ._resolve import resolve_recorded

    tc, facts = resolve_recorded(arch, environ)
    return plan_of(tc), facts
