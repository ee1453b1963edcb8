"""The vector-add kernel that ``self_test`` (and the tests) compile. Importing this
module imports Triton; only ``_selftest`` does, on demand."""

from __future__ import annotations

# Triton ships no type information (and the type-check session does not install it).
import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]
import triton.language as tl  # type: ignore[import-untyped, import-not-found, unused-ignore]
from triton.compiler import ASTSource  # type: ignore[import-untyped, import-not-found, unused-ignore]

SIGNATURE = {
    "x_ptr": "*fp32",
    "y_ptr": "*fp32",
    "out_ptr": "*fp32",
    "n": "i32",
    "BLOCK": "constexpr",
}
BLOCK = 1024
CONSTEXPRS = {"BLOCK": BLOCK}


@triton.jit  # type: ignore[untyped-decorator, misc, unused-ignore]
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
    """``out[i] = x[i] + y[i]`` for ``i < n``."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def ast_source() -> object:
    """The kernel as the installed Triton's ``ASTSource``, for an ahead-of-time
    ``triton.compile``. Its ``__init__`` says which form it takes (read from each
    release's ``compiler/compiler.py``): ``constexprs`` by name, with the constexpr in
    the signature (3.3 and newer), or ``constants`` by name, without it (3.0-3.2)."""
    if "constexprs" in ASTSource.__init__.__code__.co_varnames:
        return ASTSource(add_kernel, SIGNATURE, constexprs=CONSTEXPRS)
    signature = {name: kind for name, kind in SIGNATURE.items() if kind != "constexpr"}
    return ASTSource(add_kernel, signature, constants=CONSTEXPRS)
