"""The overlay and the manifest with ROCm (`config.rocmSupport`), against the stand-in
nixpkgs' `rocmPackages` (tests/nix/nixpkgs/rocm.nix: `clr`, whose lib/ holds a
gcc-built libamdhip64 reporting clr's version, 7.0.2), and what Triton and the shim do
with the result.

nixpkgs' Triton is one derivation for NVIDIA and AMD (its AMD backend finds the HIP
runtime at run time), so in a ROCm set the overlay changes no derivation either: the
shim comes through `passthru`, carrying a manifest whose first driver directory is clr's
lib/. Uses the copy of the work tree that tests/nix/test_flake.py prepares (its `repo`
fixture) and the Nix it runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from elftools.elf.elffile import ELFFile
from test_flake import (
    CUDA_CONFIG,
    OVERLAYS,
    Nix,
    build,
    clean_env,
    eval_fails,
    eval_json,
    modern_nix,
    nix,
    repo,
    standin,
)

__all__ = ["nix", "repo"]  # the fixtures, imported for pytest

ROCM_CONFIG = "{ rocmSupport = true; }"
DRIVER_LINK = "/run/opengl-driver/lib"
# What the stand-in's clr reports (hipDriverGetVersion: its version, HIP's format).
CLR_RELEASE = "7.0.2"


def _clr(nix: Nix, repo: Path) -> Path:
    """The stand-in's rocmPackages.clr, built."""
    expr = f"({standin(repo, ROCM_CONFIG, overlay=None)}).rocmPackages.clr"
    return Path(build(nix, "--impure", "--expr", expr))


def _manifest_of(nix: Nix, expr: str) -> dict:
    return json.loads(Path(build(nix, "--impure", "--expr", expr)).read_text())


def test_stand_in_rocm_packages_are_shaped_as_nixpkgs(nix: Nix, repo: Path) -> None:
    """rocmPackages.clr has nixpkgs' outputs (out, icd), a free licence (it evaluates with
    no config at all, ROCm off), the HIP runtime in lib/ as ROCm installs it, and the
    setup hook exporting HIP_PATH; an attribute nixpkgs' set lacks is an evaluation
    error; nixpkgs' Triton takes no `rocmSupport` (it always supports ROCm)."""
    got = eval_json(
        nix,
        f"let pkgs = {standin(repo, '{ }', overlay=None)}; in {{ "
        "outputs = pkgs.rocmPackages.clr.outputs; pname = pkgs.rocmPackages.clr.pname; "
        "evaluates = (builtins.tryEval pkgs.rocmPackages.clr.drvPath).success; "
        "tritonArgs = builtins.attrNames "
        "(pkgs.lib.functionArgs pkgs.python3.pkgs.triton.override); }",
    )
    assert got["outputs"] == ["out", "icd"] and got["pname"] == "clr", got
    assert got["evaluates"] is True
    assert "rocmSupport" not in got["tritonArgs"], got
    missing = eval_fails(
        nix, f"({standin(repo, '{ }', overlay=None)}).rocmPackages.no-such-package.drvPath"
    )
    assert "no-such-package" in missing, missing

    clr = _clr(nix, repo)
    lib = clr / "lib"
    assert os.readlink(lib / "libamdhip64.so") == "libamdhip64.so.7"
    assert os.readlink(lib / "libamdhip64.so.7") == f"libamdhip64.so.{CLR_RELEASE}"
    with (lib / "libamdhip64.so").open("rb") as f:
        dynamic = ELFFile(f).get_section_by_name(".dynamic")
        sonames = [t.soname for t in dynamic.iter_tags() if t.entry.d_tag == "DT_SONAME"]
    assert sonames == ["libamdhip64.so.7"], sonames
    assert f'export HIP_PATH="{clr}"' in (clr / "nix-support/setup-hook").read_text()


ROCM_DRVS = (
    "ps: { triton = ps.triton.drvPath; no-cuda = ps.triton-no-cuda.drvPath; "
    "torch = ps.torch.drvPath; torch-triton = ps.torch.triton.drvPath; "
    "torchvision = ps.torchvision.drvPath; }"
)
SHIMS_OF = 't: builtins.filter (d: (d.pname or null) == "triton-toolchain") t.requiredPythonModules'


def test_overlays_give_every_triton_of_a_rocm_set_the_hip_runtime(nix: Nix, repo: Path) -> None:
    """With config.rocmSupport, under overlays.default, Triton, torch and a package on top
    of torch keep their drvPath (nothing a binary cache serves is rebuilt; under
    rebuild-triton each is another derivation), and every Triton (the set's, torch's) and
    `ps.triton-toolchain` carry a manifest whose driver directories are clr's lib/, then
    the host's /run/opengl-driver/lib, with the host's components only (no CUDA)."""
    pkgs = {o: standin(repo, ROCM_CONFIG, overlay=o) for o in (None, *OVERLAYS)}
    plain, default, rebuild = (
        eval_json(nix, f"({ROCM_DRVS}) ({pkgs[o]}).python3.pkgs")
        for o in (None, "default", "rebuild-triton")
    )
    assert default == plain
    assert all(rebuild[name] != plain[name] for name in plain), rebuild

    clr = _clr(nix, repo)
    for overlay in OVERLAYS:
        for triton in ("ps.triton", "ps.torch.triton", "ps.triton-no-cuda"):
            count = eval_json(
                nix,
                f"let ps = ({pkgs[overlay]}).python3.pkgs; in "
                f"builtins.length (({SHIMS_OF}) ({triton}))",
            )
            assert count == 1, (overlay, triton)
        manifests = {
            "triton": f"builtins.head (({SHIMS_OF}) ps.triton)",
            "torch": f"builtins.head (({SHIMS_OF}) ps.torch.triton)",
            "triton-toolchain": "ps.triton-toolchain",
        }
        for name, shim in manifests.items():
            doc = _manifest_of(
                nix, f"let ps = ({pkgs[overlay]}).python3.pkgs; in ({shim}).manifest"
            )
            assert doc["driver_dirs"] == [f"{clr}/lib", DRIVER_LINK], (overlay, name, doc)
            assert set(doc["components"]) == {"cc", "cxx", "openmp", "python-headers"}, doc


def test_a_cuda_set_keeps_its_manifest_and_reads_no_rocm(nix: Nix, repo: Path) -> None:
    """A CUDA set's Triton carries the manifest it carried before ROCm was known: the
    driver directory /run/opengl-driver/lib alone, CUDA's components; without
    config.rocmSupport rocmPackages is never read (here it throws)."""
    nixpkgs = f"{repo}/tests/nix/nixpkgs"
    overlays = (
        '[ (_: _: { rocmPackages = throw "rocmPackages read"; }) '
        f"(import {repo}/default.nix {{ nixpkgs = {nixpkgs}; }}).overlays.default ]"
    )
    no_rocm = f"import {nixpkgs} {{ config = {CUDA_CONFIG}; overlays = {overlays}; }}"
    shim = f"builtins.head (({SHIMS_OF}) ps.triton)"
    expr = f"let ps = ({no_rocm}).python3.pkgs; in ({shim}).manifest"
    doc = _manifest_of(nix, expr)
    assert doc["driver_dirs"] == [DRIVER_LINK], doc
    assert doc["components"]["ptxas"]["version"] == "12.9", doc


# Run in an environment under test: the shim's state, Triton's own lookup of the HIP
# runtime, its launcher (driver.c built and loaded: it dlopens the library and checks
# hipDriverGetVersion), and a kernel compiled for gfx942 ahead of time.
HIP_PROBE = """
import json
import triton
from triton.backends.amd import driver
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import triton.language as tl

@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

signature = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}
src = ASTSource(add, signature, constexprs={"BLOCK": 64})
hsaco = triton.compile(src, target=GPUTarget("hip", "gfx942", 64)).asm["hsaco"]
report = {"triton": triton.__file__, "hsaco": len(hsaco)}
try:
    driver.HIPUtils()
    report["launcher"] = "loaded"
except Exception as exc:
    report["launcher"] = f"{type(exc).__name__}: {exc}"
report["path"] = driver._get_path_to_hip_runtime_dylib()
try:
    from triton_toolchain.runtime import _activate
except ImportError:
    report["mode"] = report["manifest"] = None
else:
    a = _activate.current()
    report["mode"] = a and a.mode
    report["manifest"] = a and a.toolchain and a.toolchain.manifest
print(json.dumps(report))
"""


def _rocm_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """clean_env without a ROCm setting of this machine's."""
    env = clean_env(tmp_path, TRITON_CACHE_DIR=str(tmp_path / "triton-cache"), **extra)
    for name in ("HIP_PATH", "ROCM_PATH", "TRITON_TOOLCHAIN_MANIFEST"):
        if name not in extra:
            env.pop(name, None)
    return env


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, check=False)


def _hip_probe(python: str, tmp_path: Path, **extra: str) -> dict:
    run = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    run.mkdir()
    script = run / "probe.py"
    script.write_text(HIP_PROBE)
    done = _run([python, str(script)], _rocm_env(run, **extra))
    assert done.returncode == 0, done.stderr[-5000:]
    report: dict = json.loads(done.stdout.splitlines()[-1])
    assert re.search(r"^/nix/store/[^/]+-triton-", report["triton"]), report
    assert report["hsaco"] > 0, report
    return report


def test_rocm_environment_triton_opens_the_hip_runtime_the_manifest_names(
    repo: Path, tmp_path: Path
) -> None:
    """`python3.withPackages (ps: [ ps.torch ])` of a ROCm set under overlays.default: the
    shim, activated by its .pth hook from the manifest in the store, answers Triton's
    lookup of the HIP runtime with clr's libamdhip64.so, which Triton's launcher loads
    (ROCm 7.0 >= Triton's minimum of 6), and Triton compiles for gfx942. That is the file
    nixpkgs' Triton alone takes where clr's setup hook has set HIP_PATH (as nixpkgs' own
    test does), and without the shim and HIP_PATH it finds none on NixOS. The shim's
    `doctor --arch gfx942` names the same file, from the manifest, ready; its
    `check-manifest` accepts the manifest."""
    nix = modern_nix()
    clr = _clr(nix, repo)
    library = f"{clr}/lib/libamdhip64.so"
    envs = {
        overlay: build(
            nix,
            "--impure",
            "--expr",
            f"({standin(repo, ROCM_CONFIG, overlay=overlay)}).python3.withPackages "
            "(ps: [ ps.torch ])",
        )
        for overlay in ("default", None)
    }
    python = f"{envs['default']}/bin/python3"
    shim = _hip_probe(python, tmp_path)
    assert shim["mode"] not in (None, "pending", "off"), shim
    assert re.search(r"^/nix/store/[^/]+-triton-toolchain-[^/]+/", shim["manifest"]), shim
    assert (shim["path"], shim["launcher"]) == (library, "loaded"), shim

    stock = _hip_probe(f"{envs[None]}/bin/python3", tmp_path, HIP_PATH=str(clr))
    assert stock["mode"] is None, stock
    assert (stock["path"], stock["launcher"]) == (library, "loaded"), stock

    manifest = shim["manifest"]
    env = _rocm_env(tmp_path)
    done = _run([python, "-m", "triton_toolchain", "doctor", "--json", "--arch", "gfx942"], env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads(done.stdout)
    hip = doc["components"]["libamdhip64"]
    assert (hip["path"], hip["source"]) == (library, f"manifest:{manifest}"), hip
    assert hip["version"] == CLR_RELEASE, hip

    checked = _run([python, "-m", "triton_toolchain", "check-manifest", manifest], env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    verdicts = {line.split()[1]: line.split()[0] for line in checked.stdout.splitlines()[:-1]}
    assert verdicts == dict.fromkeys(("cc", "cxx", "openmp", "python-headers"), "ok"), verdicts
    assert checked.stdout.splitlines()[-1] == (
        f"schema 2, strict=false, driver_dirs: {clr}/lib, {DRIVER_LINK}"
    )
