"""``self_test`` (``doctor --run``) against the installed Triton, in fresh interpreters:
without a GPU it compiles, builds (and, with a driver, loads) the launcher, and stops."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from triton_layouts import ROOT, make_layout, scenario_env

CODE = (
    "import sys\n"
    "from triton_toolchain.cli._selftest import self_test\n"
    "report = self_test()\n"
    "print(report.text)\n"
    "print('steps', [(s.name, s.ok) for s in report.steps])\n"
    "sys.exit(0 if report.ok else 1)\n"
)


def _run(tmp_path: Path, **layout_options: bool) -> subprocess.CompletedProcess[str]:
    layout = make_layout(tmp_path, **layout_options)
    return subprocess.run(
        [sys.executable, "-c", CODE],
        env=scenario_env(layout),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )


def test_with_a_driver_but_no_gpu_it_loads_the_launcher_and_stops(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "('activate', True)" in done.stdout
    assert "('compile sm_90', True)" in done.stdout
    assert "('build launcher', True)" in done.stdout
    assert "('launch', None)" in done.stdout
    assert f"driver {(tmp_path / 'driver').resolve()}" in done.stdout
    assert "stopped after the build" in done.stdout


def test_with_only_a_link_stub_it_builds_and_says_why_it_stops(tmp_path: Path) -> None:
    done = _run(tmp_path, driver=False, stub=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "built against the link stub" in done.stdout
    assert "no NVIDIA driver: stopped after the build" in done.stdout


def test_a_broken_toolchain_fails_the_self_test(tmp_path: Path) -> None:
    done = _run(tmp_path, driver=False, stub=False)
    assert done.returncode == 1
    assert "('build launcher', False)" in done.stdout
    assert "MissingComponentError" in done.stdout


# Parameters Triton appends to a kernel's own, by release (its launchers pass null
# pointers there): 3.3 a global scratch pointer, 3.5 a profile scratch pointer too.
APPENDED = ((3, 5), 2), ((3, 3), 1), ((3, 0), 0)


def test_the_compiled_kernel_takes_what_the_driver_launch_passes(tmp_path: Path) -> None:
    """The torch-free launch passes three pointers, the element count, and a null for
    every further parameter: the count ``ptx_param_count`` reads from the PTX must be
    the kernel's four plus what this Triton release appends, and the types must be what
    the launch passes."""
    from triton_layouts import triton_version

    appended = next(n for first, n in APPENDED if triton_version() >= first)
    code = (
        "import triton\n"
        "from triton.backends.compiler import GPUTarget\n"
        "from triton_toolchain.cli._selftest import _source, ptx_param_count\n"
        "k = triton.compile(_source(), target=GPUTarget('cuda', 90, 32))\n"
        "print(ptx_param_count(k.asm['ptx'], k.metadata.name),"
        " getattr(k.metadata, 'global_scratch_size', 0))\n"
        "print(k.asm['ptx'])\n"
    )
    env = scenario_env(make_layout(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    first, *ptx = done.stdout.splitlines()
    count, scratch = first.split()
    assert int(count) == 4 + appended
    assert scratch == "0"
    # Read the entry's parameters line by line (not with the product's pattern).
    entry = ptx[
        next(i for i, line in enumerate(ptx) if line.lstrip().startswith(".visible .entry")) :
    ]
    params = [line.split()[1] for line in entry[: entry.index(")") + 1] if ".param" in line]
    assert params[:4] == [".u64", ".u64", ".u64", ".u32"]
    assert params[4:] == [".u64"] * appended
