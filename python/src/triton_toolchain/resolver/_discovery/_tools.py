"""Locators of the ptxas family: ``ptxas``, ``ptxas-blackwell``, ``cuobjdump``, ``nvdisasm``.

Search order (``_layouts.layout_steps("bin", ...)`` from the component's catalog row,
first accepted wins):

1. Triton's bundled ``triton/backends/nvidia/bin/<name>`` (source ``triton-bundled``);
   for ``ptxas-blackwell`` its own ``ptxas-blackwell``, then the bundled ``ptxas``
   (Triton 3.4/3.5 bundle only ``ptxas``, which is 12.8 there);
2. ``torch/bin/<binary>`` (torch wheels carry ``ptxas``);
3. pip wheels: ``nvidia/cu13/bin``, ``nvidia/cuda_nvcc/bin``;
4. the toolkits: ``$CONDA_PREFIX/bin``, ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``,
   ``/usr/local/cuda/bin``, then ``/opt/cuda*/bin`` and ``/usr/local/cuda-*/bin``,
   newest release first;
5. the absolute entries of ``PATH`` (empty and relative ones are reported as rejected,
   never used; issue triton-lang/triton#1618).

``ptxas-blackwell`` runs as a plain ``ptxas`` everywhere but in Triton's package.

Check (``check_tool``), for explicit settings, manifest entries and discovered files
alike: a regular executable file that nobody but root and this user can change
(``_trust``); its CUDA release is ``ctx.recorded_version`` when a manifest recorded one
(then no process runs, unless ``host.verify``, and then the two must agree) or what
``<tool> --version`` prints (``_run``); and it can assemble what Triton will ask of it
(``_catalog.must_assemble``: the targets the installed Triton release runs this
component for, and ``ptxas-blackwell``'s fixed sm_100a). With a target architecture
(``doctor --arch N``, ``resolve(arch=N)``; never on the ``import triton`` path, which
resolves for no architecture) and a tool Triton runs for it, the tool is also asked
(``fit_problem``): it must assemble the PTX ``.version`` this Triton release writes with
its release (``_catalog.triton_ptx_version``) for that target (``_probe.assemble``,
remembered per file); and a known-bad build for the target (``_catalog.ADVISORIES``)
is noted and taken only when nothing else fits.

Example: on a machine whose Triton lost its bundled ptxas, ``resolve(arch=90)`` takes
``/usr/local/cuda/bin/ptxas`` and rejects an 11.4 one in ``CUDA_HOME`` with "release
11.4 cannot assemble sm_90a, needs 12.0 or newer (the target GPU)".
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

from .._catalog import (
    COMPONENT,
    COMPONENTS,
    PTXAS_FAMILY,
    advised_archs,
    advisories_for,
    advisory_text,
    arch_problem,
    must_assemble,
    parse_release,
    ptxas_for,
    triton_ptx_version,
    triton_target,
)
from . import _fs
from ._host import Host, child_environ, triton_version
from ._layouts import layout_steps
from ._probe import assemble
from ._run import Question, ask_question
from ._search import Context, Locator, Verdict

_RELEASE = r"release ([0-9]+\.[0-9]+)"
TOOLS: tuple[str, ...] = tuple(c.name for c in COMPONENTS if c.area == "bin")


def version_question(host: Host, path: Path) -> Question:
    """What ``check_tool`` asks a tool: ``<tool> --version``."""
    del host
    return Question(path)


def tool_release(path: Path, host: Host) -> tuple[str | None, str | None]:
    """The CUDA release a ptxas-family tool reports (``"12.8"``), or ``(None, problem)``."""
    output, problem = ask_question(version_question(host, path), host.answers)
    if output is None:
        return None, problem
    return release_in(output)


def release_in(output: str) -> tuple[str | None, str | None]:
    """The CUDA release ``--version`` printed in ``output`` (any text), or ``(None,
    problem)``."""
    match = re.search(_RELEASE, output)
    if match is None:
        return None, "`--version` printed no CUDA release (not an NVIDIA CUDA tool?)"
    return match.group(1), None


def release_problem(component: str, release: str, host: Host, arch: int | None) -> str | None:
    """Why a ``component`` of CUDA ``release`` cannot serve target ``arch``, or ``None``.

    >>> release_problem("ptxas", "11.4", Host(), 90)
    'release 11.4 cannot assemble sm_90a, needs 12.0 or newer (the target GPU)'
    """
    if parse_release(release) is None:
        return f"version {release!r} is not a CUDA release such as 12.8"
    spec = COMPONENT[component]
    for target in must_assemble(spec, arch, host.triton):
        problem = arch_problem(target, release)
        if problem:
            why = "the target GPU" if target == arch else f"Triton runs {component} for it"
            return f"{problem} ({why})"
    return None


def fit_problem(component: str, path: Path, release: str, host: Host, arch: int) -> str | None:
    """Why the installed Triton cannot assemble ``sm_<arch>`` with ``component`` at
    ``path`` (CUDA ``release``), asked of the binary; ``None`` when it can, or when
    Triton does not run this component for ``arch`` or is not installed."""
    triton = triton_version(host.triton_dir)
    if triton is None or ptxas_for(arch, host.triton) != component:
        return None
    name = f"Triton {triton[0]}.{triton[1]}"
    ptx = triton_ptx_version(triton, release)
    if ptx is None:
        return f"{name} knows no PTX version for CUDA {release} (its ptx_get_version refuses it)"
    target = triton_target(triton, arch)
    problem = assemble(path, ptx, target, answers=host.answers, env=child_environ(host.environ))
    if problem is None:
        return None
    return (
        f"it cannot assemble PTX {ptx // 10}.{ptx % 10} for {target}, what {name} "
        f"writes with a CUDA {release} ptxas ({problem})"
    )


def advisory_note(component: str, release: str, host: Host, arch: int | None) -> str | None:
    """The known-bad builds ``component`` of ``release`` matches where the installed
    Triton runs it for ``sm_<arch>`` (``None``: any), as one note."""
    notes = []
    for advisory in advisories_for(component, release, arch, host.triton):
        archs = ", ".join(f"sm_{n}" for n in advised_archs(advisory, component, arch, host.triton))
        notes.append(f"advisory for {archs}: {advisory_text(advisory, release)}")
    return "; ".join(notes) or None


def check_tool(component: str, host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge ``path`` as ``component`` (see the module docstring); runs at most one
    ``--version``, and none when ``ctx.recorded_version`` is set (unless ``host.verify``)."""
    problem = _fs.file_problem(path, executable=True) or _fs.untrusted(path)
    if problem:
        return Verdict(problem=problem)
    release = ctx.recorded_version
    if release is None or host.verify:
        found, problem = tool_release(path, host)
        if found is None:
            return Verdict(problem=problem)
        if release is not None and parse_release(release) != parse_release(found):
            return Verdict(found, f"the manifest records release {release}, the tool says {found}")
        release = found
    problem = release_problem(component, release, host, ctx.arch)
    if problem is None and ctx.arch is not None and (host.verify or not ctx.manifest):
        problem = fit_problem(component, path, release, host, ctx.arch)
    note = advisory_note(component, release, host, ctx.arch) if component in PTXAS_FAMILY else None
    advised = note is not None and ctx.arch is not None and not ctx.named
    return Verdict(release, problem, note=note, advised_against=advised)


LOCATORS: dict[str, Locator] = {
    name: Locator(
        steps=layout_steps("bin", COMPONENT[name].names, bundled=COMPONENT[name].bundled),
        check=partial(check_tool, name),
        question=version_question,
    )
    for name in TOOLS
}
