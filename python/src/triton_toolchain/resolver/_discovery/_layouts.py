"""Where CUDA's pieces sit on real machines, as data, and the discovery steps built from it.

Shared by every locator. An *area* is one kind of piece; each kind of root (Triton's
package, torch, pip wheels, conda and CUDA toolkits) keeps it in known subdirectories:

- Triton's package: ``backends/nvidia/bin``, ``.../include``, ``.../lib`` (libdevice);
- pip wheels, CUDA 13: ``nvidia/cu13/bin``, ``nvidia/cu13/include``,
  ``nvidia/cu13/nvvm/libdevice``;
- pip wheels, CUDA 12: ``nvidia/cuda_nvcc/bin``, ``nvidia/cuda_runtime/include``
  (``cuda.h``), ``nvidia/cuda_nvcc/include`` (``crt/``), ``nvidia/cuda_nvcc/nvvm/libdevice``;
- toolkits and conda: ``bin``, ``include`` and ``targets/<x86_64-linux|...>/include``,
  ``nvvm/libdevice``, and the driver's link stubs in ``lib/stubs``, ``lib64/stubs`` and
  ``targets/<...>/lib/stubs``

(read from the wheels' file lists: nvidia-cuda-nvcc 13.0, nvidia-cuda-runtime 13.0,
nvidia-cuda-crt 13.0, nvidia-nvvm 13.0, nvidia-cuda-cuobjdump 13.5,
nvidia-cuda-nvdisasm 13.5, nvidia-cuda-nvcc-cu12 12.9, nvidia-cuda-runtime-cu12 12.9.)

Search order of every area (a step yields nothing where its root is absent):
``triton-bundled``, ``torch`` (``bin`` only), ``nvidia/<wheel>``, ``CONDA_PREFIX``,
``CUDA_HOME``, ``CUDA_PATH``, ``/usr/local/cuda``, then ``/opt/cuda*`` and
``/usr/local/cuda-*`` together, newest release first, then (``bin`` only) ``PATH``.

Guarantees: fixed system places are taken under ``host.root``; values of variables are
used as they are, but a relative ``CONDA_PREFIX``/``CUDA_HOME``/``CUDA_PATH`` or an empty
or relative ``PATH`` entry is never used: it becomes a *refused* candidate, reported as
rejected when something is there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Literal

from .._model import Source, SourceKind
from . import _fs
from ._host import Host
from ._search import Candidate, Context, Step, discovered

LayoutArea = Literal["bin", "include", "crt", "libdevice", "stubs"]

# Subdirectory of ``triton/backends/nvidia`` per area.
BUNDLED_DIRS: dict[LayoutArea, str] = {
    "bin": "bin",
    "include": "include",
    "crt": "include",
    "libdevice": "lib",
}
# Subdirectories of the ``torch`` package per area (torch wheels carry ``bin/ptxas``).
TORCH_DIRS: dict[LayoutArea, tuple[str, ...]] = {"bin": ("bin",)}
# Subdirectories of each ``nvidia`` namespace directory per area, CUDA 13 wheels first.
WHEEL_DIRS: dict[LayoutArea, tuple[str, ...]] = {
    "bin": ("cu13/bin", "cuda_nvcc/bin"),
    "include": ("cu13/include", "cuda_runtime/include"),
    "crt": ("cu13/include", "cuda_nvcc/include"),
    "libdevice": ("cu13/nvvm/libdevice", "cuda_nvcc/nvvm/libdevice"),
    "stubs": ("cu13/lib/stubs", "cuda_runtime/lib/stubs"),
}
# Subdirectories of a toolkit (or conda environment) root per area; ``{target}`` is each
# of the host's CUDA target directories (``Machine.cuda_targets``).
TOOLKIT_DIRS: dict[LayoutArea, tuple[str, ...]] = {
    "bin": ("bin",),
    "include": ("include", "targets/{target}/include"),
    "crt": ("include", "targets/{target}/include"),
    "libdevice": ("nvvm/libdevice",),
    "stubs": ("lib/stubs", "lib64/stubs", "targets/{target}/lib/stubs"),
}
# Variables naming a toolkit root, in order of preference.
TOOLKIT_VARIABLES: tuple[str, ...] = ("CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH")
# Well-known toolkit roots under the host's root: the default symlink, then the
# versioned installs (Arch Linux uses /opt/cuda), sorted newest first together.
DEFAULT_TOOLKIT = "/usr/local/cuda"
VERSIONED_TOOLKITS: tuple[str, ...] = ("/opt/cuda*", "/usr/local/cuda-*")

_VERSION_IN_NAME = r"[0-9]+(?:\.[0-9]+)*"


def split_search_path(value: str) -> tuple[list[Path], list[tuple[str, str]]]:
    """Split a ``PATH``-style value into absolute directories and refused entries.

    >>> kept, refused = split_search_path("/usr/bin::bin")
    >>> kept, [entry for entry, _ in refused]
    ([PosixPath('/usr/bin')], ['', 'bin'])
    """
    kept: list[Path] = []
    refused: list[tuple[str, str]] = []
    for entry in value.split(os.pathsep):
        if not entry:
            refused.append((entry, "empty entry (means the current directory), ignored"))
        elif not os.path.isabs(entry):
            refused.append((entry, "relative entry, ignored"))
        else:
            kept.append(Path(entry))
    return kept, refused


def _named(name: str, fn: Callable[[Host, Context], Iterator[Candidate]]) -> Step:
    fn.__name__ = fn.__qualname__ = name
    return fn


def _subdirs(host: Host, rels: Iterable[str]) -> Iterator[str]:
    for rel in rels:
        if "{target}" in rel:
            yield from (rel.format(target=t) for t in host.cuda_targets)
        else:
            yield rel


def _release_key(path: Path) -> tuple[int, tuple[int, ...]]:
    found = re.search(_VERSION_IN_NAME, path.name)
    if found is None:
        return (0, ())
    return (1, tuple(int(p) for p in found.group().split(".")))


def versioned_toolkits(host: Host) -> list[tuple[str, Path]]:
    """``/opt/cuda*`` and ``/usr/local/cuda-*`` under the root as ``(pattern, dir)``,
    newest release first (``cuda-12.10`` before ``cuda-12.9``), unversioned last."""
    found = [(pattern, p) for pattern in VERSIONED_TOOLKITS for p in host.glob(pattern)]
    found = [(pattern, p) for pattern, p in found if _fs.is_dir(p)]
    return sorted(found, key=lambda item: _release_key(item[1]), reverse=True)


def toolkit_roots(host: Host) -> Iterator[tuple[str, Path, str | None]]:
    """Every CUDA toolkit root in order of preference, as ``(source detail, root,
    refused reason or None)``: ``CONDA_PREFIX``, ``CUDA_HOME``, ``CUDA_PATH`` (a relative
    value is refused), ``/usr/local/cuda``, then the versioned installs newest first."""
    for var in TOOLKIT_VARIABLES:
        value = host.environ.get(var)
        if value:
            refused = None if Path(value).is_absolute() else f"{var} is a relative path, ignored"
            yield var, Path(value), refused
    yield DEFAULT_TOOLKIT, host.at(DEFAULT_TOOLKIT), None
    for pattern, root in versioned_toolkits(host):
        yield pattern, root, None


def layout_steps(
    area: LayoutArea, names: tuple[str, ...], *, bundled: tuple[str, ...] = ()
) -> tuple[Step, ...]:
    """The discovery steps for files ``names`` (``("",)``: the directory itself) in
    ``area``; ``bundled`` are the names looked for in Triton's package (none: the area
    has no bundled copy)."""

    def triton_bundled(host: Host, ctx: Context) -> Iterator[Candidate]:
        if host.triton_dir is None:
            return
        base = host.triton_dir / "backends" / "nvidia" / BUNDLED_DIRS[area]
        source = Source(SourceKind.BUNDLED, str(host.triton_dir))
        yield from (Candidate(base / n, source) for n in bundled)

    def torch(host: Host, ctx: Context) -> Iterator[Candidate]:
        if host.torch_dir is None:
            return
        for rel in TORCH_DIRS.get(area, ()):
            yield from (discovered("torch", host.torch_dir / rel / n) for n in names)

    def wheels(host: Host, ctx: Context) -> Iterator[Candidate]:
        for root in host.nvidia_dirs:
            for rel in WHEEL_DIRS[area]:
                detail = "nvidia/" + rel.split("/")[0]
                yield from (discovered(detail, root / rel / n) for n in names)

    def toolkits(host: Host, ctx: Context) -> Iterator[Candidate]:
        for detail, root, refused in toolkit_roots(host):
            source = Source(SourceKind.DISCOVERED, detail)
            for rel in _subdirs(host, TOOLKIT_DIRS[area]):
                yield from (Candidate(root / rel / n, source, refused) for n in names)

    steps: list[Step] = []
    if bundled:
        steps.append(_named("triton_bundled", triton_bundled))
    if area in TORCH_DIRS:
        steps.append(_named("torch", torch))
    steps.append(_named("pip_wheels", wheels))
    steps.append(_named("toolkits", toolkits))
    if area == "bin":
        steps.extend(path_step(n) for n in names)
    return tuple(steps)


def search_path(host: Host) -> tuple[list[Path], list[tuple[str, str]]]:
    """``PATH`` split into absolute directories and refused ``(entry, reason)`` pairs.
    Unset ``PATH`` means the system default, ``/bin:/usr/bin`` under the root."""
    value = host.environ.get("PATH")
    if value is None:
        return [host.at(d) for d in os.defpath.split(os.pathsep) if d], []
    return split_search_path(value)


def path_candidates(host: Host, name: str) -> Iterator[Candidate]:
    """``name`` in every ``PATH`` entry, in order; empty and relative entries give
    refused candidates (``discovered:PATH``) that are never judged or used."""
    kept, refused = search_path(host)
    refused_by_entry = dict(refused)
    value = host.environ.get("PATH")
    entries = value.split(os.pathsep) if value is not None else [str(p) for p in kept]
    for entry in dict.fromkeys(entries):
        if entry in refused_by_entry:
            reason = f"PATH entry {entry!r}: {refused_by_entry[entry]}"
            yield Candidate(Path(entry) / name, Source(SourceKind.DISCOVERED, "PATH"), reason)
        else:
            yield discovered("PATH", Path(entry) / name)


def path_step(name: str) -> Step:
    """A step proposing ``name`` on ``PATH`` (see ``path_candidates``)."""

    def step(host: Host, ctx: Context) -> Iterator[Candidate]:
        yield from path_candidates(host, name)

    return _named(f"path_{name}", step)
