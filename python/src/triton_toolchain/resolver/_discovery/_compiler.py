"""Locators of the compilers: ``cc``, the C compiler that builds Triton's launcher
module, and ``cxx``, the C++ compiler of TorchInductor's CPU kernels and C++ extensions
(``LANGUAGES``).

Search order (first accepted wins):

1. conda's compiler, ``$CONDA_PREFIX/bin/*-conda-linux-gnu-cc`` (``-c++``), those whose
   triple names this interpreter's architecture first: in an active conda environment
   that has ``c-compiler``/``cxx-compiler`` installed, that compiler matches the
   environment's sysroot and its Python, and conda's own activation would have exported
   it as ``CC``/``CXX``;
2. ``gcc``, ``clang``, ``cc`` (``g++``, ``clang++``, ``c++``) on the absolute entries of
   ``PATH`` (Triton's ``_find_compiler`` order); then versioned names (``gcc-14``,
   ``g++-12``, ``clang++-18``, newest first), which distributions install without the
   plain name. Empty and relative ``PATH`` entries are reported as rejected, never used.

Explicit ``CC`` or ``CXX`` (``command_from_setting``): a command line, as build tools
take it.
The shim builds Triton's launcher itself, so ``CC="ccache gcc"``, ``CC="distcc gcc"``
or ``CC="gcc -m64"`` work: each program is looked up (a bare name on the absolute
``PATH`` entries, as ``shutil.which`` does) and checked; words after the compiler must
be options. A relative path with a ``/``, an unbalanced quote, or a program that is not
found is a ``SettingError`` naming ``CC``. An absolute path that exists is taken whole,
even with spaces in it. The resolved command is the component's path, quoted as a shell
would (``/usr/bin/ccache /usr/bin/gcc``).

Check (``check_compiler``): every program is a regular executable file that nobody but
root and this user can change (``_trust``); then ONE process, ``<command> -v`` with
``LC_ALL=C``, gives both the target triple (``Target: x86_64-linux-gnu``) and the
version (``gcc version 12.2.0``, ``clang version 18.1.3``); the triple's architecture,
adjusted by ``-m32``/``-m64``/``-mx32`` among the options, must be this interpreter's
(``host.machine``).
"""

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .._catalog import triple_machine
from . import _fs
from ._host import Host, child_environ
from ._layouts import path_candidates, path_step, search_path
from ._run import Question, ask_question
from ._search import Candidate, Context, Locator, ProgramNotFound, Step, Verdict, discovered


class Language(NamedTuple):
    """Where one language's compilers are: ``names`` on ``PATH`` in order, versioned
    ``families`` (``gcc`` -> ``gcc-14``), and conda's ``*-conda-linux-gnu-<conda>``."""

    names: tuple[str, ...]
    families: tuple[str, ...]
    conda: str


LANGUAGES: dict[str, Language] = {
    "cc": Language(names=("gcc", "clang", "cc"), families=("gcc", "clang"), conda="cc"),
    "cxx": Language(names=("g++", "clang++", "c++"), families=("g++", "clang++"), conda="c++"),
}
# Programs that run the compiler named after them.
LAUNCHERS = frozenset({"ccache", "sccache", "distcc", "icecc", "buildcache"})
# Options that choose the architecture a gcc or clang builds for.
MACHINE_OPTIONS: dict[str, str] = {"-m64": "x86_64", "-m32": "i686", "-mx32": "x32"}

_TARGET = r"(?m)^Target: (\S+)"
_VERSION = r"\b(?:gcc|clang) version ([0-9]+(?:\.[0-9]+)*)"


def conda_compilers(language: Language) -> Step:
    """``$CONDA_PREFIX/bin/*-conda-linux-gnu-<cc|c++>``, this architecture's first."""
    suffix = f"-{language.conda}"

    def step(host: Host, ctx: Context) -> Iterator[Candidate]:
        prefix = host.environ.get("CONDA_PREFIX")
        if not prefix or not Path(prefix).is_absolute():
            return
        found = _fs.glob(Path(prefix, "bin", f"*-conda-linux-gnu{suffix}"))
        found.sort(key=lambda p: triple_machine(p.name.removesuffix(suffix)) != host.machine)
        yield from (discovered("CONDA_PREFIX", p) for p in found)

    step.__name__ = step.__qualname__ = "conda_compilers"
    return step


def versioned_compilers(language: Language) -> Step:
    """``gcc-<N>``/``clang-<N>`` (``g++-<N>``...) in the absolute ``PATH`` entries,
    newest first."""

    def step(host: Host, ctx: Context) -> Iterator[Candidate]:
        kept, _ = search_path(host)
        for family in language.families:
            found = [p for d in kept for p in _fs.glob(d / f"{family}-*")]
            found = [p for p in found if re.fullmatch("[0-9]{1,9}", p.name[len(family) + 1 :])]
            found.sort(key=lambda p: -int(p.name[len(family) + 1 :]))
            yield from (discovered("PATH", p) for p in found)

    step.__name__ = step.__qualname__ = "versioned_compilers"
    return step


def compiler_steps(language: Language) -> tuple[Step, ...]:
    """The discovery steps of one language (see the module docstring)."""
    return (
        conda_compilers(language),
        *(path_step(n) for n in language.names),
        versioned_compilers(language),
    )


def _program(host: Host, word: str) -> Path:
    """The absolute path of a program named in a command line; ``ValueError`` says why
    there is none."""
    if word.startswith("/"):
        return Path(word)
    if "/" in word:
        raise ValueError(
            f"{word!r} is a relative path, which depends on the current directory: give an "
            "absolute path or a bare name to look up on PATH"
        )
    refused: list[str] = []
    for cand in path_candidates(host, word):
        if cand.refused is not None:
            if _fs.lexists(cand.path):
                refused.append(cand.refused)
            continue
        if _fs.file_problem(cand.path, executable=True) is None:
            return cand.path
    ignored = f" ({'; '.join(refused)})" if refused else ""
    raise ProgramNotFound(
        word,
        f"{word!r} was not found on the absolute entries of PATH{ignored}: install it or "
        "give its absolute path",
    )


def command_from_setting(host: Host, value: str) -> Path:
    """The command an explicit ``CC`` value names, as a ``Path`` whose text is the
    resolved command line (see the module docstring); ``ValueError`` says what is wrong.
    The command still has to pass ``check_compiler``."""
    if not value.strip():
        raise ValueError("is empty")
    if value.startswith("/") and _fs.lexists(value):
        return Path(value)
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a command line ({exc})") from None
    programs = [words.pop(0)]
    if Path(programs[0]).name in LAUNCHERS and words and not words[0].startswith("-"):
        programs.append(words.pop(0))
    extra = [w for w in words if not w.startswith("-")]
    if extra:
        raise ValueError(
            f"{value!r} has {extra[0]!r} after the compiler, where only options belong"
        )
    resolved = [str(_program(host, p)) for p in programs]
    return Path(shlex.join([*resolved, *words]))


def command_argv(command: str) -> list[str]:
    """The words of a resolved compiler command (``Choice.path`` of ``cc``): an
    existing absolute file path is one word, even with spaces in it."""
    if command.startswith("/") and os.path.isfile(command):
        return [command]
    return shlex.split(command)


def _explicit(host: Host, value: str) -> Path:
    return command_from_setting(host, value)


def v_question(host: Host, path: Path) -> Question:
    """What ``check_compiler`` asks the compiler command ``path``: ``<command> -v`` in
    the C locale (raises ``ValueError`` for what is no command line)."""
    argv = command_argv(str(path))
    programs = [Path(w) for w in argv if not w.startswith("-")]
    if not programs:
        raise ValueError("it names no program")
    return Question(
        programs[0],
        (*argv[1:], "-v"),
        {**child_environ(host.environ), "LC_ALL": "C", "LANGUAGE": ""},
        tuple(programs[1:]),
    )


def check_compiler(host: Host, path: Path, ctx: Context) -> Verdict:
    """Judge ``path`` (a program or a resolved command line) as a compiler for this
    interpreter (see the module docstring)."""
    try:
        argv = command_argv(str(path))
        question = v_question(host, path)
    except ValueError as exc:
        return Verdict(problem=f"is not a command line ({exc})")
    programs = [Path(w) for w in argv if not w.startswith("-")]
    for program in programs:
        problem = _fs.file_problem(program, executable=True) or _fs.untrusted(program)
        if problem:
            return Verdict(problem=problem if len(argv) == 1 else f"{program}: {problem}")
    if ctx.recorded_version is not None and not host.verify:
        return Verdict(ctx.recorded_version)
    output, problem = ask_question(question, host.answers)
    if output is None:
        return Verdict(problem=problem)
    return judge_v(output, argv[1:], host.machine)


def judge_v(output: str, options: list[str], machine: str) -> Verdict:
    """The verdict on a compiler whose ``-v`` printed ``output`` (any text: another
    program's output is never trusted to have a form), run with ``options``, for an
    interpreter of ``machine``: its version, and a problem when no target triple is
    named or it builds for another architecture."""
    target = re.search(_TARGET, output)
    version = re.search(_VERSION, output)
    found = version.group(1) if version else None
    if target is None:
        return Verdict(found, "`-v` named no target triple (not gcc or clang?)")
    builds_for = triple_machine(target.group(1))
    for option in options:
        builds_for = MACHINE_OPTIONS.get(option, builds_for)
    if builds_for != machine:
        return Verdict(
            found,
            f"builds for {target.group(1)} ({builds_for}), but this Python is {machine}",
        )
    return Verdict(found)


LOCATORS: dict[str, Locator] = {
    name: Locator(
        steps=compiler_steps(language),
        check=check_compiler,
        explicit=_explicit,
        question=v_question,
    )
    for name, language in LANGUAGES.items()
}
