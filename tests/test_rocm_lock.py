"""``lock``, ``check-manifest`` and ``pkg-config`` for Triton's AMD backend (``--arch
gfx942``), on the layouts ROCm comes in (``test_rocm.LAYOUTS``).

Real files: Debian's ``libamdhip64-5`` (ROCm 5.2.3, installed by ``tools/test.sh``) and
the gcc-built stand-in (``hip_standin``) for ROCm 6.x, laid out by the tests (private
mount namespaces for ``/opt`` and ``/run``). What the manifest ``lock`` writes says is
checked against what runs: ``doctor``, ``which``, Triton's own AMD launcher with the shim
and stock Triton given ``env``'s ``TRITON_LIBHIP_PATH``; ``pkg-config``'s file is read
back by the real ``pkg-config`` and builds a program that asks the runtime its release.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool
from hip_standin import DEBIAN_LIBRARY, hip_version, real_library, standin
from test_pkgconfig import pkg_config
from test_rocm import (
    LAYOUTS,
    TRITON_TOO_OLD,
    _environ,
    _run,
    _source,
    aot,
    doctor,
    launcher,
    mallory,  # noqa: F401  (a fixture)
)
from triton_toolchain.resolver._catalog import GFX_RULES

pytestmark = pytest.mark.root  # mount namespaces, users

CLI = [sys.executable, "-m", "triton_toolchain"]


def cli(
    args: list[str], env: dict[str, str], script: str = ":"
) -> subprocess.CompletedProcess[str]:
    return _run([*CLI, *args], env, script)


@pytest.mark.parametrize("name", LAYOUTS)
def test_lock_writes_the_hip_runtimes_directory_and_everything_takes_it_from_there(
    tmp_path: Path, name: str
) -> None:
    """``lock --arch gfx942`` in each layout writes the chosen runtime's directory as
    ``driver_dirs``; with that manifest and none of the layout's variables, doctor and
    which name the runtime with source ``manifest``, Triton's launcher opens it with the
    shim on, and stock Triton opens it given ``env``'s TRITON_LIBHIP_PATH."""
    extra, script, seen, _ = LAYOUTS[name](tmp_path, lambda d: standin(d, (6, 4, 43482)))
    manifest = tmp_path / "manifest.json"
    done = cli(
        ["lock", "--arch", "gfx942", "-o", str(manifest)], _environ(tmp_path, **extra), script
    )
    assert done.returncode == 0, done.stderr
    written = json.loads(manifest.read_text())
    assert written["driver_dirs"] == [os.path.dirname(seen)]
    assert {"cc", "python-headers"} <= set(written["components"])
    assert not {"ptxas", "cuda-headers", "libdevice"} & set(written["components"])
    # The layout's variables gone (PYTHONPATH kept: the torch-wheel layout's torch).
    kept = {k: v for k, v in extra.items() if k == "PYTHONPATH"}
    env = _environ(tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest), **kept)
    status, doc = doctor("gfx942", env, script)
    hip = _source(doc)
    assert (status, hip["path"], hip["version"]) == (0, seen, "6.4.43482"), hip
    assert (hip["source"], doc["manifest_rejections"]) == (f"manifest:{manifest}", [])
    done = cli(["which", "libamdhip64"], env, script)
    assert (done.returncode, done.stdout) == (0, f"{seen}\n"), done.stderr
    done = cli(["check-manifest", "--arch", "gfx942", str(manifest)], env, script)
    assert done.returncode == 0, done.stdout
    assert f"ok       libamdhip64      {seen} 6.4.43482" in done.stdout.splitlines()
    assert launcher(env, script) == {"ok": True, "path": seen}
    done = cli(["env", "--arch", "gfx942", "--format", "json"], env, script)
    exported = json.loads(done.stdout)
    assert exported["TRITON_LIBHIP_PATH"] == seen
    stock = {**_environ(tmp_path, **kept), **exported, "TRITON_TOOLCHAIN": "off"}
    assert launcher(stock, script) == {"ok": True, "path": seen}


def test_a_strict_amd_manifest_compiles_and_launches_from_its_entries_alone(
    tmp_path: Path,
) -> None:
    """``lock --strict --arch gfx942``: with that manifest and no ROCM_PATH, Triton's
    real ahead-of-time compile for gfx942 runs with the shim active, and its launcher
    opens the runtime the manifest names; the runtime gone, doctor says the strict
    manifest gives none (nothing else is searched) and the launcher stops with the same."""
    library = standin(tmp_path / "rocm" / "lib", (6, 4, 0))
    manifest = tmp_path / "manifest.json"
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "rocm"))
    done = cli(["lock", "--strict", "--arch", "gfx942", "-o", str(manifest)], env)
    assert done.returncode == 0 and json.loads(manifest.read_text())["strict"] is True
    env = _environ(tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    assert aot(env)["hsaco"] > 0
    assert launcher(env) == {"ok": True, "path": str(library)}
    # A runtime elsewhere (LD_LIBRARY_PATH) is not looked for: the manifest is strict.
    other = standin(tmp_path / "other", (6, 4, 1))
    for name in ("libamdhip64.so", "libamdhip64.so.6"):
        (library.parent / name).unlink()
    env["LD_LIBRARY_PATH"] = str(other.parent)
    status, doc = doctor("gfx942", env)
    hip = _source(doc)
    assert (status, hip["path"]) == (1, None), hip
    assert f"the manifest {manifest} is strict: discovery is off" in hip["notes"]
    shim = launcher(env)
    assert not shim["ok"] and shim["error"].startswith(
        "MissingComponentError: libamdhip64 not found"
    )


def test_debians_package_as_installed_is_locked_out_and_judged_in_a_manifest(
    tmp_path: Path,
) -> None:
    """Only Debian's ROCm 5.2 here: ``lock --arch gfx942`` writes no driver_dirs and says
    what is missing (exit 1), ``--strict`` refuses (exit 2, the fix), ``--no-driver``
    is refused for AMD (the runtime is the image's). A manifest naming the package's
    directory (``libamdhip64.so.5`` only) is judged on that file: rejected by
    check-manifest and doctor, naming the manifest and the entry."""
    env = _environ(tmp_path)
    done = cli(["lock", "--arch", "gfx942"], env)
    assert done.returncode == 1 and "driver_dirs" not in json.loads(done.stdout)
    assert done.stderr.startswith("missing: libamdhip64;")
    assert "`triton-toolchain doctor --arch gfx942` says why" in " ".join(done.stderr.split())
    done = cli(["lock", "--arch", "gfx942", "--strict"], env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: lock --strict: no HIP runtime (libamdhip64) was found")
    assert "fix: lock where the driver is installed (TRITON_LIBHIP_PATH names it)" in done.stderr
    done = cli(["lock", "--arch", "gfx942", "--no-driver"], env)
    assert done.returncode == 2 and "fix: drop --no-driver" in done.stderr
    manifest = tmp_path / "manifest.json"
    package_dir = str(DEBIAN_LIBRARY.parent)
    manifest.write_text(json.dumps({"schema": 2, "driver_dirs": [package_dir], "components": {}}))
    done = cli(["check-manifest", "--arch", "gfx942", str(manifest)], env)
    rejected = [line for line in done.stdout.splitlines() if line.startswith("REJECTED")]
    assert done.returncode == 1 and len(rejected) == 1, done.stdout
    assert rejected[0].startswith(f"REJECTED libamdhip64      {DEBIAN_LIBRARY}: {TRITON_TOO_OLD}")
    assert rejected[0].endswith(f"({manifest}: driver_dirs[0])")
    status, doc = doctor("gfx942", _environ(tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest)))
    assert status == 2 and _source(doc)["path"] is None
    [line] = doc["manifest_rejections"]
    assert line.startswith(
        f"{manifest}: driver_dirs[0]: {DEBIAN_LIBRARY} rejected: {TRITON_TOO_OLD}"
    )
    # Without --arch, check-manifest judges the NVIDIA backend's entries, as before.
    done = cli(["check-manifest", str(manifest)], env)
    assert done.returncode == 0 and "libamdhip64" not in done.stdout


def test_a_planted_runtime_named_in_a_manifest_is_refused_and_never_loaded(
    tmp_path: Path,
    mallory: str,  # noqa: F811  (test_rocm's fixture)
) -> None:
    """A manifest whose driver_dirs name a directory another user owns: check-manifest
    rejects the library there naming the owner, the manifest and the entry; doctor is
    exit 2 with that line and takes root's runtime (ROCM_PATH); Triton's launcher with
    the shim opens root's, and the planted library's constructor never runs."""
    marker = tmp_path / "planted-library-was-loaded"
    planted = tmp_path / "planted"
    standin(planted, (6, 4, 0), loaded_marker=marker)
    chown = require_tool("chown", "coreutils")
    subprocess.run([chown, "-R", f"{mallory}:{mallory}", str(planted)], check=True)
    good = standin(tmp_path / "rocm" / "lib", (6, 4, 1))
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"schema": 2, "driver_dirs": [str(planted)], "components": {}}))
    env = _environ(
        tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest), ROCM_PATH=str(good.parent.parent)
    )
    done = cli(["check-manifest", "--arch", "gfx942", str(manifest)], env)
    [line] = [line for line in done.stdout.splitlines() if line.startswith("REJECTED")]
    assert done.returncode == 1 and line.startswith(
        f"REJECTED libamdhip64      {planted / 'libamdhip64.so'}: "
    )
    assert mallory in line and line.endswith(f"({manifest}: driver_dirs[0])")
    status, doc = doctor("gfx942", env)
    assert (status, _source(doc)["path"]) == (2, str(good)), doc["manifest_rejections"]
    [rejection] = doc["manifest_rejections"]
    assert rejection.startswith(
        f"{manifest}: driver_dirs[0]: {planted / 'libamdhip64.so'} rejected"
    )
    done = cli(["doctor", "--arch", "gfx942"], env)
    assert done.returncode == 2 and f"error: {rejection}" in done.stderr
    assert "fix: correct the entry or regenerate the manifest with `triton-toolchain lock" in (
        " ".join(done.stderr.split())
    )
    assert launcher(env) == {"ok": True, "path": str(good)}
    assert not marker.exists()


def test_the_target_decides_what_lock_and_check_manifest_take(tmp_path: Path) -> None:
    """ROCm 6.3 here: locked and judged fit for gfx942, not for gfx1201 (gfx12 needs
    6.4, the rule's source named); a wrong --arch is exit 2 with the names to write."""
    old = standin(tmp_path / "r63" / "lib", (6, 3, 42131))
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "r63"))
    manifest = tmp_path / "manifest.json"
    done = cli(["lock", "--arch", "gfx942", "-o", str(manifest)], env)
    assert done.returncode == 0 and json.loads(manifest.read_text())["driver_dirs"] == [
        str(old.parent)
    ]
    rule = next(r for r in GFX_RULES if r.prefix == "gfx12")
    done = cli(["check-manifest", "--arch", "gfx1201", str(manifest)], env)
    assert (
        done.returncode == 1
        and (
            f"REJECTED libamdhip64      {old}: ROCm 6.3 cannot run gfx1201, needs 6.4 or newer "
            f"({rule.source}) ({manifest}: driver_dirs[0])"
        )
        in done.stdout.splitlines()
    )
    done = cli(["lock", "--arch", "gfx1201"], env)
    assert done.returncode == 1 and done.stderr.startswith("missing: libamdhip64;")
    for command in (["lock"], ["pkg-config"], ["check-manifest", str(manifest)]):
        done = cli([*command, "--arch", "gfx94"], env)
        assert done.returncode == 2, done.stderr
        assert "'gfx94' is not an architecture; write e.g. 90 or sm_90a (NVIDIA), gfx942 (AMD)" in (
            done.stderr
        )


PROGRAM = """
#include <hip/hip_runtime_api.h>
#include <stdio.h>
int main(void) {
  int version = 0;
  if (hipDriverGetVersion(&version) != hipSuccess) return 1;
  printf("%d\\n", version);
  return 0;
}
"""


@pytest.mark.parametrize("dev", [True, False], ids=["with-libamdhip64.so", "versioned-only"])
def test_pkg_config_builds_a_program_against_the_hip_runtime(tmp_path: Path, dev: bool) -> None:
    """``pkg-config --arch gfx942 -o DIR``: the real pkg-config's ``--cflags --libs``
    compile a C program against the HIP headers Triton's launcher uses and link it
    against the chosen runtime (``-lamdhip64``, or its versioned file where there is no
    unversioned link); run, it prints the release the runtime reports."""
    release = (6, 4, 43482)
    library = standin(tmp_path / "rocm" / "lib", release, dev=dev)
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "rocm"))
    pc_dir = tmp_path / "pc"
    pc_dir.mkdir()
    done = cli(["pkg-config", "--arch", "gfx942", "-o", str(pc_dir)], env)
    assert done.returncode == 0, done.stderr
    assert pkg_config(pc_dir, "--variable=libamdhip64", "triton-toolchain") == str(library)
    flags = pkg_config(pc_dir, "--cflags", "--libs", "triton-toolchain").split()
    name = "-lamdhip64" if dev else f"-l:{library.name}"
    assert flags[-2:] == [f"-L{library.parent}", name]
    assert "-D__HIP_PLATFORM_AMD__" in flags
    source = tmp_path / "ask.c"
    source.write_text(PROGRAM)
    program = tmp_path / "ask"
    gcc = require_tool("gcc", "gcc")
    subprocess.run([gcc, str(source), "-o", str(program), *flags], check=True)
    ran = subprocess.run(
        [str(program)],
        env={"LD_LIBRARY_PATH": str(library.parent)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout == f"{hip_version(release)}\n"


def test_pkg_config_leaves_out_a_refused_runtime_and_says_so(tmp_path: Path) -> None:
    """Only ROCm 5.2 (refused by the installed Triton) in ROCM_PATH: exit 1, the runtime
    and its directory left out and named, the headers still given."""
    real_library(tmp_path / "rocm" / "lib")
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "rocm"))
    pc_dir = tmp_path / "pc"
    pc_dir.mkdir()
    done = cli(["pkg-config", "--arch", "gfx942", "-o", str(pc_dir)], env)
    assert done.returncode == 1
    assert "missing: libhip-link, libamdhip64; left out of triton-toolchain.pc" in (
        " ".join(done.stderr.split())
    )
    assert pkg_config(pc_dir, "--variable=missing", "triton-toolchain") == "libhip-link,libamdhip64"
    assert pkg_config(pc_dir, "--libs", "triton-toolchain") == ""
    cflags = pkg_config(pc_dir, "--cflags", "triton-toolchain").split()
    include = Path(cflags[1][2:])
    assert (include / "hip" / "hip_runtime.h").is_file()
