"""The C compiler: conda's, PATH's, explicit CC values; real gcc runs behind the scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tool_fixtures import REAL_GCC, fake_compiler, fake_host, locate, make_writable_by_all, wrapper
from triton_toolchain.resolver._catalog import MACHINES, triple_machine
from triton_toolchain.resolver._discovery._compiler import (
    LOCATORS,
    check_compiler,
    command_argv,
    command_from_setting,
)
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._model import SourceKind


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
    assert [s.__name__ for s in LOCATORS["cc"].steps] == [
        "conda_compilers",
        "path_gcc",
        "path_clang",
        "path_cc",
        "versioned_compilers",
    ]
    assert [s.__name__ for s in LOCATORS["cxx"].steps] == [
        "conda_compilers",
        "path_g++",
        "path_clang++",
        "path_c++",
        "versioned_compilers",
    ]
    assert set(LOCATORS) == {"cc", "cxx"}
    assert {triple_machine(f"{t}-linux-gnu") for m in MACHINES.values() for t in m.triples} == set(
        MACHINES
    )


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
    assert "is writable by everyone" in choice.rejected[0].reason
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
    with pytest.raises(ValueError) as info:
        command_from_setting(host, "gcc")
    assert str(info.value) == (
        "'gcc' was not found on the absolute entries of PATH "
        "(PATH entry '': empty entry (means the current directory), ignored): install it "
        "or give its absolute path"
    )
    assert not log.exists()


def test_versioned_compiler_when_the_plain_name_is_missing(tmp_path: Path) -> None:
    """Distributions install gcc-12 without gcc (the gcc-12 package alone): the newest
    versioned name on PATH is taken, after the plain names."""
    old = wrapper(tmp_path / "bin/gcc-9", REAL_GCC)
    new = wrapper(tmp_path / "bin/gcc-14", REAL_GCC)
    (tmp_path / "bin/gcc-ar-14").write_text("#!/bin/sh\n")
    host = fake_host(tmp_path, {"PATH": str(tmp_path / "bin")})
    choice = locate(LOCATORS, "cc", host)
    assert choice.path == str(new) and choice.version == real_gcc_version()
    new.unlink()
    assert locate(LOCATORS, "cc", host).path == str(old)
    wrapper(tmp_path / "bin/gcc", REAL_GCC)
    assert locate(LOCATORS, "cc", host).path == str(tmp_path / "bin/gcc")


# ------------------------------------------------------------------ explicit CC


def test_cc_bare_name_is_looked_up_on_path(tmp_path: Path) -> None:
    gcc = wrapper(tmp_path / "b/gcc", REAL_GCC)
    (tmp_path / "a").mkdir()
    (tmp_path / "a/gcc").write_text("not executable")  # skipped, as shutil.which does
    host = fake_host(tmp_path, {"PATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}"})
    assert command_from_setting(host, "gcc") == gcc
    assert check_compiler(host, gcc, Context()).version == real_gcc_version()


def test_cc_that_does_not_exist(tmp_path: Path) -> None:
    host = fake_host(tmp_path)
    missing = tmp_path / "opt/gcc-99/bin/gcc"
    assert command_from_setting(host, str(missing)) == missing
    assert check_compiler(host, missing, Context()).problem == "does not exist"
    with pytest.raises(ValueError, match="'gcc-99' was not found on the absolute entries of PATH"):
        command_from_setting(host, "gcc-99")


def launcher(path: Path, log: Path) -> Path:
    """A compiler launcher like ccache or distcc: logs, then runs the command it is given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{log}"\nexec "$@"\n')
    path.chmod(0o755)
    return path


def test_cc_command_lines_as_build_tools_take_them(tmp_path: Path) -> None:
    """CC="ccache gcc", CC="gcc -m64": each program looked up and checked, the command
    resolved to absolute paths, and it really compiles for this machine."""
    log = tmp_path / "launcher.log"
    ccache = launcher(tmp_path / "bin/ccache", log)
    gcc = wrapper(tmp_path / "bin/gcc", REAL_GCC)
    host = fake_host(tmp_path, {"PATH": str(tmp_path / "bin")})
    command = command_from_setting(host, "ccache gcc")
    assert str(command) == f"{ccache} {gcc}"
    assert command_argv(str(command)) == [str(ccache), str(gcc)]
    assert check_compiler(host, command, Context()).version == real_gcc_version()
    assert log.read_text().split() == [str(ccache), str(gcc), "-v"]
    flags = command_from_setting(host, "gcc -m64")
    assert command_argv(str(flags)) == [str(gcc), "-m64"]
    assert check_compiler(host, flags, Context()).problem is None
    # -m32 builds for i686: a 64-bit Python cannot load that.
    problem = check_compiler(host, command_from_setting(host, "gcc -m32"), Context()).problem
    assert problem == "builds for x86_64-linux-gnu (i686), but this Python is x86_64"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("ccache gcc foo.c", "has 'foo.c' after the compiler, where only options belong"),
        ("gcc 'unbalanced", "is not a command line (No closing quotation)"),
        ("./gcc", "relative path"),
        (" ", "is empty"),
        ("ccache nonexistent-cc", "'nonexistent-cc' was not found"),
    ],
)
def test_cc_values_that_cannot_work_are_refused(tmp_path: Path, value: str, problem: str) -> None:
    launcher(tmp_path / "bin/ccache", tmp_path / "log")
    wrapper(tmp_path / "bin/gcc", REAL_GCC)
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        command_from_setting(fake_host(tmp_path, {"PATH": str(tmp_path / "bin")}), value)


def test_cc_absolute_path_with_a_space_is_taken_whole(tmp_path: Path) -> None:
    gcc = wrapper(tmp_path / "My Tools/gcc", REAL_GCC)
    assert command_from_setting(fake_host(tmp_path), str(gcc)) == gcc
    assert command_argv(str(gcc)) == [str(gcc)]


# ------------------------------------------------------------------ the real machine


def test_real_machine_compiler() -> None:
    host = Host.current()
    choice = locate(LOCATORS, "cc", host)
    assert choice.path is not None and Path(choice.path).is_absolute()
    assert choice.source is not None and choice.source.kind is SourceKind.DISCOVERED
    assert Path(choice.path).resolve() == Path(shutil.which("gcc") or "").resolve()
    assert choice.version == real_gcc_version()
