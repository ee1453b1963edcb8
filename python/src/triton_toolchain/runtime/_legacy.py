"""Triton 3.0 to 3.3, which have no ``triton.knobs``: the plan goes into the environment
variables those releases read (their launcher build is replaced by
``_triton.replace_build``).

Variables: ``TRITON_PTXAS_PATH``, ``TRITON_LIBCUDA_PATH``, ``TRITON_LIBDEVICE_PATH``,
``CC``, ``TRITON_CUDACRT_PATH``, ``TRITON_CUDART_PATH`` and, on 3.3, ptxas-blackwell's
``TRITON_PTXAS-BLACKWELL_PATH`` (its ``_path_to_binary`` upper-cases the binary's name,
hyphen included; ``TritonRelease.blackwell_variable``).

Guarantees: a variable set by the user is kept (``kept["env:..."]``); the variables
written here are remembered (``env``) and withdrawn when the plan no longer has them.
"""

from __future__ import annotations

import os

from . import Plan, Report


def _wanted(plan: Plan) -> dict[str, tuple[str | None, bool]]:
    """Variable -> (value or None, the user's own)."""
    from ..resolver._catalog import triton_release  # noqa: PLC0415  the resolver: 3.0-3.3 only
    from ..resolver._guards import imported_triton_version  # noqa: PLC0415  the resolver: 3.0-3.3 only

    release = triton_release(imported_triton_version())
    wanted: dict[str, tuple[str | None, bool]] = {}
    for s in plan["settings"]:
        variable = s["variable"]
        if s["component"] == "ptxas-blackwell":
            variable = release.blackwell_variable if release else None
        if variable and variable not in wanted:
            wanted[variable] = (None if s["error"] else s["value"], s["user"])
    return wanted


def apply_environ(plan: Plan, env: dict[str, str], report: Report) -> None:
    """Set the plan's variables (see the module docstring)."""
    wanted = _wanted(plan)
    for key in sorted(set(wanted) | set(env)):
        value, user = wanted.get(key, (None, False))
        mine = key in env and os.environ.get(key) == env[key]
        if user or (os.environ.get(key) and not mine):
            report.kept[f"env:{key}"] = "set by the user"
            env.pop(key, None)
        elif value is None:
            if mine:
                del os.environ[key]
            env.pop(key, None)
        else:
            os.environ[key] = value
            env[key] = value
            report.applied[f"env:{key}"] = value
