"""pkg-config's ``.pc`` files as a discovery step: where a distribution publishes them,
``python-3.X-embed.pc`` / ``python-3.X.pc`` / ``python3-embed.pc`` / ``python3.pc`` name
``Python.h``'s directory and NVIDIA's ``cuda-X.Y.pc`` / ``cudart-X.Y.pc`` (its Debian
and RPM packages) name ``cuda.h``'s. The files are read and parsed here; ``pkg-config``
is never run.

Search order: the absolute entries of ``PKG_CONFIG_PATH``, then ``PKG_CONFIG_LIBDIR``'s
where it is set, else pkg-config's default directories (``PC_DIRS``: the multiarch,
``lib64``, ``lib`` and ``share`` directories of ``/usr`` and ``/usr/local``); for
Python, ``<sys.base_prefix>/lib/pkgconfig`` first, and only files whose ``prefix`` is
this interpreter's. Each include directory of a file's ``Cflags`` is a candidate
reported as ``discovered:pkg-config:FILE``, and judged like any other.

A ``.pc`` file is hostile input: read only if it is a regular file that nobody else
could have planted (``_fs.untrusted``), up to ``PC_LIMIT`` bytes; ``${name}`` expanded
without recursion, at most ``EXPANSIONS`` substitutions and ``VALUE_LIMIT`` characters
per value; anything else (an unknown or circular variable, a value that grows without
bound) makes the file name no candidate, with the reason recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .._catalog import MACHINES
from .._model import Source, SourceKind
from . import _fs
from ._host import Host
from ._search import Candidate, Context

# pkg-config's default search directories, ``{multiarch}`` being Debian's triple.
PC_DIRS = (
    "/usr/local/lib/{multiarch}/pkgconfig",
    "/usr/local/lib/pkgconfig",
    "/usr/local/share/pkgconfig",
    "/usr/lib/{multiarch}/pkgconfig",
    "/usr/lib64/pkgconfig",
    "/usr/lib/pkgconfig",
    "/usr/share/pkgconfig",
)
PC_LIMIT = 64 << 10  # a real .pc file is under 2 KiB
EXPANSIONS = 64  # ${} substitutions per value
VALUE_LIMIT = 4096  # characters of an expanded value
_ASSIGN = r"^([A-Za-z0-9_.]+)\s*=\s*(.*)$"
_FIELD = r"^([A-Za-z0-9_.]+)\s*:\s*(.*)$"
_REFERENCE = r"\$\{([A-Za-z0-9_.]+)\}"


class PcProblem(Exception):
    """A ``.pc`` file that names nothing usable; the message says why."""


def _expand(value: str, variables: dict[str, str]) -> str:
    """``value`` with each ``${name}`` replaced by the already expanded variable (a
    variable may only use those defined before it, as pkg-config reads them: no
    recursion, no cycle); ``$$`` is a ``$``."""
    count = 0

    def substitute(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        if count > EXPANSIONS:
            raise PcProblem(f"more than {EXPANSIONS} ${{}} references in one value")
        name = match.group(1)
        if name not in variables:
            raise PcProblem(f"${{{name}}} is not defined before it is used")
        return variables[name]

    expanded = re.sub(_REFERENCE, substitute, value.replace("$$", "\0"))
    if len(expanded) > VALUE_LIMIT:
        raise PcProblem(f"a value expands to more than {VALUE_LIMIT} characters")
    return expanded.replace("\0", "$")


def parse(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """The expanded variables and fields (``Cflags``, ``Libs``, ...) of a ``.pc`` file.

    >>> parse("prefix=/usr\\nincludedir=${prefix}/include\\nCflags: -I${includedir}\\n")[1]
    {'Cflags': '-I/usr/include'}
    """
    variables: dict[str, str] = {}
    fields: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        assign, field = re.match(_ASSIGN, line), re.match(_FIELD, line)
        if assign and (field is None or assign.start(2) < field.start(2)):
            variables[assign.group(1)] = _expand(assign.group(2), variables)
        elif field:
            fields[field.group(1)] = _expand(field.group(2), variables)
    return variables, fields


def include_dirs(fields: dict[str, str]) -> list[str]:
    """The absolute ``-I`` directories of ``Cflags``, in order."""
    words = fields.get("Cflags", "").split()
    found = []
    for i, word in enumerate(words):
        flag = "-I" + words[i + 1] if word == "-I" and i + 1 < len(words) else word
        if flag.startswith("-I/"):
            found.append(flag[2:])
    return found


def pc_dirs(host: Host) -> list[Path]:
    """Where pkg-config would look, in its order (see the module docstring)."""
    found = [Path(p) for p in host.environ.get("PKG_CONFIG_PATH", "").split(":") if p[:1] == "/"]
    libdir = host.environ.get("PKG_CONFIG_LIBDIR")
    if libdir is not None:
        return found + [Path(p) for p in libdir.split(":") if p[:1] == "/"]
    facts = MACHINES.get(host.machine)
    multiarch = facts.multiarch if facts else host.machine
    return found + [host.at(d.format(multiarch=multiarch)) for d in PC_DIRS]


def _same_dir(a: str, b: Path) -> bool:
    if not a.startswith("/"):
        return False
    try:
        return _fs.real_path(a) == _fs.real_path(b)
    except (OSError, ValueError):
        return False


def _pc_candidates(
    host: Host, pc: Path, names: tuple[str, ...], *, prefix: Path | None = None
) -> Iterator[Candidate]:
    """The include directories ``pc`` names (``names`` joined to each), or the file
    itself refused with the reason it names nothing. ``prefix``: the file must describe
    the installation there (its ``prefix`` variable)."""
    source = Source(SourceKind.DISCOVERED, f"pkg-config:{pc}")
    try:
        distrust = _fs.untrusted(pc)
        if distrust:
            raise PcProblem(distrust)
        variables, fields = parse(_fs.read_text(pc, PC_LIMIT))
        if prefix is not None and not _same_dir(variables.get("prefix", ""), prefix):
            raise PcProblem(
                f"it describes the Python in prefix={variables.get('prefix', '')!r}, not this "
                f"interpreter's ({prefix}): its headers are of another build"
            )
    except (PcProblem, _fs.ReadProblem) as exc:
        yield Candidate(pc, source, refused=f"pkg-config file: {exc}")
        return
    for directory in include_dirs(fields):
        yield from (Candidate(Path(directory) / n, source) for n in names)


def pc_files(
    host: Host, patterns: tuple[str, ...], *, first: tuple[Path, ...] = ()
) -> Iterator[Path]:
    """The ``.pc`` files matching ``patterns`` (glob patterns, best first) in ``first``
    and then each directory of ``pc_dirs``; within a pattern, the highest version first."""
    for directory in dict.fromkeys((*first, *pc_dirs(host))):
        for pattern in patterns:
            yield from sorted(_fs.glob(directory / pattern), key=_version_key, reverse=True)


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"[0-9]+", path.name))


def python_pc(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``Python.h``'s directory from ``python-X.Y-embed.pc``, ``python-X.Y.pc``,
    ``python3-embed.pc``, ``python3.pc`` that describe this interpreter's installation
    (``prefix`` is its ``sys.base_prefix``: the system's Python 3.11 is another build
    than pyenv's, whose ``pyconfig.h`` differs), first in ``<base_prefix>/lib/pkgconfig``
    (where CPython's own build installs them), then along ``pc_dirs``; the check then
    wants this interpreter's version."""
    major, minor = host.python_version
    patterns = (
        f"python-{major}.{minor}-embed.pc",
        f"python-{major}.{minor}.pc",
        f"python{major}-embed.pc",
        f"python{major}.pc",
    )
    own = (host.base_prefix / "lib" / "pkgconfig",)
    for pc in pc_files(host, patterns, first=own):
        yield from _pc_candidates(host, pc, ("",), prefix=host.base_prefix)


def cuda_pc(host: Host, ctx: Context) -> Iterator[Candidate]:
    """``cuda.h``'s directory from NVIDIA's ``cuda-X.Y.pc`` and ``cudart-X.Y.pc``, the
    newest release first."""
    for pc in pc_files(host, ("cuda-[0-9]*.pc", "cudart-[0-9]*.pc")):
        yield from _pc_candidates(host, pc, ("",))
