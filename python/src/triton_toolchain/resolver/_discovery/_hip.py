"""Locator of the AMD backend's HIP runtime, ``libamdhip64`` (the library Triton's AMD
launcher opens, ``backends/amd/driver.py`` ``_get_path_to_hip_runtime_dylib``).

Guarantees:

- The library is an ELF file of this interpreter's class and machine whose SONAME is
  ``libamdhip64.so*`` (pyelftools), where nobody but root and this user can change it
  (``_trust``); its ROCm release is what the library itself answers to
  ``hipDriverGetVersion`` in a child process (``_probe.hip_release``), the number
  Triton's launcher checks, never a guess from the file's name.
- The release fits the installed Triton (``TritonRelease.hip_major_min``: 3.9 refuses a
  HIP runtime older than 6 when its launcher is built) and the target
  (``_catalog.GFX_RULES``: ``gfx12xx`` needs ROCm 6.4); a discovered copy that does not
  is a rejection with the reason, and the next one is tried; a ``TRITON_LIBHIP_PATH``
  that does not is a ``SettingError``.
- A different ``libamdhip64`` already mapped into this process is refused: two HIP
  runtimes in one process cannot work (Triton 3.9 refuses to mix TheRock's with another).

Search order: Triton 3.9's own, then the layouts it misses:

1. already mapped into this process (``/proc/self/maps``);
2. Triton's ``backends/amd/lib``; torch's ``lib`` (PyTorch's ROCm wheels);
3. absolute ``LD_LIBRARY_PATH`` entries; ``$HIP_PATH/lib``; ``$ROCM_PATH/lib`` (a
   relative value is refused where it names a library: the program's directory decides);
4. the linker cache's ``libamdhip64.so`` entries, then its versioned ones (Triton takes
   only an entry ending in ``libamdhip64.so``, which a runtime-only package has none of);
5. ``/opt/rocm/lib``, then ``/opt/rocm-X.Y.Z/lib``, newest first (containers);
6. NixOS's ``/run/opengl-driver/lib`` (no ``/sbin/ldconfig`` there, which Triton runs);
7. ``$CONDA_PREFIX/lib``; the machine's multiarch directories (Debian's and Ubuntu's
   ``libamdhip64-5``/``-6`` packages), ``/usr/lib64``, ``/usr/lib``.

In each directory ``libamdhip64.so`` comes first, then ``libamdhip64.so.<N>`` newest
first. TheRock's ``rocm_sdk`` Python package is not imported here: where it is installed,
Triton takes its library first, and the shim leaves that to Triton (a note says so).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ...runtime import AMD_STEM, MAPS, loaded_drivers
from .._catalog import MACHINES, rocm_problem
from .._model import Choice, Source, SourceKind
from . import _fs
from ._driver import SYSTEM_DIRS, ld_library_dirs, linker_cache
from ._elf import machine_problem, read_elf
from ._host import Host
from ._ldcache import LdCache
from ._probe import hip_release
from ._search import Candidate, Context, Locator, Step, Verdict, discovered, key_of

NAME = AMD_STEM  # libamdhip64.so
_VERSIONED = re.compile(r"libamdhip64\.so\.([0-9]{1,3})")
_ROCM_DIR = re.compile(r"rocm-([0-9]{1,3}(?:\.[0-9]{1,5}){0,3})")


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def names_in(directory: Path) -> list[Path]:
    """``libamdhip64.so`` then ``libamdhip64.so.<N>`` (newest first) in ``directory``; the
    unversioned one alone where the directory cannot be listed."""
    versioned = [
        p for p in _fs.glob(directory / f"{NAME}.*") if _VERSIONED.fullmatch(p.name) is not None
    ]
    versioned.sort(key=lambda p: -int(p.name.rsplit(".", 1)[1]))
    return [directory / NAME, *versioned]


def mapped_copies(host: Host) -> list[str]:
    """The ``libamdhip64.so*`` files mapped into this process (``/proc/self/maps`` under
    the host's root)."""
    return loaded_drivers(str(host.at(MAPS)), (AMD_STEM,))


# --- the check ----------------------------------------------------------------------------


def check_hip(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge ``path`` as the HIP runtime (see the module docstring)."""
    problem = _fs.file_problem(path) or _fs.untrusted(path)
    if problem:
        return Verdict(problem=problem)
    info = read_elf(path, answers=host.answers)
    if isinstance(info, str):
        return Verdict(problem=info)
    problem = machine_problem(info, host)
    if problem is None and not (info.soname or "").startswith(NAME):
        problem = f"its SONAME is {info.soname!r}, not {NAME}.N: not a HIP runtime"
    if problem:
        return Verdict(problem=problem)
    other = [m for m in mapped_copies(host) if key_of(Path(m)) != key_of(path)]
    if other:
        return Verdict(
            problem=f"this process has already loaded another HIP runtime, {other[0]}: two "
            "in one process cannot work; restart it without that library or use that one"
        )
    release, problem = hip_release(path, answers=host.answers)
    if release is None:
        return Verdict(problem=problem)
    return Verdict(release, rocm_problem(release, host.triton, ctx.gfx))


def explicit_hip(host: Host, value: str) -> Path:
    """The file ``TRITON_LIBHIP_PATH`` names: an absolute path to a ``libamdhip64.so*``
    (3.9), or to a ``libamdhip64.so`` (3.6-3.8: ``TritonRelease.libhip_versioned``), as
    the installed Triton takes no other name."""
    path = Path(value)
    if not path.is_absolute():
        raise ValueError("is not an absolute path")
    if not path.name.startswith(NAME):
        raise ValueError(f"is not named {NAME}*, which Triton requires of it")
    if path.name != NAME and host.triton is not None and not host.triton.libhip_versioned:
        raise ValueError(
            f"does not end in {NAME}, which this Triton requires of it (3.9 and later take "
            f"{NAME}.N); name the {NAME} link beside it"
        )
    problem = _fs.file_problem(path)
    if problem:
        raise ValueError(problem)
    return path


def bundled_headers(host: Host) -> tuple[Path | None, str | None]:
    """The HIP headers Triton's AMD launcher compiles against, its wheel's
    ``backends/amd/include`` (3.9 ``backends/amd/driver.py``: ``include_dirs``), where
    it holds ``hip/hip_runtime.h`` that nobody but root and this user can change; else
    ``None`` and why."""
    if host.triton_dir is None:
        return None, "Triton is not installed"
    directory = host.triton_dir / "backends" / "amd" / "include"
    header = directory / "hip" / "hip_runtime.h"
    problem = _fs.file_problem(header) or _fs.untrusted(header)
    return (None, f"{header}: {problem}") if problem else (directory, None)


# --- discovery steps ----------------------------------------------------------------------


def loaded_in_process(host: Host, ctx: Context) -> Iterator[Candidate]:
    """A ``libamdhip64`` already mapped into this process (Triton takes it first)."""
    for path in mapped_copies(host):
        yield discovered("loaded-in-process", path)


def _in(detail: str, directory: Path) -> Iterator[Candidate]:
    for path in names_in(directory):
        yield discovered(detail, path)


def python_packages(host: Host, ctx: Context) -> Iterator[Candidate]:
    """Triton's ``backends/amd/lib``, then torch's ``lib`` (PyTorch's ROCm wheels)."""
    if host.triton_dir is not None:
        yield from _in("triton-bundled", host.triton_dir / "backends" / "amd" / "lib")
    if host.torch_dir is not None:
        yield from _in("torch", host.torch_dir / "lib")


def environment(host: Host, ctx: Context) -> Iterator[Candidate]:
    """Absolute ``LD_LIBRARY_PATH`` entries, then ``$HIP_PATH/lib`` and ``$ROCM_PATH/lib``
    (absolute values only)."""
    for entry in ld_library_dirs(host):
        yield from _in("LD_LIBRARY_PATH", entry)
    for variable in ("HIP_PATH", "ROCM_PATH"):
        value = host.environ.get(variable) or ""
        if os.path.isabs(value):
            yield from _in(variable, Path(value) / "lib")
        elif value:  # Triton would take it relative to wherever the program runs
            why = (
                f"{variable}={value!r} is relative (to wherever the program runs); give it absolute"
            )
            path = Path(os.path.abspath(value)) / "lib" / NAME
            yield Candidate(path, Source(SourceKind.DISCOVERED, variable), refused=why)


def ld_so_cache(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The linker cache's ``libamdhip64.so`` entries, then its ``libamdhip64.so.<N>``."""
    cache = linker_cache(host)
    if not isinstance(cache, LdCache):
        return
    entries = sorted(
        (e for e in cache.entries if e.name == NAME or _VERSIONED.fullmatch(e.name)),
        key=lambda e: e.name != NAME,
    )
    for entry in entries:
        if entry.matches(host.machine) is not False:
            yield discovered("ld.so.cache", entry.path)


def opt_rocm(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``/opt/rocm/lib``, then ``/opt/rocm-X.Y.Z/lib``, newest first."""
    yield from _in("opt-rocm", host.at("/opt/rocm/lib"))
    versioned = [d for d in host.glob("/opt/rocm-*") if _ROCM_DIR.fullmatch(d.name)]
    versioned.sort(key=lambda d: _numbers(d.name[5:]), reverse=True)
    for directory in versioned:
        yield from _in("opt-rocm", directory / "lib")


def nixos(host: Host, ctx: Context) -> Iterator[Candidate]:
    """NixOS's ``/run/opengl-driver/lib`` (``hardware.graphics`` with ROCm's runtime)."""
    yield from _in("nixos", host.at("/run/opengl-driver/lib"))


def system(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``$CONDA_PREFIX/lib``, the machine's multiarch directories, ``/usr/lib64``,
    ``/usr/lib``, ``/lib64``, ``/lib``."""
    conda = host.environ.get("CONDA_PREFIX") or ""
    if os.path.isabs(conda):
        yield from _in("conda", Path(conda) / "lib")
    facts = MACHINES.get(host.machine)
    dirs = [f"/usr/lib/{facts.multiarch}", f"/lib/{facts.multiarch}"] if facts else []
    for directory in (*dirs, *SYSTEM_DIRS):
        yield from _in("system", host.at(directory))


HIP_STEPS: tuple[Step, ...] = (
    loaded_in_process,
    python_packages,
    environment,
    ld_so_cache,
    opt_rocm,
    nixos,
    system,
)


def therock_note(host: Host) -> str | None:
    """What to say where TheRock's ``rocm_sdk`` package is installed: Triton 3.9 takes
    its library before any other (``rocm_sdk.find_libraries("amdhip64")``), and the
    shim, which does not import it, leaves that choice to Triton."""
    if host.triton is None or not host.triton.therock_first or not host.rocm_sdk_dirs:
        return None
    return (
        f"TheRock's rocm_sdk is installed ({host.rocm_sdk_dirs[0]}): Triton takes its "
        "libamdhip64 first and the shim leaves that to Triton (set TRITON_LIBHIP_PATH to "
        "choose another)"
    )


def finish_hip(host: Host, ctx: Context, choice: Choice) -> Choice:
    """TheRock's note (``therock_note``) on a discovered choice."""
    note = therock_note(host)
    if note is None or (
        choice.source is not None and choice.source.kind is not SourceKind.DISCOVERED
    ):
        return choice
    return choice._replace(notes=(*choice.notes, note))


LOCATORS: dict[str, Locator] = {
    "libamdhip64": Locator(
        steps=HIP_STEPS,
        check=check_hip,
        explicit=explicit_hip,
        finish=finish_hip,
        in_dir=names_in,
    ),
}
