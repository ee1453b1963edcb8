"""``resolve()``: every component, from explicit settings, then a manifest, then discovery.

Guarantees:
- An explicit setting (Triton's own variable, e.g. ``TRITON_PTXAS_PATH``, or ``CC``)
  that fails its check raises ``SettingError`` naming the variable; it is never
  replaced by another path.
- A manifest entry that fails its check is recorded as rejected; without ``strict``
  discovery then runs, with ``strict`` the component is missing.
- A manifest that records versions is resolved without starting a process or importing
  an ELF reader (the driver's directories are checked by name and version only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from . import _compiler, _headers, _tools
from ._catalog import ARCH_RELEASES, SPECS_TUPLE, ComponentSpec
from ._driver import resolve_driver
from ._errors import SettingError
from ._fs import forget_real_paths
from ._host import Host
from ._manifest import Manifest, find, load
from ._model import Choice, Rejection, Source, SourceKind, Toolchain
from ._search import Context, Locator, search


def component_locators() -> dict[str, Locator]:
    """The locator of every component but the driver's two, by name."""
    return {**_tools.LOCATORS, **_compiler.LOCATORS, **_headers.LOCATORS}


def _explicit_path(spec: ComponentSpec, value: str, host: Host) -> Path:
    """The path an explicit setting names. ``CC=gcc`` (a bare name) is looked up on the
    absolute entries of ``PATH``, as Triton does with ``shutil.which``."""
    if spec.name != "cc":
        return Path(value)
    path, problem = _compiler.compiler_from_setting(host, value)
    if path is None:
        raise SettingError(f"CC={value!r}: {problem}; fix: {spec.fix}")
    return path


# Advice that depends on the host (the distribution's package name), added to a
# missing component's notes.
_HOST_ADVICE: dict[str, Callable[[Host], str]] = {"python-headers": _headers.python_headers_fix}


def _resolve_component(
    spec: ComponentSpec, locator: Locator, host: Host, arch: int | None, manifest: Manifest | None
) -> Choice:
    value = host.environ.get(spec.env) if spec.env else None
    if value:
        path = _explicit_path(spec, value, host)
        # A wrapper (the Nix one) exports the manifest's paths in Triton's variables too:
        # the manifest's recorded version then spares running the tool.
        entry = manifest.components.get(spec.name) if manifest else None
        recorded = entry.version if entry is not None and entry.path == path else None
        verdict = locator.check(host, path, Context(arch, recorded))
        if verdict.problem is not None:
            raise SettingError(f"{spec.env}={value!r}: {verdict.problem}; fix: {spec.fix}")
        return Choice(spec.name, str(path), verdict.version, Source(SourceKind.ENV, spec.env or ""))

    rejected: list[Rejection] = []
    searched: list[str] = []
    notes: list[str] = []
    if manifest is not None:
        source = Source(SourceKind.MANIFEST, str(manifest.file))
        entry = manifest.components.get(spec.name)
        if entry is not None:
            searched.append(f"{source}: {entry.path}")
            verdict = locator.check(host, entry.path, Context(arch, entry.version))
            if verdict.problem is None:
                version = verdict.version or entry.version
                return Choice(spec.name, str(entry.path), version, source, searched=tuple(searched))
            rejected.append(Rejection(str(entry.path), verdict.problem, source))
        if manifest.strict:
            notes.append(f"the manifest {manifest.file} is strict: discovery is off")
            return Choice(
                spec.name, rejected=tuple(rejected), searched=tuple(searched), notes=tuple(notes)
            )

    check = locator.check
    choice = search(
        spec.name,
        locator.steps,
        lambda p: check(host, p, Context(arch=arch)),
        host,
        rejected=rejected,
        searched=searched,
    )
    if choice.path is None and spec.name in _HOST_ADVICE:
        return replace(choice, notes=(*choice.notes, _HOST_ADVICE[spec.name](host)))
    return choice


def _check_arch(arch: int | None) -> None:
    if arch is not None and (
        not isinstance(arch, int) or isinstance(arch, bool) or arch not in ARCH_RELEASES
    ):
        known = ", ".join(str(a) for a in ARCH_RELEASES)
        raise SettingError(
            f"arch={arch!r} is not a known NVIDIA compute capability; give the number without "
            f"the dot (90 for sm_90), one of {known}"
        )


def resolve(arch: int | None = None, *, host: Host | None = None) -> Toolchain:
    """Resolve every component of Triton's toolchain for ``sm_<arch>`` (``None``: no
    particular architecture) on ``host`` (default: this process).

    Search order per component: Triton's variable (explicit), the manifest
    (``TRITON_TOOLCHAIN_MANIFEST``, the package's, ``sys.prefix``'s, the user's,
    ``/etc``'s), discovery. Raises ``SettingError`` or ``ManifestError`` for bad input;
    a component that is simply absent is a ``Choice`` without a path, explained.
    """
    _check_arch(arch)
    forget_real_paths()
    host = host or Host.current()
    manifest_file = find(host)
    manifest = load(manifest_file) if manifest_file else None
    locators = component_locators()

    choices: dict[str, Choice] = {}
    for spec in SPECS_TUPLE:
        if spec.name in locators:
            choices[spec.name] = _resolve_component(spec, locators[spec.name], host, arch, manifest)

    link_entry = manifest.components.get("libcuda-link") if manifest else None
    choices["libcuda"], choices["libcuda-link"] = resolve_driver(
        host,
        explicit=host.environ.get("TRITON_LIBCUDA_PATH") or None,
        manifest_dirs=manifest.driver_dirs if manifest else (),
        manifest_link=link_entry.path if link_entry else None,
        manifest_source=Source(SourceKind.MANIFEST, str(manifest.file)) if manifest else None,
        strict=manifest.strict if manifest else False,
    )
    ordered = {spec.name: choices[spec.name] for spec in SPECS_TUPLE}
    return Toolchain(
        ordered,
        arch=arch,
        manifest=str(manifest.file) if manifest else None,
        strict=manifest.strict if manifest else False,
        notes=_notes(host),
    )


def _notes(host: Host) -> tuple[str, ...]:
    """Facts about the settings worth a line in ``doctor``."""
    notes = []
    if host.environ.get("TRITON_PTXAS_PATH") and not host.environ.get(
        "TRITON_PTXAS_BLACKWELL_PATH"
    ):
        notes.append(
            "TRITON_PTXAS_PATH is set but TRITON_PTXAS_BLACKWELL_PATH is not: Triton 3.9 runs "
            "ptxas-blackwell for sm_90 and newer (older releases from sm_100), so set both to "
            "use your ptxas everywhere"
        )
    return tuple(notes)
