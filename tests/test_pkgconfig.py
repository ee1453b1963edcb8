"""pkg-config in and out, read back with the real pkg-config (Debian's pkgconf).

In: the distribution's ``.pc`` files (``python-3.X.pc``, NVIDIA's ``cuda-X.Y.pc``) are a
discovery step with its own provenance, parsed here without running pkg-config, and
parsed as hostile input. Out: ``triton-toolchain pkg-config`` writes
``triton-toolchain.pc``, whose flags build and link a real program."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool
from elf_fixtures import install_driver, install_stub
from tool_fixtures import cuda_include, fake_host, locate, python_include
from triton_toolchain.resolver._discovery import LOCATORS
from triton_toolchain.resolver._discovery._pkgconfig import (
    EXPANSIONS,
    VALUE_LIMIT,
    PcProblem,
    parse,
)
from triton_toolchain.resolver._model import SourceKind

# As Debian's libpython3.11-dev writes it (multiarch include directory second), for an
# installation whose headers are not in <prefix>/include (its includedir says where).
PYTHON_PC = """# See: man pkg-config
prefix={prefix}
exec_prefix=${{prefix}}
libdir=${{exec_prefix}}/lib/x86_64-linux-gnu
includedir=${{prefix}}/headers

Name: Python
Description: Build a C extension for Python
Requires:
Version: 3.11
Libs.private: -ldl
Libs:
Cflags: -I${{includedir}}/python3.11 -I${{includedir}}/x86_64-linux-gnu/python3.11
"""
# As NVIDIA's Debian package cuda-cudart-dev-12-8 writes it.
CUDA_PC = """cudaroot={root}
libdir=${{cudaroot}}/targets/x86_64-linux/lib
includedir=${{cudaroot}}/targets/x86_64-linux/include

Name: cuda
Description: CUDA Driver Library
Version: 12.8
Libs: -L${{libdir}} -lcuda
Cflags: -I${{includedir}}
"""


def pkg_config(pc_dir: Path, *args: str) -> str:
    """The real pkg-config's answer, from ``pc_dir`` only."""
    done = subprocess.run(
        [require_tool("pkg-config", "pkgconf (`apt install pkgconf`)"), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PKG_CONFIG_PATH": str(pc_dir), "PKG_CONFIG_LIBDIR": str(pc_dir)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_python_h_is_found_through_the_distribution_s_pc_file(tmp_path: Path) -> None:
    """sysconfig's and the base prefix's include directories lack Python.h (the
    installation keeps its headers elsewhere): the directory python-3.11.pc names is
    taken, reported as such."""
    prefix = tmp_path / "usr"
    include = python_include(prefix / "headers/python3.11")
    pc_dir = tmp_path / "pc"
    pc_dir.mkdir()
    pc = pc_dir / "python-3.11.pc"
    pc.write_text(PYTHON_PC.format(prefix=prefix))
    # What we read is what pkg-config reads.
    ours = parse(pc.read_text())[1]["Cflags"]
    assert pkg_config(pc_dir, "--cflags", "python-3.11") == ours
    # A relative PKG_CONFIG_PATH entry is never used; the Python of another prefix (the
    # system's beside pyenv's, say) is another build: refused, with the reason.
    other = tmp_path / "other"
    other.mkdir()
    python_include(tmp_path / "elsewhere/headers/python3.11")
    (other / "python-3.11-embed.pc").write_text(PYTHON_PC.format(prefix=tmp_path / "elsewhere"))
    host = fake_host(
        tmp_path, {"PKG_CONFIG_PATH": f"relative:{other}:{pc_dir}"}, base_prefix=prefix
    )
    choice = locate(LOCATORS, "python-headers", host)
    assert choice.path == str(include)
    refused = {Path(r.path).name: r.reason for r in choice.rejected}
    assert "describes the Python in prefix=" in refused["python-3.11-embed.pc"], refused
    assert choice.source is not None and choice.source.kind is SourceKind.DISCOVERED
    assert str(choice.source) == f"discovered:pkg-config:{pc}"
    assert choice.version == "3.11.7"


def test_cuda_h_is_found_through_nvidia_s_pc_file_newest_first(tmp_path: Path) -> None:
    pc_dir = tmp_path / "usr/lib/x86_64-linux-gnu/pkgconfig"  # a default directory
    pc_dir.mkdir(parents=True)
    for release, version in (("12.4", 12040), ("12.8", 12080)):
        root = tmp_path / f"vendor/cuda-{release}"  # where no toolkit step looks
        cuda_include(root / "targets/x86_64-linux/include", version)
        (pc_dir / f"cuda-{release}.pc").write_text(CUDA_PC.format(root=root))
    assert pkg_config(pc_dir, "--variable=cudaroot", "cuda-12.8") == str(
        tmp_path / "vendor/cuda-12.8"
    )
    choice = locate(LOCATORS, "cuda-headers", fake_host(tmp_path))
    assert choice.path == str(tmp_path / "vendor/cuda-12.8/targets/x86_64-linux/include")
    assert str(choice.source) == f"discovered:pkg-config:{pc_dir / 'cuda-12.8.pc'}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a=${b}\nCflags: -I${a}\n", "${b} is not defined before it is used"),
        ("a=${a}x\nCflags: -I${a}\n", "${a} is not defined before it is used"),
        (
            "a=xxxxxxxxxxxxxxxx\n" + "".join("a=${a}${a}\n" for _ in range(12)),
            f"a value expands to more than {VALUE_LIMIT} characters",
        ),
        ("a=/\nCflags: " + "${a}" * (EXPANSIONS + 1) + "\n", f"more than {EXPANSIONS}"),
    ],
    ids=["undefined", "self-reference", "doubling", "many-references"],
)
def test_a_hostile_pc_file_is_a_named_problem_quickly(text: str, problem: str) -> None:
    with pytest.raises(PcProblem, match=problem.replace("$", r"\$").replace("{", r"\{")):
        parse(text)


def test_hostile_pc_files_name_no_candidate_and_say_why(tmp_path: Path) -> None:
    """Planted (writable by others), a FIFO, too large, undecodable, circular: each is
    rejected with its reason, and the search goes on to the good one after them."""
    bad, good = tmp_path / "bad", tmp_path / "good"
    bad.mkdir()
    good.mkdir()
    planted = bad / "python-3.11-embed.pc"
    target = python_include(tmp_path / "planted/include/python3.11")
    planted.write_text(f"Cflags: -I{target}\n")
    planted.chmod(0o666)
    os.mkfifo(bad / "python-3.11.pc")
    (bad / "python3-embed.pc").write_bytes(b"Cflags: -I/x\n" * 10_000)
    (bad / "python3.pc").write_text("a=${a}\nCflags: -I${a}\n")
    include = python_include(tmp_path / "real/headers/python3.11")
    (good / "python3.pc").write_text(f"prefix={tmp_path / 'real'}\nCflags: -I{include}\n")
    host = fake_host(tmp_path, {"PKG_CONFIG_PATH": f"{bad}:{good}"}, base_prefix=tmp_path / "real")
    choice = locate(LOCATORS, "python-headers", host)
    assert choice.path == str(include)
    reasons = {Path(r.path).name: r.reason for r in choice.rejected}
    assert "writable" in reasons["python-3.11-embed.pc"], reasons
    assert "is a FIFO" in reasons["python-3.11.pc"]
    assert "is larger than" in reasons["python3-embed.pc"]
    assert "${a} is not defined" in reasons["python3.pc"]


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    environ.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), **env)
    return subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "pkg-config", *args],
        capture_output=True,
        text=True,
        check=False,
        env=environ,
    )


def test_pkg_config_out_builds_and_links_a_program_against_the_driver(tmp_path: Path) -> None:
    """A driver stand-in (a real ELF built by gcc) named by TRITON_LIBCUDA_PATH: the
    written file, read by the real pkg-config, compiles a program including Python.h and
    cuda.h and links it to libcuda.so.1."""
    drivers = tmp_path / "driver"
    drivers.mkdir()
    install_driver(drivers)
    out = tmp_path / "lib/pkgconfig"
    done = _cli(tmp_path, "-o", str(out), TRITON_LIBCUDA_PATH=str(drivers))
    assert done.returncode == 0, done.stderr
    assert (out / "triton-toolchain.pc").is_file()
    assert pkg_config(out, "--variable=libcuda_link", "triton-toolchain") == str(drivers)
    assert pkg_config(out, "--variable=libcuda", "triton-toolchain") == str(
        drivers / "libcuda.so.1"
    )
    flags = pkg_config(out, "--cflags", "--libs", "triton-toolchain").split()
    assert f"-L{drivers}" in flags and "-l:libcuda.so.1" in flags  # no libcuda.so here
    source = tmp_path / "main.c"
    source.write_text(
        "#include <Python.h>\n#include <cuda.h>\n"
        "int main(void) { return (PY_MAJOR_VERSION == 3 && CUDA_VERSION > 0) ? 0 : 1; }\n"
    )
    program = tmp_path / "main"
    gcc = require_tool("gcc", "gcc")
    built = subprocess.run(
        [gcc, str(source), "-o", str(program), "-Wl,--no-as-needed", *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    needed = subprocess.run(
        [require_tool("readelf", "binutils"), "-d", str(program)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Shared library: [libcuda.so.1]" in needed
    # Again without --force: the file is kept, exit 2 naming it.
    again = _cli(tmp_path, "-o", str(out), TRITON_LIBCUDA_PATH=str(drivers))
    assert again.returncode == 2 and "not overwriting" in again.stderr


def test_pkg_config_out_links_a_toolkit_stub_by_its_unversioned_name(tmp_path: Path) -> None:
    stubs = tmp_path / "cuda/lib64/stubs"
    stubs.mkdir(parents=True)
    install_stub(stubs)
    done = _cli(tmp_path, TRITON_LIBCUDA_PATH=str(stubs))
    assert done.returncode == 1  # the run-time driver is missing, and named
    assert "missing: libcuda;" in done.stderr
    pc = tmp_path / "pc"
    pc.mkdir()
    (pc / "triton-toolchain.pc").write_text(done.stdout)
    assert pkg_config(pc, "--libs", "triton-toolchain").split() == [f"-L{stubs}", "-lcuda"]
    assert pkg_config(pc, "--variable=missing", "triton-toolchain") == "libcuda"


def test_a_path_pkg_config_would_split_is_refused_by_name(tmp_path: Path) -> None:
    drivers = tmp_path / "my drivers"
    drivers.mkdir()
    install_driver(drivers)
    done = _cli(tmp_path, TRITON_LIBCUDA_PATH=str(drivers))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert "error: libcuda-link:" in done.stderr and "my drivers" in done.stderr
