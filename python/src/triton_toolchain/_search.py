"""The one search runner. A locator is a tuple of named steps; each step lists the
paths it would use, in order, and one check judges every path.

Example: the ptxas locator's steps are ``("triton-bundled", ...), ("CUDA_HOME", ...)``;
the runner asks each in turn, skips paths that do not exist (recording where it
looked) and files already judged, and stops at the first path the check accepts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ._fs import real_path
from ._host import Host
from ._model import Choice, Rejection, Source, SourceKind


@dataclass(frozen=True)
class Candidate:
    """A path a step proposes, with the source it would be reported under.

    ``refused`` marks a path the step saw but must never use (one reached through an
    empty or relative ``PATH`` entry): the runner does not judge it, and reports it as
    rejected with that reason when something is there.
    """

    path: Path
    source: Source
    refused: str | None = None


@dataclass(frozen=True)
class Verdict:
    """A check's judgement: accepted when ``problem`` is ``None``."""

    version: str | None = None
    problem: str | None = None


Step = Callable[[Host], Iterable[Candidate]]
Check = Callable[[Path], Verdict]


def discovered(detail: str, path: Path | str) -> Candidate:
    """A candidate reported as ``discovered:<detail>``."""
    return Candidate(Path(path), Source(SourceKind.DISCOVERED, detail))


def search(
    component: str,
    steps: Iterable[Step],
    check: Check,
    host: Host,
    *,
    rejected: Iterable[Rejection] = (),
    searched: Iterable[str] = (),
    notes: Iterable[str] = (),
) -> Choice:
    """Run ``steps`` in order and return the first candidate ``check`` accepts.

    ``rejected``/``searched``/``notes`` carry history from earlier sources (a manifest
    entry that was refused, say) so that the final ``Choice`` tells the whole story.
    Candidates that resolve to a file already judged are not judged twice.
    """
    rejections = list(rejected)
    looked = list(searched)
    judged: set[Path] = set()
    for step in steps:
        for cand in step(host):
            looked.append(f"{cand.source}: {cand.path}")
            if not os.path.lexists(cand.path):  # never raises (a name too long, say)
                continue
            if cand.refused is not None:
                rejections.append(Rejection(str(cand.path), cand.refused, cand.source))
                continue
            try:
                key = real_path(cand.path)
            except (OSError, RuntimeError):
                key = cand.path
            if key in judged:
                continue
            judged.add(key)
            verdict = check(cand.path)
            if verdict.problem is None:
                return Choice(
                    component,
                    str(cand.path),
                    verdict.version,
                    cand.source,
                    tuple(rejections),
                    tuple(looked),
                    tuple(notes),
                )
            rejections.append(Rejection(str(cand.path), verdict.problem, cand.source))
    return Choice(component, None, None, None, tuple(rejections), tuple(looked), tuple(notes))


@dataclass(frozen=True)
class Context:
    """What a check needs besides the path: the target architecture (``None``: any) and
    a version recorded by a manifest (then the check runs no process)."""

    arch: int | None = None
    recorded_version: str | None = None


@dataclass(frozen=True)
class Locator:
    """How one component is found and judged: discovery ``steps`` in order, and the
    ``check`` applied to every candidate, explicit and manifest ones included."""

    steps: tuple[Step, ...]
    check: Callable[[Host, Path, Context], Verdict]
