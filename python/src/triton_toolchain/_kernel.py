"""The vector-add kernel that ``self_test`` (and the tests) compile. Importing this
module imports Triton; only ``_selftest`` does, on demand."""

from __future__ import annotations

# Triton ships no type information (and the type-check session does not install it).
import triton  # type: ignore[import-untyped, import-not-found, unused-ignore]
import triton.language as tl  # type: ignore[import-untyped, import-not-found, unused-ignore]

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
