"""The flake's aarch64-linux outputs, evaluated against the stand-in nixpkgs on this
x86-64 machine: every package, app and check is a derivation for aarch64-linux, the
manifest names the aarch64 store paths of the toolchain (not the x86-64 ones), and the
overlay gives aarch64's Triton the shim. Evaluation only: nothing is built for
aarch64 (the stand-in's builders are this machine's tools).

Uses the copy of the work tree that tests/nix/test_flake.py prepares (its `repo`
fixture: the stand-in's host.json rewritten for this machine) and the system `nix`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from test_flake import flake_args, modern_nix, repo

__all__ = ["repo"]  # the fixture, imported for pytest

SYSTEMS = ("x86_64-linux", "aarch64-linux")


def _flake_eval(repo: Path, attr: str, apply: str) -> Any:
    """``nix eval --json`` of the flake's output ``attr`` through the function ``apply``."""
    nix = modern_nix()
    flake = f"path:{repo}#{attr}"
    return json.loads(nix("eval", "--json", flake, *flake_args(repo), "--apply", apply).stdout)


def _manifest(repo: Path, system: str) -> dict[str, Any]:
    """``lib.manifestFor`` the package set of ``system`` (through default.nix, which
    builds the same outputs from the same nix/ files), as JSON."""
    expr = (
        f"let t = import {repo}/default.nix "
        f'{{ nixpkgs = {repo}/tests/nix/nixpkgs; system = "{system}"; }}; '
        "in t.lib.manifestFor t.pkgs { }"
    )
    got: dict[str, Any] = json.loads(
        modern_nix()("eval", "--json", "--impure", "--expr", expr).stdout
    )
    return got


def test_aarch64_outputs_are_aarch64_derivations(repo: Path) -> None:
    """packages, apps' programs and checks of aarch64-linux: derivations whose `system`
    is aarch64-linux, none of their outputs shared with x86_64-linux."""
    systems = "s: builtins.mapAttrs (_: d: d.system) s.aarch64-linux"
    packages = _flake_eval(repo, "packages", systems)
    checks = _flake_eval(repo, "checks", systems)
    assert set(packages) == {"default", "manifest", "python"}
    assert set(packages.values()) == {"aarch64-linux"}, packages
    assert set(checks) == {"shim-tests", "manifest", "formatting", "unit"}
    assert set(checks.values()) == {"aarch64-linux"}, checks
    programs = "s: map (x: builtins.mapAttrs (_: a: a.program) s.${x}) "
    x86_apps, arm_apps = _flake_eval(repo, "apps", programs + '[ "x86_64-linux" "aarch64-linux" ]')
    assert set(arm_apps) == {"default", "vector-add", "doctor"}
    for name, program in arm_apps.items():
        assert program.startswith("/nix/store/"), (name, program)
        assert program != x86_apps[name], name
    outs = "s: map (x: builtins.mapAttrs (_: d: d.outPath) s.${x}) "
    x86, arm = _flake_eval(repo, "packages", outs + '[ "x86_64-linux" "aarch64-linux" ]')
    assert not set(x86.values()) & set(arm.values())


def test_aarch64_manifest_names_aarch64_store_paths(repo: Path) -> None:
    """The aarch64 manifest: the same components as x86-64's, every path in the store
    and none of them x86-64's; gcc's private include directory (omp.h) is the one of
    the aarch64 triple; the CUDA releases are the same."""
    manifests = {system: _manifest(repo, system) for system in SYSTEMS}
    x86, arm = (manifests[s]["components"] for s in SYSTEMS)
    assert set(arm) == set(x86)
    assert len(arm) >= 10
    for name, component in arm.items():
        assert component["path"].startswith("/nix/store/"), (name, component)
        assert component["path"] != x86[name]["path"], name
        assert component.get("version") == x86[name].get("version"), name
    assert re.fullmatch(
        r"/nix/store/[^/]+-gcc-[^/]+/lib/gcc/aarch64-unknown-linux-gnu/[^/]+/include",
        arm["openmp"]["path"],
    ), arm["openmp"]
    assert manifests["aarch64-linux"]["driver_dirs"] == ["/run/opengl-driver/lib"]


def test_aarch64_manifest_paths_are_outputs_of_aarch64_derivations(repo: Path) -> None:
    """Each store path the aarch64 manifest names (ptxas, cuda.h's directory, libdevice,
    the CUDA home...) is an output of a derivation built for aarch64-linux, among those
    of the manifest derivation's closure (`nix derivation show -r`)."""
    nix = modern_nix()
    drv = _flake_eval(repo, "packages.aarch64-linux.manifest", "m: m.drvPath")
    show = nix("derivation", "show", "-r", drv, check=False)
    if show.returncode != 0:  # Nix before 2.15 calls it show-derivation
        show = nix("show-derivation", "-r", drv)
    derivations = json.loads(show.stdout)
    outputs = {
        out["path"]: d["system"]
        for d in derivations.values()
        for out in d["outputs"].values()
        if "path" in out
    }
    assert derivations[drv]["system"] == "aarch64-linux"
    for name, component in _manifest(repo, "aarch64-linux")["components"].items():
        store_path = "/".join(component["path"].split("/")[:4])
        assert outputs.get(store_path) == "aarch64-linux", (name, store_path)


def test_overlay_gives_aarch64_triton_the_shim(repo: Path) -> None:
    """The overlay on aarch64: Triton and torch's Triton bring the shim into the
    environments that hold them (`requiredPythonModules`), as on x86-64."""
    apply = """ps: let names = drvs: map (d: d.pname or d.name) drvs; in {
      triton = names ps.triton.requiredPythonModules;
      torchTriton = names ps.torch.triton.requiredPythonModules;
      system = ps.triton.system;
    }"""
    got = _flake_eval(repo, "legacyPackages.aarch64-linux.python3.pkgs", apply)
    assert "triton-toolchain" in got["triton"] and "triton-toolchain" in got["torchTriton"]
    assert got["system"] == "aarch64-linux"
