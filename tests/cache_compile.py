"""Child process of ``tests/test_caches.py``: a real ahead-of-time Triton compile
(``triton.compile`` for ``GPUTarget("cuda", 90, 32)``, with the wheel's ptxas) and a
real ``torch.compile`` on the CPU, then one line, ``MARK`` and JSON: ``triton_dir``
(``knobs.cache.dir`` as Triton used it), ``inductor_dir`` (Inductor's ``cache_dir()``),
``triton_ok``/``torch_ok`` and their errors, the shim's warnings, and ``mapped``: every
file of this process's ``/proc/self/maps`` (what was loaded). Run with the shim on or
off (``TRITON_TOOLCHAIN=off``, stock) by the test."""

from __future__ import annotations

import json
import os
import warnings

MARK = "cache-compile-result: "


def _triton() -> dict[str, object]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_toolchain.cli import _kernel

    src = ASTSource(_kernel.add_kernel, _kernel.SIGNATURE, constexprs=_kernel.CONSTEXPRS)
    try:
        kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32))
        return {"triton_ok": len(kernel.asm["cubin"]) > 0, "triton_error": None}
    except BaseException as exc:
        return {"triton_ok": False, "triton_error": f"{type(exc).__name__}: {exc}"[:2000]}


def _torch() -> dict[str, object]:
    import torch

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) * 2 + 1

    x = torch.arange(16.0)
    try:
        ok = bool(torch.allclose(torch.compile(f)(x), f(x)))
        return {"torch_ok": ok, "torch_error": None}
    except BaseException as exc:
        import traceback

        where = traceback.format_exc()[-3000:]
        return {"torch_ok": False, "torch_error": f"{type(exc).__name__}: {exc}"[:2000] + where}


def main() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = {**_triton(), **_torch()}
    import triton
    from torch._inductor.runtime import cache_dir_utils

    try:
        inductor: str | None = cache_dir_utils.cache_dir()
    except BaseException as exc:
        inductor = f"{type(exc).__name__}: {exc}"
    with open("/proc/self/maps", encoding="utf-8") as maps:
        fields = [line.split(None, 5) for line in maps]
    mapped = sorted({f[5].strip() for f in fields if len(f) == 6})
    result.update(
        triton_dir=triton.knobs.cache.dir,
        inductor_dir=inductor,
        warnings=[str(w.message) for w in caught if "triton-toolchain" in str(w.message)],
        mapped=[m for m in mapped if m.startswith("/")],
        environ={k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR")},
    )
    print(MARK + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
