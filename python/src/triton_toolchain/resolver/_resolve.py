"""``resolve()``: every component through one cascade: its explicit setting, then the
manifest, then discovery.

Guarantees:

- An explicit setting (the component's variable, e.g. ``TRITON_PTXAS_PATH`` or ``CC``)
  that fails its check is an error naming the variable, the value and the fix; it is
  never replaced by another path. ``resolve()`` raises it as ``SettingError``;
  ``resolve_all()`` keeps it in the component's ``Choice.error`` and goes on with the
  others (activation turns it into an error where Triton would use the component).
- A value that the shim or a wrapper exported rather than the user set (equal to the
  manifest's entry for the component, or to what ``TRITON_TOOLCHAIN_EXPORTS`` records)
  is reported under the source it came from and checked like a manifest entry.
- A manifest entry that fails its check is recorded as rejected; without ``strict``
  discovery then runs, with ``strict`` the component is missing. A manifest is judged
  in one place (``judge_entry``, and ``judge_manifest`` for all of it): the cascade,
  ``check-manifest``, ``doctor`` and the flake's ``checks.manifest`` use its verdicts.
- A manifest that records versions is resolved without starting a process or importing
  an ELF reader (``verify=True`` checks everything: ``doctor``, ``check-manifest``).
- Every observation is made through ``_discovery._fs`` and the host's environment, so
  an activation record can hold the facts the result depends on (``_record``, ``_plan``).
"""

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from ..runtime import BACKENDS, _trust
from ..runtime._errors import SettingError
from ._catalog import (
    ARCH_RELEASES,
    COMPONENTS,
    Component,
    backend_components,
    component_fix,
    gfx_name,
    install_program,
)
from ._discovery import LOCATORS, _fs
from ._discovery._answers import written_once
from ._discovery._host import Host
from ._discovery._run import ask_each
from ._discovery._search import (
    Context,
    Locator,
    NotThisComponent,
    ProgramNotFound,
    Step,
    Verdict,
    first,
    search,
)
from ._exports import EXPORTS_VARIABLE, read_exports
from ._manifest import Manifest, load_for
from ._model import Choice, Rejection, Source, SourceKind, Toolchain


class _History:
    """What one component's cascade has seen so far."""

    def __init__(self) -> None:
        self.rejected: list[Rejection] = []
        self.searched: list[str] = []
        self.notes: list[str] = []

    def choice(self, name: str, **found: object) -> Choice:
        return Choice(
            name,
            rejected=tuple(self.rejected),
            searched=tuple(self.searched),
            notes=tuple(self.notes),
            **found,  # type: ignore[arg-type]
        )

    def take(self, choice: Choice) -> None:
        """Carry on from an unsuccessful search."""
        self.rejected, self.searched, self.notes = (
            list(choice.rejected),
            list(choice.searched),
            list(choice.notes),
        )


def manifest_entries(spec: Component, manifest: Manifest) -> list[tuple[str, Path]]:
    """What a manifest names for ``spec``, each path with its key in the manifest: the
    component's entry (``components.ptxas``), or for the run-time driver the
    ``libcuda.so.1`` of each of ``driver_dirs`` (``driver_dirs[0]``), the driver's file
    there for another backend's driver (``driver_in``)."""
    if spec.kind == "driver":
        return [
            (f"driver_dirs[{i}]", driver_in(spec, d)) for i, d in enumerate(manifest.driver_dirs)
        ]
    entry = manifest.components.get(spec.name)
    return [(f"components.{spec.name}", entry.path)] if entry is not None else []


def driver_in(spec: Component, directory: Path) -> Path:
    """The file of the driver ``spec`` in ``directory``, one of a manifest's
    ``driver_dirs``: the first of the names its locator takes there that exists
    (``Locator.in_dir``: ``libamdhip64.so``, then ``libamdhip64.so.N`` newest first, as
    Debian's ``libamdhip64-5`` has only ``libamdhip64.so.5``), else the first name; its
    backend's SONAME where the locator lists none (``libcuda.so.1``)."""
    in_dir = LOCATORS[spec.name].in_dir
    soname = BACKENDS[spec.backend or "nvidia"].driver_soname
    names = in_dir(directory) if in_dir is not None else [directory / soname]
    return next((p for p in names if _fs.lexists(p)), names[0])


def _recorded(manifest: Manifest | None, path: Path) -> str | None:
    """The version ``manifest`` records for ``path``, if any."""
    if manifest is None:
        return None
    return next((e.version for e in manifest.components.values() if e.path == path), None)


class EntryVerdict(NamedTuple):
    """One path a manifest names, judged: the component, its key in the manifest
    (``components.ptxas``, ``driver_dirs[0]``), the path, the component's verdict and
    the version (found, else the one the manifest records)."""

    component: str
    key: str
    path: Path
    verdict: Verdict
    version: str | None


def judge_entry(
    spec: Component, key: str, path: Path, manifest: Manifest, host: Host, ctx: Context
) -> EntryVerdict:
    """``path``, which ``manifest`` names for ``spec`` under ``key``, judged by the
    component's check as a manifest's entry: named, its recorded version given, its
    facts believed unless ``host.verify``; ``ctx``: the target and the choices made."""
    recorded = _recorded(manifest, path)
    ctx = ctx._replace(named=True, manifest=True, recorded_version=recorded)
    verdict = LOCATORS[spec.name].check(host, path, ctx)
    return EntryVerdict(spec.name, key, path, verdict, verdict.version or recorded)


def judge_manifest(
    manifest: Manifest,
    host: Host,
    arch: int | None = None,
    *,
    backend: str = "nvidia",
    gfx: str | None = None,
) -> list[EntryVerdict]:
    """Every path ``manifest`` names, judged as the cascade judges it (``judge_entry``)
    for ``sm_<arch>`` (the AMD backend's rows for ``gfx``: ``backend="amd"``), in the
    catalog's order, with the entries judged usable before it
    as the choices made (OpenMP is judged with the manifest's C++ compiler). What
    ``check-manifest``, ``doctor`` and the flake's ``checks.manifest`` report. A driver
    directory that holds no driver has no verdict: a manifest may serve machines with
    and without one (a driver there that may not be used is rejected)."""
    source = Source(SourceKind.MANIFEST, str(manifest.file))
    chosen: dict[str, Choice] = {}
    verdicts = []
    for spec in COMPONENTS if backend == "nvidia" else backend_components(backend):
        for key, path in manifest_entries(spec, manifest):
            if spec.kind == "driver" and not _fs.lexists(path):
                continue
            ctx = Context(arch, chosen=chosen, gfx=gfx)
            judged = judge_entry(spec, key, path, manifest, host, ctx)
            verdicts.append(judged)
            if judged.verdict.problem is None and spec.name not in chosen:
                chosen[spec.name] = Choice(spec.name, str(path), judged.version, source)
    return verdicts


def _exported_source(
    spec: Component,
    variable: str,
    path: Path,
    value: str,
    manifest: Manifest | None,
    exports: Mapping[str, tuple[str, str]],
) -> Source | None:
    """Where a variable's value came from when the shim or a wrapper exported it
    (see the module docstring); ``None`` when it is the user's own setting."""
    if manifest is not None and path in (p for _key, p in manifest_entries(spec, manifest)):
        return Source(SourceKind.MANIFEST, str(manifest.file))
    recorded = exports.get(variable)
    if recorded is not None and recorded[0] == value:
        return Source.parse(recorded[1])
    return None


def _setting_error(
    spec: Component, variable: str, value: str, problem: str, fix: str, found: Choice | None
) -> str:
    """The error of a wrong explicit setting: the variable, its value, the problem, and
    the fix that works here: the candidate discovery finds without the variable
    (``found``) where there is one, else ``fix``; for a file others could change, making
    it safe comes first."""
    fix = _trust.fix_for(problem) if problem.startswith(_trust.UNTRUSTED) else fix
    if found is not None and found.path is not None:
        version = f", {found.version}" if found.version else ""
        # A variable that names a directory (TRITON_LIBCUDA_PATH) takes the found file's;
        # its own fix, which says so, stays first.
        path = os.path.dirname(found.path) if spec.variable_names_dir else found.path
        use = (
            f"set {variable} to {path} (found here{version}) or unset {variable} to "
            "let triton-toolchain use it"
        )
        fix = use if fix == spec.fix and not spec.variable_names_dir else f"{fix}; or {use}"
        return f"{variable}={value!r}: {problem}; fix: {fix}"
    return f"{variable}={value!r}: {problem}; fix: {fix}, or unset {variable} to let " + (
        "triton-toolchain look for it"
    )


def manifest_rejections(
    tc: Toolchain, host: Host, *, backend: str = "nvidia", gfx: str | None = None
) -> list[str]:
    """What a manifest names that may not be used, as ``"<manifest>: components.ptxas:
    <path> rejected: <why>"`` (``doctor``'s): ``judge_manifest``'s rejections of the
    manifest ``host`` uses, then the values the environment exported as a manifest's
    (``TRITON_TOOLCHAIN_EXPORTS``) that are no entry of it, which the cascade judged as
    entries and ``tc`` holds. A manifest says what to use, so a rejected entry is a
    wrong manifest even where discovery found something else. ``backend``, ``gfx``: the
    AMD backend's rows for that target (``judge_manifest``)."""
    manifest = load_for(host)
    lines: list[str] = []
    named: set[tuple[str, str]] = set()
    if manifest is not None:
        file = str(manifest.file)
        specs = COMPONENTS if backend == "nvidia" else backend_components(backend)
        named = {(file, str(p)) for spec in specs for _, p in manifest_entries(spec, manifest)}
        lines = [
            f"{file}: {v.key}: {v.path} rejected: {v.verdict.problem}"
            for v in judge_manifest(manifest, host, tc.arch, backend=backend, gfx=gfx)
            if v.verdict.problem
        ]
    lines += [
        f"{r.source.detail}: components.{c.component}: {r.path} rejected: {r.reason}"
        for c in tc
        for r in c.rejected
        if r.source.kind is SourceKind.MANIFEST and (r.source.detail, r.path) not in named
    ]
    return list(dict.fromkeys(lines))


class _Cascade(NamedTuple):
    """One component's cascade on one host (see the module docstring)."""

    spec: Component
    locator: Locator
    host: Host
    ctx: Context
    manifest: Manifest | None
    exports: Mapping[str, tuple[str, str]]

    def found(self, history: _History, path: Path, verdict: Verdict, source: Source) -> Choice:
        history.notes += [verdict.note] if verdict.note else []
        choice = history.choice(
            self.spec.name, path=str(path), version=verdict.version, source=source
        )
        return self.locator.finish(self.host, self.ctx, choice)

    def explicit(self, history: _History) -> Choice | None:
        """The variable's value: a choice, an error, or ``None`` to go on."""
        spec, host = self.spec, self.host
        names = [n for n in (spec.variable, *spec.also_read) if n]
        variable = next((n for n in names if host.environ.get(n)), None)
        if variable is None:
            return None
        value = host.environ.get(variable) or ""
        earlier = [
            c for c in self.ctx.chosen.values() if c.error and c.error.startswith(f"{variable}=")
        ]
        if earlier:  # the same wrong variable, already judged for another component
            return history.choice(spec.name, error=earlier[0].error)
        try:
            path = self.locator.explicit(host, value)
        except NotThisComponent as note:
            history.notes.append(str(note))
            return None
        except ValueError as exc:
            missing = exc.program if isinstance(exc, ProgramNotFound) else None
            error = self.error(variable, value, str(exc), missing)
            return history.choice(spec.name, error=error)
        exported = _exported_source(spec, variable, path, value, self.manifest, self.exports)
        ctx = self.ctx._replace(
            named=True,
            manifest=exported is not None and exported.kind is SourceKind.MANIFEST,
            recorded_version=_recorded(self.manifest, path),
        )
        verdict = self.locator.check(host, path, ctx)
        source = exported or Source(SourceKind.ENV, variable)
        history.searched.append(f"{source}: {path}")
        if verdict.problem is None:
            return self.found(history, path, verdict, source)
        if exported is None:
            error = self.error(variable, value, verdict.problem, None)
            return history.choice(spec.name, error=error)
        history.rejected.append(Rejection(str(path), verdict.problem, source))
        return None

    def error(self, variable: str, value: str, problem: str, missing: str | None) -> str:
        """``_setting_error`` for this component's ``variable``: the fix for its case (the
        program it names installed, a ptxas for the target) and what discovery finds
        without the variable (a second search, on this error's path only)."""
        spec = self.spec
        fix = install_program(missing) if missing else None
        fix = fix or component_fix(spec.name, self.ctx.arch, self.host.triton)
        found = self.search(_History(), self.locator.steps) if self.locator.steps else None
        return _setting_error(spec, variable, value, problem, fix, found)

    def from_manifest(self, history: _History) -> Choice | None:
        if self.manifest is None:
            return None
        source = Source(SourceKind.MANIFEST, str(self.manifest.file))
        for key, path in manifest_entries(self.spec, self.manifest):
            if str(path) in {r.path for r in history.rejected}:
                continue
            history.searched.append(f"{source}: {path}")
            judged = judge_entry(self.spec, key, path, self.manifest, self.host, self.ctx)
            if judged.verdict.problem is None:
                return self.found(history, path, judged.verdict, source)
            history.rejected.append(Rejection(str(path), judged.verdict.problem, source))
        return None

    def search(self, history: _History, steps: tuple[Step, ...]) -> Choice:
        host, ctx, locator = self.host, self.ctx, self.locator
        return search(
            self.spec.name,
            steps,
            lambda p: locator.check(host, p, ctx),
            host,
            ctx,
            rejected=history.rejected,
            searched=history.searched,
            notes=history.notes,
        )

    def run(self) -> Choice:
        history = _History()
        found = self.explicit(history) or self.from_manifest(history)
        if found is not None:
            return found
        if self.locator.follows:
            choice = self.search(history, self.locator.follows)
            if choice.found:
                return self.locator.finish(self.host, self.ctx, choice)
            history.take(choice)
        if self.manifest is not None and self.manifest.strict:
            history.notes.append(f"the manifest {self.manifest.file} is strict: discovery is off")
            return history.choice(self.spec.name)
        if self.manifest is not None and self.spec.kind == "driver":
            where = ", ".join(str(d) for d in self.manifest.driver_dirs) or "none given"
            history.notes.append(
                f"the manifest's driver directories ({where}) hold no usable driver; the "
                "host's driver is looked for"
            )
        return self.locator.finish(self.host, self.ctx, self.search(history, self.locator.steps))


def _ask_ahead(
    host: Host,
    arch: int | None,
    leave_out: frozenset[str],
    specs: tuple[Component, ...] = COMPONENTS,
) -> None:
    """Ask at once the question each component's search will ask first
    (``Locator.question``: the tools' ``--version``, the compiler's ``-v``), so that the
    processes of independent components run together, not one after another. Only the
    answers are kept (``_answers``, per version of the file); the search still judges
    every candidate in its order, so asking ahead cannot change what it takes. Where a
    variable names the component, its search asks no candidate (not asked ahead)."""
    ctx = Context(arch=arch)
    questions = []
    for spec in specs:
        if spec.name in leave_out:
            continue
        locator = LOCATORS[spec.name]
        if locator.question is None:
            continue
        if any(host.environ.get(n) for n in (spec.variable, *spec.also_read) if n):
            continue
        path = first(locator.steps, host, ctx)
        with contextlib.suppress(ValueError):
            questions += [locator.question(host, path)] if path is not None else []
    if len(questions) > 1:
        ask_each(questions, host.answers)


def _check_arch(arch: int | None) -> None:
    if arch is not None and (
        not isinstance(arch, int) or isinstance(arch, bool) or arch not in ARCH_RELEASES
    ):
        known = ", ".join(str(a) for a in ARCH_RELEASES)
        raise SettingError(
            f"arch={arch!r} is not a known NVIDIA compute capability; give the number without "
            f"the dot (90 for sm_90), one of {known}"
        )


def resolve_all(
    arch: int | None = None,
    *,
    host: Host | None = None,
    leave_out: frozenset[str] = frozenset(),
    unless_in_manifest: frozenset[str] = frozenset(),
    backend: str = "nvidia",
    gfx: str | None = None,
) -> Toolchain:
    """Resolve every component for ``sm_<arch>`` on ``host`` (default: this process),
    keeping a wrong explicit setting in its component's ``Choice.error``; those named in
    ``leave_out`` are not looked for and are absent from the result (the parts a plan
    leaves pending, ``_plan.left_out``: nothing else depends on them), but for those of
    ``unless_in_manifest`` that the manifest names (``_plan.in_manifest_at_import``).
    ``backend``: Triton's backend whose components are resolved with those of no
    backend (``_catalog.backend_components``); ``gfx``: the AMD target (``gfx942``).

    Raises ``SettingError`` for a wrong ``arch`` or ``TRITON_TOOLCHAIN_MANIFEST`` and
    ``ManifestError`` for a manifest that cannot be used.
    """
    _check_arch(arch)
    if backend not in BACKENDS or (gfx is not None and gfx_name(gfx) != gfx):
        raise SettingError(
            f"backend={backend!r}, gfx={gfx!r}: give one of {', '.join(BACKENDS)} and an AMD "
            "architecture such as gfx942"
        )
    specs = COMPONENTS if backend == "nvidia" else backend_components(backend)
    host = host or Host.current()
    manifest = load_for(host)
    if manifest is not None:
        leave_out -= unless_in_manifest & manifest.components.keys()
    exports = read_exports(host.environ.get(EXPORTS_VARIABLE))
    chosen: dict[str, Choice] = {}
    with written_once():  # what tools answered: one write of the answers' file
        if manifest is None:  # a manifest's entries run no process (recorded versions)
            _ask_ahead(host, arch, leave_out, specs)
        for spec in specs:
            if spec.name in leave_out:
                continue
            ctx = Context(arch=arch, chosen=chosen, gfx=gfx)
            cascade = _Cascade(spec, LOCATORS[spec.name], host, ctx, manifest, exports)
            chosen[spec.name] = cascade.run()
    return Toolchain(
        chosen,
        arch=arch,
        manifest=str(manifest.file) if manifest else None,
        strict=manifest.strict if manifest else False,
        notes=_notes(host, arch),
    )


def resolve(arch: int | None = None, *, host: Host | None = None) -> Toolchain:
    """Resolve every component of the toolchain for ``sm_<arch>`` (``None``: no
    particular architecture) on ``host`` (default: this process).

    Search order per component: its variable (explicit), the manifest
    (``TRITON_TOOLCHAIN_MANIFEST``, the package's, ``sys.prefix``'s, the user's,
    ``/etc``'s), discovery. Raises ``SettingError`` or ``ManifestError`` for bad input;
    a component that is simply absent is a ``Choice`` without a path, explained.
    """
    tc = resolve_all(arch, host=host)
    errors = dict.fromkeys(c.error for c in tc.errors() if c.error)
    if errors:
        raise SettingError("; ".join(errors))
    return tc


def _notes(host: Host, arch: int | None) -> tuple[str, ...]:
    """Facts about the settings worth a line in ``doctor`` (for ``sm_<arch>``)."""
    notes = []
    if host.environ.get("TRITON_PTXAS_PATH") and not host.environ.get(
        "TRITON_PTXAS_BLACKWELL_PATH"
    ):
        switch = host.triton.blackwell_from if host.triton else None
        if arch is not None and (switch is None or arch < switch):
            return ()  # TRITON_PTXAS_PATH is the ptxas Triton runs for this target
        when = f"from sm_{switch} on" if switch else "from sm_90 on (3.9) or sm_100 on (3.6-3.8)"
        if host.triton is None or switch is not None:
            notes.append(
                f"TRITON_PTXAS_PATH is set but TRITON_PTXAS_BLACKWELL_PATH is not: Triton runs "
                f"ptxas-blackwell {when}, so set both to use your ptxas everywhere"
            )
    return tuple(notes)
