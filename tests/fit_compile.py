"""Child process of ``tests/test_fit_matrix.py``: compile the vector-add kernel ahead of
time (``triton.compile(ASTSource(...), target=GPUTarget("cuda", arch, 32))``) for each
architecture given, and print one line per architecture, ``MARK`` and JSON: ``{"arch", "ok",
"error" (the exception's type and first lines), "warnings"}``. Run with the shim active
or with ``TRITON_TOOLCHAIN=off`` (stock Triton) and the ptxas variables chosen by the
test; ``VAR=VALUE`` arguments are set after ``import triton``, in order."""

from __future__ import annotations

import json
import sys
import warnings

MARK = "fit-compile-result: "  # stock Triton prints the PTX (its "{" lines too) on failure


def compile_for(arch: int) -> dict[str, object]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_toolchain.cli import _kernel

    try:
        src = ASTSource(_kernel.add_kernel, _kernel.SIGNATURE, constexprs=_kernel.CONSTEXPRS)
    except TypeError:  # Triton 3.0-3.2: positional signature, ``constants`` by index
        signature = {i: t for i, t in enumerate(_kernel.SIGNATURE.values()) if t != "constexpr"}
        src = ASTSource(_kernel.add_kernel, signature, constants={4: _kernel.BLOCK})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            kernel = triton.compile(src, target=GPUTarget("cuda", arch, 32))
            ok, error = len(kernel.asm["cubin"]) > 0, None
        except BaseException as exc:
            ok, error = False, f"{type(exc).__name__}: {exc}"[:2000]
    return {
        "arch": arch,
        "ok": ok,
        "error": error,
        "warnings": [str(w.message) for w in caught if "triton-toolchain" in str(w.message)],
    }


if __name__ == "__main__":
    # ``VAR=VALUE`` arguments are set in ``os.environ`` after ``import triton``, before the
    # first compile (what torch's and vLLM's helpers do); the others are architectures.
    import os

    import triton  # noqa: F401

    for arg in sys.argv[1:]:
        name, is_setting, value = arg.partition("=")
        if is_setting:
            os.environ[name] = value
        else:
            print(MARK + json.dumps(compile_for(int(arg))), flush=True)
