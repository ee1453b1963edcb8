"""The ``triton-toolchain`` command: doctor (also without a command), env, which, lock,
pkg-config, check-manifest, run.

Exit status: 0 when what was asked for is ready (``doctor``: the goal of ``--for``,
by default Triton kernels compiled and launched; ``env``, ``lock``: every required
component), 1 when it is not (the output says why and the one thing to do; ``doctor
-v`` where the shim looked), 2 for bad input (a wrong setting or manifest, a wrong
argument; for ``doctor`` also a manifest entry that was rejected, named by the manifest
and key, even where discovery found another) and when the output cannot be written (a
closed pipe, a full disk). Never a traceback for any of these.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..resolver._caches import caches_for
from ..resolver._catalog import (
    AMD_GOALS,
    ARCH_RELEASES,
    COMPONENT,
    COMPONENT_NAMES,
    GOALS,
    MANIFEST_COMPONENTS,
    PTXAS_FAMILY,
    gfx_name,
)
from ..resolver._discovery._hip import bundled_headers
from ..resolver._discovery._host import Host
from ..resolver._discovery._probe import driver_cuda, gpu_arch
from ..resolver._exports import FORMATS, merged_env, shell_script, toolchain_env
from ..resolver._manifest import load, to_json, write
from ..resolver._model import Toolchain
from ..resolver._resolve import judge_manifest, manifest_rejections, resolve, resolve_all
from ..runtime import user_environ
from ..runtime._errors import ManifestError, SettingError, ToolchainError, printable
from . import _pcfile
from ._doctor import judged_for, runs_for
from ._report import (
    GoalVerdict,
    Installed,
    advisories,
    doctor_details,
    doctor_report,
    explain_missing,
    judge,
    shown_components,
    wrap_long_lines,
)
from ._selftest import SelfTestReport, self_test

_ARCH = re.compile(r"^(?:sm_|compute_)?([0-9]+)(?:\.([0-9]))?[af]?$")


def parse_arch(text: str) -> int | str:
    """``"90"``, ``"sm_90a"`` and ``"9.0"`` all mean 90; ``"gfx942"`` (an AMD
    architecture, ``_catalog.gfx_name``) selects Triton's AMD backend."""
    gfx = gfx_name(text)
    if gfx is not None:
        return gfx
    match = _ARCH.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an architecture; write e.g. 90 or sm_90a (NVIDIA), gfx942 (AMD)"
        )
    major, minor = match.groups()
    return int(major) * 10 + int(minor) if minor is not None else int(major)


def _manifest_line(tc: Toolchain) -> str:
    """``manifest: FILE (schema 2, by GENERATOR, strict)`` or ``manifest: none``."""
    if tc.manifest is None:
        return "manifest: none"
    facts = []
    try:
        manifest = load(Path(tc.manifest))
        facts.append(f"schema {manifest.schema}")
        if manifest.generator:
            facts.append(f"by {manifest.generator}")
    except ToolchainError:  # changed since it was resolved: the resolution says the rest
        pass
    if tc.strict:
        facts.append("strict")
    return f"manifest: {tc.manifest}" + (f" ({', '.join(facts)})" if facts else "")


def _header(tc: Toolchain, installed: Installed) -> str:
    target = f"sm_{tc.arch}" if tc.arch else "any architecture"
    return "\n".join(
        (
            f"triton-toolchain {__version__}: "
            f"{installed.describe('triton')}, {installed.describe('torch')}, "
            f"Python {platform.python_version()} ({sys.executable}), {platform.machine()}",
            f"target {target}; {_manifest_line(tc)}",
        )
    )


def _status(tc: Toolchain, stage: str | None) -> int:
    return 1 if tc.missing(None if stage == "all" else stage) else 0


def _resolve_verified(arch: int | str | None) -> Toolchain:
    """Everything checked, recorded versions too (``Host.verify``); an AMD ``arch``
    (``gfx942``) resolves the AMD backend's rows (``_resolve_target``)."""
    return _resolve_target(arch, Host.current(verify=True))


# `doctor --for`'s older names: one step of the Triton goal, or the Triton goal whole.
FOR_ALIASES: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "compile": ("triton", ("compile",)),
    "launch": ("triton", ("launch",)),
    "all": ("triton", None),
}
# The goal whose readiness is the exit status of `doctor` without `--for`.
DEFAULT_GOAL = "triton"


def _focus(
    judged: dict[str, GoalVerdict], name: str | None
) -> tuple[dict[str, GoalVerdict], GoalVerdict]:
    """The verdicts to show and the one whose readiness is the exit status."""
    if name is None or name == "all":
        return judged, judged[DEFAULT_GOAL]
    goal, steps = FOR_ALIASES.get(name, (name, None))
    verdict = judged[goal] if steps is None else judged[goal].only(steps)
    return {goal: verdict}, verdict


@contextlib.contextmanager
def _warnings_as_lines(shown: Sequence[str], lines: list[str]) -> Iterator[None]:
    """Warnings raised while ``doctor`` imports Triton (the shim's own activation
    repeating a wrong setting, Triton's deprecations) become one ``warning:`` line each,
    added to ``lines`` (printed after the report's header, ``_print_warnings``), not
    Python's ``file:line: RuntimeWarning`` and a source line; those repeating an error the
    report shows (``shown``) are left out."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        text = str(warning.message)
        if not any(error in text for error in shown):
            lines.append(f"warning: {' '.join(text.split())}")


def _print_warnings(lines: list[str]) -> None:
    """Each warning once, on standard error, after what standard output has so far."""
    sys.stdout.flush()
    for line in dict.fromkeys(lines):
        print(wrap_long_lines(line), file=sys.stderr)
    lines.clear()


def _arch_of_the_gpu(host: Host) -> int | None:
    """The architecture of the GPU that the driver the cascade chooses sees
    (``_probe.gpu_arch``, in a child process), or ``None``: no driver, no GPU. Only the
    driver is looked for (the rest is resolved once, for this architecture)."""
    alone = frozenset(COMPONENT_NAMES) - {"libcuda"}
    driver = resolve_all(host=host, leave_out=alone)["libcuda"].path
    return gpu_arch(Path(driver))[0] if driver is not None else None


def _note_driver_fit(tc: Toolchain, host: Host) -> Toolchain:
    """``tc`` with a note where the chosen driver does not say which CUDA release it
    supports (``cuDriverGetVersion`` fails, is missing or answers no version): whether
    its ptxas's cubins load on it was not checked, and doctor says so."""
    driver = tc["libcuda"].path
    if driver is None:
        return tc
    supported, why = driver_cuda(Path(driver), answers=host.answers)
    if supported is not None:
        return tc
    note = (
        f"driver fit not checked: {driver} did not say which CUDA release it supports "
        f"({why}); a cubin of a newer CUDA than the driver's will not load on it"
    )
    return tc.replace(notes=(note, *tc.notes))


# The shape of `doctor --json` (its "schema"): 2 added "schema", "versions" and the
# places looked at as objects ({"source", "path"}, were "source: path" strings).
JSON_SCHEMA = 2


def _place(entry: str) -> dict[str, str]:
    """A place looked at, ``"discovered:PATH: /usr/bin/gcc"``, as ``{"source", "path"}``."""
    source, _, path = entry.partition(": ")
    return {"source": source, "path": path}


def _doctor_json(tc: Toolchain, installed: Installed) -> dict[str, Any]:
    """The resolution as ``doctor --json`` gives it, with the schema and the versions."""
    doc: dict[str, Any] = {
        "schema": JSON_SCHEMA,
        "versions": {
            "triton-toolchain": __version__,
            "triton": installed.triton,
            "torch": installed.torch,
            "torch_cuda": installed.torch_cuda,
            "python": platform.python_version(),
        },
        **tc.to_dict(),
    }
    for component in doc["components"].values():
        component["searched"] = [_place(entry) for entry in component["searched"]]
    return doc


def _self_test_json(report: SelfTestReport | None) -> dict[str, Any]:
    """``doctor --run --json``'s ``self_test``: whether it passed and each step."""
    if report is None:
        return {}
    steps = [{"name": s.name, "ok": s.ok, "detail": s.detail} for s in report.steps]
    return {"self_test": {"ok": report.ok, "steps": steps}}


def _doctor_amd(args: argparse.Namespace, host: Host) -> int:
    """``doctor --arch gfx942``: the AMD backend's goals (``_catalog.AMD_GOALS``), its
    components and those of no backend, resolved for that target."""
    gfx = args.arch
    if args.run:
        raise SettingError(
            f"--run with --arch {gfx}: the self-test builds and launches on an NVIDIA GPU "
            f"only for now; fix: drop --run (`doctor --arch {gfx}` judges the AMD backend)"
        )
    tc = resolve_all(host=host, backend="amd", gfx=gfx)
    installed = Installed.of(host)
    judged = judge(tc, installed, goals=AMD_GOALS)
    name = args.goal if args.goal in (None, "all") or args.goal in AMD_GOALS else None
    if args.goal is not None and name is None and args.goal not in FOR_ALIASES:
        raise SettingError(
            f"--for {args.goal}: the AMD backend has the goals {', '.join(AMD_GOALS)} (and "
            f"{', '.join(FOR_ALIASES)}); fix: drop --for or give one of them"
        )
    verdicts, focus = _focus(judged, args.goal)
    shown = shown_components(verdicts)
    wrong = set(shown) & {c.component for c in tc.errors()}
    rejected = manifest_rejections(tc, host, backend="amd", gfx=gfx)
    status = 2 if wrong or rejected else (0 if focus.ready else 1)
    if args.json:
        doc = _doctor_json(tc, installed)
        doc["backend"] = "amd"
        doc["target"] = gfx
        doc["versions"]["torch_hip"] = installed.torch_hip
        doc["goals"] = {n: verdict.to_dict() for n, verdict in judged.items()}
        doc["manifest_rejections"] = rejected
        print(json.dumps(doc, indent=2))
        return status
    target = f"target {gfx} (AMD); {_manifest_line(tc)}"
    header = _header(tc, installed).rsplit("\n", 1)[0] + "\n" + target
    text = doctor_report(tc, header=header, verdicts=verdicts, installed=installed)
    if args.verbose:
        text = text.rsplit("\n", 2)[0] + doctor_details(tc, shown, installed)
    print(wrap_long_lines(text))
    _print_rejections(rejected, f"lock --arch {gfx}")
    return status


def _print_rejections(rejected: list[str], lock: str = "lock") -> None:
    """A manifest's rejected entries (``manifest_rejections``), each with the fix
    (``lock``: the command that writes the manifest again, ``lock --arch gfx942``)."""
    for line in rejected:
        fix = "correct the entry or regenerate the manifest with " + (
            f"`triton-toolchain {lock} -o FILE --force`"
        )
        print(f"\nerror: {line}\n  fix: {fix}", file=sys.stderr)


def _target(asked: int | None, host: Host) -> tuple[int | None, int | None, list[str]]:
    """The target to judge (``asked``; without ``--arch``, the GPU present says which
    ptxas must serve it), the GPU's architecture and what doctor notes of it."""
    arch, notes = asked, []
    gpu = _arch_of_the_gpu(host) if asked is None else None
    if gpu is not None and gpu not in ARCH_RELEASES:  # not known: said, not judged
        notes.append(
            f"the GPU reports compute capability {gpu // 10}.{gpu % 10}, which "
            f"triton-toolchain {__version__} does not know: no ptxas was checked for it "
            "(`doctor --arch N` checks one for sm_N)"
        )
    elif gpu is not None:
        arch = gpu
        notes.append(f"target sm_{arch}: the GPU's, as its driver reports it")
    return arch, gpu, notes


def _amd_compile(
    tc: Toolchain, installed: Installed, judged: dict[str, GoalVerdict]
) -> GoalVerdict | None:
    """Where no GPU says which backend and no target is asked for: the AMD backend's
    compile goal too (Triton 3.6+ compile for AMD with nothing from the machine;
    `--arch gfx942` judges the launch), where the installed Triton's AMD backend was
    read and no goal waits for a package (the screen then says what to install first,
    and stays one screen)."""
    release = installed.triton_release
    if release is None or release.hip_major_min is None:
        return None
    if any(verdict.blockers for verdict in judged.values()):
        return None
    goal = AMD_GOALS["triton"]
    compiling = {"triton": goal._replace(title="compile for AMD", steps=goal.steps[:1])}
    return judge(tc, installed, goals=compiling)["triton"]


def cmd_doctor(args: argparse.Namespace) -> int:
    host = Host.current(verify=True)
    if isinstance(args.arch, str):
        return _doctor_amd(args, host)
    arch, gpu, notes = _target(args.arch, host)
    tc = resolve_all(arch, host=host)
    caches = caches_for(host)
    tc = _note_driver_fit(tc.replace(notes=(*notes, *tc.notes)), host)
    installed = Installed.of(host)
    goal, steps = FOR_ALIASES.get(args.goal, (args.goal, None)) if args.goal else (None, None)
    asks_ptxas = goal is None or any(
        c in PTXAS_FAMILY
        for step in GOALS[goal].steps
        if steps is None or step.name in steps
        for c in step.components
    )
    shown = [c.error for c in tc.errors() if c.error]
    warned: list[str] = []
    with _warnings_as_lines(shown, warned):
        tc, refused, runs = judged_for(tc, arch, asks_ptxas)
    judged = judge(tc, installed, refused)
    verdicts, focus = _focus(judged, args.goal)
    amd = (
        _amd_compile(tc, installed, judged) if (args.arch, gpu, args.goal) == (None,) * 3 else None
    )
    verdicts = {**verdicts, "triton-amd": amd} if amd is not None else verdicts
    rejected = manifest_rejections(tc, host)
    # A wrong setting is exit status 2 where the goal asked for uses it; a setting of
    # another goal's component (a stale CUDA_HOME for `--for compile`) is only noted.
    wrong = set(shown_components(verdicts)) & {c.component for c in tc.errors()}
    # A cache others can change is as wrong as a setting (``_caches``).
    unsafe = any(c["error"] for c in caches.values())
    status = 2 if wrong or rejected or unsafe else (0 if focus.ready else 1)
    report = None
    if args.run:
        with _warnings_as_lines(shown, warned):
            report = self_test(tc)
        status = status or (0 if report.ok else 1)
    if args.json:
        doc = _doctor_json(tc, installed)
        doc["refused_by_triton"] = list(refused)
        doc["runs"] = runs._asdict() if runs is not None else None
        doc["advisories"] = advisories(tc, installed.triton_release)
        doc["goals"] = {name: verdict.to_dict() for name, verdict in judged.items()}
        if amd is not None:  # the other backend's compile goal (`--arch gfx942`: all of it)
            doc["other_backends"] = {"amd": {"goals": {"triton": amd.to_dict()}}}
        doc.update(manifest_rejections=rejected, caches=caches)
        doc.update(_self_test_json(report))
        print(json.dumps(doc, indent=2))
        _print_warnings(warned)
    else:
        header = _header(tc, installed)
        # The report fits the screen (`COLUMNS`, else the terminal, else 100 columns).
        text = doctor_report(
            tc, header=header, verdicts=verdicts, installed=installed, caches=caches
        )
        if args.verbose:
            text = text.rsplit("\n", 2)[0]  # without the hint that -v has more
            text += doctor_details(tc, shown_components(verdicts), installed, caches)
        print(wrap_long_lines(text))
        _print_warnings(warned)
        _print_rejections(rejected)
        if report is not None:
            print(wrap_long_lines("\n" + report.text))
    return status


def _resolve_target(arch: int | str | None, host: Host | None = None) -> Toolchain:
    """``resolve`` for ``arch``: an AMD one (``gfx942``) resolves the AMD backend's rows
    (a wrong setting raised as ``resolve`` raises it)."""
    if not isinstance(arch, str):
        return resolve(arch, host=host)
    tc = resolve_all(host=host, backend="amd", gfx=arch)
    errors = dict.fromkeys(c.error for c in tc.errors() if c.error)
    if errors:
        raise SettingError("; ".join(errors))
    return tc


def cmd_env(args: argparse.Namespace) -> int:
    tc = _resolve_target(args.arch)
    script = shell_script(toolchain_env(tc), args.format)
    try:  # the bytes of the paths, whatever standard output's encoding
        sys.stdout.flush()
        sys.stdout.buffer.write(script)
        sys.stdout.buffer.flush()
    except OSError as exc:
        raise _OutputLost(exc) from None
    for choice in tc.missing(None):
        print(f"# missing: {choice.component} (run `triton-toolchain doctor`)", file=sys.stderr)
    return _status(tc, "all")


def cmd_which(args: argparse.Namespace) -> int:
    family = args.component in PTXAS_FAMILY and isinstance(args.arch, int)
    runs = runs_for(args.arch) if family else None
    if runs is not None and runs.component == args.component:
        if runs.path is None:  # what the compile for the target stops with (2: a setting's)
            print(f"error: for sm_{args.arch}, {runs.error}", file=sys.stderr)
            return 2 if str(runs.error).startswith(SettingError.__name__) else 1
        print(runs.path)  # the binary that assembles for the target
        return 0
    if runs is not None:
        print(
            f"note: for sm_{args.arch} Triton runs {runs.component}, not {args.component} "
            f"(`triton-toolchain which {runs.component} --arch {args.arch}`)",
            file=sys.stderr,
        )
    amd = isinstance(args.arch, str) or COMPONENT[args.component].backend == "amd"
    if amd and COMPONENT[args.component].backend == "nvidia":
        raise SettingError(
            f"{args.component} --arch {args.arch}: {args.component} is the NVIDIA backend's; "
            "fix: drop --arch or name a component of the AMD backend (libamdhip64)"
        )
    gfx = args.arch if isinstance(args.arch, str) else None
    arch = None if amd else args.arch
    tc = resolve_all(arch, backend="amd" if amd else "nvidia", gfx=gfx)
    choice = tc[args.component]
    if choice.error:
        raise SettingError(choice.error)
    if choice.path is None:
        print(explain_missing(choice, tc), file=sys.stderr)
        return 1
    print(choice.path)
    return 0


# What the machine that runs a program provides, not its image: the driver, and the
# directory the launcher links against (the driver's).
HOST_DRIVER = ("libcuda", "libcuda-link")
LOCK_WITHOUT_DRIVER = (
    "an image built without a GPU may lock without the driver, which the machine running "
    "the image provides (the NVIDIA container toolkit mounts it; the shim finds it there): "
    "`{command}` exits 0 when everything else is found"
)


def _lock_without_driver(args: argparse.Namespace) -> str:
    """The same ``lock`` with ``--no-driver``, as a command that runs: with ``--force``
    where it writes a file (this ``lock`` wrote it; without ``--force`` the next would
    refuse it)."""
    words = ["triton-toolchain", "lock", "--no-driver"]
    words += ["--arch", str(args.arch)] if args.arch is not None else []
    words += ["--strict"] if args.strict else []
    words += ["--force", "-o", os.path.abspath(args.output)] if args.output else []
    return shlex.join(words)


def _doctor_for(arch: int | str | None) -> str:
    """The ``doctor`` command that judges ``arch``'s backend (``--arch gfx942`` for AMD)."""
    return "triton-toolchain doctor" + (f" --arch {arch}" if isinstance(arch, str) else "")


def _lock_missing(tc: Toolchain, args: argparse.Namespace) -> list[str]:
    """What ``lock`` says about required components it did not find (its exit status is 1
    for them), and how a GPU-less image build locks without the driver."""
    missing = [c.component for c in tc.missing(None)]
    if args.no_driver:
        missing = [name for name in missing if name not in HOST_DRIVER]
    if not missing:
        return []
    lines = [
        f"missing: {', '.join(missing)}; the manifest names only what was found "
        f"(`{_doctor_for(args.arch)}` says why and what to do)"
    ]
    if set(missing) & set(HOST_DRIVER):
        lines.append(LOCK_WITHOUT_DRIVER.format(command=_lock_without_driver(args)))
    return lines


def _pins(values: list[str]) -> dict[str, str]:
    """``lock --cache NAME=DIR``, each: the name and the directory, once per name."""
    pins: dict[str, str] = {}
    for value in values:
        name, equals, directory = value.partition("=")
        if not equals or name in pins:
            problem = f"{name} is pinned twice" if equals else "give NAME=DIRECTORY"
            raise ManifestError(
                f"lock --cache {value!r}: {problem}, e.g. "
                "--cache 'triton=/local/scratch/$USER/triton'"
            )
        pins[name] = directory
    return pins


# Per backend, the driver whose directory ``lock`` writes as ``driver_dirs`` (a
# manifest's ``driver_dirs`` hold each backend's driver under its own file names:
# ``_resolve.driver_in``), what to call it, and the setting that names it.
LOCK_DRIVER = {
    "nvidia": ("libcuda", "NVIDIA driver", "TRITON_LIBCUDA_PATH names its directory"),
    "amd": ("libamdhip64", "HIP runtime (libamdhip64)", "TRITON_LIBHIP_PATH names it"),
}


def cmd_lock(args: argparse.Namespace) -> int:
    backend = "amd" if isinstance(args.arch, str) else "nvidia"
    if backend == "amd" and args.no_driver:
        raise SettingError(
            f"lock --no-driver --arch {args.arch}: the HIP runtime is ROCm's user space, part "
            "of the image (a container is given only the GPU's devices, /dev/kfd and "
            "/dev/dri), so an image locks with it installed; fix: drop --no-driver"
        )
    tc = _resolve_verified(args.arch)
    components = {
        name: (choice.path, choice.version)
        for name in MANIFEST_COMPONENTS
        if (choice := tc.choices.get(name)) is not None and choice.path is not None
    }
    name, what, setting = LOCK_DRIVER[backend]
    driver = tc[name].path
    if args.strict and driver is None:
        # A strict manifest looks for the driver only in its driver_dirs: none would do.
        raise SettingError(
            f"lock --strict: no {what} was found here, so the manifest would have no "
            "driver_dirs, and a strict manifest looks for the driver nowhere else: it could "
            f"never find one; fix: lock where the driver is installed ({setting}), or leave "
            "out --strict"
            + (" (--no-driver lets the manifest go without one)" if args.no_driver else "")
        )
    text = to_json(
        components,
        driver_dirs=(os.path.dirname(driver),) if driver else (),
        strict=args.strict,
        caches=_pins(args.cache),
    )
    if args.output is None:
        sys.stdout.write(text)
    elif not args.output:  # os.path.abspath("") would be the current directory
        raise ManifestError("lock -o '': give the path of the manifest file to write")
    else:
        out = Path(os.path.abspath(args.output))
        done = write(out, text, force=args.force)
        print(f"{done} ({len(components)} components)", file=sys.stderr)
    missing = _lock_missing(tc, args)
    for line in missing:
        print(wrap_long_lines(line), file=sys.stderr)
    return 1 if missing else 0


def cmd_pkg_config(args: argparse.Namespace) -> int:
    """Write ``triton-toolchain.pc`` (``_pcfile``) to standard output or into ``-o DIR``
    (temporary file and rename, as ``lock``); exit 1 when a component it names is
    missing (it is left out of the file and named on standard error). An AMD ``--arch``
    writes the AMD backend's (``_pcfile.AMD``)."""
    host = Host.current(verify=True)
    tc = _resolve_target(args.arch, host)
    backend = _pcfile.AMD if isinstance(args.arch, str) else _pcfile.NVIDIA
    paths = {c.component: c.path for c in tc}
    if backend is _pcfile.AMD:  # the launcher's headers; the HIP runtime's directory
        headers, why = bundled_headers(host)
        hip = paths["libamdhip64"]
        paths["hip-headers"] = str(headers) if headers else None
        paths["libhip-link"] = os.path.dirname(hip) if hip else None
        if why:
            print(wrap_long_lines(f"note: hip-headers: {why}"), file=sys.stderr)
    try:
        text = _pcfile.pc_text(paths, backend)
    except _pcfile.Unsayable as exc:
        print(wrap_long_lines(f"error: {exc}"), file=sys.stderr)
        return 2
    if args.output is None:
        sys.stdout.write(text)
    elif not args.output:
        raise ManifestError("pkg-config -o '': give the directory to write triton-toolchain.pc in")
    else:
        out = Path(os.path.abspath(args.output)) / _pcfile.FILE_NAME
        print(write(out, text, force=args.force), file=sys.stderr)
    absent = _pcfile.missing(paths, backend)
    if absent:
        print(
            wrap_long_lines(
                f"missing: {', '.join(absent)}; left out of {_pcfile.FILE_NAME} "
                f"(`{_doctor_for(args.arch)}` says why and what to do)"
            ),
            file=sys.stderr,
        )
    return 1 if absent else 0


def cmd_check_manifest(args: argparse.Namespace) -> int:
    """Validate a manifest and print ``_resolve.judge_manifest``'s verdict on each entry
    (for packagers: the Nix flake's checks run this on the manifest it writes). A
    rejected entry's line names the manifest and the key. An AMD ``--arch`` judges the
    AMD backend's entries for it (the HIP runtime in ``driver_dirs``)."""
    manifest = load(Path(os.path.abspath(args.file)))
    problems = 0
    amd = isinstance(args.arch, str)
    arch, gfx = (None, args.arch) if amd else (args.arch, None)
    host = Host.current(verify=True)
    for judged in judge_manifest(manifest, host, arch, backend="amd" if amd else "nvidia", gfx=gfx):
        name, problem = judged.component, judged.verdict.problem
        if problem:
            problems += 1
            print(f"REJECTED {name:16} {judged.path}: {problem} ({manifest.file}: {judged.key})")
        else:
            print(f"ok       {name:16} {judged.path} {judged.version or ''}")
    dirs = ", ".join(map(str, manifest.driver_dirs)) or "none"
    print(f"schema {manifest.schema}, strict={str(manifest.strict).lower()}, driver_dirs: {dirs}")
    return 1 if problems else 0


def run_with_toolchain(argv: list[str], *, arch: int | str | None = None) -> int:
    """``triton-toolchain run -- CMD ARGS...``: replace this process by ``CMD`` with the
    toolchain's variables exported (``_exports.merged_env``) where the environment does
    not already set them, and ``PATH``/``LD_LIBRARY_PATH`` without empty or relative
    entries. The non-Nix twin of the Nix wrapper. Returns only on failure: 127 when
    ``CMD`` cannot be found, 126 when it cannot be run (as shells do)."""
    tc = _resolve_target(arch, Host.current(user_environ()))
    env = merged_env(tc, os.environ)
    program = argv[0]
    if os.sep not in program:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
        if found is None or not os.path.isabs(found):
            print(f"triton-toolchain run: {program}: command not found", file=sys.stderr)
            return 127
        program = found
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(program, argv, env)  # noqa: S606  a resolved absolute path, no shell
    except OSError as exc:
        print(f"triton-toolchain run: {program}: {exc.strerror or exc}", file=sys.stderr)
        return 126 if os.path.exists(program) else 127
    return 0  # pragma: no cover  (execve does not return)


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print(
            "error: nothing to run; usage: triton-toolchain run -- CMD [ARGS...]", file=sys.stderr
        )
        return 2
    return run_with_toolchain(command, arch=args.arch)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="triton-toolchain",
        description="Tells OpenAI Triton and torch (torch.compile, C++/CUDA extensions) where "
        "their run-time toolchain is: ptxas, the C and C++ compilers, headers, libdevice, "
        "OpenMP, the CUDA toolkit and the NVIDIA driver. Without a command: doctor.",
    )
    parser.add_argument("--version", action="version", version=f"triton-toolchain {__version__}")
    sub = parser.add_subparsers(dest="cmd")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--arch",
            type=parse_arch,
            default=None,
            help="target GPU architecture, e.g. 90 or sm_90a, or an AMD one, gfx942 (default: any)",
        )
        return p

    p = add(
        "doctor",
        "say whether Triton kernels, torch.compile (GPU, CPU) and C++/CUDA extensions can "
        "run here, and if not the one thing to do; then every component",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also every place looked at, every rejected candidate and why, every note",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--for",
        dest="goal",
        metavar="GOAL",
        choices=(*GOALS, *FOR_ALIASES),
        default=None,
        help="show only GOAL, whose readiness is the exit status: "
        + ", ".join(f"{name} ({goal.title})" for name, goal in GOALS.items())
        + f"; compile, launch: one step of {DEFAULT_GOAL}. Default (and all): every goal "
        f"shown, exit status by {DEFAULT_GOAL}",
    )
    p.add_argument(
        "--run",
        action="store_true",
        help="also compile a kernel, build the launcher and, on a GPU, launch it",
    )
    p.set_defaults(func=cmd_doctor)

    p = add("env", "print the variables that configure Triton")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="sh",
        help='sh, bash, dash, zsh: export lines (eval "$(triton-toolchain env)"); '
        "fish: set -gx lines; json: one object (default: sh)",
    )
    p.set_defaults(func=cmd_env)

    p = add("which", "print the chosen path of one component")
    p.add_argument("component", choices=tuple(COMPONENT))
    p.set_defaults(func=cmd_which)

    p = add("lock", "write a manifest from the current resolution")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.add_argument("--strict", action="store_true", help="mark the manifest strict (no discovery)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.add_argument(
        "--cache",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="pin a cache's directory on every node (NAME: triton or inductor; $USER and "
        "$UID are expanded for each user: quote them)",
    )
    p.add_argument(
        "--no-driver",
        action="store_true",
        help="exit 0 without the NVIDIA driver (an image built without a GPU: the machine "
        "that runs it provides the driver)",
    )
    p.set_defaults(func=cmd_lock)

    p = add(
        "pkg-config",
        "write triton-toolchain.pc: Python.h's and cuda.h's directories, the driver's link "
        "directory (for CMake, Meson, pkg-config); --arch gfx942: the HIP headers' and the "
        "HIP runtime's",
    )
    p.add_argument(
        "-o", "--output", metavar="DIR", help="directory to write it in (default: standard output)"
    )
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.set_defaults(func=cmd_pkg_config)

    p = add("check-manifest", "validate a manifest file and judge each of its entries")
    p.add_argument("file", help="the manifest (JSON, schema 1 or 2)")
    p.set_defaults(func=cmd_check_manifest)

    p = add("run", "run a program with the toolchain exported: run -- CMD [ARGS...]")
    p.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARGS...]",
        help="the program to run and its arguments, after --",
    )
    p.set_defaults(func=cmd_run)
    return parser


def _printable(error: UnicodeError) -> tuple[bytes, int]:
    """Encoding error handler for file names: bytes a file name had (surrogate-escaped)
    go out as they were; anything else unprintable as a backslash escape."""
    assert isinstance(error, UnicodeEncodeError)  # noqa: S101  registered for encoding
    out = bytearray()
    for char in error.object[error.start : error.end]:
        code = ord(char)
        out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}".encode()
    return bytes(out), error.end


def _streams() -> None:
    codecs.register_error("triton_toolchain", _printable)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="triton_toolchain")  # type: ignore[union-attr]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; its exit status (see the module docstring). No command: doctor."""
    _streams()
    args = build_parser().parse_args(argv)
    if args.cmd is None:
        args = build_parser().parse_args(["doctor"])
    if not isinstance(sys.stdout, _Output):
        sys.stdout = _Output(sys.stdout)
    if not isinstance(sys.stderr, _Printable):
        sys.stderr = _Printable(sys.stderr)
    try:
        status = int(args.func(args))
        sys.stdout.flush()
        return status
    except ToolchainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # SIGINT: a tool it waited on is ended (_discovery._run)
        with contextlib.suppress(OSError):
            print("triton-toolchain: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    except BrokenPipeError:
        # Standard output was closed (`doctor | head -0`): no traceback, and nothing more
        # written to it when the interpreter flushes at exit.
        return _stdout_lost("standard output is closed")
    except _OutputLost as lost:
        if isinstance(lost.error, BrokenPipeError):
            return _stdout_lost("standard output is closed")
        why = lost.error.strerror or lost.error
        return _stdout_lost(f"standard output cannot be written ({why})")
    finally:
        if isinstance(sys.stdout, _Output):
            sys.stdout = sys.stdout.stream
        if isinstance(sys.stderr, _Printable):
            sys.stderr = sys.stderr.stream


class _OutputLost(Exception):
    """Writing to standard output failed (``error``): a closed pipe, a full disk."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _Printable:
    """A text stream to a person: what it is given is written ``printable`` (a file name
    or a tool's words cannot act on the terminal)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return int(self.stream.write(printable(text)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class _Output(_Printable):
    """Standard output, ``printable``, whose write errors are told apart from every
    other ``OSError``."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as exc:
            raise _OutputLost(exc) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise _OutputLost(exc) from None


def _stdout_lost(why: str) -> int:
    """Exit 2 saying ``why``; what is still buffered for standard output is dropped (the
    interpreter's flush at exit would fail again)."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    with contextlib.suppress(OSError):
        print(f"triton-toolchain: {why}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
