"""One scenario, run by the tests in a fresh interpreter: ``python scenario.py CONFIG``.

CONFIG (JSON) says how to activate and what to do; the last line of the output is a
JSON report. Activation:

- ``"hook"``: process the package's ``triton_toolchain.pth`` exactly as ``site`` does at
  start-up (``site.addsitedir`` of a directory holding a copy), then ``import triton``;
- ``"explicit-before"``/``"explicit-after"``: ``triton_toolchain.activate()`` before or
  after ``import triton``;
- ``"none"``: stock Triton.

Actions: ``"compile:<cc>"`` (ahead-of-time compile for ``sm_<cc>``), ``"cuda_utils"``
(Triton builds and loads its ``cuda_utils`` module), ``"activate-again"`` (a second
``activate()``), ``"is_active"`` (Triton 3.9's ctypes probe of the driver).
Each action reports ``ok``, or the exception's type (with its base classes) and message.
The report also carries the activation (with the resolved toolchain: every component's
path, source and rejected candidates), the ``libcuda`` files mapped into the process and
the stand-ins' markers.
"""

from __future__ import annotations

import hashlib
import json
import os
import site
import sys
from pathlib import Path
from typing import Any


def _error(exc: BaseException) -> dict[str, Any]:
    return {
        "ok": False,
        "type": type(exc).__name__,
        "bases": [c.__name__ for c in type(exc).__mro__],
        "message": str(exc),
    }


def _activation() -> dict[str, Any] | None:
    if "triton_toolchain.runtime._activate" not in sys.modules:
        return None
    from triton_toolchain.runtime import _activate

    act = _activate.current()
    if act is None:
        return None
    return {
        "mode": act.mode,
        "applied": dict(act.applied),
        "kept": dict(act.kept),
        "driver": act.driver,
        "notes": list(act.notes),
        "toolchain": act.toolchain.to_dict() if act.toolchain is not None else None,
    }


def _compile(cc: int) -> dict[str, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton_toolchain.cli import _kernel

    kernel = triton.compile(_kernel.ast_source(), target=GPUTarget("cuda", cc, 32))
    cubin = kernel.asm["cubin"]
    return {
        "ok": True,
        "cubin_bytes": len(cubin),
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
    }


def _cuda_utils() -> dict[str, Any]:
    from triton.backends.nvidia.driver import CudaUtils

    CudaUtils()
    module = sys.modules.get("cuda_utils")
    return {"ok": True, "module": getattr(module, "__file__", None)}


def _mapped_drivers() -> list[str]:
    lines = Path("/proc/self/maps").read_text().splitlines()
    return sorted({ln.split()[-1] for ln in lines if "/libcuda.so" in ln})


def _standin_markers() -> list[str]:
    import ctypes

    markers = []
    for path in _mapped_drivers():
        lib = ctypes.CDLL(path)
        func = getattr(lib, "triton_toolchain_standin_marker", None)
        if func is not None:
            func.restype = ctypes.c_char_p
            markers.append(func().decode())
    return markers


def main(config: dict[str, Any]) -> dict[str, Any]:
    how = config["activation"]
    report: dict[str, Any] = {"results": {}}
    if how == "hook":
        site.addsitedir(config["pth_dir"])
        report["meta_path"] = [type(f).__name__ for f in sys.meta_path]
        report["package_imported_before_triton"] = "triton_toolchain" in sys.modules
    if how == "explicit-before":
        import triton_toolchain.runtime._activate as activation

        activation.activate()
        report["triton_imported_by_activate"] = "triton" in sys.modules
    import triton

    report["triton"] = triton.__version__
    report["loaders"] = [type(triton.__loader__).__name__, type(triton.__spec__.loader).__name__]
    if how == "explicit-after":
        import triton_toolchain.runtime._activate as activation

        activation.activate()
    report["activation"] = _activation()
    # A check of the shim's failing with anything but its own errors is a bug: here, an
    # error (a user's Triton goes on as without the shim, with a warning).
    import warnings

    from triton_toolchain.runtime._errors import AdapterBugWarning

    warnings.simplefilter("error", AdapterBugWarning)
    env_keys = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_LIBCUDA_PATH", "CC")
    for action in config.get("actions", []):
        try:
            if action.startswith("compile:"):
                result = _compile(int(action.split(":")[1]))
            elif action == "cuda_utils":
                result = _cuda_utils()
            elif action == "activate-again":
                from triton_toolchain.runtime import _activate

                _activate.activate()
                result = {"ok": True, "activation": _activation()}
            elif action == "is_active":
                from triton.backends.nvidia import driver

                result = {"ok": True, "active": bool(driver._cuda_driver_is_active())}
            else:
                raise ValueError(f"unknown action {action}")
        except Exception as exc:
            result = _error(exc)
        report["results"][action] = result
    report["drivers_mapped"] = _mapped_drivers()
    report["standin_markers"] = _standin_markers()
    report["environ"] = {k: os.environ.get(k) for k in env_keys}
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None:
        report["knobs"] = {k: v for k, v in vars(knobs.nvidia).items() if isinstance(v, str)}
    return report


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
