"""Hostile corpus, round 4, what the shim does not know is not a usage error: a GPU of a
compute capability the catalog does not know is said and doctor goes on; a driver whose
``cuDriverGetVersion`` answers no CUDA release (a garbage number, an error status, no
such function) leaves "driver fit not checked" on doctor's screen, never a silent
"ready"; a strict manifest that could never find a driver is not written.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import driver_standin
import pytest
from hostile import clean_env, cli


@pytest.mark.parametrize("capability", [(13, 0), (0, 0), (9, 9), (99, 9)])
def test_a_gpu_of_an_unknown_capability_is_said_and_doctor_goes_on(
    tmp_path: Path, capability: tuple[int, int]
) -> None:
    driver = driver_standin.driver(tmp_path / "driver", capability=capability, cuda_version=13000)
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(driver.parent))
    done = cli("doctor", env=env)
    assert done.returncode in (0, 1), done.output
    assert "without the dot" not in done.output
    major, minor = capability
    said = f"the GPU reports compute capability {major}.{minor}, which triton-toolchain"
    assert said in " ".join(done.stdout.split()), done.stdout
    doc = json.loads(cli("doctor", "--json", env=env).stdout)
    assert doc["arch"] is None and any(said in n for n in doc["notes"])


def test_a_gpu_of_a_known_capability_is_the_target(tmp_path: Path) -> None:
    """The control: a 9.0 GPU makes the target sm_90."""
    driver = driver_standin.driver(tmp_path / "driver", capability=(9, 0), cuda_version=13000)
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(driver.parent))
    doc = json.loads(cli("doctor", "--json", env=env).stdout)
    assert doc["arch"] == 90


def _driver_answering(directory: Path, body: str) -> Path:
    """A driver-style ``libcuda.so.1`` whose ``cuDriverGetVersion`` is ``body`` (C), or
    that has none (``body`` empty), built with gcc."""
    directory.mkdir(parents=True)
    source = directory / "driver.c"
    source.write_text(
        f"typedef int CUresult;\nCUresult cuInit(unsigned f) {{ return 100; }}\n{body}\n"
    )
    real = directory / "libcuda.so.580.159.04"
    subprocess.run(
        [
            driver_standin.GCC,
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            str(real),
            str(source),
        ],
        check=True,
    )
    (directory / "libcuda.so.1").symlink_to(real.name)
    return directory / "libcuda.so.1"


ANSWERS = {
    "minus-one": "CUresult cuDriverGetVersion(int *v) { *v = -1; return 0; }",
    "zero": "CUresult cuDriverGetVersion(int *v) { *v = 0; return 0; }",
    "int-max": "CUresult cuDriverGetVersion(int *v) { *v = 2147483647; return 0; }",
    "error-status": "CUresult cuDriverGetVersion(int *v) { *v = 13000; return 999; }",
    "no-such-symbol": "",
}


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_a_driver_that_answers_no_cuda_release_leaves_the_fit_unchecked_and_said(
    tmp_path: Path, answer: str
) -> None:
    driver = _driver_answering(tmp_path / "driver", ANSWERS[answer])
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(driver.parent))
    done = cli("doctor", env=env)
    assert done.returncode in (0, 1), done.output
    text = " ".join(done.stdout.split())
    assert f"driver fit not checked: {driver} did not say which CUDA release" in text, text
    doc = json.loads(cli("doctor", "--json", env=env).stdout)
    assert any(n.startswith("driver fit not checked: ") for n in doc["notes"])


def test_a_driver_that_answers_its_release_needs_no_such_note(tmp_path: Path) -> None:
    """The control: a driver of CUDA 13.0 answers, and the fit is checked."""
    driver = _driver_answering(tmp_path / "driver", ANSWERS["zero"].replace("= 0;", "= 13000;"))
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(driver.parent))
    done = cli("doctor", env=env)
    assert "driver fit not checked" not in done.output


@pytest.mark.parametrize("no_driver", [True, False])
def test_a_strict_lock_without_a_driver_is_refused_by_name(tmp_path: Path, no_driver: bool) -> None:
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH="")
    out = tmp_path / "manifest.json"
    args = ["lock", "--strict", "-o", str(out), *(["--no-driver"] if no_driver else [])]
    done = cli(*args, env=env)
    assert done.returncode == 2, done.output
    assert done.stderr.startswith("error: lock --strict: no NVIDIA driver was found here")
    assert "leave out --strict" in done.stderr
    assert not out.exists()
    # Without --strict the manifest is written: the machine that runs it finds its driver.
    assert cli("lock", "--no-driver", "-o", str(out), env=env).returncode == 0
    assert json.loads(out.read_text()).get("driver_dirs", []) == []
