"""Python headers, cuda.h, crt/ and libdevice: real layouts, real files, the real machine."""

from __future__ import annotations

import platform
import re
import struct
from pathlib import Path

import pytest
from tool_fixtures import (
    REAL_CUDA,
    REAL_LIBDEVICE,
    cuda_include,
    fake_host,
    libdevice,
    locate,
    make_writable_by_all,
    python_include,
    write_os_release,
)
from triton_toolchain.resolver._discovery import _headers
from triton_toolchain.resolver._discovery._bitcode import bitcode_problem
from triton_toolchain.resolver._discovery._headers import (
    LOCATORS,
    check_cuda_headers,
    check_libdevice,
    check_python_headers,
    cuda_h_version,
    os_release,
    python_headers_fix,
)
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._model import SourceKind

# ------------------------------------------------------------------ python-headers


def test_python_headers_from_sysconfig(tmp_path: Path) -> None:
    host = fake_host(tmp_path)
    inc = python_include(host.python_include)
    choice = locate(LOCATORS, "python-headers", host)
    assert (choice.path, choice.version) == (str(inc), "3.11.7")
    assert str(choice.source) == "discovered:sysconfig"


def test_python_headers_of_the_venvs_base_interpreter(tmp_path: Path) -> None:
    host = fake_host(tmp_path, python_include=tmp_path / "venv/include/python3.11")
    base = python_include(tmp_path / "py/include/python3.11")
    choice = locate(LOCATORS, "python-headers", host)
    assert choice.path == str(base)
    assert str(choice.source) == "discovered:sys.base_prefix"


def test_headers_of_another_python_are_rejected_with_both_versions(tmp_path: Path) -> None:
    other = python_include(tmp_path / "nix/store/python3-3.12.9/include/python3.12", "3.12.9")
    verdict = check_python_headers(fake_host(tmp_path), other, Context(recorded_version="3.12.9"))
    assert (
        verdict.problem
        == "headers are for Python 3.12 (3.12.9), but this interpreter is Python 3.11"
    )


def test_recorded_version_of_another_python_is_rejected(tmp_path: Path) -> None:
    inc = python_include(tmp_path / "inc")
    verdict = check_python_headers(fake_host(tmp_path), inc, Context(recorded_version="3.10"))
    assert verdict.problem == "recorded for Python 3.10, but this interpreter is Python 3.11"


def test_python_h_missing_on_debian_names_file_dir_and_package(tmp_path: Path) -> None:
    write_os_release(tmp_path, 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n')
    inc = python_include(tmp_path / "usr/include/python3.11", python_h=False)  # pyconfig only
    host = fake_host(tmp_path, python_include=inc, base_prefix=Path("/usr"))
    verdict = check_python_headers(host, inc, Context())
    assert verdict.problem == (
        f"Python.h is missing from {inc}: install python3.11-dev (`apt install python3.11-dev`)"
    )
    assert python_headers_fix(host) == (
        f"Python.h for Python 3.11 is missing from {inc}: "
        "install python3.11-dev (`apt install python3.11-dev`)"
    )


@pytest.mark.parametrize(
    ("os_release_text", "advice"),
    [
        ("ID=ubuntu\nID_LIKE=debian\n", "install python3.11-dev (`apt install python3.11-dev`)"),
        (
            'ID=linuxmint\nID_LIKE="ubuntu debian"\n',
            "install python3.11-dev (`apt install python3.11-dev`)",
        ),
        ("ID=fedora\n", "install python3.11-devel (`dnf install python3.11-devel`)"),
        (
            'ID="rocky"\nID_LIKE="rhel centos fedora"\n',
            "install python3.11-devel (`dnf install python3.11-devel`)",
        ),
        (
            'ID="opensuse-tumbleweed"\nID_LIKE="opensuse suse"\n',
            "install python311-devel (`zypper install python311-devel`)",
        ),
        ("ID=arch\n", "install python (`pacman -S python`)"),
        ("ID=alpine\n", "install python3-dev (`apk add python3-dev`)"),
        (
            'ID=gentoo\nPRETTY_NAME="Gentoo Linux"\n',
            "install the development package of Python 3.11 on Gentoo Linux",
        ),
    ],
)
def test_python_header_package_per_distribution(
    tmp_path: Path, os_release_text: str, advice: str
) -> None:
    write_os_release(tmp_path, os_release_text)
    host = fake_host(tmp_path, base_prefix=Path("/usr"))
    assert python_headers_fix(host).endswith(": " + advice)


def test_python_header_advice_on_nixos_and_for_a_non_system_python(tmp_path: Path) -> None:
    write_os_release(tmp_path, "ID=nixos\n")
    nix = python_headers_fix(fake_host(tmp_path, base_prefix=Path("/usr")))
    assert "Python.h" in nix and "on NixOS use a Python from nixpkgs" in nix
    assert "${python3}/include/python3.11" in nix
    write_os_release(tmp_path, "ID=debian\n")
    pyenv = fake_host(tmp_path, base_prefix=Path("/root/.pyenv/versions/3.11.7"))
    text = python_headers_fix(pyenv)
    assert "this Python (/root/.pyenv/versions/3.11.7) is not the distribution's" in text
    assert "python3.11-dev" not in text


def test_os_release_fallback_and_quotes(tmp_path: Path) -> None:
    (tmp_path / "usr/lib").mkdir(parents=True)
    (tmp_path / "usr/lib/os-release").write_text("ID='arch'\nBUILD_ID=rolling\n")
    assert os_release(fake_host(tmp_path)) == {"ID": "arch", "BUILD_ID": "rolling"}


# ------------------------------------------------------------------ cuda.h and crt/


def test_cuda_h_version() -> None:
    assert cuda_h_version(REAL_CUDA / "include/cuda.h") == "13.0"


def _whole_file_version(data: bytes) -> str | None:
    """The first definition in all of ``data``, as reading the whole file finds it."""
    found = re.search(_headers._CUDA_VERSION, data)
    return None if found is None else f"{int(found[1]) // 1000}.{int(found[1]) % 1000 // 10}"


CUT = _headers.CUDA_H_HEAD


@pytest.mark.parametrize(
    "layout",
    [
        # (bytes before the line, the line, what follows): around the head's cut.
        (0, b"#define CUDA_VERSION 12080\n", b""),
        (CUT - 40, b"#define CUDA_VERSION 12080\n", b""),
        (CUT - 26, b"#define CUDA_VERSION 12080", b"\n"),  # the number ends at the cut
        (CUT - 25, b"#define CUDA_VERSION 12080", b"5\n"),  # the number goes on past it
        (CUT - 10, b"#define CUDA_VERSION 12080\n", b""),  # the line across the cut
        (CUT + 10, b"#define CUDA_VERSION 12080\n", b""),  # only after the head
        (CUT - 40, b"#define CUDA_VERSION 13000\n", b"#define CUDA_VERSION 12080\n"),
        (CUT - 40, b"#define CUDA_VERSION 1234567890\n", b"#define CUDA_VERSION 12080\n"),
        (CUT * 2, b"", b""),  # none at all
    ],
)
def test_cuda_h_version_reads_the_head_first_as_the_whole_file_reads(
    tmp_path: Path, layout: tuple[int, bytes, bytes]
) -> None:
    before, line, after = layout
    filler = b"/* " + b"x" * 70 + b" */\n"
    data = (filler * (before // len(filler) + 1))[:before]
    data = data[:-1] + b"\n" if data else data
    data += line + after + filler * (CUT // len(filler) + 1)  # longer than the head
    (tmp_path / "cuda.h").write_bytes(data)
    assert len(data) > CUT
    assert cuda_h_version(tmp_path / "cuda.h") == _whole_file_version(data)


def test_bundled_cuda_headers_first(tmp_path: Path) -> None:
    triton = tmp_path / "sp/triton"
    bundled = cuda_include(triton / "backends/nvidia/include", 13010, crt=True)
    cuda_include(tmp_path / "usr/local/cuda/include", 12080)
    host = fake_host(tmp_path, triton_dir=triton)
    choice = locate(LOCATORS, "cuda-headers", host)
    assert (choice.path, choice.version) == (str(bundled), "13.1")
    assert choice.source is not None and choice.source.kind is SourceKind.BUNDLED
    assert locate(LOCATORS, "cuda-crt-headers", host).path == str(bundled)


@pytest.mark.parametrize(
    ("where", "env", "detail"),
    [
        ("sp/nvidia/cu13/include", {}, "nvidia/cu13"),
        ("sp/nvidia/cuda_runtime/include", {}, "nvidia/cuda_runtime"),
        ("conda/targets/x86_64-linux/include", {"CONDA_PREFIX": "conda"}, "CONDA_PREFIX"),
        ("conda/include", {"CONDA_PREFIX": "conda"}, "CONDA_PREFIX"),
        ("home/include", {"CUDA_HOME": "home"}, "CUDA_HOME"),
        ("cp/targets/x86_64-linux/include", {"CUDA_PATH": "cp"}, "CUDA_PATH"),
        ("usr/local/cuda/targets/x86_64-linux/include", {}, "/usr/local/cuda"),
        ("opt/cuda/include", {}, "/opt/cuda*"),
        ("usr/local/cuda-12.8/targets/x86_64-linux/include", {}, "/usr/local/cuda-*"),
    ],
)
def test_cuda_headers_in_each_layout(
    tmp_path: Path, where: str, env: dict[str, str], detail: str
) -> None:
    inc = cuda_include(tmp_path / where)
    environ = {k: str(tmp_path / v) for k, v in env.items()}
    (tmp_path / "conda/include").mkdir(parents=True, exist_ok=True)  # every conda env has one
    host = fake_host(
        tmp_path, environ, nvidia_dirs=(tmp_path / "sp/nvidia",), triton_dir=tmp_path / "sp/triton"
    )
    choice = locate(LOCATORS, "cuda-headers", host)
    assert (choice.path, choice.version) == (str(inc), "12.8")
    assert choice.source is not None and choice.source.detail == detail


def test_arm_server_uses_sbsa_target_dir(tmp_path: Path) -> None:
    inc = cuda_include(tmp_path / "usr/local/cuda/targets/sbsa-linux/include")
    cuda_include(tmp_path / "usr/local/cuda/targets/x86_64-linux/include")
    choice = locate(LOCATORS, "cuda-headers", fake_host(tmp_path, machine="aarch64"))
    assert choice.path == str(inc)


def test_dir_without_cuda_h_or_version_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "usr/local/cuda/include").mkdir(parents=True)
    other = tmp_path / "opt/cuda/include"
    other.mkdir(parents=True)
    (other / "cuda.h").write_text("/* a stub someone wrote */\n")
    choice = locate(LOCATORS, "cuda-headers", fake_host(tmp_path))
    assert choice.path is None
    assert [r.reason for r in choice.rejected] == [
        "has no cuda.h",
        "its cuda.h defines no CUDA_VERSION (not NVIDIA's cuda.h?)",
    ]


@pytest.mark.parametrize("component", ["cuda-headers", "libdevice"])
def test_headers_and_libdevice_in_a_world_writable_directory_are_refused(
    tmp_path: Path, component: str
) -> None:
    """cuda.h is compiled into the launcher and libdevice linked into every kernel: a
    copy anyone can replace is refused, and the next safe one is taken."""
    if component == "cuda-headers":
        shared = cuda_include(tmp_path / "usr/local/cuda/include")
        safe = cuda_include(tmp_path / "opt/cuda-12.8/include")
    else:
        shared = libdevice(tmp_path / "usr/local/cuda/nvvm/libdevice")
        safe = libdevice(tmp_path / "opt/cuda-12.8/nvvm/libdevice")
    make_writable_by_all(shared if component == "cuda-headers" else shared.parent)

    choice = locate(LOCATORS, component, fake_host(tmp_path))

    assert choice.path == str(safe)
    assert [r.path for r in choice.rejected] == [str(shared)]
    assert "is writable by everyone" in choice.rejected[0].reason


def test_recorded_cuda_headers_version_is_taken(tmp_path: Path) -> None:
    inc = cuda_include(tmp_path / "store/include", 12080)
    verdict = check_cuda_headers(fake_host(tmp_path), inc, Context(recorded_version="12.8"))
    assert (verdict.version, verdict.problem) == ("12.8", None)
    assert (
        check_cuda_headers(fake_host(tmp_path), inc / "cuda.h", Context()).problem
        == "is not a directory"
    )


def test_crt_headers_from_a_cuda_12_wheel(tmp_path: Path) -> None:
    """CUDA 12 wheels keep crt/ in nvidia/cuda_nvcc/include, cuda.h in cuda_runtime."""
    nvidia = tmp_path / "sp/nvidia"
    cuda_include(nvidia / "cuda_runtime/include")
    crt = nvidia / "cuda_nvcc/include/crt"
    crt.mkdir(parents=True)
    (crt / "host_config.h").write_text("\n")
    host = fake_host(tmp_path, nvidia_dirs=(nvidia,))
    choice = locate(LOCATORS, "cuda-crt-headers", host)
    assert choice.path == str(nvidia / "cuda_nvcc/include")
    assert choice.rejected == ()  # cuda_runtime/include is not a crt candidate
    assert locate(LOCATORS, "cuda-headers", host).path == str(nvidia / "cuda_runtime/include")


# ------------------------------------------------------------------ libdevice


def test_libdevice_bundled_then_toolkits(tmp_path: Path) -> None:
    triton = tmp_path / "sp/triton"
    toolkit = libdevice(tmp_path / "usr/local/cuda/nvvm/libdevice")
    host = fake_host(tmp_path, triton_dir=triton)
    assert locate(LOCATORS, "libdevice", host).path == str(toolkit)
    bundled = libdevice(triton / "backends/nvidia/lib")
    choice = locate(LOCATORS, "libdevice", host)
    assert choice.path == str(bundled)
    assert choice.source is not None and choice.source.kind is SourceKind.BUNDLED


def test_libdevice_in_wheels_and_conda(tmp_path: Path) -> None:
    wheel = libdevice(tmp_path / "sp/nvidia/cu13/nvvm/libdevice")
    conda = libdevice(tmp_path / "conda/nvvm/libdevice")
    host = fake_host(
        tmp_path, {"CONDA_PREFIX": str(tmp_path / "conda")}, nvidia_dirs=(tmp_path / "sp/nvidia",)
    )
    assert locate(LOCATORS, "libdevice", host).path == str(wheel)
    wheel.unlink()
    assert locate(LOCATORS, "libdevice", host).path == str(conda)


def test_broken_libdevice_copies_are_rejected(tmp_path: Path) -> None:
    real = REAL_LIBDEVICE.read_bytes()
    truncated = libdevice(tmp_path / "opt/cuda-12.9/nvvm/libdevice", real[: len(real) // 2])
    text = libdevice(
        tmp_path / "opt/cuda-12.8/nvvm/libdevice", b"version https://git-lfs.github.com/spec/v1\n"
    )
    (tmp_path / "opt/cuda-12.7/nvvm/libdevice/libdevice.10.bc").mkdir(parents=True)
    empty = libdevice(tmp_path / "opt/cuda-12.6/nvvm/libdevice", b"")
    good = libdevice(tmp_path / "opt/cuda-12.5/nvvm/libdevice")
    choice = locate(LOCATORS, "libdevice", fake_host(tmp_path))
    assert choice.path == str(good)
    reasons = {r.path: r.reason for r in choice.rejected}
    assert reasons[str(truncated)].startswith("truncated: a bitcode block runs past the end")
    assert reasons[str(text)] == "not LLVM bitcode (wrong magic bytes)"
    assert reasons[str(tmp_path / "opt/cuda-12.7/nvvm/libdevice/libdevice.10.bc")] == (
        "is a directory, a regular file was expected"
    )
    assert reasons[str(empty)] == "not LLVM bitcode (wrong magic bytes)"


def test_wrapped_bitcode_is_accepted_and_checked(tmp_path: Path) -> None:
    real = REAL_LIBDEVICE.read_bytes()
    wrapped = b"\xde\xc0\x17\x0b" + struct.pack("<IIII", 0, 20, len(real), 7) + real
    assert bitcode_problem(wrapped) is None
    assert bitcode_problem(wrapped[:-100]) is not None
    path = libdevice(tmp_path / "lib", wrapped)
    assert check_libdevice(fake_host(tmp_path), path, Context(recorded_version="x")).problem is None


# ------------------------------------------------------------------ the real machine


def test_real_machine_headers_and_libdevice() -> None:
    host = Host.current()
    assert host.triton_dir is not None
    py = locate(LOCATORS, "python-headers", host)
    assert py.version == platform.python_version()
    assert py.path is not None and (Path(py.path) / "Python.h").is_file()
    cuda = locate(LOCATORS, "cuda-headers", host)
    assert cuda.path == str(host.triton_dir / "backends/nvidia/include")
    assert cuda.version == cuda_h_version(Path(cuda.path) / "cuda.h")
    # The oracle: cuda.h's own CUDA_VERSION line (e.g. 13000 -> "13.0").
    define = re.search(r"#define CUDA_VERSION (\d+)", (Path(cuda.path) / "cuda.h").read_text())
    assert define is not None
    assert cuda.version == f"{int(define[1]) // 1000}.{int(define[1]) % 1000 // 10}"
    dev = locate(LOCATORS, "libdevice", host)
    assert dev.path == str(host.triton_dir / "backends/nvidia/lib/libdevice.10.bc")
    assert locate(LOCATORS, "cuda-crt-headers", host).path == cuda.path


def test_real_machine_toolkit_without_triton() -> None:
    environ = {
        k: v
        for k, v in Host.current().environ.items()
        if k not in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX")
    }
    host = Host(environ=environ)  # no Triton, torch or wheels
    cuda = locate(LOCATORS, "cuda-headers", host)
    assert (cuda.path, cuda.version) == ("/usr/local/cuda/include", "13.0")
    assert (
        locate(LOCATORS, "libdevice", host).path == "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"
    )
    assert locate(LOCATORS, "cuda-crt-headers", host).path == "/usr/local/cuda/include"
