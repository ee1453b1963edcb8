"""The environment that configures Triton from a resolution: Triton's own variables,
``CC`` and ``TRITON_TOOLCHAIN_MANIFEST``. One place for which component goes where."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ._catalog import SPECS_TUPLE
from ._manifest import MANIFEST_VARIABLE
from ._model import Toolchain

# Components whose variable names a directory although the component is a file.
_DIRECTORY_OF = {"libcuda"}
# The link directory shares TRITON_LIBCUDA_PATH with the driver and only stands in
# when no driver was found.
_FALLBACK_ONLY = {"libcuda-link"}


def toolchain_env(tc: Toolchain) -> dict[str, str]:
    """Variables for every found component, e.g. ``{"TRITON_PTXAS_PATH": "/usr/...", ...}``.

    ``TRITON_LIBCUDA_PATH`` is the run-time driver's directory when a driver was found,
    else the link directory (a toolkit stub: enough to build, not to launch).
    """
    env: dict[str, str] = {}
    for spec in SPECS_TUPLE:
        choice = tc[spec.name]
        if spec.env is None or choice.path is None or spec.name in _FALLBACK_ONLY:
            continue
        env[spec.env] = os.path.dirname(choice.path) if spec.name in _DIRECTORY_OF else choice.path
    if "TRITON_LIBCUDA_PATH" not in env and tc["libcuda-link"].path:
        env["TRITON_LIBCUDA_PATH"] = tc["libcuda-link"].path
    if tc.manifest:
        env[MANIFEST_VARIABLE] = tc.manifest
    return env


def merged_env(tc: Toolchain, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with the toolchain's variables added where ``base`` does not set them:
    what the user set always wins."""
    merged = dict(base)
    for key, value in toolchain_env(tc).items():
        if not merged.get(key):
            merged[key] = value
    return merged
