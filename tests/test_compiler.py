"""The C compiler: conda's, PATH's, explicit CC values; real gcc runs behind the scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tool_fixtures import REAL_GCC, fake_compiler, fake_host, locate, make_writable_by_all, wrapper
from triton_toolchain._compiler import (
    LOCATORS,
    STEPS,
    TRIPLE_MACHINES,
    check_compiler,
    compiler_from_setting,
    triple_machine,
)
from triton_toolchain._host import Host
from triton_toolchain._model import SourceKind
from triton_toolchain._search import Context


def real_gcc_version() -> str:
    out = subprocess.run(
        [str(REAL_GCC), "-dumpfullversion"], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def conda_env(root: Path, log: Path | None = None) -> Path:
    """A conda environment whose c-compiler is a real script wrapping /usr/bin/gcc."""
    prefix = root / "conda-env"
    wrapper(prefix / "bin/x86_64-conda-linux-gnu-cc", REAL_GCC, log=log)
    return prefix


def test_locator_shape() -> None:
    assert [s.__name__ for s in STEPS] == ["conda_compilers", "path_gcc", "path_clang", "path_cc"]
    assert set(LOCATORS) == {"cc"}
    assert set(TRIPLE_MACHINES.values()) >= {"x86_64", "i686", "aarch64", "ppc64le"}


def test_conda_compiler_found_without_gcc_or_clang_on_path(tmp_path: Path) -> None:
    prefix = conda_env(tmp_path)
    host = fake_host(tmp_path, {"PATH": str(tmp_path / "empty-bin"), "CONDA_PREFIX": str(prefix)})
    choice = locate(LOCATORS, "cc", host)
    assert choice.path == str(prefix / "bin/x86_64-conda-linux-gnu-cc")
    assert choice.version == real_gcc_version()
    assert choice.source is not None and str(choice.source) == "discovered:CONDA_PREFIX"
    # It really is a working compiler: build a shared object with it, as Triton does.
    src = tmp_path / "m.c"
    src.write_text("int answer(void) { return 42; }\n")
    out = tmp_path / "m.so"
    subprocess.run([choice.path, str(src), "-O3", "-shared", "-fPIC", "-o", str(out)], check=True)
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_conda_compiler_comes_before_path_gcc(tmp_path: Path) -> None:
    prefix = conda_env(tmp_path)
    wrapper(tmp_path / "bin/gcc", REAL_GCC)
    host = fake_host(tmp_path, {"PATH": str(tmp_path / "bin"), "CONDA_PREFIX": str(prefix)})
    assert locate(LOCATORS, "cc", host).path == str(prefix / "bin/x86_64-conda-linux-gnu-cc")
    # Without an active conda environment, PATH's gcc.
    plain = fake_host(tmp_path, {"PATH": str(tmp_path / "bin")})
    assert locate(LOCATORS, "cc", plain).path == str(tmp_path / "bin/gcc")


def test_conda_compiler_for_this_architecture_first(tmp_path: Path) -> None:
    prefix = tmp_path / "conda-env"
    fake_compiler(prefix / "bin/aarch64-conda-linux-gnu-cc", target="aarch64-conda-linux-gnu")
    fake_compiler(prefix / "bin/x86_64-conda-linux-gnu-cc", target="x86_64-conda-linux-gnu")
    host = fake_host(tmp_path, {"PATH": "", "CONDA_PREFIX": str(prefix)})
    choice = locate(LOCATORS, "cc", host)
    assert choice.path == str(prefix / "bin/x86_64-conda-linux-gnu-cc")
    assert choice.rejected == ()


def test_gcc_then_clang_then_cc_on_path(tmp_path: Path) -> None:
    bins = [tmp_path / "a", tmp_path / "b"]
    fake_compiler(bins[1] / "cc", target="x86_64-linux-gnu", version="1.0")
    fake_compiler(bins[0] / "clang", target="x86_64-pc-linux-gnu", version="18.1.3")
    host = fake_host(tmp_path, {"PATH": os.pathsep.join(map(str, bins))})
    assert locate(LOCATORS, "cc", host).path == str(bins[0] / "clang")
    fake_compiler(bins[1] / "gcc", target="x86_64-linux-gnu", version="13.2.0")
    choice = locate(LOCATORS, "cc", host)
    assert (choice.path, choice.version) == (str(bins[1] / "gcc"), "13.2.0")


def test_compiler_for_another_architecture_is_rejected(tmp_path: Path) -> None:
    cross = fake_compiler(tmp_path / "bin/gcc", target="aarch64-linux-gnu")
    native = wrapper(tmp_path / "bin/cc", REAL_GCC)
    choice = locate(LOCATORS, "cc", fake_host(tmp_path, {"PATH": str(tmp_path / "bin")}))
    assert choice.path == str(native)
    (rejection,) = choice.rejected
    assert rejection.path == str(cross)
    assert rejection.reason == "builds for aarch64-linux-gnu (aarch64), but this Python is x86_64"


def test_32_bit_python_rejects_a_64_bit_gcc(tmp_path: Path) -> None:
    gcc = wrapper(tmp_path / "bin/gcc", REAL_GCC)
    verdict = check_compiler(fake_host(tmp_path, machine="i686"), gcc, Context())
    assert verdict.problem is not None and "(x86_64), but this Python is i686" in verdict.problem


def test_triple_machine_table() -> None:
    assert triple_machine("x86_64-pc-linux-gnu") == "x86_64"
    assert triple_machine("i686-linux-gnu") == "i686"
    assert triple_machine("powerpc64le-linux-gnu") == "ppc64le"
    assert triple_machine("arm64-apple-darwin23") == "aarch64"
    assert triple_machine("x86_64-linux-gnux32") == "x32"


def test_localized_compiler_still_understood(tmp_path: Path) -> None:
    """``-v`` runs with LC_ALL=C, so a German locale does not hide ``Target:``."""
    gcc = wrapper(tmp_path / "bin/gcc", REAL_GCC)
    host = fake_host(tmp_path, {"PATH": "/usr/bin", "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8"})
    assert check_compiler(host, gcc, Context()).version == real_gcc_version()


def test_one_process_per_check(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    gcc = wrapper(tmp_path / "bin/gcc", REAL_GCC, log=log)
    assert check_compiler(fake_host(tmp_path), gcc, Context()).problem is None
    assert log.read_text().splitlines() == [f"{gcc} -v"]


def test_recorded_version_runs_no_process(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    cc = fake_compiler(tmp_path / "store/bin/cc", target="x86_64-linux-gnu", log=log)
    verdict = check_compiler(fake_host(tmp_path), cc, Context(recorded_version="14.2.1"))
    assert (verdict.version, verdict.problem) == ("14.2.1", None)
    assert not log.exists()


def test_world_writable_compiler_is_never_run(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    gcc = fake_compiler(tmp_path / "drop/gcc", target="x86_64-linux-gnu", log=log)
    make_writable_by_all(gcc.parent)
    choice = locate(LOCATORS, "cc", fake_host(tmp_path, {"PATH": str(gcc.parent)}))
    assert choice.path is None
    assert "world-writable directory" in choice.rejected[0].reason
    assert not log.exists()


def test_gcc_in_current_directory_through_empty_path_entry_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.log"
    fake_compiler(tmp_path / "cwd/gcc", target="x86_64-linux-gnu", log=log)
    monkeypatch.chdir(tmp_path / "cwd")
    clang = fake_compiler(tmp_path / "bin/clang", target="x86_64-pc-linux-gnu")
    host = fake_host(tmp_path, {"PATH": f":{tmp_path / 'bin'}"})
    choice = locate(LOCATORS, "cc", host)
    assert choice.path == str(clang)
    assert [(r.path, r.reason) for r in choice.rejected] == [
        ("gcc", "PATH entry '': empty entry (means the current directory), ignored")
    ]
    # An explicit CC=gcc does not reach it either.
    path, problem = compiler_from_setting(host, "gcc")
    assert path is None
    assert problem == (
        "'gcc' was not found on the absolute entries of PATH "
        "(PATH entry '': empty entry (means the current directory), ignored)"
    )
    assert not log.exists()


# ------------------------------------------------------------------ explicit CC


def test_cc_bare_name_is_looked_up_on_path(tmp_path: Path) -> None:
    gcc = wrapper(tmp_path / "b/gcc", REAL_GCC)
    (tmp_path / "a").mkdir()
    (tmp_path / "a/gcc").write_text("not executable")  # skipped, as shutil.which does
    host = fake_host(tmp_path, {"PATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}"})
    assert compiler_from_setting(host, "gcc") == (gcc, None)
    # The check accepts the bare name the same way.
    assert check_compiler(host, Path("gcc"), Context()).version == real_gcc_version()


def test_cc_that_does_not_exist(tmp_path: Path) -> None:
    host = fake_host(tmp_path)
    missing = tmp_path / "opt/gcc-99/bin/gcc"
    path, problem = compiler_from_setting(host, str(missing))
    assert (path, problem) == (missing, None)
    assert check_compiler(host, missing, Context()).problem == "does not exist"
    assert compiler_from_setting(host, "gcc-99") == (
        None,
        "'gcc-99' was not found on the absolute entries of PATH",
    )
    assert check_compiler(host, Path("gcc-99"), Context()).problem == (
        "'gcc-99' was not found on the absolute entries of PATH"
    )


def test_cc_with_flags_is_refused_with_the_reason(tmp_path: Path) -> None:
    host = fake_host(tmp_path, {"PATH": "/usr/bin"})
    for value in ("gcc -m64", "/usr/bin/gcc -m64"):
        path, problem = compiler_from_setting(host, value)
        assert path is None
        assert problem is not None
        assert "Triton runs CC as one program without arguments" in problem


def test_cc_absolute_path_with_a_space_is_taken_whole(tmp_path: Path) -> None:
    gcc = wrapper(tmp_path / "My Tools/gcc", REAL_GCC)
    assert compiler_from_setting(fake_host(tmp_path), str(gcc)) == (gcc, None)


def test_cc_relative_path_and_empty_value_are_refused(tmp_path: Path) -> None:
    host = fake_host(tmp_path)
    path, problem = compiler_from_setting(host, "./gcc")
    assert path is None and problem is not None and "relative path" in problem
    assert compiler_from_setting(host, " ") == (None, "is empty")


# ------------------------------------------------------------------ the real machine


def test_real_machine_compiler() -> None:
    host = Host.current()
    choice = locate(LOCATORS, "cc", host)
    assert choice.path is not None and Path(choice.path).is_absolute()
    assert choice.source is not None and choice.source.kind is SourceKind.DISCOVERED
    assert Path(choice.path).resolve() == Path(shutil.which("gcc") or "").resolve()
    assert choice.version == real_gcc_version()
