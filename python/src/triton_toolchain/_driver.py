"""The NVIDIA driver library: ``libcuda`` (the ``libcuda.so.1`` loaded at run time) and
``libcuda-link`` (the directory Triton's launcher is linked against).

Guarantees:

- ``libcuda`` is never a CUDA toolkit link stub, is an ELF file of this interpreter's
  class and machine (read with pyelftools, never guessed from the path), never lies in
  or resolves into a world-writable directory, and, when the kernel module's version is
  known (``/proc/driver/nvidia/version``, ``/sys/module/nvidia/version``), has the same
  version (read from the real file's name, ``libcuda.so.580.159.04``; WSL's copies
  carry none and are accepted without one).
- A stub is a candidate whose directory, as given or resolved, is named ``stubs``, or
  that resolves to a file named plainly ``libcuda.so``: the driver installs its library
  as ``libcuda.so.<version>`` (WSL: ``libcuda.so.1``/``libcuda.so.1.1`` copies), and a
  toolkit's stub directory holds only ``libcuda.so``.
- ``TRITON_LIBCUDA_PATH`` (a directory, as Triton defines it) is checked like any
  candidate and raises ``SettingError`` when wrong; it is never replaced silently. A
  CUDA ``compat`` copy newer than the kernel module is accepted only from it (the
  intended forward-compatibility driver); discovery rejects every version mismatch.
  A toolkit stub directory in it (what the shim itself exports without a driver) is the
  link directory when discovery finds no driver, and an error naming the driver when
  it finds one.
- A manifest's ``driver_dirs`` are checked for existence, stub layout, safety and
  version only: no pyelftools, no process.
- ``libcuda-link`` is the driver's directory when there is a driver; otherwise the
  directory of a link stub of this machine, with a note saying that no driver is
  installed, so kernels can be compiled and the launcher built but not launched.

Search order (discovery of ``libcuda``, ``DRIVER_STEPS``):

1. already loaded in this process (``/proc/self/maps``; the real process only);
2. ``/run/opengl-driver/lib`` (NixOS);
3. ``/usr/lib/wsl/lib`` (WSL2);
4. absolute ``LD_LIBRARY_PATH`` entries (empty and relative entries are refused);
5. the linker cache ``/etc/ld.so.cache``, read directly;
6. ``/etc/ld.so.conf`` and its ``include`` files;
7. container directories ``/usr/local/nvidia/lib64``, ``/usr/local/nvidia/lib``;
8. ``/usr/lib/<multiarch>``, ``/lib/<multiarch>``, ``/usr/lib64``, ``/usr/lib``,
   ``/lib64``, ``/lib``.

Search order (a link stub when there is no driver, ``LINK_STUB_STEPS``):
``$CONDA_PREFIX/lib/stubs``, ``$CONDA_PREFIX/targets/<triple>/lib/stubs``; ``CUDA_HOME``,
``CUDA_PATH``, ``/usr/local/cuda``, ``/usr/local/cuda-*``, ``/opt/cuda*``, each
``lib64/stubs`` and ``targets/<triple>/lib/stubs``; pip wheels' ``nvidia/*/lib/stubs``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ._catalog import CUDA_TARGET_DIRS
from ._checks import file_problem, insecure_reason, split_search_path
from ._elf import machine_problem, read_elf
from ._errors import SettingError
from ._fs import glob, real_path
from ._host import Host
from ._ldcache import LdCache, read_ld_cache
from ._model import Choice, Rejection, Source, SourceKind
from ._search import Candidate, Check, Step, Verdict, discovered, search

DRIVER = "libcuda.so.1"
STUB = "libcuda.so"
VARIABLE = "TRITON_LIBCUDA_PATH"
STUB_REASON = "CUDA toolkit link stub, not a driver"

MULTIARCH: dict[str, str] = {
    "x86_64": "x86_64-linux-gnu",
    "i686": "i386-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "ppc64le": "powerpc64le-linux-gnu",
}

_FILE_VERSION = re.compile(r"^libcuda\.so\.(\d{3,}\.\d+(?:\.\d+)?)$")
_KERNEL_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")


# --- facts ------------------------------------------------------------------------------


def kernel_module_version(host: Host) -> str | None:
    """The loaded NVIDIA kernel module's version, ``"580.159.04"``, or ``None`` (no
    module, WSL). Reads ``/proc/driver/nvidia/version`` ("NVRM version: NVIDIA UNIX x86_64
    Kernel Module  580.159.04 ...", open modules say "Open Kernel Module for x86_64"),
    then ``/sys/module/nvidia/version``."""
    try:
        match = _KERNEL_VERSION.search(host.at("/proc/driver/nvidia/version").read_text())
        if match:
            return match.group(1)
    except (OSError, UnicodeError):
        pass
    try:
        text = host.at("/sys/module/nvidia/version").read_text().strip()
    except (OSError, UnicodeError):
        return None
    return text if re.fullmatch(r"\d+\.\d+(?:\.\d+)?", text) else None


def file_version(path: Path) -> str | None:
    """The driver version in the real file's name: ``libcuda.so.1`` ->
    ``libcuda.so.580.159.04`` gives ``"580.159.04"``; WSL's ``libcuda.so.1.1`` gives ``None``."""
    try:
        name = real_path(path).name
    except (OSError, RuntimeError):
        return None
    match = _FILE_VERSION.match(name)
    return match.group(1) if match else None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _is_compat(path: Path) -> bool:
    try:
        real = real_path(path)
    except (OSError, RuntimeError):
        real = path
    return "compat" in path.parts or "compat" in real.parts


def stub_reason(path: Path) -> str | None:
    """``STUB_REASON`` when ``path`` is laid out as a toolkit link stub (see the module
    docstring), else ``None``."""
    try:
        real = real_path(path)
    except (OSError, RuntimeError):
        real = path
    if "stubs" in (path.parent.name, real.parent.name) or real.name == STUB:
        return STUB_REASON
    return None


# --- checks -----------------------------------------------------------------------------


def _light_problem(path: Path, kernel: str | None, *, forward_compat: bool) -> str | None:
    """Every check except the ELF read: existence, safety, stub layout, version."""
    problem = file_problem(path) or insecure_reason(path) or stub_reason(path)
    if problem:
        return problem
    version = file_version(path)
    if kernel is None or version is None or version == kernel:
        return None
    compat = _is_compat(path)
    if forward_compat and compat and _version_key(version) > _version_key(kernel):
        return None
    what = f"libcuda {version} (CUDA compat)" if compat else f"libcuda {version}"
    return f"{what} does not match kernel module {kernel}"


def driver_verdict(
    host: Host, path: Path, kernel: str | None, *, forward_compat: bool = False, elf: bool = True
) -> Verdict:
    """Judge ``path`` as the run-time driver. ``elf=False`` skips the ELF read (the
    manifest path: no pyelftools); ``forward_compat`` accepts a newer ``compat`` copy."""
    problem = _light_problem(path, kernel, forward_compat=forward_compat)
    if problem is None and elf:
        info = read_elf(path, cache=host.output_cache)
        problem = info if isinstance(info, str) else machine_problem(info, host)
    return Verdict(file_version(path), problem)


def link_verdict(host: Host, path: Path) -> Verdict:
    """Judge ``path`` (a ``libcuda.so`` stub or driver) as something to link against: an
    ELF of this machine outside world-writable directories. Stubs are fine here."""
    problem = file_problem(path) or insecure_reason(path)
    if problem is None:
        info = read_elf(path, cache=host.output_cache)
        problem = info if isinstance(info, str) else machine_problem(info, host)
    return Verdict(None, problem)


# --- discovery steps ----------------------------------------------------------------------


def loaded_drivers() -> list[str]:
    """Paths of the ``libcuda.so*`` files mapped into this process, from
    ``/proc/self/maps``, in the order they appear."""
    try:
        lines = Path("/proc/self/maps").read_text(errors="replace").splitlines()
    except OSError:
        return []
    found: dict[str, None] = {}
    for line in lines:
        fields = line.split(None, 5)
        path = fields[5] if len(fields) == 6 else ""
        if Path(path).name.startswith("libcuda.so"):
            found[path] = None
    return list(found)


def loaded_in_process(host: Host) -> Iterator[Candidate]:
    """``libcuda.so*`` already mapped into this process (only when ``host.root`` is ``/``:
    another root is not this process)."""
    if host.root != Path("/"):
        return
    for path in loaded_drivers():
        yield discovered("loaded-in-process", path)


def nixos_driver_link(host: Host) -> Iterator[Candidate]:
    """NixOS's ``/run/opengl-driver/lib`` (``addDriverRunpath.driverLink``)."""
    yield discovered("nixos", host.at("/run/opengl-driver/lib") / DRIVER)


def wsl(host: Host) -> Iterator[Candidate]:
    """WSL2's ``/usr/lib/wsl/lib``: copies, often absent from the linker cache."""
    yield discovered("wsl", host.at("/usr/lib/wsl/lib") / DRIVER)


def ld_library_path(host: Host) -> Iterator[Candidate]:
    """Absolute ``LD_LIBRARY_PATH`` entries, as given (refused ones: ``refused_entries``)."""
    value = host.environ.get("LD_LIBRARY_PATH")
    if not value:  # unset or empty: ld.so uses no entry
        return
    for entry in split_search_path(value)[0]:
        yield discovered("LD_LIBRARY_PATH", entry / DRIVER)


@functools.lru_cache(maxsize=8)
def _cache_at(path: Path, stamp: tuple[int, int, int]) -> LdCache | str | None:
    del stamp  # part of the key only: a rewritten cache is read again
    return read_ld_cache(path)


def linker_cache(host: Host) -> LdCache | str | None:
    """The host's ``/etc/ld.so.cache`` (read once per version of the file)."""
    path = host.at("/etc/ld.so.cache")
    try:
        st = path.stat()
    except OSError:
        return read_ld_cache(path)
    return _cache_at(path, (st.st_ino, st.st_size, st.st_mtime_ns))


def ld_so_cache(host: Host) -> Iterator[Candidate]:
    """Every ``libcuda.so.1`` entry of the linker cache, any architecture, in cache order;
    the paths are used as the cache gives them."""
    cache = linker_cache(host)
    if isinstance(cache, LdCache):
        for entry in cache.named(DRIVER):
            yield discovered("ld.so.cache", entry.path)


def _conf_dirs(host: Host, conf: Path, seen: set[Path], depth: int = 0) -> Iterator[Path]:
    try:
        text = conf.read_text(errors="replace")
    except OSError:
        return
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("hwcap"):
            continue
        if line.startswith("include") and line[7:8].isspace():
            for pattern in line[7:].split():
                found = (
                    host.glob(pattern) if pattern.startswith("/") else glob(conf.parent, pattern)
                )
                for inc in found:
                    if inc not in seen and depth < 8:
                        seen.add(inc)
                        yield from _conf_dirs(host, inc, seen, depth + 1)
            continue
        directory = line.split("=", 1)[0].strip()
        if directory.startswith("/"):
            yield host.at(directory)


def ld_so_conf(host: Host) -> Iterator[Candidate]:
    """Directories of ``/etc/ld.so.conf`` and its ``include`` globs, under the host's root
    (they describe that root's filesystem)."""
    conf = host.at("/etc/ld.so.conf")
    for directory in _conf_dirs(host, conf, {conf}):
        yield discovered("ld.so.conf", directory / DRIVER)


def container_dirs(host: Host) -> Iterator[Candidate]:
    """The NVIDIA container toolkit's ``/usr/local/nvidia/lib64`` and ``/lib``."""
    for directory in ("/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"):
        yield discovered("container", host.at(directory) / DRIVER)


def system_dirs(host: Host) -> Iterator[Candidate]:
    """The multiarch directories of ``host.machine``, then ``/usr/lib64``, ``/usr/lib``,
    ``/lib64``, ``/lib``."""
    triple = MULTIARCH.get(host.machine)
    dirs = [f"/usr/lib/{triple}", f"/lib/{triple}"] if triple else []
    for directory in (*dirs, "/usr/lib64", "/usr/lib", "/lib64", "/lib"):
        yield discovered("system", host.at(directory) / DRIVER)


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


def _stub_files(detail: str, prefix: Path, subdirs: Iterable[str]) -> Iterator[Candidate]:
    for sub in subdirs:
        yield discovered(detail, prefix / sub / STUB)


def conda_stubs(host: Host) -> Iterator[Candidate]:
    """``$CONDA_PREFIX/lib/stubs`` and ``$CONDA_PREFIX/targets/<triple>/lib/stubs``."""
    prefix = host.environ.get("CONDA_PREFIX", "")
    if Path(prefix).is_absolute():
        targets = [f"targets/{t}/lib/stubs" for t in CUDA_TARGET_DIRS.get(host.machine, ())]
        yield from _stub_files("CONDA_PREFIX", Path(prefix), ["lib/stubs", *targets])


def toolkit_stubs(host: Host) -> Iterator[Candidate]:
    """``lib64/stubs`` and ``targets/<triple>/lib/stubs`` of ``CUDA_HOME``, ``CUDA_PATH``,
    ``/usr/local/cuda``, ``/usr/local/cuda-*``, ``/opt/cuda*``."""
    targets = CUDA_TARGET_DIRS.get(host.machine, ())
    subdirs = ["lib64/stubs", *(f"targets/{t}/lib/stubs" for t in targets)]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        value = host.environ.get(var, "")
        if Path(value).is_absolute():
            yield from _stub_files(var, Path(value), subdirs)
    roots = (host.at("/usr/local/cuda"), *host.glob("/usr/local/cuda-*"), *host.glob("/opt/cuda*"))
    for root in roots:
        yield from _stub_files("cuda-toolkit", root, subdirs)


def wheel_stubs(host: Host) -> Iterator[Candidate]:
    """``nvidia/<package>/lib/stubs/libcuda.so`` in pip's CUDA wheels, where one ships it."""
    for nvidia in host.nvidia_dirs:
        for stub in glob(nvidia, f"*/lib/stubs/{STUB}"):
            yield discovered("pip-wheel", stub)


LINK_STUB_STEPS: tuple[Step, ...] = (conda_stubs, toolkit_stubs, wheel_stubs)


# --- resolution -------------------------------------------------------------------------


def no_driver_note(link_dir: str) -> str:
    return (
        f"no NVIDIA driver is installed (none was found): kernels can be compiled and the "
        f"launcher built against the link stub in {link_dir}, but nothing can be launched"
    )


def _setting_error(value: str, why: str) -> SettingError:
    return SettingError(
        f"{VARIABLE}={value!r}: {why}. {VARIABLE} must name the directory holding the NVIDIA "
        f"driver's {DRIVER} (e.g. /usr/lib/x86_64-linux-gnu); fix it, or unset it to let "
        f"triton-toolchain find the driver (and, without one, a link stub) itself"
    )


def _from_explicit(host: Host, value: str, kernel: str | None) -> tuple[Choice, Choice]:
    source = Source(SourceKind.ENV, VARIABLE)
    if not value:
        raise _setting_error(value, "is empty")
    if not Path(value).is_absolute():
        raise _setting_error(value, "is not an absolute path")
    directory = Path(value)
    if not os.path.exists(directory):
        raise _setting_error(value, "does not exist")
    if not os.path.isdir(directory):
        hint = ""
        if directory.name.startswith(STUB):
            hint = f"; Triton takes its directory, {directory.parent}"
        raise _setting_error(value, f"is a file, not a directory{hint}")
    present = [p for p in (directory / DRIVER, directory / STUB) if os.path.lexists(p)]
    if not present:
        raise _setting_error(value, f"holds neither {DRIVER} nor {STUB}")
    verdict = driver_verdict(host, present[0], kernel, forward_compat=True)
    if verdict.problem == STUB_REASON:
        return _explicit_stub(host, value, present[0], kernel)
    if verdict.problem:
        raise _setting_error(value, f"{present[0]}: {verdict.problem}")
    notes: tuple[str, ...] = ()
    if kernel and verdict.version and verdict.version != kernel:
        notes = (
            f"CUDA forward-compatibility driver {verdict.version} over kernel module {kernel}, "
            f"as {VARIABLE} asks",
        )
    searched = (f"{source}: {present[0]}",)
    return (
        Choice("libcuda", str(present[0]), verdict.version, source, (), searched, notes),
        Choice("libcuda-link", value, None, source, (), searched),
    )


def _explicit_stub(host: Host, value: str, stub: Path, kernel: str | None) -> tuple[Choice, Choice]:
    """``TRITON_LIBCUDA_PATH`` names a toolkit stub directory: what ``toolchain_env``
    itself exports on a machine without a driver (so ``triton-toolchain run`` and
    ``env`` hand it to every child). Taken as the link directory when discovery finds no
    driver either; on a machine with a driver it is a mistake (``cuInit`` fails with a
    stub) and raises ``SettingError`` naming the driver."""
    problem = link_verdict(host, stub).problem
    if problem:
        raise _setting_error(value, f"{stub}: {problem}")
    libcuda = _discover(host, kernel, None)
    if libcuda.path is not None:
        raise _setting_error(
            value, f"{stub}: {STUB_REASON}, and this machine's driver is {libcuda.path}"
        )
    source = Source(SourceKind.ENV, VARIABLE)
    note = no_driver_note(value)
    link = Choice("libcuda-link", value, None, source, (), (f"{source}: {stub}",), (note,))
    return dataclasses.replace(libcuda, notes=(*libcuda.notes, note)), link


def _refused_search_entries(host: Host) -> list[Rejection]:
    value = host.environ.get("LD_LIBRARY_PATH")
    if not value:
        return []
    _, refused = split_search_path(value)
    source = Source(SourceKind.DISCOVERED, "LD_LIBRARY_PATH")
    return [Rejection(entry or "''", reason, source) for entry, reason in refused]


def _key(path: Path) -> Path:
    try:
        return real_path(path)
    except (OSError, RuntimeError):  # a symlink loop
        return path


def _survey_cache(host: Host, choice: Choice, check: Check) -> tuple[Rejection, ...]:
    """Judge the linker-cache entries the search did not reach. Stock Triton takes every
    one of them (triton-lang/triton#733), so the report says why each other copy (32-bit,
    stale, compat) is not the driver."""
    judged = {_key(Path(r.path)) for r in choice.rejected if r.path.startswith("/")}
    if choice.path:
        judged.add(_key(Path(choice.path)))
    extra = []
    for cand in ld_so_cache(host):
        key = _key(cand.path)
        if key in judged or not os.path.lexists(cand.path):
            continue
        judged.add(key)
        problem = check(cand.path).problem
        if problem:
            extra.append(Rejection(str(cand.path), problem, cand.source))
    return tuple(extra)


def _discover(host: Host, kernel: str | None, history: Choice | None) -> Choice:
    """Run ``DRIVER_STEPS``, carrying ``history`` (the manifest's candidates) along."""
    rejected = [*(history.rejected if history else ()), *_refused_search_entries(host)]
    searched = list(history.searched if history else ())
    cache_path = host.at("/etc/ld.so.cache")
    cache = linker_cache(host)
    if isinstance(cache, str):
        source = Source(SourceKind.DISCOVERED, "ld.so.cache")
        rejected.append(Rejection(str(cache_path), cache, source))

    # A newer CUDA "compat" driver is the intended forward-compatibility driver when the
    # user put its directory on LD_LIBRARY_PATH, as NVIDIA documents; elsewhere it is not.
    chosen_dirs = set(split_search_path(host.environ.get("LD_LIBRARY_PATH", ""))[0])

    def check(path: Path) -> Verdict:
        return driver_verdict(host, path, kernel, forward_compat=path.parent in chosen_dirs)

    choice = search("libcuda", DRIVER_STEPS, check, host, rejected=rejected, searched=searched)
    more_searched: tuple[str, ...] = ()
    more_rejected: tuple[Rejection, ...] = ()
    notes = [
        f"this process has already loaded {r.path} ({r.reason}); restart it without that "
        f"library before launching kernels"
        for r in choice.rejected
        if r.source.detail == "loaded-in-process"
    ]
    if cache is None or (isinstance(cache, LdCache) and not cache.named(DRIVER)):
        what = "absent" if cache is None else f"{len(cache.entries)} entries, no {DRIVER}"
        more_searched = (f"discovered:ld.so.cache: {cache_path} ({what})",)
    elif isinstance(cache, LdCache) and choice.found:
        more_rejected = _survey_cache(host, choice, check)
    return dataclasses.replace(
        choice,
        rejected=(*choice.rejected, *more_rejected),
        searched=(*choice.searched, *more_searched),
        notes=(*choice.notes, *notes),
    )


def _manifest_driver(
    host: Host, dirs: tuple[Path, ...], source: Source, kernel: str | None
) -> Choice:
    def step(_: Host) -> Iterator[Candidate]:
        for directory in dirs:
            yield Candidate(directory / DRIVER, source)

    def check(path: Path) -> Verdict:
        return driver_verdict(host, path, kernel, elf=False)

    return search("libcuda", (step,), check, host)


def _link_from_manifest(link: Path, source: Source) -> tuple[Choice | None, Rejection | None]:
    problem = file_problem(link, directory=True)
    if problem is None and not any((link / n).exists() for n in (DRIVER, STUB)):
        problem = f"holds neither {DRIVER} nor {STUB}"
    if problem is None:
        problem = insecure_reason(link / STUB if (link / STUB).exists() else link / DRIVER)
    if problem:
        return None, Rejection(str(link), problem, source)
    return Choice("libcuda-link", str(link), None, source, (), (f"{source}: {link}",)), None


def _link_for(
    host: Host, libcuda: Choice, *, discover: bool, rejected: tuple[Rejection, ...]
) -> tuple[Choice, Choice]:
    """The link directory following ``libcuda``: its directory, else a stub's."""
    if libcuda.path is not None:
        directory = Path(libcuda.path).parent
        notes: tuple[str, ...] = ()
        if not (directory / STUB).exists():
            notes = (
                f"{directory} has no unversioned {STUB}: Triton releases that link with "
                f"-lcuda need one (triton-lang/triton#8667)",
            )
        link = Choice("libcuda-link", str(directory), None, libcuda.source, rejected, (), notes)
        return libcuda, link
    if not discover:
        return libcuda, Choice("libcuda-link", None, None, None, rejected)

    def check(path: Path) -> Verdict:
        return link_verdict(host, path)

    stub = search("libcuda-link", LINK_STUB_STEPS, check, host, rejected=rejected)
    if stub.path is None:
        return libcuda, stub
    stub_dir = str(Path(stub.path).parent)
    note = no_driver_note(stub_dir)
    return (
        dataclasses.replace(libcuda, notes=(*libcuda.notes, note)),
        dataclasses.replace(stub, path=stub_dir, notes=(*stub.notes, note)),
    )


def resolve_driver(
    host: Host,
    *,
    explicit: str | None,
    manifest_dirs: tuple[Path, ...] = (),
    manifest_link: Path | None = None,
    manifest_source: Source | None = None,
    strict: bool = False,
) -> tuple[Choice, Choice]:
    """Resolve ``(libcuda, libcuda-link)``; see the module docstring for the guarantees.

    ``explicit`` is ``TRITON_LIBCUDA_PATH``'s value (``None``: unset); a wrong one raises
    ``SettingError``. ``manifest_dirs`` are a manifest's ``driver_dirs`` and
    ``manifest_link`` its ``libcuda-link``, reported under ``manifest_source``; with
    ``strict`` nothing is discovered.

    Example, on the reference GPU host::

        libcuda, link = resolve_driver(Host.current(), explicit=None)
        libcuda.path    # '/usr/local/nvidia/lib64/libcuda.so.1' (580.159.04)
        link.path       # '/usr/local/nvidia/lib64'
    """
    kernel = kernel_module_version(host)
    if explicit is not None:
        return _from_explicit(host, explicit, kernel)
    if manifest_source is None and not manifest_dirs and manifest_link is None:
        return _link_for(host, _discover(host, kernel, None), discover=True, rejected=())

    source = manifest_source or Source(SourceKind.MANIFEST, "manifest")
    link_choice, link_rejection = (
        (None, None) if manifest_link is None else _link_from_manifest(manifest_link, source)
    )
    link_rejected = (link_rejection,) if link_rejection else ()
    libcuda = _manifest_driver(host, manifest_dirs, source, kernel)
    if not libcuda.found:
        where = ", ".join(str(d) for d in manifest_dirs) or "none given"
        if strict:
            note = (
                f"the manifest is strict: its driver directories ({where}) hold no usable "
                f"driver, and discovery is off"
            )
            libcuda = dataclasses.replace(libcuda, notes=(note,))
        else:
            found = _discover(host, kernel, libcuda)
            outcome = (
                "used the host's driver found by discovery"
                if found.found
                else ("discovery found none either")
            )
            note = (
                f"the manifest's driver directories ({where}) hold no usable driver "
                f"(Nix on a distribution that is not NixOS?); {outcome}"
            )
            libcuda = dataclasses.replace(found, notes=(note, *found.notes))
    if link_choice is not None:
        return libcuda, link_choice
    return _link_for(host, libcuda, discover=not strict, rejected=link_rejected)
