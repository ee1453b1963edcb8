"""Locators of the header directories and ``libdevice``: ``python-headers``,
``cuda-headers``, ``cuda-crt-headers``, ``libdevice``.

Every check here reads files only: no process, no pyelftools. A header or libdevice in
(or resolving into) a world-writable directory, or itself world-writable, is refused
(``_trust``): it is compiled into the launcher or linked into kernels.

``python-headers``. Search order: ``host.include_dir`` (``sysconfig``, Debian's
``posix_local`` already mapped by ``_host``), then ``<sys.base_prefix>/include/pythonX.Y``
(the base interpreter of a venv), then the directories the distribution's
``python-X.Y-embed.pc`` / ``python-X.Y.pc`` / ``python3-embed.pc`` / ``python3.pc``
name (``_pkgconfig``: read, never run). Check: ``Python.h`` is there, and ``patchlevel.h``'s
``PY_MAJOR_VERSION``/``PY_MINOR_VERSION`` are this interpreter's (a manifest written for
another Python is rejected naming both); the version is ``PY_VERSION`` (``"3.12.3"``).
When ``Python.h`` is missing the reason names it, the directory and the package that
provides it on this distribution (``python_headers_fix``, from ``/etc/os-release``).

``cuda-headers`` (a directory holding ``cuda.h``), ``cuda-crt-headers`` (one holding
``crt/host_config.h``, optional) and ``libdevice`` (``libdevice.10.bc``). Search order
(``_layouts``): Triton's bundled ``backends/nvidia/include`` (``lib`` for libdevice),
pip wheels (``nvidia/cu13/include``, ``nvidia/cuda_runtime/include`` for ``cuda.h``,
``nvidia/cuda_nvcc/include`` for ``crt/``, ``nvidia/*/nvvm/libdevice``), then
``$CONDA_PREFIX``, ``$CUDA_HOME``, ``$CUDA_PATH``, ``/usr/local/cuda``, ``/opt/cuda*`` and
``/usr/local/cuda-*`` (newest first), each as ``include`` and
``targets/<x86_64-linux|sbsa-linux|...>/include`` (``nvvm/libdevice`` for libdevice);
for ``cuda.h`` last, the directory NVIDIA's ``cuda-X.Y.pc`` / ``cudart-X.Y.pc`` name.
Checks: ``cuda.h`` defines ``CUDA_VERSION`` (``13000`` -> version ``"13.0"``; a recorded
version is taken as is); ``crt/host_config.h`` exists; libdevice is a complete LLVM
bitcode file (``_bitcode``), so a directory, a truncated copy or another file is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .._catalog import COMPONENT
from .._model import Choice
from . import _fs
from ._answers import recall, remember
from ._bitcode import bitcode_problem
from ._host import Host
from ._layouts import layout_steps
from ._pkgconfig import cuda_pc, python_pc
from ._search import Candidate, Check, Context, Locator, Step, Verdict, discovered

# ---------------------------------------------------------------- python-headers

# os-release ID (or an ID_LIKE word) -> (package providing Python.h, install command);
# ``{M}``/``{m}`` are the interpreter's major/minor version.
HEADER_PACKAGES: dict[str, tuple[str, str]] = {
    "debian": ("python{M}.{m}-dev", "apt install {pkg}"),
    "ubuntu": ("python{M}.{m}-dev", "apt install {pkg}"),
    "fedora": ("python{M}.{m}-devel", "dnf install {pkg}"),
    "rhel": ("python{M}.{m}-devel", "dnf install {pkg}"),
    "centos": ("python{M}.{m}-devel", "dnf install {pkg}"),
    "suse": ("python{M}{m}-devel", "zypper install {pkg}"),
    "opensuse": ("python{M}{m}-devel", "zypper install {pkg}"),
    "arch": ("python", "pacman -S {pkg}"),
    "alpine": ("python3-dev", "apk add {pkg}"),
}
# Where the distribution's own interpreters live: only there does its package help.
DISTRIBUTION_PREFIXES: tuple[Path, ...] = (Path("/usr"),)
NIXOS_ADVICE = (
    "on NixOS use a Python from nixpkgs (its headers are in the store) and let the "
    "triton-toolchain wrapper or a manifest's python-headers point at "
    "${{python3}}/include/python{M}.{m}"
)

_PY_DEFINE = r'(?m)^#define\s+(PY_MAJOR_VERSION|PY_MINOR_VERSION|PY_VERSION)\s+"?([\w.+]+)"?'


def os_release(host: Host) -> dict[str, str]:
    """``/etc/os-release`` (else ``/usr/lib/os-release``) under the root, as a dict."""
    for name in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = _fs.read_text(host.at(name), 1 << 16)
        except _fs.ReadProblem:
            continue
        pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
        return {k.strip(): v.strip().strip("\"'") for k, _, v in pairs}
    return {}


def _install_advice(host: Host) -> str:
    major, minor = host.python_version
    release = os_release(host)
    ids = [release.get("ID", ""), *release.get("ID_LIKE", "").split()]
    if "nixos" in ids:
        return NIXOS_ADVICE.format(M=major, m=minor)
    if host.base_prefix not in DISTRIBUTION_PREFIXES:
        return (
            f"this Python ({host.base_prefix}) is not the distribution's, so no system "
            f"package helps: reinstall it with its headers, or point a manifest's "
            f"python-headers at a directory holding Python.h for Python {major}.{minor}"
        )
    for distro in ids:
        if distro in HEADER_PACKAGES:
            template, command = HEADER_PACKAGES[distro]
            pkg = template.format(M=major, m=minor)
            return f"install {pkg} (`{command.format(pkg=pkg)}`)"
    name = release.get("PRETTY_NAME", "this distribution")
    return f"install the development package of Python {major}.{minor} on {name}"


def python_headers_fix(host: Host) -> str:
    """What to do when ``Python.h`` is missing, naming the directory and the package.

    Example: ``Python.h for Python 3.12 is missing from /usr/include/python3.12: install
    python3.12-dev (`apt install python3.12-dev`)``.
    """
    major, minor = host.python_version
    return (
        f"Python.h for Python {major}.{minor} is missing from {host.include_dir}: "
        f"{_install_advice(host)}"
    )


def sysconfig_include(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``sysconfig``'s include directory (``host.include_dir``)."""
    yield discovered("sysconfig", host.include_dir)


def base_prefix_include(host: Host, ctx: Context) -> Iterator[Candidate]:
    """The base interpreter's ``include/pythonX.Y`` (a venv has no headers of its own)."""
    major, minor = host.python_version
    yield discovered("sys.base_prefix", host.base_prefix / "include" / f"python{major}.{minor}")


def check_python_headers(host: Host, path: Path, ctx: Context) -> Verdict:
    """``path`` holds ``Python.h`` for this interpreter's major.minor version."""
    problem = _fs.file_problem(path, directory=True)
    if problem:
        return Verdict(problem=problem)
    if not _fs.is_file(path / "Python.h"):
        return Verdict(problem=f"Python.h is missing from {path}: {_install_advice(host)}")
    unsafe = _fs.untrusted(path / "Python.h")
    if unsafe:
        return Verdict(problem=unsafe)
    try:
        defines = dict(re.findall(_PY_DEFINE, _fs.read_text(path / "patchlevel.h", 1 << 20)))
    except _fs.ReadProblem as exc:
        return Verdict(problem=f"has Python.h but its patchlevel.h {exc}")
    found = (defines.get("PY_MAJOR_VERSION", "?"), defines.get("PY_MINOR_VERSION", "?"))
    version = defines.get("PY_VERSION", ".".join(found))
    want = tuple(str(v) for v in host.python_version)
    if found != want:
        return Verdict(
            version,
            f"headers are for Python {'.'.join(found)} ({version}), "
            f"but this interpreter is Python {'.'.join(want)}",
        )
    recorded = ctx.recorded_version
    if recorded is not None and tuple(recorded.split(".")[:2]) != want:
        return Verdict(
            version,
            f"recorded for Python {recorded}, but this interpreter is Python {'.'.join(want)}",
        )
    return Verdict(version)


# ---------------------------------------------------------------- cuda.h and crt/

# At most 9 digits: a damaged header's endless number is no version (and converting
# millions of digits takes Python 3.10 minutes, 3.11 refuses them).
_CUDA_VERSION = rb"(?m)^[ \t]*#[ \t]*define[ \t]+CUDA_VERSION[ \t]+([0-9]{1,9})(?![0-9])"


CUDA_H_LIMIT = 16 << 20
# cuda.h defines CUDA_VERSION near its top (CUDA 12 and 13: within its first 15 KB of
# more than 1 MB), so its head is searched first.
CUDA_H_HEAD = 1 << 16


def cuda_h_version(cuda_h: Path) -> str | None:
    """``"13.0"`` from ``#define CUDA_VERSION 13000`` in ``cuda_h``, else ``None``: the
    file's first definition. Its first ``CUDA_H_HEAD`` bytes are searched first, and the
    whole file only where they hold none, or one whose number runs up to the cut: a
    definition is one line, so none can start before the one found in the head."""
    try:
        head = _fs.read_regular(cuda_h, CUDA_H_LIMIT, first=CUDA_H_HEAD)
        found = re.search(_CUDA_VERSION, head)
        if len(head) == CUDA_H_HEAD and (found is None or found.end() == len(head)):
            found = re.search(_CUDA_VERSION, _fs.read_regular(cuda_h, CUDA_H_LIMIT))
    except _fs.ReadProblem:
        return None
    if found is None:
        return None
    number = int(found.group(1))
    return f"{number // 1000}.{number % 1000 // 10}"


def check_cuda_headers(host: Host, path: Path, ctx: Context) -> Verdict:
    """``path`` is a directory whose ``cuda.h`` defines ``CUDA_VERSION``."""
    problem = _fs.file_problem(path, directory=True)
    if problem:
        return Verdict(problem=problem)
    problem = _fs.file_problem(path / "cuda.h")
    if problem:
        return Verdict(
            problem=f"its cuda.h {problem}" if problem != "does not exist" else "has no cuda.h"
        )
    unsafe = _fs.untrusted(path / "cuda.h")
    if unsafe:
        return Verdict(problem=unsafe)
    found = None if ctx.recorded_version and not host.verify else cuda_h_version(path / "cuda.h")
    if found is None and ctx.recorded_version is None:
        return Verdict(problem="its cuda.h defines no CUDA_VERSION (not NVIDIA's cuda.h?)")
    if found and ctx.recorded_version and ctx.recorded_version != found:
        return Verdict(
            found, f"the manifest records CUDA {ctx.recorded_version}, cuda.h says {found}"
        )
    return Verdict(found or ctx.recorded_version)


CRT_MARKER = "crt/host_config.h"


def check_crt_headers(host: Host, path: Path, ctx: Context) -> Verdict:
    """``path`` is a directory holding ``crt/host_config.h``."""
    del host
    problem = _fs.file_problem(path, directory=True)
    if problem:
        return Verdict(problem=problem)
    if not _fs.is_file(path / CRT_MARKER):
        return Verdict(problem=f"has no {CRT_MARKER}")
    return Verdict(ctx.recorded_version, _fs.untrusted(path / CRT_MARKER))


# ---------------------------------------------------------------- libdevice

LIBDEVICE_LIMIT = 64 << 20  # libdevice.10.bc is about 0.5 MB

_BITCODE_CHECKED = ("(complete LLVM bitcode, v1)",)


def check_libdevice(host: Host, path: Path, ctx: Context) -> Verdict:
    """``path`` is a complete LLVM bitcode file (``libdevice.10.bc``). The whole file is
    read and walked once per file version; later processes reuse the verdict (see
    ``_outputs``)."""
    problem = _fs.file_problem(path) or _fs.untrusted(path)
    if problem:
        return Verdict(problem=problem)
    remembered = recall(host.answers, path, _BITCODE_CHECKED)
    if remembered is not None:
        return Verdict(ctx.recorded_version, None if remembered[0] else remembered[1])
    try:
        problem = bitcode_problem(_fs.read_regular(path, LIBDEVICE_LIMIT))
    except _fs.ReadProblem as exc:
        problem = str(exc)
    remember(host.answers, path, _BITCODE_CHECKED, problem is None, problem or "ok")
    return Verdict(ctx.recorded_version, problem)


# ---------------------------------------------------------------- locators

PYTHON_STEPS: tuple[Step, ...] = (sysconfig_include, base_prefix_include, python_pc)


def _python_headers_missing(host: Host, ctx: Context, choice: Choice) -> Choice:
    """A missing ``Python.h`` names the directory and this distribution's package."""
    if choice.found:
        return choice
    return choice._replace(notes=(*choice.notes, python_headers_fix(host)))


# Where the distribution's pkg-config files name a component's directory (``_pkgconfig``),
# after every other step.
PKG_CONFIG_STEPS: dict[str, tuple[Step, ...]] = {"cuda-headers": (cuda_pc,)}


def _layout_locator(name: str, check: Check) -> Locator:
    spec = COMPONENT[name]
    assert spec.area is not None  # noqa: S101  every header component has an area
    steps = layout_steps(spec.area, spec.names, bundled=spec.bundled)
    return Locator(steps=steps + PKG_CONFIG_STEPS.get(name, ()), check=check)


LOCATORS: dict[str, Locator] = {
    "python-headers": Locator(
        steps=PYTHON_STEPS, check=check_python_headers, finish=_python_headers_missing
    ),
    "cuda-headers": _layout_locator("cuda-headers", check_cuda_headers),
    "cuda-crt-headers": _layout_locator("cuda-crt-headers", check_crt_headers),
    "libdevice": _layout_locator("libdevice", check_libdevice),
}
