"""doctor's report from real resolutions of fake machines: one line per goal with the
one thing to do, a compact table, details only with ``verbose``. Every machine is
built from real files (fake tools that answer like NVIDIA's, the real g++ behind a
wrapper, a real ELF driver stand-in, torch's own ``version.py`` layout)."""

from __future__ import annotations

import json
from pathlib import Path

from elf_fixtures import install_stub, kernel_module
from test_resolve import machine
from tool_fixtures import REAL_CUDA, fake_host, python_include, wrapper, write_os_release
from triton_toolchain.cli._report import (
    PACKAGE_FIX,
    REFUSED_FIX,
    TORCH_CUDA_FIX,
    VERBOSE_HINT,
    GoalVerdict,
    Installed,
    doctor_report,
    judge,
)
from triton_toolchain.resolver._catalog import COMPONENT, COMPONENT_NAMES, GOALS
from triton_toolchain.resolver._discovery._headers import python_headers_fix
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._model import Toolchain
from triton_toolchain.resolver._resolve import resolve_all

REAL_GXX = Path("/usr/bin/g++")
HEADER = "triton-toolchain (test)"
# torch/version.py as torch's setup writes it, for a CUDA build and a CPU build.
TORCH_VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']
__version__ = '{version}'
debug = False
cuda: Optional[str] = {cuda}
git_version = 'cf30153c4c131c8164ee7798e5022d810682e2cb'
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
"""


def workstation(
    root: Path,
    *,
    driver: bool = True,
    torch_cuda: str | None = "12.8",
    torch: bool = True,
    triton: bool = True,
    cuda_home: bool = True,
    **env: str,
) -> Host:
    """``test_resolve.machine`` (Triton's bundled tools and headers, gcc, Python.h, the
    driver) with Triton's ``__init__.py``, torch's ``version.py`` (``torch_cuda=None``:
    a CPU build), the real g++ as ``g++`` on ``PATH`` (so that openmp is the real
    compiler's) and the real CUDA toolkit as ``CUDA_HOME``."""
    paths = machine(root)
    if not driver:
        for name in ("libcuda.so.1", f"{paths['driver'].resolve().name}"):
            (paths["driver"].parent / name).unlink()
    wrapper(paths["bin"] / "g++", REAL_GXX)
    site = root / "site"
    if triton:
        (paths["triton"] / "__init__.py").write_text("__version__ = '3.9.0'\n")
    torch_dir = None
    if torch:
        torch_dir = site / "torch"
        torch_dir.mkdir(parents=True)
        cuda = repr(torch_cuda) if torch_cuda else "None"
        version = f"2.13.0+cu{torch_cuda.replace('.', '')}" if torch_cuda else "2.13.0+cpu"
        (torch_dir / "version.py").write_text(TORCH_VERSION_PY.format(version=version, cuda=cuda))
    environ = {"PATH": str(paths["bin"]), "XDG_CACHE_HOME": str(root / "cache"), **env}
    if cuda_home:
        environ["CUDA_HOME"] = str(REAL_CUDA)
    return fake_host(
        root,
        environ,
        triton_dir=paths["triton"] if triton else None,
        torch_dir=torch_dir,
    )


def report(
    host: Host, *, verbose: bool = False, refused: tuple[str, ...] = ()
) -> tuple[Toolchain, dict[str, GoalVerdict], str]:
    tc = resolve_all(host=host)
    installed = Installed.of(host)
    verdicts = judge(tc, installed, refused)
    text = doctor_report(tc, header=HEADER, verdicts=verdicts, installed=installed, verbose=verbose)
    return tc, verdicts, text


def goal_line(text: str, title: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(title + " "))


def test_a_complete_gpu_workstation_is_ready_for_every_goal_in_one_screen(
    tmp_path: Path,
) -> None:
    tc, verdicts, text = report(workstation(tmp_path))
    assert tc.missing() == () and not tc.errors()
    assert all(v.ready for v in verdicts.values()), {n: v.verdict for n, v in verdicts.items()}
    for goal in GOALS.values():
        assert goal_line(text, goal.title).split()[-1] == "ready"
    assert "fix:" not in text and "looked at:" not in text and "note:" not in text
    assert len(text.splitlines()) <= 40
    rows = {line.split()[0]: line.split()[1] for line in text.splitlines()[-17:-2]}
    assert list(rows) == ["component", *COMPONENT_NAMES]  # the table: a row per component
    # The optional inspection tools are absent from this machine, and say so.
    absent = {n for n in COMPONENT_NAMES if COMPONENT[n].stage is None and tc[n].path is None}
    assert absent == {"cuobjdump", "nvdisasm"}
    assert {n for n, status in rows.items() if status == "absent"} == absent


def test_without_a_driver_kernels_compile_and_the_driver_is_the_one_thing_to_do(
    tmp_path: Path,
) -> None:
    _, verdicts, text = report(workstation(tmp_path, driver=False))
    triton = verdicts["triton"]
    assert not triton.ready
    assert [s.ready for s in triton.steps] == [True, False]
    assert triton.verdict == (
        "partly: can compile kernels; cannot launch kernels: libcuda, libcuda-link not found"
    )
    assert triton.fix == COMPONENT["libcuda"].fix
    assert triton.missing == ("libcuda", "libcuda-link")
    assert verdicts["torch-gpu"].verdict == "not ready: libcuda, libcuda-link not found"
    assert verdicts["torch-cpu"].ready and verdicts["extensions"].ready
    lines = text.splitlines()
    at = lines.index(goal_line(text, "Triton kernels"))
    assert lines[at + 1] == f"  fix: {COMPONENT['libcuda'].fix}"
    # No list of looked-at places: libcuda's 20-odd nonexistent paths are behind -v.
    assert "looked at:" not in text and "/run/opengl-driver" not in text
    assert len(lines) <= 40
    assert lines[-1] == VERBOSE_HINT


def test_a_toolkit_stub_without_a_driver_builds_but_cannot_launch(tmp_path: Path) -> None:
    stubs = tmp_path / "stubs"
    install_stub(stubs)
    host = workstation(tmp_path, driver=False, TRITON_LIBCUDA_PATH=str(stubs))
    tc, verdicts, text = report(host)
    assert tc["libcuda-link"].path == str(stubs)
    assert verdicts["triton"].verdict == (
        "partly: can compile kernels; cannot launch kernels: libcuda not found"
    )
    # The note that the variable names a stub is a detail: it is in -v.
    assert "link stub" not in text
    _, _, verbose = report(host, verbose=True)
    assert "holds a CUDA toolkit link stub" in verbose


def test_a_cpu_build_of_torch_blocks_only_what_needs_cuda(tmp_path: Path) -> None:
    _, verdicts, text = report(workstation(tmp_path, torch_cuda=None))
    gpu = verdicts["torch-gpu"]
    assert gpu.verdict == "not ready: torch 2.13.0+cpu is built without CUDA"
    assert gpu.fix == TORCH_CUDA_FIX
    assert verdicts["extensions"].verdict == (
        "partly: can build C++ extensions; cannot build CUDA extensions: torch 2.13.0+cpu is "
        "built without CUDA"
    )
    assert verdicts["triton"].ready and verdicts["torch-cpu"].ready
    assert f"  fix: {TORCH_CUDA_FIX}" in text.splitlines()


def test_missing_packages_come_first_with_how_to_install_them(tmp_path: Path) -> None:
    host = workstation(tmp_path, torch=False, triton=False, cuda_home=False)
    installed = Installed.of(host)
    assert (installed.triton, installed.torch, installed.torch_cuda) == (None, None, None)
    tc, verdicts, text = report(host)
    assert verdicts["triton"].verdict == "not ready: Triton not installed"
    assert verdicts["triton"].fix == PACKAGE_FIX["triton"]
    assert verdicts["torch-cpu"].verdict == "not ready: torch not installed"
    assert verdicts["torch-gpu"].fix == PACKAGE_FIX["torch"]
    # The components stay judged: cuda-home is missing, and listed for the JSON.
    assert verdicts["extensions"].missing == ("cuda-home",)
    assert tc["cuda-home"].path is None
    assert "cuda-home         MISSING" in text


def test_missing_python_headers_name_this_distributions_package(tmp_path: Path) -> None:
    """No Python.h for the interpreter of /usr on Debian: the fix is the package, as the
    resolver worked it out, not the catalog's generic words."""
    write_os_release(tmp_path, 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n')
    paths = machine(tmp_path)
    wrapper(paths["bin"] / "g++", REAL_GXX)
    # Python 3.6: no headers for it here nor under the real /usr (the base prefix).
    inc = python_include(tmp_path / "usr/include/python3.6", "3.6.15", python_h=False)
    host = fake_host(
        tmp_path,
        {"PATH": str(paths["bin"]), "XDG_CACHE_HOME": str(tmp_path / "cache")},
        triton_dir=paths["triton"],
        python_include=inc,
        python_version=(3, 6),
        base_prefix=Path("/usr"),
    )
    _, verdicts, text = report(host)
    fix = python_headers_fix(host)
    assert "install python3.6-dev (`apt install python3.6-dev`)" in fix
    assert verdicts["triton"].verdict == (
        "partly: can compile kernels; cannot launch kernels: python-headers not found"
    )
    assert verdicts["triton"].fix == fix
    assert f"  fix: {fix}" in text.splitlines()


def test_a_wrong_setting_is_the_one_thing_to_do_and_shown_as_an_error(tmp_path: Path) -> None:
    host = workstation(tmp_path, TRITON_PTXAS_PATH="relative/ptxas")
    tc, verdicts, text = report(host)
    assert tc["ptxas"].error
    triton = verdicts["triton"]
    assert triton.verdict == "not ready: TRITON_PTXAS_PATH='relative/ptxas': not an absolute path"
    assert triton.fix is not None and "unset TRITON_PTXAS_PATH" in triton.fix
    assert triton.missing == ("ptxas",)
    assert any(line.split()[:2] == ["ptxas", "ERROR"] for line in text.splitlines())
    # The resolution's note about the setting changes what to do: it is shown.
    assert "note: TRITON_PTXAS_PATH is set but TRITON_PTXAS_BLACKWELL_PATH is not" in text


def test_a_ptxas_triton_refuses_blocks_compiling(tmp_path: Path) -> None:
    refused = ("ptxas /x/ptxas: Triton 3.3 cannot use a CUDA 13.0 ptxas",)
    _, verdicts, _ = report(workstation(tmp_path), refused=refused)
    assert verdicts["triton"].verdict == f"not ready: refused by Triton: {refused[0]}"
    assert verdicts["triton"].fix == REFUSED_FIX
    assert not verdicts["torch-gpu"].ready
    assert verdicts["torch-cpu"].ready and verdicts["extensions"].ready


def test_a_strict_manifest_says_where_the_missing_component_must_be_given(
    tmp_path: Path,
) -> None:
    host = workstation(tmp_path, driver=False)
    tc = resolve_all(host=host)
    given = {n: tc[n].path for n in ("ptxas", "ptxas-blackwell", "libdevice")}
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "schema": 2,
                "strict": True,
                "components": {name: {"path": path} for name, path in given.items()},
            }
        )
    )
    strict = workstation(tmp_path / "again", driver=False, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    _, verdicts, _ = report(strict)
    fix = verdicts["triton"].fix or ""
    assert verdicts["triton"].verdict.startswith("partly: can compile kernels; cannot launch")
    assert fix.startswith(f"the manifest {manifest} is strict (nothing else is searched)")
    assert "give one there (in its components)" in fix and COMPONENT["cc"].fix in fix


def test_verbose_shows_strictly_more(tmp_path: Path) -> None:
    host = workstation(tmp_path, driver=False)
    _, _, plain = report(host)
    tc, _, verbose = report(host, verbose=True)
    shown = verbose.splitlines()
    assert [line for line in plain.splitlines() if line != VERBOSE_HINT] == shown[
        : len(plain.splitlines()) - 1
    ]
    assert len(shown) > len(plain.splitlines())
    assert "libcuda not found (the NVIDIA driver library" in verbose
    for place in tc["libcuda"].searched:
        assert f"    {place}" in shown
    for note in tc["libcuda"].notes:
        assert f"  note: {note}" in shown
    assert "torch 2.13.0+cu128 (CUDA 12.8) at " in verbose


def test_focus_on_compiling_hides_launch_details(tmp_path: Path) -> None:
    host = workstation(tmp_path, driver=False)
    tc = resolve_all(host=host)
    installed = Installed.of(host)
    compile_only = judge(tc, installed)["triton"].only(["compile"])
    assert compile_only.ready and compile_only.label == "Triton kernels (compile)"
    for verbose in (False, True):
        text = doctor_report(
            tc,
            header=HEADER,
            verdicts={"triton": compile_only},
            installed=installed,
            verbose=verbose,
        )
        assert "Triton kernels (compile)  ready" in text
        assert "libcuda" not in text and "gcc" not in text and "torch.compile" not in text
        assert "ptxas-blackwell" in text


def test_goals_as_json(tmp_path: Path) -> None:
    _, verdicts, _ = report(workstation(tmp_path, driver=False, torch_cuda=None))
    doc = json.loads(json.dumps({n: v.to_dict() for n, v in verdicts.items()}))
    assert list(doc) == list(GOALS)
    assert doc["triton"]["ready"] is False
    assert doc["triton"]["missing"] == ["libcuda", "libcuda-link"]
    assert doc["triton"]["fix"] == COMPONENT["libcuda"].fix
    assert doc["triton"]["steps"] == {"compile": True, "launch": False}
    assert doc["torch-gpu"]["blocked"] == ["torch 2.13.0+cpu is built without CUDA"]
    assert doc["torch-cpu"] == {
        "title": "torch.compile on CPU",
        "ready": True,
        "verdict": "ready",
        "missing": [],
        "blocked": [],
        "fix": None,
        "steps": {"build": True},
    }


def test_reprs_are_one_short_line(tmp_path: Path) -> None:
    tc = resolve_all(host=workstation(tmp_path, driver=False))
    for obj in (tc, *tc):
        text = repr(obj)
        assert "\n" not in text and len(text) < 300, text
    assert repr(tc) == "<Toolchain for any architecture: missing: libcuda, libcuda-link>"


def test_a_driver_that_does_not_match_the_kernel_module_is_shown_as_rejected(
    tmp_path: Path,
) -> None:
    """A driver is installed but rejected: "install the NVIDIA driver" alone would
    mislead, so the rejected candidate and why is on the screen too."""
    host = workstation(tmp_path)
    kernel_module(tmp_path, "999.1.1")
    tc, _, text = report(host)
    rejected = tc["libcuda"].rejected
    assert tc["libcuda"].path is None and rejected
    assert "does not match kernel module 999.1.1" in rejected[0].reason
    more = f" (and {len(rejected) - 1} more)" if len(rejected) > 1 else ""
    lines = text.splitlines()
    at = lines.index(goal_line(text, "Triton kernels"))
    assert lines[at + 1 : at + 3] == [
        f"  fix: {COMPONENT['libcuda'].fix}",
        f"  rejected: {rejected[0]}{more}",
    ]


def test_a_cpu_torch_without_triton_needs_a_torch_built_with_cuda_first(tmp_path: Path) -> None:
    """The GPU goal's first step is a torch built with CUDA (which brings the Triton it
    runs), not `pip install triton` beside a torch that cannot use a GPU."""
    _, verdicts, text = report(workstation(tmp_path, torch_cuda=None, triton=False))
    gpu = verdicts["torch-gpu"]
    assert gpu.fix == TORCH_CUDA_FIX
    assert gpu.verdict.startswith("not ready: torch 2.13.0+cpu is built without CUDA; ")
    assert "Triton not installed" in gpu.verdict
    assert verdicts["triton"].fix == PACKAGE_FIX["triton"]  # Triton kernels alone: Triton
    assert f"  fix: {TORCH_CUDA_FIX}" in text.splitlines()


def test_a_cxx_that_cannot_run_names_openmp_once_as_its_consequence(tmp_path: Path) -> None:
    tc, verdicts, text = report(workstation(tmp_path, CXX="g++-99"))
    assert tc["cxx"].error and tc["openmp"].path is None
    cpu = verdicts["torch-cpu"]
    assert cpu.missing == ("cxx",)
    assert "openmp" not in cpu.verdict, cpu.verdict
    assert cpu.fix is not None and "CXX" in cpu.fix
    rows = [line.split() for line in text.splitlines()]
    assert ["openmp", "needs", "cxx"] in rows
    assert not any(row[:2] == ["openmp", "MISSING"] for row in rows)
    assert "openmp not found" not in text and text.count("openmp") == 1
