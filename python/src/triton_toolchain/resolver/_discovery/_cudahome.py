"""Locator of ``cuda-home``: the CUDA toolkit root that ``torch.utils.cpp_extension``
builds CUDA extensions with (``nvcc`` = ``<root>/bin/nvcc``, headers in
``<root>/include``, libraries in ``<root>/lib64``).

Explicit: ``CUDA_HOME``, else ``CUDA_PATH``, in torch's order. Search order (first
accepted wins), torch's own guess first: the toolkit of the first ``nvcc`` on the
absolute ``PATH`` entries; ``$CONDA_PREFIX``; ``/usr/local/cuda``; ``/opt/cuda*`` and
``/usr/local/cuda-*``, newest first; pip wheels' ``nvidia/cu13``.

Check: ``bin/nvcc`` is a regular executable that nobody but root and this user can
change, and says its release (``nvcc --version``); ``cuda.h`` (in ``include`` or
``targets/<triple>/include``) defines the same release; ``libcudart.so`` is in
``lib64``, ``lib`` or ``targets/<triple>/lib``. One release for all three, or the
extension would compile against one CUDA and link another.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .._catalog import parse_release
from . import _fs
from ._headers import cuda_h_version
from ._host import Host
from ._layouts import path_candidates, toolkit_roots
from ._search import Candidate, Context, Locator, Step, Verdict, discovered
from ._tools import tool_release


def nvcc_on_path(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The toolkit of each ``nvcc`` on ``PATH`` (``<root>/bin/nvcc``), in order."""
    for cand in path_candidates(host, "nvcc"):
        if cand.refused is None and _fs.lexists(cand.path):
            yield discovered("PATH", _fs.real_path(cand.path).parent.parent)


def toolkits(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``$CONDA_PREFIX``, ``/usr/local/cuda``, the versioned toolkits newest first."""
    for detail, root, refused in toolkit_roots(host):
        if detail not in ("CUDA_HOME", "CUDA_PATH"):
            yield Candidate(root, discovered(detail, root).source, refused)


def wheels(host: Host, ctx: Context) -> Iterator[Candidate]:
    """pip's CUDA 13 wheels: ``nvidia/cu13``."""
    for root in host.nvidia_dirs:
        yield discovered("nvidia/cu13", root / "cu13")


STEPS: tuple[Step, ...] = (nvcc_on_path, toolkits, wheels)


def _first(root: Path, host: Host, rels: tuple[str, ...], name: str) -> Path | None:
    for rel in rels:
        for sub in (
            [rel.format(target=t) for t in host.cuda_targets] if "{target}" in rel else [rel]
        ):
            if _fs.lexists(root / sub / name):
                return root / sub / name
    return None


def check_cuda_home(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge the toolkit root ``path`` (see the module docstring)."""
    problem = _fs.file_problem(path, directory=True)
    if problem:
        return Verdict(problem=problem)
    nvcc = path / "bin" / "nvcc"
    problem = _fs.file_problem(nvcc, executable=True) or _fs.untrusted(nvcc)
    if problem:
        return Verdict(problem=f"bin/nvcc {problem}")
    release = ctx.recorded_version
    if release is None or host.verify:
        release, problem = tool_release(nvcc, host)
        if release is None:
            return Verdict(problem=f"bin/nvcc: {problem}")
    header = _first(path, host, ("include", "targets/{target}/include"), "cuda.h")
    if header is None:
        return Verdict(release, "has no include/cuda.h")
    problem = _fs.untrusted(header)
    if problem:
        return Verdict(release, problem)
    headers = cuda_h_version(header)
    if headers is None or parse_release(headers) != parse_release(release):
        return Verdict(release, f"nvcc is CUDA {release} but {header} is CUDA {headers}")
    if _first(path, host, ("lib64", "lib", "targets/{target}/lib"), "libcudart.so") is None:
        return Verdict(release, "has no libcudart.so in lib64, lib or targets/<triple>/lib")
    return Verdict(release)


LOCATORS: dict[str, Locator] = {"cuda-home": Locator(steps=STEPS, check=check_cuda_home)}
