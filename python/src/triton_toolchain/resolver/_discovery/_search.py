"""The one search runner, and the shape every locator has.

A locator (``Locator``) says how one component is found and judged: how an explicit
setting names a candidate, the discovery steps in order, one check for every candidate
(explicit, manifest and discovered alike), and a last look at the outcome. Each step
lists the paths it would use; the runner skips paths that do not exist (recording where
it looked) and files already judged, and stops at the first path the check accepts.

Example: the ptxas locator's steps are ``triton_bundled``, ``torch``, ``pip_wheels``,
``conda_prefix``, ``cuda_home``, ...; on a machine whose Triton lost its bundled ptxas
the runner rejects an 11.4 ptxas in ``CUDA_HOME`` ("release 11.4 cannot assemble
sm_90a, needs 12.0 or newer") and takes ``/usr/local/cuda/bin/ptxas``.
"""

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from .._model import Choice, Rejection, Source, SourceKind
from . import _fs
from ._host import Host
from ._run import Question


class Candidate(NamedTuple):
    """A path a step proposes, with the source it would be reported under.

    ``refused`` marks a path the step saw but must never use (one reached through an
    empty or relative ``PATH`` entry): the runner does not judge it, and reports it as
    rejected with that reason when something is there.
    """

    path: Path
    source: Source
    refused: str | None = None


class Verdict(NamedTuple):
    """A check's judgement: accepted when ``problem`` is ``None``; ``note``: a fact
    worth reporting about an accepted candidate (a forward-compatibility driver);
    ``advised_against``: a known-bad build for the target (``_catalog.ADVISORIES``),
    which discovery takes only when no later candidate is accepted without one."""

    version: str | None = None
    problem: str | None = None
    note: str | None = None
    advised_against: bool = False


class Context(NamedTuple):
    """What a check needs besides the path.

    ``arch``: the target architecture (``None``: any); ``recorded_version``: the version a
    manifest recorded (then the check runs no process, unless ``host.verify``);
    ``named``: the candidate was named by the user or a manifest (an intended CUDA
    forward-compatibility driver is accepted then); ``manifest``: it comes from a
    manifest, whose facts are believed unless ``host.verify``; ``chosen``: the
    components resolved before this one (the link directory follows the driver).
    """

    arch: int | None = None
    recorded_version: str | None = None
    named: bool = False
    manifest: bool = False
    chosen: Mapping[str, Choice] = MappingProxyType({})
    gfx: str | None = None  # the AMD target (``gfx942``) where the AMD backend is resolved


Step = Callable[[Host, Context], Iterable[Candidate]]
Check = Callable[[Host, Path, Context], Verdict]


class NotThisComponent(Exception):
    """Raised by ``Locator.explicit`` when the setting is about another component (a
    link stub in ``TRITON_LIBCUDA_PATH`` says nothing about the run-time driver); the
    message becomes a note and the search goes on as if the variable were unset."""


class ProgramNotFound(ValueError):
    """Raised by ``Locator.explicit`` when a program the setting names by a bare name is
    not on ``PATH`` (``CC=clang`` with no clang): ``program`` is that name, so that the
    fix is to install it, not another one."""

    def __init__(self, program: str, message: str) -> None:
        super().__init__(message)
        self.program = program


def _as_is(host: Host, value: str) -> Path:
    del host
    return Path(value)


def _unchanged(host: Host, ctx: Context, choice: Choice) -> Choice:
    del host, ctx
    return choice


class Locator(NamedTuple):
    """How one component is found and judged.

    - ``explicit(host, value)``: the path a setting's value names (raise ``ValueError``
      with the reason for a value that names nothing usable, ``NotThisComponent`` for
      one about another component);
    - ``steps``: discovery, in order;
    - ``follows``: candidates that follow from components chosen before this one (the
      link directory is the driver's): tried after the manifest, even a strict one;
    - ``check``: applied to every candidate;
    - ``finish(host, ctx, choice)``: a last look at the outcome of discovery (notes,
      candidates worth reporting that the search did not reach);
    - ``question(host, path)``: the one process ``check`` runs for a candidate (a tool's
      ``--version``), asked ahead of the search for the first candidate (``first``) so
      that independent components' processes run at once (``_run.ask_each``);
    - ``in_dir(directory)``: for a driver, the names it goes by in one of a manifest's
      ``driver_dirs``, in the order taken (``None``: its backend's SONAME alone).
    """

    steps: tuple[Step, ...]
    check: Check
    follows: tuple[Step, ...] = ()
    explicit: Callable[[Host, str], Path] = _as_is
    finish: Callable[[Host, Context, Choice], Choice] = _unchanged
    question: Callable[[Host, Path], Question] | None = None
    in_dir: Callable[[Path], list[Path]] | None = None


def discovered(detail: str, path: Path | str) -> Candidate:
    """A candidate reported as ``discovered:<detail>``."""
    return Candidate(Path(path), Source(SourceKind.DISCOVERED, detail))


def first(steps: Iterable[Step], host: Host, ctx: Context) -> Path | None:
    """The first candidate ``search`` would judge, or ``None``."""
    for step in steps:
        for cand in step(host, ctx):
            if _fs.lexists(cand.path):
                return None if cand.refused is not None else cand.path
    return None


def key_of(path: Path) -> Path:
    """What two candidates that are the same file have in common: the resolved path."""
    try:
        return _fs.real_path(path)
    except (OSError, ValueError):
        return path


def search(
    component: str,
    steps: Iterable[Step],
    check: Callable[[Path], Verdict],
    host: Host,
    ctx: Context,
    *,
    rejected: Iterable[Rejection] = (),
    searched: Iterable[str] = (),
    notes: Iterable[str] = (),
) -> Choice:
    """Run ``steps`` in order and return the first candidate ``check`` accepts.

    ``rejected``/``searched``/``notes`` carry history from earlier sources (a manifest
    entry that was refused, say) so that the final ``Choice`` tells the whole story.
    Candidates that resolve to a file already judged are not judged twice. A candidate
    accepted but ``advised_against`` is kept aside and returned only when no later
    candidate is accepted without an advisory.
    """
    rejections = list(rejected)
    looked = list(searched)
    judged: set[Path] = set()
    advised: tuple[Candidate, Verdict] | None = None
    for step in steps:
        for cand in step(host, ctx):
            looked.append(f"{cand.source}: {cand.path}")
            if not _fs.lexists(cand.path):
                continue
            if cand.refused is not None:
                rejections.append(Rejection(str(cand.path), cand.refused, cand.source))
                continue
            key = key_of(cand.path)
            if key in judged:
                continue
            judged.add(key)
            verdict = check(cand.path)
            if verdict.problem is None and verdict.advised_against:
                advised = advised or (cand, verdict)
                continue
            if verdict.problem is None:
                return _accepted(component, cand, verdict, rejections, looked, notes)
            rejections.append(Rejection(str(cand.path), verdict.problem, cand.source))
    if advised is not None:
        return _accepted(component, *advised, rejections, looked, notes)
    return Choice(component, None, None, None, tuple(rejections), tuple(looked), tuple(notes))


def _accepted(
    component: str,
    cand: Candidate,
    verdict: Verdict,
    rejections: list[Rejection],
    looked: list[str],
    notes: Iterable[str],
) -> Choice:
    return Choice(
        component,
        str(cand.path),
        verdict.version,
        cand.source,
        tuple(rejections),
        tuple(looked),
        (*notes, *([verdict.note] if verdict.note else [])),
    )
