"""Locators of the NVIDIA driver: ``libcuda`` (the ``libcuda.so.1`` loaded at run time)
and ``libcuda-link`` (the directory Triton's launcher is linked against). Both go
through the resolver's one cascade (explicit setting, manifest, discovery); the link
directory's first discovery step is the driver the cascade chose just before.

Guarantees:

- ``libcuda`` is never a CUDA toolkit link stub, is an ELF file of this interpreter's
  class and machine (read with pyelftools, never guessed from the path), lies where
  nobody but root and this user can change it (``_trust``), and, when the kernel
  module's version is known (``/proc/driver/nvidia/version``,
  ``/sys/module/nvidia/version``), has the same version (read from the real file's
  name, ``libcuda.so.580.159.04``; WSL's copies carry none and are accepted without one).
- A stub is a candidate whose directory, as given or resolved, is named ``stubs``, or
  that resolves to a file named plainly ``libcuda.so``: the driver installs its library
  as ``libcuda.so.<version>`` (WSL: ``libcuda.so.1``/``libcuda.so.1.1`` copies), and a
  toolkit's stub directory holds only ``libcuda.so``.
- ``TRITON_LIBCUDA_PATH`` (a directory, as Triton defines it) is checked like any
  candidate and a wrong one is a ``SettingError``; a directory holding a link stub is
  the link directory, and the run-time driver is then looked for as if it were unset.
  A CUDA ``compat`` copy newer than the kernel module is accepted only where the user
  put it: in ``TRITON_LIBCUDA_PATH`` or on ``LD_LIBRARY_PATH`` (NVIDIA's documented
  forward compatibility); elsewhere every version mismatch is rejected.
- A manifest's ``driver_dirs`` are checked for existence, stub layout, trust and
  version only: no pyelftools, no process (``doctor`` checks them in full).
- ``libcuda-link`` is the driver's directory when there is a driver; otherwise the
  directory of a link stub for this machine (SONAME ``libcuda.so.1``), with a note that
  kernels can be compiled and the launcher built but nothing launched.

Search order (discovery of ``libcuda``, ``DRIVER_STEPS``):

1. already loaded in this process (``Host.mapped_drivers``: ``/proc/self/maps`` under
   the host's root), but for the driver the shim itself loaded;
2. ``/run/opengl-driver/lib`` (NixOS);
3. ``/usr/lib/wsl/lib`` (WSL2);
4. absolute ``LD_LIBRARY_PATH`` entries (empty and relative entries are refused);
5. the linker cache ``/etc/ld.so.cache``, read directly;
6. ``/etc/ld.so.conf`` and its ``include`` files;
7. container directories ``/usr/local/nvidia/lib64``, ``/usr/local/nvidia/lib``;
8. ``/usr/lib/<multiarch>``, ``/lib/<multiarch>``, then the machine's own driver
   directories (``Machine.driver_dirs``: Jetson's ``.../nvidia`` and ``.../tegra``),
   then ``/usr/lib64``, ``/usr/lib``, ``/lib64``, ``/lib``.

Search order (``libcuda-link``): the chosen driver's directory; else the link stubs of
the toolkit layouts (``_layouts``, area ``stubs``): pip wheels, ``$CONDA_PREFIX``,
``$CUDA_HOME``, ``$CUDA_PATH``, ``/usr/local/cuda``, the versioned toolkits newest first,
each ``lib/stubs``, ``lib64/stubs`` and ``targets/<triple>/lib/stubs``.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path

from .._catalog import DRIVER_SONAME, MACHINES
from .._model import Choice, Rejection, Source, SourceKind
from . import _fs
from ._elf import machine_problem, read_elf
from ._host import Host
from ._layouts import layout_steps, split_search_path
from ._ldcache import LdCache, read_ld_cache
from ._search import (
    Candidate,
    Context,
    Locator,
    NotThisComponent,
    Step,
    Verdict,
    discovered,
    key_of,
)

STUB_FILE = "libcuda.so"
STUB_REASON = "CUDA toolkit link stub, not a driver"
SYSTEM_DIRS = ("/usr/lib64", "/usr/lib", "/lib64", "/lib")
CONTAINER_DIRS = ("/usr/local/nvidia/lib64", "/usr/local/nvidia/lib")

_FILE_VERSION = r"^libcuda\.so\.([0-9]{3,}\.[0-9]+(?:\.[0-9]+)?)$"
# Parts of at most 9 digits (what /proc says is read, not believed: see cuda.h's).
_KERNEL_VERSION = (
    r"Kernel Module(?:\s+for\s+\S+)?\s+([0-9]{1,9}\.[0-9]{1,9}(?:\.[0-9]{1,9})?)(?![0-9])"
)


# --- facts ------------------------------------------------------------------------------


def kernel_module_version(host: Host) -> str | None:
    """The loaded NVIDIA kernel module's version, ``"580.159.04"``, or ``None`` (no
    module, WSL). Reads ``/proc/driver/nvidia/version`` ("NVRM version: NVIDIA UNIX x86_64
    Kernel Module  580.159.04 ...", open modules say "Open Kernel Module for x86_64"),
    then ``/sys/module/nvidia/version``."""
    try:
        match = re.search(
            _KERNEL_VERSION, _fs.read_text(host.at("/proc/driver/nvidia/version"), 1 << 16)
        )
        if match:
            return match.group(1)
    except _fs.ReadProblem:
        pass
    try:
        text = _fs.read_text(host.at("/sys/module/nvidia/version"), 1 << 10).strip()
    except _fs.ReadProblem:
        return None
    return text if re.fullmatch(r"[0-9]{1,9}\.[0-9]{1,9}(?:\.[0-9]{1,9})?", text) else None


def file_version(path: Path) -> str | None:
    """The driver version in the real file's name: ``libcuda.so.1`` ->
    ``libcuda.so.580.159.04`` gives ``"580.159.04"``; WSL's ``libcuda.so.1.1`` gives ``None``."""
    match = re.match(_FILE_VERSION, key_of(path).name)
    return match.group(1) if match else None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _is_compat(path: Path) -> bool:
    return "compat" in path.parts or "compat" in key_of(path).parts


def stub_reason(path: Path) -> str | None:
    """``STUB_REASON`` when ``path`` is laid out as a toolkit link stub (see the module
    docstring), else ``None``."""
    real = key_of(path)
    if "stubs" in (path.parent.name, real.parent.name) or real.name == STUB_FILE:
        return STUB_REASON
    return None


def ld_library_dirs(host: Host) -> list[Path]:
    """The absolute ``LD_LIBRARY_PATH`` entries."""
    value = host.environ.get("LD_LIBRARY_PATH")
    return split_search_path(value)[0] if value else []


# --- checks -----------------------------------------------------------------------------


def check_driver(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge ``path`` as the run-time driver (see the module docstring). A manifest's
    candidate (``ctx.manifest``) is judged without reading its ELF header unless
    ``host.verify``."""
    problem = _fs.file_problem(path) or _fs.untrusted(path) or stub_reason(path)
    version = file_version(path)
    if problem:
        return Verdict(version, problem)
    kernel = kernel_module_version(host)
    note = None
    if kernel is not None and version is not None and version != kernel:
        compat = _is_compat(path)
        intended = ctx.named or path.parent in ld_library_dirs(host)
        if not (intended and compat and _version_key(version) > _version_key(kernel)):
            what = f"libcuda {version} (CUDA compat)" if compat else f"libcuda {version}"
            return Verdict(version, f"{what} does not match kernel module {kernel}")
        where = "as it was named" if ctx.named else "as LD_LIBRARY_PATH puts it first"
        note = f"CUDA forward-compatibility driver {version} over kernel module {kernel}, {where}"
    if ctx.manifest and not host.verify:
        return Verdict(version, note=note)
    info = read_elf(path, answers=host.answers)
    problem = info if isinstance(info, str) else machine_problem(info, host)
    return Verdict(version, problem, note)


def link_file(directory: Path) -> Path | None:
    """The file to link against in ``directory``: ``libcuda.so.1``, else a stub
    ``libcuda.so``; ``None`` when it holds neither."""
    return next(
        (p for p in (directory / DRIVER_SONAME, directory / STUB_FILE) if _fs.lexists(p)), None
    )


def check_link(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge the directory ``path`` as something to link the launcher against: it holds
    ``libcuda.so.1`` or a stub ``libcuda.so``, an ELF of this machine whose SONAME is
    ``libcuda.so.1`` (so the launcher needs what every driver installs), where nobody
    but root and this user can change it. Stubs are fine here. The chosen driver's own
    directory, or a manifest's entry (unless ``host.verify``), is not read again."""
    problem = _fs.file_problem(path, directory=True)
    if problem:
        return Verdict(problem=problem)
    target = link_file(path)
    if target is None:
        return Verdict(problem=f"holds neither {DRIVER_SONAME} nor {STUB_FILE}")
    problem = _fs.file_problem(target) or _fs.untrusted(target)
    if problem:
        return Verdict(problem=f"{target.name} {problem}")
    driver = ctx.chosen.get("libcuda")
    if (driver is not None and driver.path == str(target)) or (ctx.manifest and not host.verify):
        return Verdict()
    info = read_elf(target, answers=host.answers)
    if isinstance(info, str):
        return Verdict(problem=f"{target.name} {info}")
    problem = machine_problem(info, host)
    if problem is None and info.soname != DRIVER_SONAME:
        problem = (
            f"its SONAME is {info.soname!r}, not {DRIVER_SONAME!r}: the launcher would need a "
            f"library no NVIDIA driver installs"
        )
    return Verdict(problem=f"{target.name}: {problem}" if problem else None)


# --- explicit settings ------------------------------------------------------------------


def _setting_directory(value: str) -> Path:
    directory = Path(value)
    if not directory.is_absolute():
        raise ValueError("is not an absolute path")
    problem = _fs.file_problem(directory, directory=True)
    if problem == "is not a directory":
        hint = (
            f"; Triton takes its directory, {directory.parent}"
            if directory.name.startswith(STUB_FILE)
            else ""
        )
        raise ValueError(f"is a file, not a directory{hint}")
    if problem:
        raise ValueError(problem)
    return directory


def explicit_driver(host: Host, value: str) -> Path:
    """The driver file ``TRITON_LIBCUDA_PATH`` names: ``<dir>/libcuda.so.1`` (or a plain
    ``libcuda.so``); a stub directory says nothing about the driver (``NotThisComponent``)."""
    directory = _setting_directory(value)
    target = link_file(directory)
    if target is None:
        raise ValueError(f"holds neither {DRIVER_SONAME} nor {STUB_FILE}")
    if stub_reason(target):
        raise NotThisComponent(
            f"TRITON_LIBCUDA_PATH={value} holds a CUDA toolkit link stub: it is the link "
            f"directory, and the run-time driver is looked for elsewhere"
        )
    return target


def explicit_link(host: Host, value: str) -> Path:
    """The directory ``TRITON_LIBCUDA_PATH`` names."""
    return _setting_directory(value)


# --- discovery steps ----------------------------------------------------------------------


def loaded_in_process(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``libcuda.so*`` already mapped into this process (``Host.mapped_drivers``), but
    the driver the shim itself loaded (``Host.loaded_by_shim``)."""
    for path in host.mapped_drivers():
        if os.path.realpath(path) not in host.loaded_by_shim:
            yield discovered("loaded-in-process", path)


def nixos_driver_link(host: Host, ctx: Context) -> Iterator[Candidate]:
    """NixOS's ``/run/opengl-driver/lib`` (``addDriverRunpath.driverLink``)."""
    yield discovered("nixos", host.at("/run/opengl-driver/lib") / DRIVER_SONAME)


def wsl(host: Host, ctx: Context) -> Iterator[Candidate]:
    """WSL2's ``/usr/lib/wsl/lib``: copies, often absent from the linker cache."""
    yield discovered("wsl", host.at("/usr/lib/wsl/lib") / DRIVER_SONAME)


def ld_library_path(host: Host, ctx: Context) -> Iterator[Candidate]:
    """Absolute ``LD_LIBRARY_PATH`` entries, as given (refused ones are reported by
    ``finish_driver``)."""
    for entry in ld_library_dirs(host):
        yield discovered("LD_LIBRARY_PATH", entry / DRIVER_SONAME)


@functools.lru_cache(maxsize=8)
def _cache_at(path: Path, stamp: tuple[int, int, int, int]) -> LdCache | str | None:
    del stamp  # part of the key only: a rewritten cache is read again
    return read_ld_cache(path)


def linker_cache(host: Host) -> LdCache | str | None:
    """The host's ``/etc/ld.so.cache``, parsed once per version of the file (its status
    is recorded, so a record notices a rewritten cache)."""
    path = host.at("/etc/ld.so.cache")
    try:
        st = _fs.stat(path)
    except OSError:
        return read_ld_cache(path)
    return _cache_at(path, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def ld_so_cache(host: Host, ctx: Context) -> Iterator[Candidate]:
    """Every ``libcuda.so.1`` entry of the linker cache, any architecture, in cache order;
    the paths are used as the cache gives them."""
    cache = linker_cache(host)
    if isinstance(cache, LdCache):
        for entry in cache.named(DRIVER_SONAME):
            yield discovered("ld.so.cache", entry.path)


def _conf_dirs(host: Host, conf: Path, seen: set[Path], depth: int = 0) -> Iterator[Path]:
    try:
        text = _fs.read_text(conf, 1 << 20)
    except _fs.ReadProblem:
        return
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("hwcap"):
            continue
        if line.startswith("include") and line[7:8].isspace():
            for pattern in line[7:].split():
                where = host.at(pattern) if pattern.startswith("/") else conf.parent / pattern
                for inc in _fs.glob(where):
                    if inc not in seen and depth < 8:
                        seen.add(inc)
                        yield from _conf_dirs(host, inc, seen, depth + 1)
            continue
        directory = line.split("=", 1)[0].strip()
        if directory.startswith("/"):
            yield host.at(directory)


def ld_so_conf(host: Host, ctx: Context) -> Iterator[Candidate]:
    """Directories of ``/etc/ld.so.conf`` and its ``include`` globs, under the host's root
    (they describe that root's filesystem)."""
    conf = host.at("/etc/ld.so.conf")
    for directory in _conf_dirs(host, conf, {conf}):
        yield discovered("ld.so.conf", directory / DRIVER_SONAME)


def container_dirs(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The NVIDIA container toolkit's ``/usr/local/nvidia/lib64`` and ``/lib``."""
    for directory in CONTAINER_DIRS:
        yield discovered("container", host.at(directory) / DRIVER_SONAME)


def system_dirs(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The multiarch directories of ``host.machine`` and its driver directories (Jetson's),
    then ``/usr/lib64``, ``/usr/lib``, ``/lib64``, ``/lib``."""
    facts = MACHINES.get(host.machine)
    dirs = [f"/usr/lib/{facts.multiarch}", f"/lib/{facts.multiarch}"] if facts else []
    dirs += facts.driver_dirs if facts else ()
    for directory in (*dirs, *SYSTEM_DIRS):
        yield discovered("system", host.at(directory) / DRIVER_SONAME)


DRIVER_STEPS: tuple[Step, ...] = (
    loaded_in_process,
    nixos_driver_link,
    wsl,
    ld_library_path,
    ld_so_cache,
    ld_so_conf,
    container_dirs,
    system_dirs,
)


def chosen_driver_dir(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The directory of the driver chosen for ``libcuda``, under its source."""
    driver = ctx.chosen.get("libcuda")
    if driver is not None and driver.path is not None and driver.source is not None:
        yield Candidate(Path(driver.path).parent, driver.source)


LINK_STEPS: tuple[Step, ...] = layout_steps("stubs", ("",))


# --- what a load by bare name would get ---------------------------------------------------


def by_name_load(host: Host) -> tuple[str, str] | None:
    """What ``dlopen("libcuda.so.1")`` by bare name would load in a process started
    with this environment, as ``(path, where it was found)``, ``None`` for nothing: the
    dynamic loader's order, ``LD_LIBRARY_PATH`` (an empty entry is the current
    directory), the linker cache's entries for this machine, then the trusted system
    directories. (A library already loaded with that name comes first: ``activate()``
    loads the chosen driver for that reason.)"""
    value = host.environ.get("LD_LIBRARY_PATH") or ""
    entries = [e or "." for e in value.split(":")] if value else []
    for entry in entries:
        path = Path(os.path.abspath(entry) if entry != "." else os.getcwd()) / DRIVER_SONAME
        if _fs.is_file(path):
            return str(path), "LD_LIBRARY_PATH" if entry != "." else "the current directory"
    cache = linker_cache(host)
    if isinstance(cache, LdCache):
        for cached in cache.named(DRIVER_SONAME):
            if cached.matches(host.machine) is not False and _fs.is_file(Path(cached.path)):
                return cached.path, "the linker cache"
    facts = MACHINES.get(host.machine)
    default = [f"/lib/{facts.multiarch}", f"/usr/lib/{facts.multiarch}"] if facts else []
    for directory in (*default, "/lib", "/usr/lib"):
        path = host.at(directory) / DRIVER_SONAME
        if _fs.is_file(path):
            return str(path), "a system directory"
    return None


def by_name_note(host: Host, chosen: str | None) -> str | None:
    """What doctor says about a load by bare name, when it would not get ``chosen``."""
    found = by_name_load(host)
    if found is None:
        return None
    path, where = found
    if chosen is not None and key_of(Path(path)) == key_of(Path(chosen)):
        return None
    problem = _fs.untrusted(Path(path)) or stub_reason(Path(path))
    if where == "the current directory":
        problem = "an empty LD_LIBRARY_PATH entry means wherever the program runs; remove it"
    danger = f" ({problem})" if problem else ""
    if chosen is None:
        return (
            f"a library that loads libcuda.so.1 by name (torch's CUDA runtime does) would get "
            f"{path} from {where}{danger}; the shim loads no driver here, so it cannot stand "
            "in the way"
        )
    return (
        f"without the shim, a load of libcuda.so.1 by name would get {path} from "
        f"{where}{danger}; activation loads {chosen} first, so every library gets that one"
    )


# --- what discovery adds ----------------------------------------------------------------


def no_driver_note(link_dir: str | None = None) -> str:
    """The one wording of what a machine without a driver can do: the driver's note, and
    the link directory's (``link_dir``: the stub found)."""
    stub = f"the link stub in {link_dir}" if link_dir else "a CUDA toolkit's link stub"
    return (
        f"no NVIDIA driver is installed (none was found): kernels can be compiled and the "
        f"launcher built against {stub}, but nothing can be launched"
    )


def finish_driver(host: Host, ctx: Context, choice: Choice) -> Choice:
    """Discovery's account of the driver: refused ``LD_LIBRARY_PATH`` entries, the state
    of the linker cache, every other ``libcuda.so.1`` entry of it and why it is not the
    driver (stock Triton takes them all, triton-lang/triton#733), and a driver this
    process loaded already that is not usable. Nothing for a driver that was named
    (by ``TRITON_LIBCUDA_PATH`` or a manifest) and found."""
    if choice.source is not None and choice.source.kind is not SourceKind.DISCOVERED:
        return choice
    rejected = list(choice.rejected)
    searched = list(choice.searched)
    notes = list(choice.notes)
    value = host.environ.get("LD_LIBRARY_PATH")
    if value:
        source = Source(SourceKind.DISCOVERED, "LD_LIBRARY_PATH")
        rejected += [Rejection(e or "''", r, source) for e, r in split_search_path(value)[1]]
    cache_path = host.at("/etc/ld.so.cache")
    cache = linker_cache(host)
    if isinstance(cache, str):
        rejected.append(
            Rejection(str(cache_path), cache, Source(SourceKind.DISCOVERED, "ld.so.cache"))
        )
    elif cache is None or not cache.named(DRIVER_SONAME):
        what = "absent" if cache is None else f"{cache.count} entries, no {DRIVER_SONAME}"
        searched.append(f"discovered:ld.so.cache: {cache_path} ({what})")
    elif choice.found:
        judged = {key_of(Path(r.path)) for r in rejected if r.path.startswith("/")}
        judged.add(key_of(Path(choice.path or "")))
        for cand in ld_so_cache(host, ctx):
            key = key_of(cand.path)
            if key in judged or not _fs.lexists(cand.path):
                continue
            judged.add(key)
            problem = check_driver(host, cand.path, ctx).problem
            if problem:
                rejected.append(Rejection(str(cand.path), problem, cand.source))
    notes += [
        f"this process has already loaded {r.path} ({r.reason}); restart it without that "
        f"library before launching kernels"
        for r in rejected
        if r.source.detail == "loaded-in-process"
    ]
    if not choice.found:
        notes.append(no_driver_note())
    if host.root == Path("/"):
        by_name = by_name_note(host, choice.path)
        notes += [by_name] if by_name else []
    return choice._replace(rejected=tuple(rejected), searched=tuple(searched), notes=tuple(notes))


def finish_link(host: Host, ctx: Context, choice: Choice) -> Choice:
    """Say what the link directory means: a stub without a driver, or a driver directory
    without the unversioned ``libcuda.so`` that Tritons linking with ``-lcuda`` need."""
    if choice.path is None:
        return choice
    driver = ctx.chosen.get("libcuda")
    directory = Path(choice.path)
    if driver is None or driver.path is None:
        note = no_driver_note(choice.path)
    elif not _fs.lexists(directory / STUB_FILE):
        note = (
            f"{directory} has no unversioned {STUB_FILE}: Triton releases that link with "
            f"-lcuda need one (triton-lang/triton#8667)"
        )
    else:
        return choice
    return choice._replace(notes=(*choice.notes, note))


LOCATORS: dict[str, Locator] = {
    "libcuda": Locator(
        steps=DRIVER_STEPS, check=check_driver, explicit=explicit_driver, finish=finish_driver
    ),
    "libcuda-link": Locator(
        steps=LINK_STEPS,
        follows=(chosen_driver_dir,),
        check=check_link,
        explicit=explicit_link,
        finish=finish_link,
    ),
}
