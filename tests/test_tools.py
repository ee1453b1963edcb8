"""The ptxas family: real layouts in fake roots, real scripts run, the real machine."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from tool_fixtures import (
    REAL_CUDA,
    fake_host,
    fake_ptxas,
    hanging_tool,
    locate,
    make_writable_by_all,
    write_script,
)
from triton_toolchain.resolver._catalog import COMPONENT, parse_release
from triton_toolchain.resolver._discovery import _run
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import Candidate, Context
from triton_toolchain.resolver._discovery._tools import LOCATORS, TOOLS, check_tool, release_problem
from triton_toolchain.resolver._model import SourceKind


def triton_tree(root: Path) -> Path:
    """An installed ``triton`` package directory without bundled binaries yet."""
    pkg = root / "site-packages" / "triton"
    (pkg / "backends" / "nvidia" / "bin").mkdir(parents=True)
    return pkg


# ------------------------------------------------------------------ structure


def test_every_tool_has_a_locator_with_named_steps() -> None:
    assert set(LOCATORS) == set(TOOLS)
    for name, loc in LOCATORS.items():
        names = [step.__name__ for step in loc.steps]
        assert names[0] == "triton_bundled"
        assert names[-1] == f"path_{COMPONENT[name].names[0]}"
        assert len(set(names)) == len(names)


def test_steps_yield_candidates_on_an_empty_root(tmp_path: Path) -> None:
    host = fake_host(tmp_path)
    for loc in LOCATORS.values():
        for step in loc.steps:
            assert all(isinstance(c, Candidate) for c in step(host, Context()))


# ------------------------------------------------------------------ layouts


def test_bundled_ptxas_is_chosen_first(tmp_path: Path) -> None:
    triton = triton_tree(tmp_path)
    bundled = fake_ptxas(triton / "backends/nvidia/bin", "12.9")
    fake_ptxas(tmp_path / "usr/local/cuda/bin", "13.0")
    choice = locate(LOCATORS, "ptxas", fake_host(tmp_path, triton_dir=triton), Context(arch=80))
    assert choice.path == str(bundled)
    assert choice.version == "12.9"
    assert choice.source is not None and choice.source.kind is SourceKind.BUNDLED
    assert choice.rejected == ()


LAYOUTS = {
    # name: (where ptxas is, extra environment, Host fields, expected source detail)
    "CUDA_HOME": ("cudahome/bin", {"CUDA_HOME": "{root}/cudahome"}, {}, "CUDA_HOME"),
    "CUDA_PATH": ("cudapath/bin", {"CUDA_PATH": "{root}/cudapath"}, {}, "CUDA_PATH"),
    "/usr/local/cuda": ("usr/local/cuda/bin", {}, {}, "/usr/local/cuda"),
    "/opt/cuda": ("opt/cuda/bin", {}, {}, "/opt/cuda*"),
    "/usr/local/cuda-12.8": ("usr/local/cuda-12.8/bin", {}, {}, "/usr/local/cuda-*"),
    "conda": ("conda/bin", {"CONDA_PREFIX": "{root}/conda"}, {}, "CONDA_PREFIX"),
    "wheel cu13": ("sp/nvidia/cu13/bin", {}, {"nvidia_dirs": ("sp/nvidia",)}, "nvidia/cu13"),
    "wheel cu12": (
        "sp/nvidia/cuda_nvcc/bin",
        {},
        {"nvidia_dirs": ("sp/nvidia",)},
        "nvidia/cuda_nvcc",
    ),
    "torch/bin": ("sp/torch/bin", {}, {"torch_dir": "sp/torch"}, "torch"),
    "PATH": ("somewhere/bin", {"PATH": "/nonexistent:{root}/somewhere/bin"}, {}, "PATH"),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_unbundled_ptxas_is_found_in_each_real_layout(tmp_path: Path, layout: str) -> None:
    """A distribution removed Triton's bundled ptxas (triton-lang/triton#1618)."""
    where, env, fields, detail = LAYOUTS[layout]
    triton = triton_tree(tmp_path)  # Triton without its binaries
    tool = fake_ptxas(tmp_path / where, "12.8")
    environ = {"PATH": str(tmp_path / "empty-bin")}
    environ.update({k: v.format(root=tmp_path) for k, v in env.items()})
    resolved: dict[str, object] = {"triton_dir": triton}
    for key, value in fields.items():
        if isinstance(value, tuple):
            resolved[key] = tuple(tmp_path / v for v in value)
        else:
            resolved[key] = tmp_path / str(value)
    host = fake_host(tmp_path, environ, **resolved)
    for name in ("ptxas", "ptxas-blackwell"):
        choice = locate(LOCATORS, name, host, Context(arch=90))
        assert choice.path == str(tool), choice.searched
        assert choice.version == "12.8"
        assert choice.source is not None and choice.source.detail == detail
        assert choice.source.kind is SourceKind.DISCOVERED
        assert any("triton-bundled" in s for s in choice.searched)


def test_search_order_is_the_documented_one(tmp_path: Path) -> None:
    """Every place holds a ptxas too old for sm_90; all are rejected, in order."""
    triton = triton_tree(tmp_path)
    places = [
        ("site-packages/triton/backends/nvidia/bin", "triton-bundled"),
        ("sp/torch/bin", "discovered:torch"),
        ("sp/nvidia/cu13/bin", "discovered:nvidia/cu13"),
        ("sp/nvidia/cuda_nvcc/bin", "discovered:nvidia/cuda_nvcc"),
        ("conda/bin", "discovered:CONDA_PREFIX"),
        ("home/bin", "discovered:CUDA_HOME"),
        ("path/bin", "discovered:CUDA_PATH"),
        ("usr/local/cuda/bin", "discovered:/usr/local/cuda"),
        ("usr/local/cuda-11.8/bin", "discovered:/usr/local/cuda-*"),
        ("opt/cuda-11.2/bin", "discovered:/opt/cuda*"),
        ("usr/local/cuda-11.1/bin", "discovered:/usr/local/cuda-*"),
        ("on-path", "discovered:PATH"),
    ]
    for where, _ in places:
        fake_ptxas(tmp_path / where, "11.4")
    environ = {
        "CONDA_PREFIX": str(tmp_path / "conda"),
        "CUDA_HOME": str(tmp_path / "home"),
        "CUDA_PATH": str(tmp_path / "path"),
        "PATH": str(tmp_path / "on-path"),
    }
    host = fake_host(
        tmp_path,
        environ,
        triton_dir=triton,
        torch_dir=tmp_path / "sp/torch",
        nvidia_dirs=(tmp_path / "sp/nvidia",),
    )
    choice = locate(LOCATORS, "ptxas", host, Context(arch=90))
    assert choice.path is None
    assert [r.path for r in choice.rejected] == [str(tmp_path / w / "ptxas") for w, _ in places]
    for rejection, (_, source) in zip(choice.rejected, places, strict=True):
        assert str(rejection.source).startswith(source)
        assert rejection.reason.startswith(
            "release 11.4 cannot assemble sm_90a, needs 12.0 or newer"
        )


def test_too_old_ptxas_is_rejected_naming_source_and_both_versions(tmp_path: Path) -> None:
    old = fake_ptxas(tmp_path / "cuda-11.4/bin", "11.4")
    good = fake_ptxas(tmp_path / "usr/local/cuda/bin", "12.4")
    host = fake_host(tmp_path, {"CUDA_HOME": str(tmp_path / "cuda-11.4"), "PATH": ""})
    choice = locate(LOCATORS, "ptxas", host, Context(arch=90))
    assert choice.path == str(good)
    (rejection,) = [r for r in choice.rejected if r.path == str(old)]
    text = str(rejection)
    assert "discovered:CUDA_HOME" in text
    assert "release 11.4 cannot assemble sm_90a, needs 12.0 or newer" in text


def test_ptxas_13_cannot_serve_a_volta_gpu(tmp_path: Path) -> None:
    tool = fake_ptxas(tmp_path / "bin", "13.0")
    verdict = check_tool("ptxas", fake_host(tmp_path), tool, Context(arch=70))
    assert verdict.version == "13.0"
    assert verdict.problem is not None
    assert "release 13.0 cannot assemble sm_70, which CUDA dropped after 12.9" in verdict.problem


def test_ptxas_blackwell_falls_back_to_a_cuda_12_8_ptxas(tmp_path: Path) -> None:
    """Triton without ptxas-blackwell whose bundled ptxas is 12.4: the toolkit's
    ptxas (a wrapper running the real CUDA 13.0 ptxas) serves for sm_90 and up."""
    triton = triton_tree(tmp_path)
    fake_ptxas(triton / "backends/nvidia/bin", "12.4")
    toolkit = write_script(
        tmp_path / "usr/local/cuda/bin/ptxas", f'exec {REAL_CUDA}/bin/ptxas "$@"\n'
    )
    host = fake_host(tmp_path, triton_dir=triton)
    choice = locate(LOCATORS, "ptxas-blackwell", host, Context(arch=90))
    assert choice.path == str(toolkit)
    assert choice.version == "13.0"  # the real ptxas's answer
    (bundled,) = choice.rejected
    assert bundled.path == str(triton / "backends/nvidia/bin/ptxas")
    assert "release 12.4 cannot assemble sm_100a, needs 12.8 or newer" in bundled.reason
    # ptxas itself is happy with the bundled 12.4 for sm_90.
    assert locate(LOCATORS, "ptxas", host, Context(arch=90)).path == bundled.path


def test_bundled_ptxas_blackwell_is_preferred_over_bundled_ptxas(tmp_path: Path) -> None:
    triton = triton_tree(tmp_path)
    fake_ptxas(triton / "backends/nvidia/bin", "12.9")
    blackwell = fake_ptxas(triton / "backends/nvidia/bin", "13.4", name="ptxas-blackwell")
    choice = locate(LOCATORS, "ptxas-blackwell", fake_host(tmp_path, triton_dir=triton))
    assert (choice.path, choice.version) == (str(blackwell), "13.4")


def test_arch_none_checks_only_fixed_requirements(tmp_path: Path) -> None:
    old = fake_ptxas(tmp_path / "bin", "11.4")
    host = fake_host(tmp_path)
    assert check_tool("ptxas", host, old, Context()).problem is None
    problem = check_tool("ptxas-blackwell", host, old, Context()).problem
    assert problem is not None and "cannot assemble sm_100a, needs 12.8 or newer" in problem
    # ptxas is not asked about Blackwell targets: Triton runs ptxas-blackwell there.
    assert check_tool("ptxas", host, old, Context(arch=100)).problem is None


def test_release_problem_table() -> None:
    host = Host()
    assert release_problem("ptxas-blackwell", "12.8", host, 90) is None
    assert release_problem("ptxas-blackwell", "12.8", host, 110) == (
        "release 12.8 cannot assemble sm_110a, needs 13.0 or newer (the target GPU)"
    )
    assert release_problem("nvdisasm", "10.0", host, 120) is None
    assert (
        release_problem("ptxas", "twelve", host, 80)
        == "version 'twelve' is not a CUDA release such as 12.8"
    )


# ------------------------------------------------------------------ manifest-style checks


def test_recorded_version_runs_no_process(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    tool = fake_ptxas(tmp_path / "store/bin", "12.8", log=log)
    host = fake_host(tmp_path)
    verdict = check_tool("ptxas-blackwell", host, tool, Context(arch=90, recorded_version="12.8"))
    assert (verdict.version, verdict.problem) == ("12.8", None)
    too_old = check_tool("ptxas-blackwell", host, tool, Context(arch=90, recorded_version="12.4"))
    assert too_old.problem is not None and "release 12.4" in too_old.problem
    assert not log.exists()
    # Without a recorded version it does run, once: the log proves the fixture works.
    assert check_tool("ptxas", host, tool, Context()).version == "12.8"
    assert log.read_text().split() == [str(tool), "--version"]


def test_recorded_version_still_refuses_a_missing_file(tmp_path: Path) -> None:
    verdict = check_tool(
        "ptxas", fake_host(tmp_path), tmp_path / "nope", Context(recorded_version="12.8")
    )
    assert verdict.problem == "does not exist"


# ------------------------------------------------------------------ unsafe or broken tools


def test_non_executable_tool_is_rejected_without_running(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    tool = fake_ptxas(tmp_path / "bin", "12.8", log=log)
    tool.chmod(0o644)
    assert check_tool("ptxas", fake_host(tmp_path), tool, Context()).problem == "is not executable"
    assert not log.exists()


def test_hanging_tool_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_run, "TIMEOUT_S", 0.3)
    tool = hanging_tool(tmp_path / "usr/local/cuda/bin")
    good = fake_ptxas(tmp_path / "opt/cuda-12.8/bin", "12.8")
    start = time.monotonic()
    choice = locate(LOCATORS, "ptxas", fake_host(tmp_path), Context(arch=90))
    assert time.monotonic() - start < 5
    assert choice.path == str(good)
    (rejection,) = choice.rejected
    assert rejection.path == str(tool)
    assert "did not answer within 0.3 s" in rejection.reason


@pytest.mark.parametrize("what", ["directory", "file"])
def test_world_writable_tool_is_never_run(tmp_path: Path, what: str) -> None:
    log = tmp_path / "runs.log"
    tool = fake_ptxas(tmp_path / "shared/bin", "12.8", log=log)
    make_writable_by_all(tool.parent if what == "directory" else tool)
    host = fake_host(tmp_path, {"CUDA_HOME": str(tmp_path / "shared"), "PATH": ""})
    choice = locate(LOCATORS, "ptxas", host)
    assert choice.path is None
    (rejection,) = choice.rejected
    assert "writable by everyone" in rejection.reason and "not trusted" in rejection.reason
    assert not log.exists()
    # Even a manifest's recorded version does not make it acceptable.
    verdict = check_tool("ptxas", host, tool, Context(recorded_version="12.8"))
    assert verdict.problem is not None and "writable by everyone" in verdict.problem


def test_sticky_world_writable_directory_is_accepted(tmp_path: Path) -> None:
    tool = fake_ptxas(tmp_path / "tmpdir", "12.8")
    make_writable_by_all(tool.parent, sticky=True)
    assert check_tool("ptxas", fake_host(tmp_path), tool, Context()).problem is None


def test_program_that_is_not_a_cuda_tool(tmp_path: Path) -> None:
    tool = write_script(tmp_path / "bin/ptxas", "echo 'ptxas 0.1 (a homonym)'\n")
    problem = check_tool("ptxas", fake_host(tmp_path), tool, Context()).problem
    assert problem == "`--version` printed no CUDA release (not an NVIDIA CUDA tool?)"


def test_failing_tool_reports_its_exit_status(tmp_path: Path) -> None:
    tool = write_script(
        tmp_path / "bin/ptxas", "echo 'cannot load libnvptxcompiler' >&2\nexit 127\n"
    )
    problem = check_tool("ptxas", fake_host(tmp_path), tool, Context()).problem
    assert problem == "`ptxas --version` exited with 127: cannot load libnvptxcompiler"


def test_empty_and_relative_path_entries_are_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.log"
    cwd = tmp_path / "cwd"
    fake_ptxas(cwd, "13.0", log=log)  # ./ptxas, reached by the empty entry
    fake_ptxas(cwd / "bin", "13.0", log=log)  # bin/ptxas, reached by "bin"
    good = fake_ptxas(tmp_path / "abs", "12.8")
    monkeypatch.chdir(cwd)
    host = fake_host(tmp_path, {"PATH": os.pathsep.join(["", "bin", str(tmp_path / "abs")])})
    choice = locate(LOCATORS, "ptxas", host)
    assert choice.path == str(good)
    reasons = {r.path: r.reason for r in choice.rejected}
    assert reasons == {
        "ptxas": "PATH entry '': empty entry (means the current directory), ignored",
        "bin/ptxas": "PATH entry 'bin': relative entry, ignored",
    }
    assert not log.exists()


def test_relative_cuda_home_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "runs.log"
    fake_ptxas(tmp_path / "cwd/cuda/bin", "12.8", log=log)
    monkeypatch.chdir(tmp_path / "cwd")
    choice = locate(LOCATORS, "ptxas", fake_host(tmp_path, {"CUDA_HOME": "cuda", "PATH": ""}))
    assert choice.path is None
    (rejection,) = choice.rejected
    assert rejection.reason == "CUDA_HOME is a relative path, ignored"
    assert not log.exists()


def test_versioned_toolkits_newest_first(tmp_path: Path) -> None:
    for version in ("12.4", "12.10", "12.9"):
        fake_ptxas(tmp_path / f"usr/local/cuda-{version}/bin", version)
    choice = locate(LOCATORS, "ptxas", fake_host(tmp_path))
    assert choice.version == "12.10"


# ------------------------------------------------------------------ the real machine


def test_real_machine_bundled_tools() -> None:
    """The installed Triton's own ptxas-blackwell (and ptxas, cuobjdump, nvdisasm) are
    chosen, with the release the binary itself prints."""
    host = Host.current()
    assert host.triton_dir is not None
    blackwell = locate(LOCATORS, "ptxas-blackwell", host, Context(arch=90))
    assert blackwell.path == str(host.triton_dir / "backends/nvidia/bin/ptxas-blackwell")
    printed = subprocess.run(
        [blackwell.path, "--version"], capture_output=True, text=True, check=True
    )
    release = re.search(r"release (\d+\.\d+)", printed.stdout)
    assert release is not None and blackwell.version == release[1]
    ptxas = locate(LOCATORS, "ptxas", host, Context(arch=80))
    assert ptxas.source is not None and ptxas.source.kind is SourceKind.BUNDLED
    assert parse_release(ptxas.version or "") is not None
    for name in ("cuobjdump", "nvdisasm"):
        assert locate(LOCATORS, name, host).source == ptxas.source


def test_real_machine_without_bundled_binaries_finds_the_toolkit() -> None:
    """This machine's /usr/local/cuda (-> cuda-13.0) serves when Triton's copies are gone."""
    current = Host.current()
    environ = {
        k: v
        for k, v in current.environ.items()
        if k not in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX")
    }
    host = Host(environ=environ)  # no torch, no wheels
    choice = locate(LOCATORS, "ptxas-blackwell", host, Context(arch=90))
    assert choice.path == "/usr/local/cuda/bin/ptxas"
    assert choice.version == "13.0"
    volta = locate(LOCATORS, "ptxas", host, Context(arch=70))
    assert any(
        r.path == "/usr/local/cuda/bin/ptxas" and "dropped after 12.9" in r.reason
        for r in volta.rejected
    )
