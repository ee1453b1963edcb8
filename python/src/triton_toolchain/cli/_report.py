"""The ``doctor`` report: for each goal of ``_catalog.GOALS`` (Triton kernels,
``torch.compile`` on GPU and on CPU, C++/CUDA extensions) whether it can run here and,
if not, the one thing to do; then the components in a table. ``verbose`` adds every
place looked at, every rejected candidate and every note.

A goal is judged from the resolution (``Toolchain``), the Python packages it runs as
their files say (``Installed``, nothing imported) and what the installed Triton refuses
of the chosen ptxas (``_triton._doctor.unusable_tools``). Plain text shows notes only
where they change what to do: the resolution's notes about settings, the fix that a
component's locator worked out (``python-headers``: this distribution's package), a
strict manifest, and the first candidate rejected for a missing component.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from ..resolver._caches import status, verdict_text
from ..resolver._catalog import (
    CATALOG,
    COMPONENT,
    COMPONENTS,
    GOALS,
    PTXAS_FAMILY,
    Advisory,
    Goal,
    GoalStep,
    TritonRelease,
    advised_archs,
    advisories_for,
    advisory_text,
    assigned_version,
)
from ..resolver._discovery import _fs
from ..resolver._discovery._host import Host
from ..resolver._model import Choice, SourceKind, Toolchain
from ..runtime import CacheDir, _trust

# torch/version.py: `cuda: Optional[str] = '12.8'`, or `= None` for a build without CUDA.
_TORCH_CUDA = re.compile(r"""^cuda\s*(?::[^=\n]*)?=\s*(?:None\b|['"]([^'"\n]*)['"])""", re.M)

PYTORCH_SITE = "https://pytorch.org/get-started/locally/"
PACKAGE_FIX: dict[str, str] = {
    "triton": "install Triton (`pip install triton`)",
    # One line on the screen: "  fix: " and this fit in 100 columns.
    "torch": f"install torch (`pip install torch`; per build: {PYTORCH_SITE})",
}
# torch/version.py: `hip: Optional[str] = '6.4.43482-...'`, or `= None` without ROCm.
_TORCH_HIP = re.compile(r"""^hip\s*(?::[^=\n]*)?=\s*(?:None\b|['"]([^'"\n]*)['"])""", re.M)
TORCH_ROCM_FIX = (
    f"install a torch built with ROCm ({PYTORCH_SITE} gives the command for each ROCm release)"
)
TORCH_CUDA_FIX = (
    f"install a torch built with CUDA ({PYTORCH_SITE} gives the command for each CUDA release)"
)
REFUSED_FIX = (
    "point TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH at a ptxas this Triton supports"
)
VERBOSE_HINT = "every place looked at, rejected candidates and notes: triton-toolchain doctor -v"
# The widest line `doctor` prints (``wrap_long_lines``) where neither `COLUMNS` nor a terminal says
# (a pipe, a file): long lines wrap at spaces. Never narrower than NARROWEST.
WIDTH = 100
NARROWEST = 40
# A component looked for with another one (openmp: the chosen C++ compiler must build
# with its omp.h): without that one it cannot be found, a consequence said once, in the
# table ("needs cxx"), not a second absence in the goal's verdict.
LOOKED_FOR_WITH: dict[str, str] = {"openmp": "cxx"}


def _consequence(name: str, tc: Toolchain) -> str | None:
    """The component without which ``name`` could not be looked for, if that is why
    ``name`` is missing."""
    other = LOOKED_FOR_WITH.get(name)
    return other if other and not tc[name].found and not tc[other].found else None


def _read_version(path: Path) -> str:
    try:
        return assigned_version(_fs.read_text(path)) or ""
    except _fs.ReadProblem:
        return ""


@dataclass(frozen=True)
class Installed:
    """The Python packages the goals run, read from their files (nothing is imported).

    ``triton``/``torch``: the version, ``""`` when installed but unreadable, ``None``
    when not installed. ``torch_cuda``: the CUDA release torch was built with, ``""``
    for a build without CUDA, ``None`` when unknown (no torch, or no readable
    ``torch/version.py``)."""

    triton: str | None = None
    torch: str | None = None
    torch_cuda: str | None = None
    triton_dir: str | None = None
    torch_dir: str | None = None
    triton_release: TritonRelease | None = None
    torch_hip: str | None = None  # the ROCm (HIP) release torch was built with, "" for none

    def uses(self, component: str) -> bool:
        """Whether the installed Triton runs ``component`` (every one where it is
        unknown): ``TritonRelease.uses``."""
        return self.triton_release is None or self.triton_release.uses(component)

    @classmethod
    def of(cls, host: Host) -> Installed:
        """What ``host``'s ``triton`` and ``torch`` package directories hold."""
        triton = torch = torch_cuda = torch_hip = None
        if host.triton_dir is not None:
            triton = _read_version(host.triton_dir / "__init__.py")
        if host.torch_dir is not None:
            torch = _read_version(host.torch_dir / "version.py")
            try:
                text = _fs.read_text(host.torch_dir / "version.py")
            except _fs.ReadProblem:
                text = ""
            found = _TORCH_CUDA.search(text)
            if found is not None:
                torch_cuda = found.group(1) or ""
            found = _TORCH_HIP.search(text)
            if found is not None:
                torch_hip = found.group(1) or ""
        return cls(
            triton,
            torch,
            torch_cuda,
            str(host.triton_dir) if host.triton_dir else None,
            str(host.torch_dir) if host.torch_dir else None,
            host.triton,
            torch_hip,
        )

    def describe(self, package: str) -> str:
        """``"Triton 3.9.0"``, ``"torch 2.13.0+cpu (no CUDA)"``, ``"torch not installed"``."""
        name = "Triton" if package == "triton" else package
        version = self.triton if package == "triton" else self.torch
        if version is None:
            return f"{name} not installed"
        text = f"{name} {version or '(version unknown)'}"
        if package == "torch" and self.torch_cuda is not None:
            text += f" (CUDA {self.torch_cuda})" if self.torch_cuda else " (no CUDA)"
        return text


# ---------------------------------------------------------------- verdicts


BlockerKind = Literal["package", "torch-cuda", "torch-rocm", "error", "missing", "refused"]


@dataclass(frozen=True)
class Blocker:
    """One reason a goal or step cannot run, and what to do about it: a package not
    installed, a torch without CUDA, a component wrongly set (``error``) or not found
    (``missing``, with the first candidate rejected for it and how many were), a ptxas
    the installed Triton refuses."""

    kind: BlockerKind
    reason: str
    fix: str
    component: str | None = None
    rejected: str | None = None
    rejected_count: int = 0


@dataclass(frozen=True)
class StepVerdict:
    step: GoalStep
    blockers: tuple[Blocker, ...]

    @property
    def ready(self) -> bool:
        return not self.blockers


@dataclass(frozen=True)
class GoalVerdict:
    """A goal judged: ``blockers`` are missing packages (nothing runs without them),
    ``steps`` each step judged on its own; a step is reached when it and every earlier
    step are ready."""

    goal: Goal
    blockers: tuple[Blocker, ...]
    steps: tuple[StepVerdict, ...]

    @property
    def ready(self) -> bool:
        return not self.blockers and all(s.ready for s in self.steps)

    @property
    def first(self) -> Blocker | None:
        """The one thing to do first: a missing package, else the first blocker of the
        first step that is not ready."""
        if self.blockers:
            return self.blockers[0]
        return next((s.blockers[0] for s in self.steps if s.blockers), None)

    @property
    def fix(self) -> str | None:
        first = self.first
        return first.fix if first else None

    @property
    def missing(self) -> tuple[str, ...]:
        """Components a step lacks (not found or wrongly set), in the catalog's order."""
        names = {b.component for s in self.steps for b in s.blockers if b.component}
        return tuple(c.name for c in CATALOG if c.name in names)

    @property
    def label(self) -> str:
        """The goal's title, with the steps judged when not all of them are."""
        if len(self.steps) == len(self.goal.steps):
            return self.goal.title
        return f"{self.goal.title} ({', '.join(s.step.name for s in self.steps)})"

    @property
    def verdict(self) -> str:
        """``ready``, ``not ready: WHY``, or ``partly: can A; cannot B: WHY``. A missing
        package comes with every wrong setting of the goal's components (a wrong
        ``CUDA_HOME`` is worth saying while torch is not installed)."""
        if self.blockers:
            wrong = [b for s in self.steps for b in s.blockers if b.kind == "error"]
            return f"not ready: {_reasons([*self.blockers, *wrong])}"
        done: list[str] = []
        for judged in self.steps:
            if not judged.ready:
                why = _reasons(judged.blockers)
                if not done:
                    return f"not ready: {why}"
                return f"partly: can {', '.join(done)}; cannot {judged.step.can}: {why}"
            done.append(judged.step.can)
        return "ready"

    def only(self, steps: Iterable[str]) -> GoalVerdict:
        """The same verdict for the named steps alone."""
        names = set(steps)
        return replace(self, steps=tuple(s for s in self.steps if s.step.name in names))

    def to_dict(self) -> dict[str, object]:
        first = self.first
        return {
            "title": self.goal.title,
            "ready": self.ready,
            "verdict": self.verdict,
            "missing": list(self.missing),
            "blocked": [
                b.reason
                for b in (*self.blockers, *(b for s in self.steps for b in s.blockers))
                if b.component is None
            ],
            "fix": first.fix if first else None,
            # A step is ready when it and the goal's packages are (no Triton: no compile).
            "steps": {s.step.name: s.ready and not self.blockers for s in self.steps},
        }


def _reasons(blockers: Sequence[Blocker]) -> str:
    """Missing components as one ``a, b not found``; other reasons as they are."""
    parts: list[str] = []
    missing = [b.component or "" for b in blockers if b.kind == "missing"]
    for blocker in blockers:
        if blocker.kind != "missing":
            parts.append(blocker.reason)
        elif blocker.component == missing[0]:
            parts.append(f"{', '.join(missing)} not found")
    return "; ".join(parts)


def component_fix(choice: Choice, tc: Toolchain) -> str:
    """What to do about a missing component: the catalog's fix, or the account that
    its locator gave (``python-headers``: the directory and this distribution's
    package, ``_discovery._headers.python_headers_fix``); a strict manifest says that
    only it was read."""
    spec = COMPONENT[choice.component]
    fix = next((n for n in choice.notes if n.startswith("Python.h ")), spec.fix)
    if tc.strict and tc.manifest:
        where = "in its components" if spec.in_manifest else "its directory in driver_dirs"
        return (
            f"the manifest {tc.manifest} is strict (nothing else is searched) and gives no "
            f"usable {choice.component}: give one there ({where}); {fix}"
        )
    return fix


def _component_blocker(choice: Choice, tc: Toolchain) -> Blocker | None:
    spec = COMPONENT[choice.component]
    if choice.error:
        # `_resolve._setting_error`: "VARIABLE='value': problem; fix: ..."
        reason, _, fix = choice.error.partition("; fix: ")
        return Blocker("error", reason, fix or spec.fix, choice.component)
    if choice.found:
        return None
    first = str(choice.rejected[0]) if choice.rejected else None
    return Blocker(
        "missing",
        f"{choice.component} not found",
        component_fix(choice, tc),
        choice.component,
        first,
        len(choice.rejected),
    )


def _judge_step(
    step: GoalStep, tc: Toolchain, installed: Installed, refused: Sequence[str]
) -> StepVerdict:
    """A step's blockers, the one to act on first first: a wrong setting (it stops
    everything that uses it), a torch without CUDA, missing components in the step's
    order, then what Triton refuses. A component the installed Triton never runs
    (ptxas-blackwell before 3.6 but for 3.3) blocks nothing."""
    used = [c for c in step.components if installed.uses(c)]
    after = [c for c in used if _consequence(c, tc)]
    found = [b for c in used if c not in after and (b := _component_blocker(tc[c], tc))]
    blockers = [b for b in found if b.kind == "error"]
    if step.torch_cuda and installed.torch is not None and installed.torch_cuda == "":
        reason = f"torch {installed.torch} is built without CUDA"
        blockers.append(Blocker("torch-cuda", reason, TORCH_CUDA_FIX))
    if step.torch_hip and installed.torch is not None and not installed.torch_hip:
        reason = f"torch {installed.torch} is built without ROCm"
        blockers.append(Blocker("torch-rocm", reason, TORCH_ROCM_FIX))
    blockers += [b for b in found if b.kind == "missing"]
    if any(c in PTXAS_FAMILY for c in step.components):
        blockers += [Blocker("refused", f"refused by Triton: {p}", REFUSED_FIX) for p in refused]
    return StepVerdict(step, tuple(blockers))


def judge(
    tc: Toolchain,
    installed: Installed,
    refused: Sequence[str] = (),
    goals: Mapping[str, Goal] = GOALS,
) -> dict[str, GoalVerdict]:
    """Every goal of ``goals`` (a backend's, ``_catalog.BACKEND_GOALS``) judged (see the
    module docstring)."""
    verdicts = {}
    for goal in goals.values():
        blockers = tuple(
            Blocker("package", installed.describe(package), PACKAGE_FIX[package])
            for package in goal.packages
            if (installed.triton if package == "triton" else installed.torch) is None
        )
        if blockers and goal.steps[0].torch_cuda and installed.torch_cuda == "":
            # A torch built with CUDA comes first: it brings the Triton it runs.
            reason = f"torch {installed.torch} is built without CUDA"
            blockers = (Blocker("torch-cuda", reason, TORCH_CUDA_FIX), *blockers)
        steps = tuple(_judge_step(step, tc, installed, refused) for step in goal.steps)
        verdicts[goal.name] = GoalVerdict(goal, blockers, steps)
    return verdicts


# ---------------------------------------------------------------- text


def explain_missing(choice: Choice, tc: Toolchain | None = None) -> str:
    """A multi-line account of a missing component (``Choice.explain``)."""
    strict = tc.manifest if tc is not None and tc.strict else None
    return choice.explain(strict_manifest=strict)


def table(rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _short_source(choice: Choice) -> str:
    """The source as the table shows it: Triton's package directory is in the path
    column and the manifest in the header, so ``triton-bundled`` and ``manifest``
    stand alone."""
    if choice.source is None:
        return ""
    if choice.source.kind in (SourceKind.BUNDLED, SourceKind.MANIFEST):
        return str(choice.source.kind.value)
    return str(choice.source)


def _error_lines(tc: Toolchain, shown: Sequence[str]) -> list[str]:
    """Each wrong explicit setting of a component ``shown`` (the exit status is 2 for
    any of them): ``error: COMPONENT: VARIABLE='value': problem`` and its fix; a wrong
    setting of a component the goals shown do not use is a note (a stale ``CUDA_HOME``
    does not stop ``--for compile``)."""
    lines = []
    for choice in tc.errors():
        reason, _, fix = (choice.error or "").partition("; fix: ")
        if choice.component not in shown:
            lines.append(f"note: {choice.component} (not used by this goal): {reason}")
            continue
        lines.append(f"error: {choice.component}: {reason}")
        lines += [f"  fix: {fix}"] if fix else []
    return lines


def screen_width() -> int:
    """The width ``doctor`` fits: ``COLUMNS`` when set, else the terminal's, else
    ``WIDTH`` (``shutil.get_terminal_size``); at least ``NARROWEST``."""
    return max(NARROWEST, shutil.get_terminal_size((WIDTH, 24)).columns)


def wrap_long_lines(text: str, width: int | None = None) -> str:
    """``text`` with every line of more than ``width`` columns (default: the screen's,
    ``screen_width``) wrapped at spaces, its
    continuation indented four columns more than the line. A word longer than a line (a
    path of over 90 columns) stays whole on a line of its own, and so does an ``error:``
    line (the setting or file, its value and the problem: to be copied and searched for
    whole; its fix follows on a line of its own)."""
    width = width or screen_width()
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= width or line.startswith("error: "):
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
        out += textwrap.wrap(
            line,
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
            drop_whitespace=True,
        )
    return "\n".join(out)


def _status(choice: Choice, needed: set[str]) -> str:
    if choice.error:
        return "ERROR"
    if choice.found:
        return "ok"
    return "MISSING" if choice.component in needed else "absent"


def _goal_lines(verdict: GoalVerdict, width: int) -> list[str]:
    lines = [f"{verdict.label.ljust(width)}  {verdict.verdict}"]
    first = verdict.first
    if first is not None:
        lines.append(f"  fix: {first.fix}")
        if first.rejected:
            more = first.rejected_count - 1
            tail = f" (and {more} more)" if more else ""
            lines.append(f"  rejected: {first.rejected}{tail}")
    return lines


def _trust_lines(tc: Toolchain, names: Sequence[str]) -> list[str]:
    """One line per component taken because a candidate before it was refused for
    trust: which, why, and what was taken instead."""
    lines = []
    for name in names:
        choice = tc[name]
        refused = [r for r in choice.rejected if r.reason.startswith(_trust.UNTRUSTED)]
        if choice.found and refused:
            why = refused[0].reason.removeprefix(_trust.UNTRUSTED)
            lines.append(
                f"note: {name}: {choice.path} is used because {refused[0].path} is not trusted "
                f"({why}); `triton-toolchain doctor -v` has the fix"
            )
    return lines


def _trust_details() -> list[str]:
    """Who is trusted besides root and this user (``_trust``), and why; allow-list
    entries that name nobody here."""
    lines = ["", "trusted besides root and you (whoever can change what already runs here):"]
    everyone = [_trust.code_principals(), *_trust.listed()]
    reasons = [why for p in everyone for why in (*p.uids.values(), *p.gids.values())]
    lines += [f"  {why}" for why in reasons] or ["  nobody"]
    lines += [
        f"  {entry!r} in {_trust.TRUSTED_OWNERS} or the manifest names no user or group here"
        for p in everyone
        for entry in p.unknown
    ]
    return lines


def _details(choice: Choice, tc: Toolchain) -> str:
    """Everything about one component: the whole account of a missing one, else what
    was chosen, every place looked at, every candidate rejected, every note."""
    if not choice.found:
        return explain_missing(choice, tc)
    version = f", {choice.version}" if choice.version else ""
    lines = [f"{choice.component}: {choice.path} ({choice.source}{version})"]
    lines.append(f"  trust: {_trust.explain(choice.path or '')}")
    lines += choice.history()
    lines += [f"  note: {note}" for note in choice.notes]
    return "\n".join(lines)


def shown_components(verdicts: Mapping[str, GoalVerdict]) -> list[str]:
    """The components the table shows: those the shown goals' steps need, every one
    of ``COMPONENTS`` when every NVIDIA goal is shown whole."""
    shown = list(verdicts.values())
    every = all(
        (v := verdicts.get(n)) is not None and v.goal is g and len(v.steps) == len(g.steps)
        for n, g in GOALS.items()
    )
    needed = {c for v in shown for s in v.steps for c in s.step.components}
    return [c.name for c in CATALOG if (every and c in COMPONENTS) or c.name in needed]


def _advised(
    tc: Toolchain, triton: TritonRelease | None
) -> list[tuple[Choice, Advisory, tuple[int, ...]]]:
    """Each advisory (``_catalog.ADVISORIES``) that a chosen ptxas matches where the
    installed Triton release ``triton`` runs it (for ``tc.arch``, or without one for any
    architecture of the row), with the architectures it concerns."""
    return [
        (choice, advisory, advised_archs(advisory, name, tc.arch, triton))
        for name in PTXAS_FAMILY
        if name in tc.choices
        and (choice := tc[name]).path is not None
        and choice.version is not None
        for advisory in advisories_for(name, choice.version, tc.arch, triton)
    ]


def advisories(tc: Toolchain, triton: TritonRelease | None) -> list[dict[str, object]]:
    """``doctor --json``'s ``advisories``: one object per match of ``_advised``."""
    return [
        {
            "component": choice.component,
            "path": choice.path,
            "release": choice.version,
            "archs": list(archs),
            "reference": advisory.reference,
            "effect": advisory.effect,
            "fixed_in": ".".join(map(str, advisory.fixed_in)) if advisory.fixed_in else None,
            "certainty": advisory.certainty,
            "text": advisory_text(advisory, choice.version or ""),
        }
        for choice, advisory, archs in _advised(tc, triton)
    ]


def advisory_lines(
    tc: Toolchain, triton: TritonRelease | None, *, whole: bool = False
) -> list[str]:
    """One line per match of ``_advised``, on ``doctor``'s default screen: ``advisory:
    ptxas-blackwell for sm_100: ptxas 13.3 is known bad there (reported;
    pytorch/pytorch#190973)``; ``whole``: what goes wrong and the fix too (``doctor
    -v``, the compile-time warning's text)."""
    return [
        f"advisory: {choice.component} for {', '.join(f'sm_{n}' for n in archs)}: "
        + (
            advisory_text(advisory, choice.version or "")
            if whole
            else f"ptxas {choice.version} is known bad there ({advisory.certainty}; "
            f"{advisory.reference})"
        )
        for choice, advisory, archs in _advised(tc, triton)
    ]


def doctor_report(
    tc: Toolchain,
    *,
    header: str,
    verdicts: Mapping[str, GoalVerdict],
    installed: Installed | None = None,
    verbose: bool = False,
    caches: Mapping[str, CacheDir] | None = None,
) -> str:
    """The ``doctor`` text: the header, one line per goal in ``verdicts`` (with the fix
    of each that is not ready), the resolution's notes, a table of the components those
    goals need (every component when every goal is shown); ``verbose`` adds each one's
    details. A component the installed Triton never runs is ``unused``. ``caches``:
    Triton's and Inductor's cache directories (``cache_lines``)."""
    shown = list(verdicts.values())
    uses = installed.uses if installed is not None else (lambda _c: True)
    needed = {c for v in shown for s in v.steps for c in s.step.components if uses(c)}
    names = shown_components(verdicts)
    width = max(len(v.label) for v in shown)
    said = cache_lines(caches) if caches else []
    if said and said[-1].startswith("caches ok") and len(said) == 1:
        header, said = f"{header}; {said[0]}", []  # all fine: on the target's line
    out = [header, ""]
    for verdict in shown:
        out += _goal_lines(verdict, width)
    out += _error_lines(tc, names)
    out += [f"note: {note}" for note in tc.notes]
    out += advisory_lines(tc, installed.triton_release) if installed is not None else []
    out += _trust_lines(tc, names)
    rows = [("component", "status", "version", "source", "path")]
    bundled: set[str] = set()
    for name in names:
        choice = tc[name]
        status = _status(choice, needed) if uses(name) else "unused"
        if uses(name) and (other := _consequence(name, tc)):
            status = f"needs {other}"
        source = _short_source(choice)
        path = choice.path or ("(see the error above)" if choice.error else "")
        if choice.source and choice.source.kind is SourceKind.BUNDLED and path:
            # Triton's package directory is said once, above the table.
            package = choice.source.detail.rstrip("/") + "/"
            if path.startswith(package):
                bundled.add(package)
                path = path[len(package) :]
        rows.append((name, status, choice.version or "", source, path))
    out += [""] + [f"triton-bundled paths are in {p}" for p in sorted(bundled)]
    out += [table(rows)] if len(rows) > 1 else ["(no component needed)"]
    out += said
    if not verbose:
        out += ["", VERBOSE_HINT]
        return "\n".join(out)
    return "\n".join(out) + doctor_details(tc, names, installed, caches)


def cache_lines(caches: Mapping[str, CacheDir], *, whole: bool = False) -> list[str]:
    """``doctor``'s caches: the line each one that is not plainly ``ok`` has (the shim's
    choice, an error, a warning), and those that are in one line; ``whole`` (``-v``): a
    table of every directory, its source and verdict, first."""
    rows = [("cache", "status", "source", "path")]
    said, fine = [], []
    for name, cache in caches.items():
        path = cache["path"] or ""
        rows.append((name, status(cache), cache["source"], f"{path} ({verdict_text(cache)})"))
        lines = [
            f"{kind}: {line}"
            for kind, line in (
                ("error", cache["error"]),
                ("warning", cache["warning"]),
                ("note", cache["said"]),
            )
            if line
        ]
        said += lines
        fine += [] if lines else [name]
    if fine and not whole:  # where they are: -v (the screen stays one screen)
        said.append(f"caches ok: {', '.join(fine)}")
    return ["", "caches:", table(rows), *said] if whole else said


def doctor_details(
    tc: Toolchain,
    names: Sequence[str],
    installed: Installed | None,
    caches: Mapping[str, CacheDir] | None = None,
) -> str:
    """What ``doctor -v`` adds: the packages' directories, the caches (``cache_lines``),
    then each component's details (``_details``), every line starting with a newline."""
    out: list[str] = []
    triton_dir = installed.triton_dir if installed is not None else None
    if installed is not None:
        out += ["", "packages:"]
        for package, where in (("triton", installed.triton_dir), ("torch", installed.torch_dir)):
            out.append(f"  {installed.describe(package)}" + (f" at {where}" if where else ""))
        if triton_dir:
            out.append("  (the paths of Triton's bundled files below are relative to Triton's)")
    out += _trust_details()
    out += cache_lines(caches, whole=True) if caches else []
    if installed is not None and (
        advised := advisory_lines(tc, installed.triton_release, whole=True)
    ):
        out += ["", *advised]
    for name in names:
        out += ["", _details(tc[name], tc)]
    text = "".join(f"\n{line}" for line in out)
    return _triton_dir_once(text, triton_dir) if triton_dir else text


def _triton_dir_once(text: str, package: str) -> str:
    """Triton's package directory said once, where the packages are listed: its
    bundled files' source as ``triton-bundled`` and their paths relative to it, as the
    table has them (``-v`` printed it twice a line, in the source and in the path)."""
    package = package.rstrip("/")
    return text.replace(f"triton-bundled:{package}", "triton-bundled").replace(f"{package}/", "")
