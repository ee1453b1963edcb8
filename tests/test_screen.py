"""What a user sees, through the real command and a real Triton: every exit 2 names the
setting, its value and the fix on the screen; no raw Python warning; lines of at most
100 columns; `lock` says what is missing and how an image without a GPU locks; Triton's
"0 active drivers" says what the shim found. Each runs in a fresh process with its own
cache, as a user runs the command."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SRC
from triton_toolchain.cli._report import WIDTH


def unwrap(text: str) -> list[str]:
    """``doctor``'s lines as they were before wrapping at 100 columns (``_report.wrap_long_lines``):
    a line indented four more than the one before continues it."""
    lines: list[str] = []
    indent = 0
    for line in text.splitlines():
        lead = len(line) - len(line.lstrip(" "))
        if lines and line.strip() and lead == indent + 4:
            lines[-1] += " " + line.strip()
            continue
        lines.append(line)
        indent = lead
    return lines


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # Without the toolchain's variables (an activation in this process may have set them).
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CXX", "CC", "CUDA_HOME", "CUDA_PATH") and not k.startswith("TRITON_")
    }
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), **extra)
    return env


def package_dir(name: str) -> Path:
    """Where package ``name`` is installed, without importing it (importing Triton here
    would activate the shim in this process, which exports Triton's variables)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


def site_view(tmp_path: Path, *, torch: bool = False, triton: bool = True) -> Path:
    """A directory of links to this environment's packages, without torch (and without
    Triton where ``triton`` is false): the command then runs as where they are not
    installed."""
    import elftools

    view = tmp_path / "site"
    view.mkdir()
    packages = {"elftools": Path(elftools.__file__).parent}
    if triton:
        packages["triton"] = package_dir("triton")
    if torch:
        packages["torch"] = package_dir("torch")
    for name, where in packages.items():
        (view / name).symlink_to(where)
    return view


def doctor(
    tmp_path: Path, *args: str, view: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``triton-toolchain ARGS`` in a fresh interpreter; with ``view``, only the packages
    in it (and the shim) are importable."""
    if view is None:
        command = [sys.executable, "-m", "triton_toolchain", *args]
    else:
        code = (
            "import sys; sys.path[:] = [p for p in sys.path if 'packages' not in p] + "
            f"[{str(SRC)!r}, {str(view)!r}]; from triton_toolchain.cli._main import main; "
            f"sys.exit(main({list(args)!r}))"
        )
        command = [sys.executable, "-s", "-c", code]
    return subprocess.run(
        command, capture_output=True, text=True, check=False, env=_env(tmp_path, **env)
    )


def no_driver_manifest(tmp_path: Path) -> Path:
    """A strict manifest of this machine's toolchain without any driver directory: on
    any machine, GPU host or not, the shim then finds no driver."""
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "lock", "--no-driver"],
        capture_output=True,
        text=True,
        check=False,
        env=_env(tmp_path),
    )
    assert done.returncode in (0, 1), done.stderr
    manifest = json.loads(done.stdout)
    manifest.update(strict=True, driver_dirs=[])
    manifest["components"].pop("libcuda-link", None)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    return path


def test_a_wrong_cxx_without_torch_is_named_on_the_screen_with_its_value_and_fix(
    tmp_path: Path,
) -> None:
    done = doctor(tmp_path, "doctor", view=site_view(tmp_path), CXX="/nonexistent/g++")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "torch not installed" in done.stdout
    lines = done.stdout.splitlines()
    at = lines.index("error: cxx: CXX='/nonexistent/g++': does not exist")
    # The fix names what works here: the C++ compiler found without the setting (the
    # fix was "install g++ or clang++" before fixes named what is found).
    fix = " ".join(" ".join(lines[at + 1 : at + 4]).split())
    assert re.match(r"fix: set CXX to /\S+ \(found here, [0-9.]+\) or unset CXX", fix), fix
    found = fix.split()[4]
    assert os.access(found, os.X_OK) and "++" in os.path.basename(found), fix
    # The goals that use it say so, not only "torch not installed".
    cpu = next(line for line in lines if line.startswith("torch.compile on CPU "))
    assert cpu.endswith("not ready: torch not installed; CXX='/nonexistent/g++': does not exist")
    # No raw warning from doctor's own import of Triton (importlib's file:line and source).
    assert "RuntimeWarning" not in done.stderr and "importlib" not in done.stderr
    assert done.stderr == ""


def test_doctor_for_extensions_with_a_wrong_cuda_home_names_it_not_only_torch(
    tmp_path: Path,
) -> None:
    done = doctor(
        tmp_path,
        "doctor",
        "--for",
        "extensions",
        view=site_view(tmp_path),
        CUDA_HOME=str(tmp_path / "no-cuda"),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    value = repr(str(tmp_path / "no-cuda"))
    flat = " ".join(done.stdout.split())  # long lines wrap at 100 columns
    # The fix names the CUDA toolkit found without the setting, where there is one (this
    # machine has /usr/local/cuda-13.0); "install a CUDA toolkit" where there is none.
    assert f"error: cuda-home: CUDA_HOME={value}: does not exist fix: set CUDA_HOME to " in flat
    fix = flat.split(f"CUDA_HOME={value}: does not exist fix: set CUDA_HOME to ", 1)[1].split()
    assert os.path.isfile(os.path.join(fix[0], "bin", "nvcc")), fix[:6]
    assert fix[1:4] == ["(found", "here,", fix[3]] and "or unset CUDA_HOME" in flat
    assert f"not ready: torch not installed; CUDA_HOME={value}: does not exist" in flat
    assert done.stderr == ""


def test_doctor_shows_triton_s_and_the_shim_s_warnings_as_lines_not_python_s(
    tmp_path: Path,
) -> None:
    """A wrong TRITON_TOOLCHAIN is the shim's warning while doctor imports Triton: one
    `warning:` line, not `importlib/__init__.py:126: RuntimeWarning` and a source line."""
    done = doctor(tmp_path, "doctor", "--for", "compile", TRITON_TOOLCHAIN="maybe")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "RuntimeWarning" not in done.stderr and "importlib" not in done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 1 and "TRITON_TOOLCHAIN='maybe'" in warned[0], done.stderr


def test_every_line_of_doctor_fits_100_columns(tmp_path: Path) -> None:
    """This checkout's venv paths are long (Triton's bundled tools lie 80 columns deep):
    every line, plain and -v, still fits, but an `error:` line (and a path of more than
    90 columns alone), which stays whole to be copied."""
    # A goal that uses the C++ compiler (`--for compile` does not: there a wrong CXX is a
    # note and the exit status is compile's, tests/test_cli.py).
    for args in (("doctor",), ("doctor", "--for", "torch-cpu")):
        done = doctor(tmp_path, *args, CXX="/nonexistent/" + "long-directory/" * 4 + "g++")
        assert done.returncode == 2, done.stderr
        # An `error:` line stays whole (the setting, its value, the problem: to be copied).
        lines = [x for x in done.stdout.splitlines() if not x.startswith("error: ")]
        widest = max(lines, key=len)
        assert len(widest) <= WIDTH, widest
        assert "error: cxx: CXX='/nonexistent/long-directory/" in done.stdout
        assert max(map(len, done.stderr.splitlines()), default=0) <= WIDTH
        # -v: the same report, then each place looked at on a line of its own.
        verbose = doctor(tmp_path, *args, "-v", CXX="/nonexistent/" + "long-directory/" * 4 + "g++")
        assert verbose.stdout.startswith(done.stdout.rsplit("\n", 3)[0])
    # Triton's package directory is said once; its bundled files' rows are relative to it.
    package = package_dir("triton")
    plain = doctor(tmp_path, "doctor").stdout
    # Wrapped at a space wherever this checkout lies: read with the line breaks as spaces.
    assert f"triton-bundled paths are in {package}/" in " ".join(plain.split())
    ptxas = next(line for line in plain.splitlines() if line.startswith("ptxas "))
    assert ptxas.split()[-2:] == ["triton-bundled", "backends/nvidia/bin/ptxas"]


def test_doctor_json_without_triton_says_no_step_of_triton_kernels_is_ready(
    tmp_path: Path,
) -> None:
    done = doctor(tmp_path, "doctor", "--json", view=site_view(tmp_path, triton=False))
    assert done.returncode == 1, done.stderr
    goals = json.loads(done.stdout)["goals"]
    assert goals["triton"]["steps"] == {"compile": False, "launch": False}
    assert not goals["triton"]["ready"] and "Triton not installed" in goals["triton"]["verdict"]
    assert goals["torch-gpu"]["steps"] and not any(goals["torch-gpu"]["steps"].values())


def test_lock_without_a_driver_says_what_is_missing_and_how_an_image_locks(
    tmp_path: Path,
) -> None:
    manifest = no_driver_manifest(tmp_path)
    out = tmp_path / "locked.json"
    done = doctor(tmp_path, "lock", "-o", str(out), TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    assert done.returncode == 1, done.stderr
    assert out.is_file()
    text = " ".join(done.stderr.split())
    assert "missing: libcuda, libcuda-link;" in text
    assert "an image built without a GPU may lock without the driver" in text
    # The command suggested runs as written: with --force, for the file just written.
    suggested = f"triton-toolchain lock --no-driver --force -o {out}"
    assert f"`{suggested}`" in text
    again = doctor(tmp_path, *suggested.split()[1:], TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    assert again.returncode == 0, again.stderr
    assert "missing" not in again.stderr


KERNEL = """
import triton
import triton.language as tl

@triton.jit
def kernel(n):
    pass

kernel[(1,)](3)
"""


def test_triton_s_no_driver_error_says_what_the_shim_found_and_points_to_doctor(
    tmp_path: Path,
) -> None:
    """A real kernel launch attempt with the real Triton, where the shim finds no driver:
    Triton's own "0 active drivers" RuntimeError is kept, and says what the shim found
    and what to run."""
    manifest = no_driver_manifest(tmp_path)
    script = tmp_path / "launch.py"
    script.write_text(KERNEL)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=False,
        env=_env(tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest)),
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: 0 active drivers ([]). There should only be one."), last
    assert "triton-toolchain found no usable NVIDIA driver" in last
    assert "Run `triton-toolchain doctor`" in last
    # The same kernel with the shim off: Triton's own words alone.
    off = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=False,
        env=_env(tmp_path, TRITON_TOOLCHAIN="off"),
    )
    # (Not the bare name: the paths of the traceback may hold it, an install's directory.)
    off_last = off.stderr.strip().splitlines()[-1]
    assert off_last.startswith("RuntimeError: 0 active drivers ([])."), off_last
    assert "triton-toolchain found" not in off.stderr, off.stderr
    assert "triton-toolchain doctor" not in off.stderr, off.stderr


def _warned(tmp_path: Path, program: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=False,
        env=_env(tmp_path, **env),
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_import_warning_names_the_step_that_uses_the_setting(tmp_path: Path) -> None:
    stderr = _warned(tmp_path, "import triton", CC="/nonexistent/gcc")
    assert "CC='/nonexistent/gcc': does not exist" in stderr
    assert "Triton stops with this error when it builds its launcher" in stderr


@pytest.mark.parametrize("variable", ["TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH"])
def test_a_wrong_setting_of_a_tool_applied_later_is_warned_of_at_import(
    tmp_path: Path, variable: str
) -> None:
    """`import triton` leaves ptxas-blackwell to the compile that runs it and the SASS
    tools to the first dump (pending parts, ``_plan.left_out``), unless a variable names
    one: a wrong one is named at once."""
    stderr = _warned(tmp_path, "import triton", **{variable: "/nonexistent/tool"})
    assert f"{variable}='/nonexistent/tool': does not exist" in stderr
    assert "Triton stops with this error when it compiles a kernel" in stderr


@pytest.mark.torch
def test_a_setting_only_torch_uses_is_warned_of_when_torch_is_imported(tmp_path: Path) -> None:
    """``import triton`` judges no C++ compiler (torch's part, pending): a bad
    ``CXX`` is named when torch is imported, with the step that uses it."""
    warning = "CXX='/nonexistent/g++': does not exist"
    assert warning not in _warned(tmp_path, "import triton", CXX="/nonexistent/g++")
    stderr = _warned(tmp_path, "import triton, torch", CXX="/nonexistent/g++")
    assert warning in stderr
    assert "torch.compile stops with this error when it builds CPU" in stderr


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_manifest_variable_naming_a_special_file_is_named_with_its_value_and_fix(
    tmp_path: Path, kind: str
) -> None:
    path = {"directory": tmp_path / "dir", "device": Path("/dev/null")}.get(kind, tmp_path / "m")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    done = doctor(tmp_path, "doctor", TRITON_TOOLCHAIN_MANIFEST=str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    error = " ".join(done.stderr.split())
    assert f"TRITON_TOOLCHAIN_MANIFEST={str(path)!r} names it" in error
    assert "set TRITON_TOOLCHAIN_MANIFEST to a manifest file" in error and "or unset it" in error
