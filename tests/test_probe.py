"""``resolver/_discovery/_probe``: real ptxas binaries (the cached CUDA releases,
``tools/fetch_ptxas.py``, and this machine's CUDA 13.0 toolkit) asked whether they
assemble the PTX this Triton writes, and gcc-built stand-in drivers asked their CUDA
version and their GPU's architecture, each in a child process."""

from __future__ import annotations

import os
from pathlib import Path

import driver_standin
import pytest
from fit_fixtures import real_ptxas
from tool_fixtures import make_writable_by_all, wrapper, write_script
from triton_toolchain.resolver._discovery import _answers
from triton_toolchain.resolver._discovery._probe import (
    MESSAGE_LIMIT,
    PROBE_ENTRY,
    assemble,
    driver_cuda,
    gpu_arch,
    probe_ptx,
)

TOOLKIT_PTXAS = Path("/usr/local/cuda-13.0/bin/ptxas")


@pytest.fixture(autouse=True)
def _fresh_answers() -> None:
    _answers.forget_loaded()


# ------------------------------------------------------------------ what the probe assembles


def test_the_probe_ptx_is_an_empty_kernel_with_triton_s_header() -> None:
    text = probe_ptx(86, "sm_90a")
    assert text.splitlines()[:3] == [".version 8.6", ".target sm_90a", ".address_size 64"]
    assert f".visible .entry {PROBE_ENTRY}()" in text


def test_the_toolkits_ptxas_assembles_its_own_ptx_version() -> None:
    """CUDA 13.0 writes PTX 9.0 and assembles sm_90a and sm_100a; PTX 9.1 is newer."""
    assert assemble(TOOLKIT_PTXAS, 90, "sm_90a") is None
    assert assemble(TOOLKIT_PTXAS, 90, "sm_100a") is None
    problem = assemble(TOOLKIT_PTXAS, 91, "sm_90a")
    assert problem is not None and "Unsupported .version 9.1" in problem, problem


@pytest.mark.parametrize(
    ("ptx", "target"),
    [(5, "sm_90a"), (1000, "sm_90a"), (86, "sm_9"), (86, "sm_90a; rm -rf /"), (86, "compute_90")],
)
def test_a_ptx_version_or_target_that_is_none_is_refused_before_any_run(
    tmp_path: Path, ptx: int, target: str
) -> None:
    log = tmp_path / "runs.log"
    tool = wrapper(tmp_path / "bin" / "ptxas", TOOLKIT_PTXAS, log=log)
    with pytest.raises(ValueError, match="not a PTX version and target"):
        assemble(tool, ptx, target)
    assert not log.exists()


# ------------------------------------------------------------------ the probe, real binaries


@pytest.mark.network
@pytest.mark.network  # a real ptxas release from PyPI
def test_the_probe_finds_what_a_real_ptxas_rejects() -> None:
    """Triton 3.0 writes PTX 8.6 for a 12.6 ptxas, which accepts only 8.5 (the error users
    hit, triton-lang/triton#4576, #5929); a 12.4 ptxas knows no sm_100a; PTX 8.4 cannot
    target sm_100a even for a 13.1 ptxas."""
    p126, p124, p131 = real_ptxas("12.6"), real_ptxas("12.4"), real_ptxas("13.1")
    problem = assemble(p126, 86, "sm_80")
    assert problem is not None and "Unsupported .version 8.6; current version is '8.5'" in problem
    assert assemble(p126, 85, "sm_80") is None
    problem = assemble(p124, 84, "sm_100a")
    assert problem is not None and "Value 'sm_100a' is not defined" in problem
    problem = assemble(p131, 84, "sm_100a")
    assert problem is not None and "does not support .target sm_100a" in problem
    assert assemble(p131, 91, "sm_100a") is None


@pytest.mark.network
@pytest.mark.network  # a real ptxas release from PyPI
def test_the_probe_is_remembered_per_file_version_and_question(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    tool = wrapper(tmp_path / "bin" / "ptxas", real_ptxas("12.6"), log=log)
    answers = tmp_path / "cache"
    answers.mkdir(mode=0o700)
    assert assemble(tool, 86, "sm_90a", answers=answers) is not None
    _answers.forget_loaded()  # a new process: read back from the file
    assert assemble(tool, 86, "sm_90a", answers=answers) is not None
    assert len(log.read_text().splitlines()) == 1
    assert assemble(tool, 85, "sm_90a", answers=answers) is None  # another question
    assert len(log.read_text().splitlines()) == 2
    tool.write_text(tool.read_text())  # a new version of the file: asked again
    assert assemble(tool, 85, "sm_90a", answers=answers) is None
    assert len(log.read_text().splitlines()) == 3


def test_the_probes_input_is_private_and_removed(tmp_path: Path) -> None:
    """The PTX file is written 0600 into a fresh 0700 directory, removed afterwards."""
    seen = tmp_path / "seen"
    tool = write_script(
        tmp_path / "bin" / "ptxas",
        f'src="$2"; stat -c "%a" "$(dirname "$src")" "$src" > {seen}; echo "$src" >> {seen}\n'
        "printf '\\177ELF' > \"$4\"\n",
    )
    assert assemble(tool, 85, "sm_80") is None
    dir_mode, file_mode, source = seen.read_text().split()
    assert (dir_mode, file_mode) == ("700", "600")
    assert not os.path.exists(os.path.dirname(source))


def test_the_probes_output_is_hostile_input(tmp_path: Path) -> None:
    def noisy(lines: int) -> Path:
        return write_script(
            tmp_path / f"noisy-{lines}" / "ptxas",
            f"i=0; while [ $i -lt {lines} ]; do printf 'fatal \\033[31m\\001 junk %s\\n' $i; "
            "i=$((i+1)); done; exit 3\n",
        )

    assert assemble(noisy(5000), 85, "sm_80") == "the probe printed more than 65536 bytes"
    problem = assemble(noisy(1000), 85, "sm_80")
    assert problem is not None and problem.startswith("exited with 3")
    assert len(problem) <= MESSAGE_LIMIT + 40
    assert not any(ord(c) < 32 for c in problem)
    silent = write_script(tmp_path / "silent" / "ptxas", "exit 0\n")
    assert (
        assemble(silent, 85, "sm_80") == "exited with 0 but wrote no cubin (not an NVIDIA ptxas?)"
    )
    planted = write_script(tmp_path / "planted" / "ptxas", f"touch {tmp_path / 'ran'}\n")
    make_writable_by_all(planted)
    assert assemble(planted, 85, "sm_80") is not None
    assert not (tmp_path / "ran").exists()


# ------------------------------------------------------------------ the driver's CUDA version


def test_the_drivers_cuda_version_is_read_in_a_child(tmp_path: Path) -> None:
    lib = driver_standin.driver(tmp_path / "drv", cuda_version=12080)
    answers = tmp_path / "cache"
    answers.mkdir(mode=0o700)
    assert driver_cuda(lib, answers=answers) == ((12, 8), None)
    assert not any("libcuda" in line for line in Path("/proc/self/maps").read_text().splitlines())
    failing = driver_standin.driver(tmp_path / "none")  # cuDriverGetVersion returns 100
    version, problem = driver_cuda(failing)
    assert version is None and problem is not None and "CUresult 100" in problem
    version, problem = driver_cuda(Path("/usr/lib/x86_64-linux-gnu/libm.so.6"))
    assert version is None and problem is not None and "cuDriverGetVersion" in problem


# ------------------------------------------------------------------ the GPU's architecture


@pytest.mark.parametrize("capability", [(9, 0), (10, 0), (12, 1)])
def test_the_gpus_architecture_is_read_in_a_child(
    tmp_path: Path, capability: tuple[int, int]
) -> None:
    lib = driver_standin.driver(tmp_path / "drv", cuda_version=13000, capability=capability)
    assert gpu_arch(lib) == (capability[0] * 10 + capability[1], None)
    assert not any("libcuda" in line for line in Path("/proc/self/maps").read_text().splitlines())


def test_a_driver_without_a_gpu_says_so(tmp_path: Path) -> None:
    lib = driver_standin.driver(tmp_path / "drv", cuda_version=13000)  # cuInit: 100
    assert gpu_arch(lib) == (None, "no GPU answered (CUresult 100)")


def test_a_library_that_is_no_driver_answers_nothing(tmp_path: Path) -> None:
    arch, problem = gpu_arch(Path("/usr/lib/x86_64-linux-gnu/libm.so.6"))
    assert arch is None and problem is not None
    assert problem.startswith("answered") and "(exit 1)" in problem, problem


def test_a_driver_others_can_change_is_not_loaded(tmp_path: Path) -> None:
    lib = driver_standin.driver(tmp_path / "drv", cuda_version=13000, capability=(9, 0))
    make_writable_by_all(lib.resolve())
    arch, problem = gpu_arch(lib)
    assert arch is None and problem is not None and problem.startswith("not trusted"), problem
    version, problem = driver_cuda(lib)
    assert version is None and problem is not None and problem.startswith("not trusted")


def test_a_missing_driver_is_no_answer_and_no_run(tmp_path: Path) -> None:
    assert gpu_arch(tmp_path / "libcuda.so.1") == (None, "does not exist")
    assert driver_cuda(tmp_path / "libcuda.so.1") == (None, "does not exist")
