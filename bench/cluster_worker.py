"""One worker of a ``torchrun`` job (``bench/cluster.py``, ``tests/test_cluster.py``,
``tests/gpu/cluster.sh``): ``torchrun --nproc-per-node N --standalone
bench/cluster_worker.py OUT_DIR``.

The shim activates as it does for users (the installed ``.pth`` hook, when ``torch``
starts importing), unless ``TRITON_TOOLCHAIN=off``. The worker imports torch and
Triton, joins the ``gloo`` process group (torchrun's environment: ``RANK``,
``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``), waits at a barrier, and writes
``OUT_DIR/rank-RANK.json``:

- ``ready``: the wall-clock time (``time.time()``) at which it left the barrier, that
  is when every worker had imported torch and Triton; ``imports``: the seconds its own
  ``import torch`` and ``import triton`` took;
- ``resolved``: whether this process ran the resolver (``triton_toolchain.resolver._resolve`` was
  imported), else it reused an activation record or the shim was off;
- ``mode``, ``plan``, ``applied``: those of ``triton_toolchain.activate()``, which hands
  back the activation made at ``import torch`` (a second activation with the same
  settings resolves nothing again): the choice this process got (mode ``off`` and no
  plan with the shim off);
- ``knobs``: the paths Triton's own knobs (3.4+) give after the import, as Triton will
  use them;
- ``environ``: the environment the worker started with (torchrun's, before the shim
  touched anything), ``pid``.

With ``TT_KERNEL=1`` it also launches a vector add on a GPU (``cuda:LOCAL_RANK`` modulo
the GPUs there are) before the barrier, compiled by Triton in this process, and reports
whether it matches torch's (``kernel_ok``).
"""

from __future__ import annotations

import os
import sys
import time

ENVIRON = dict(os.environ)
START = time.perf_counter()

import torch  # noqa: E402  timed: the shim activates here
import triton  # noqa: E402

IMPORTS = time.perf_counter() - START

import json  # noqa: E402
from typing import Any  # noqa: E402

import torch.distributed as dist  # noqa: E402

KNOBS = ("ptxas", "ptxas_blackwell", "cuobjdump", "nvdisasm")


def knobs() -> dict[str, str | None]:
    """What Triton's toolchain knobs resolve to now (none before 3.4, which has none)."""
    nvidia = getattr(getattr(triton, "knobs", None), "nvidia", None)
    if nvidia is None:
        return {}
    found: dict[str, str | None] = {}
    for name in KNOBS:
        try:
            found[name] = getattr(nvidia, name).path
        except Exception as exc:  # Triton's own error for a tool it cannot find: reported
            found[name] = f"error: {type(exc).__name__}: {exc}"
    return found


def kernel_ok() -> bool:
    """A vector add on this worker's GPU, compiled by Triton, compared with torch's."""
    import triton.language as tl  # noqa: PLC0415  after the timed imports (they are measured)

    @triton.jit
    def add(x, y, out, n, block: tl.constexpr):  # type: ignore[no-untyped-def]
        offsets = tl.program_id(0) * block + tl.arange(0, block)
        mask = offsets < n
        tl.store(out + offsets, tl.load(x + offsets, mask) + tl.load(y + offsets, mask), mask)

    device = f"cuda:{int(os.environ['LOCAL_RANK']) % torch.cuda.device_count()}"
    x, y = torch.rand(5000, device=device), torch.rand(5000, device=device)
    out = torch.full_like(x, float("nan"))
    add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), block=1024)
    return bool(torch.equal(out, x + y))


def main() -> None:
    resolved = "triton_toolchain.resolver._resolve" in sys.modules
    import triton_toolchain  # noqa: PLC0415  after noting whether the resolver had loaded

    activation = triton_toolchain.activate()
    report: dict[str, Any] = {
        "rank": int(os.environ["RANK"]),
        "pid": os.getpid(),
        "imports": IMPORTS,
        "resolved": resolved,
        "mode": activation.mode,
        "plan": activation.plan,
        "applied": activation.applied,
        "knobs": knobs(),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "environ": ENVIRON,
    }
    if os.environ.get("TT_KERNEL") == "1":
        report["kernel_ok"] = kernel_ok()
    dist.init_process_group("gloo")
    dist.barrier()
    report["ready"] = time.time()
    dist.destroy_process_group()
    with open(os.path.join(sys.argv[1], f"rank-{report['rank']}.json"), "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
