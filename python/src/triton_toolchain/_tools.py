"""Locators of the ptxas family: ``ptxas``, ``ptxas-blackwell``, ``cuobjdump``, ``nvdisasm``.

Search order (the steps of ``_layouts.layout_steps("bin", ...)``, first accepted wins):

1. Triton's bundled ``triton/backends/nvidia/bin/<name>`` (source ``triton-bundled``);
   for ``ptxas-blackwell`` its own ``ptxas-blackwell``, then the bundled ``ptxas``
   (Triton 3.4/3.5 bundle only ``ptxas``, which is 12.8 there);
2. ``torch/bin/<binary>`` (torch wheels carry ``ptxas``);
3. pip wheels: ``nvidia/cu13/bin``, ``nvidia/cuda_nvcc/bin``;
4. ``$CONDA_PREFIX/bin``, ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``;
5. ``/usr/local/cuda/bin``, then ``/opt/cuda*/bin`` and ``/usr/local/cuda-*/bin``,
   newest release first;
6. the absolute entries of ``PATH`` (empty and relative ones are reported as rejected,
   never used; issue triton-lang/triton#1618).

``ptxas-blackwell`` runs as a plain ``ptxas`` everywhere but in Triton's package.

Check (``check_tool``), for explicit settings, manifest entries and discovered files
alike: the file exists and is executable; it is not in a world-writable directory nor
world-writable itself (such a file is never run); its CUDA release is
``ctx.recorded_version`` when a manifest recorded one (then no process runs) or what
``<tool> --version`` prints (with ``_checks.VERSION_TIMEOUT_S``); and it can assemble
what Triton will ask of it (``ARCH_RULES``):

- ``ptxas`` must assemble ``sm_<arch>`` when ``arch < 100`` (Triton 3.9 runs it below
  sm_90, older releases below sm_100);
- ``ptxas-blackwell`` must always assemble ``sm_100a`` (CUDA 12.8 or newer: that is what
  it is for) and, when ``arch >= 90``, ``sm_<arch>a`` (Triton 3.9 runs it for sm_90);
- ``cuobjdump`` and ``nvdisasm`` only need to report a release.

``arch=None`` means the target GPU is not known: only the fixed requirements apply (so
``ptxas-blackwell`` still needs 12.8); resolve with the GPU's ``arch`` for the full check.

Example: ``search("ptxas", LOCATORS["ptxas"].steps, lambda p: check_tool("ptxas",
Host.current(), p, Context(arch=90)), Host.current())`` on a machine whose Triton lost
its bundled ptxas finds ``/usr/local/cuda/bin/ptxas`` and rejects a 11.4 one in
``CUDA_HOME`` with "release 11.4 cannot assemble sm_90a, needs 12.0 or newer (the
target GPU)".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ._catalog import BUNDLED_NAMES, TOOL_BINARIES, TOOLS, arch_problem, parse_release
from ._checks import file_problem, insecure_reason, tool_release
from ._host import Host
from ._layouts import layout_steps
from ._search import Context, Locator, Step, Verdict


@dataclass(frozen=True)
class ArchRule:
    """What a tool must be able to assemble: ``always`` whatever the target, and the
    target ``sm_<arch>`` itself when ``targets_from <= arch < targets_below``."""

    always: tuple[int, ...] = ()
    targets_from: int | None = None
    targets_below: int | None = None
    why: str = ""

    def applies_to(self, arch: int | None) -> bool:
        if arch is None or self.targets_from is None:
            return False
        return arch >= self.targets_from and (
            self.targets_below is None or arch < self.targets_below
        )


ARCH_RULES: dict[str, ArchRule] = {
    "ptxas": ArchRule(targets_from=0, targets_below=100),
    "ptxas-blackwell": ArchRule(
        always=(100,), targets_from=90, why="Triton runs ptxas-blackwell for sm_100 and newer"
    ),
    "cuobjdump": ArchRule(),
    "nvdisasm": ArchRule(),
}


def release_problem(component: str, release: str, arch: int | None) -> str | None:
    """Why a ``component`` of CUDA ``release`` cannot serve target ``arch``, or ``None``.

    >>> release_problem("ptxas", "11.4", 90)
    'release 11.4 cannot assemble sm_90a, needs 12.0 or newer (the target GPU)'
    """
    if parse_release(release) is None:
        return f"version {release!r} is not a CUDA release such as 12.8"
    rule = ARCH_RULES[component]
    for fixed in rule.always:
        problem = arch_problem(fixed, release)
        if problem:
            return f"{problem} ({rule.why})"
    if arch is not None and rule.applies_to(arch):
        problem = arch_problem(arch, release)
        if problem:
            return f"{problem} (the target GPU)"
    return None


def check_tool(component: str, host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge ``path`` as ``component`` (see the module docstring); runs at most one
    ``--version``, and none when ``ctx.recorded_version`` is set."""
    problem = file_problem(path, executable=True) or insecure_reason(path)
    if problem:
        return Verdict(problem=problem)
    release = ctx.recorded_version
    if release is None:
        release, problem = tool_release(path, cache=host.output_cache)
        if release is None:
            return Verdict(problem=problem)
    return Verdict(release, release_problem(component, release, ctx.arch))


def tool_steps(component: str) -> tuple[Step, ...]:
    """The discovery steps of ``component``, in order (see the module docstring)."""
    binary = TOOL_BINARIES[component]
    bundled = tuple(dict.fromkeys((BUNDLED_NAMES[component], binary)))
    return layout_steps("bin", (binary,), bundled=bundled)


LOCATORS: dict[str, Locator] = {
    name: Locator(steps=tool_steps(name), check=partial(check_tool, name)) for name in TOOLS
}
