"""Hostile corpus, special files: a FIFO, a device, a socket, a directory or an endless
file wherever a file is read never blocks and never reads without a bound; it is named,
with what it is, and the fix. Every command here would hang or run out of memory if a
file were opened blocking or read to its end.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hostile import clean_env, cli, fifo, run, unix_socket
from tool_fixtures import cuda_include, python_include
from triton_layouts import Layout, Namespace, run_scenario, scenario_env

TIMEOUT = 30  # a hang fails the test instead of the run


@contextmanager
def _special(tmp: Path, kind: str) -> Iterator[tuple[Path, str]]:
    """A special file of ``kind`` and the words that must name what it is."""
    keep: socket.socket | None = None
    path = tmp / "special" / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    words = {
        "fifo": "is a FIFO",
        "dev-zero": "is a character device",
        "dev-urandom": "is a character device",
        "directory": "is a directory",
        "socket": "is a socket",
        "sparse-8-gib": "is larger than 1048576 bytes",
        "dangling-link": "does not exist",
        "link-loop": "cannot be",
        "proc-self-environ": "not valid JSON",
    }[kind]
    if kind == "fifo":
        fifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        keep = unix_socket(path)
    elif kind == "sparse-8-gib":
        with path.open("wb") as f:
            f.truncate(8 << 30)
    elif kind == "dangling-link":
        path.symlink_to(tmp / "nowhere.json")
    elif kind == "link-loop":
        path.symlink_to(path)
    elif kind == "proc-self-environ":
        path = Path("/proc/self/environ")  # a "regular" file of size 0 that is not
    try:
        yield path, words
    finally:
        if keep is not None:
            keep.close()


KINDS = [
    "fifo",
    "dev-zero",
    "dev-urandom",
    "directory",
    "socket",
    "sparse-8-gib",
    "dangling-link",
    "link-loop",
    "proc-self-environ",
]


@pytest.mark.parametrize("command", ["check-manifest", "doctor"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_special_manifest_is_named_at_once(tmp_path: Path, kind: str, command: str) -> None:
    env = clean_env(tmp_path / "home")
    with _special(tmp_path, kind) as (path, words):
        if command == "check-manifest":
            done = cli("check-manifest", str(path), env=env, timeout=TIMEOUT)
        else:
            env["TRITON_TOOLCHAIN_MANIFEST"] = str(path)
            done = cli("doctor", env=env, timeout=TIMEOUT)
    assert done.returncode == 2, done.output
    assert f"error: {path}: " in done.stderr
    assert words in done.stderr, done.stderr
    assert done.seconds < 10
    if command == "doctor" and kind not in ("proc-self-environ",):
        # The variable that named it, and the fix, on the screen.
        named = f"TRITON_TOOLCHAIN_MANIFEST={str(path)!r} names it: set TRITON_TOOLCHAIN_MANIFEST"
        assert named in done.stderr, done.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse-8-gib"])
def test_import_triton_with_a_special_manifest_warns_at_once(tmp_path: Path, kind: str) -> None:
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    with _special(tmp_path, kind) as (path, words):
        env = scenario_env(layout, manifest=False, TRITON_TOOLCHAIN_MANIFEST=str(path))
        report = run_scenario(layout, "hook", [], env=env)
    assert f"{path}: {words}" in report["stderr"]
    assert "RuntimeWarning" in report["stderr"] and "Traceback" not in report["stderr"]


def test_a_fifo_as_the_users_config_manifest_is_named_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = fifo(home / ".config" / "triton-toolchain" / "manifest.json")
    done = cli("doctor", env=clean_env(home), timeout=TIMEOUT)
    assert done.returncode == 2
    assert f"{path}: is a FIFO, not a regular file" in done.stderr


# ------------------------------------------------------ settings naming special files


def _fifo(tmp: Path) -> Path:
    return fifo(tmp / "special" / "thing")


def _zero(tmp: Path) -> Path:
    return Path("/dev/zero")


def _dir(tmp: Path) -> Path:
    (tmp / "special" / "dir").mkdir(parents=True)
    return tmp / "special" / "dir"


SETTINGS: dict[str, tuple[str, Callable[[Path], Path], str]] = {
    "ptxas-fifo": ("TRITON_PTXAS_PATH", _fifo, "is a FIFO"),
    "ptxas-dev-zero": ("TRITON_PTXAS_PATH", _zero, "is a character device"),
    "ptxas-directory": ("TRITON_PTXAS_PATH", _dir, "is a directory"),
    "blackwell-fifo": ("TRITON_PTXAS_BLACKWELL_PATH", _fifo, "is a FIFO"),
    "libdevice-fifo": ("TRITON_LIBDEVICE_PATH", _fifo, "is a FIFO"),
    "libdevice-dev-zero": ("TRITON_LIBDEVICE_PATH", _zero, "is a character device"),
    "cc-fifo": ("CC", _fifo, "is a FIFO"),
    "cuda-headers-fifo": ("TRITON_CUDART_PATH", _fifo, "not a directory"),
    "libcuda-fifo": ("TRITON_LIBCUDA_PATH", _fifo, "not a directory"),
}


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_a_setting_naming_a_special_file_is_an_error_at_once(tmp_path: Path, case: str) -> None:
    variable, make, words = SETTINGS[case]
    value = make(tmp_path)
    done = cli(
        "doctor", env=clean_env(tmp_path / "home", **{variable: str(value)}), timeout=TIMEOUT
    )
    assert done.returncode == 2, done.output
    assert f"{variable}='{value}'" in done.output and words in done.output
    assert f"unset {variable}" in done.output


def test_import_triton_with_libdevice_a_fifo_stops_compiling_with_the_shims_error(
    tmp_path: Path,
) -> None:
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    path = fifo(tmp_path / "special" / "libdevice.10.bc")
    env = scenario_env(layout, manifest=False, TRITON_LIBDEVICE_PATH=str(path))
    report = run_scenario(layout, "hook", ["compile:80"], env=env)
    result = report["results"]["compile:80"]
    assert result["type"] == "SettingError", result
    assert f"TRITON_LIBDEVICE_PATH='{path}'" in result["message"] and "FIFO" in result["message"]


# ------------------------------------------- special files inside what is looked at


@pytest.mark.parametrize(
    ("component", "inside"),
    [
        ("cuda-headers", "cuda.h"),
        ("python-headers", "patchlevel.h"),
        ("libdevice", None),
    ],
)
def test_a_manifest_entry_that_is_or_holds_a_fifo_is_rejected_at_once(
    tmp_path: Path, component: str, inside: str | None
) -> None:
    import json

    if component == "cuda-headers":
        entry = cuda_include(tmp_path / "include")
    elif component == "python-headers":
        entry = python_include(tmp_path / "py", "3.11.7")
    else:
        entry = fifo(tmp_path / "nvvm" / "libdevice.10.bc")
    if inside is not None:
        (entry / inside).unlink()
        fifo(entry / inside)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"schema": 1, "components": {component: {"path": str(entry)}}}))
    done = cli("check-manifest", str(manifest), env=clean_env(tmp_path / "home"), timeout=TIMEOUT)
    assert done.returncode == 1, done.output
    assert f"REJECTED {component}" in done.stdout and "FIFO" in done.stdout
    assert f"{manifest}: components.{component}" in done.stdout


@pytest.mark.parametrize("system_file", ["/etc/ld.so.conf", "/etc/os-release"])
def test_a_fifo_in_place_of_a_system_file_never_blocks(tmp_path: Path, system_file: str) -> None:
    """(Not ``/etc/ld.so.cache``: as a FIFO it blocks the dynamic loader of every program,
    the interpreter included, before any Python runs.)"""
    assert os.path.exists(system_file), f"{system_file} is missing on this machine"
    pipe = fifo(tmp_path / "fifo")
    namespace = Namespace().bind(pipe, system_file)
    env = clean_env(tmp_path / "home")
    done = run(
        namespace.argv([sys.executable, "-m", "triton_toolchain", "doctor", "-v"]),
        env,
        timeout=TIMEOUT,
    ).clean()
    assert done.returncode in (0, 1), done.output
    assert done.seconds < 10


# ------------------------------------------------------------ endless numbers


def test_a_cuda_h_with_an_endless_version_number_is_refused_by_name(tmp_path: Path) -> None:
    """``#define CUDA_VERSION`` followed by 5000 digits: Python 3.11 refuses to convert
    it (a ValueError), 3.10 takes minutes; the shim reads it as no version."""
    include = tmp_path / "include"
    include.mkdir()
    (include / "cuda.h").write_text("#define CUDA_VERSION " + "1" * 5000 + "\n")
    env = clean_env(tmp_path / "home", TRITON_CUDART_PATH=str(include))
    done = cli("doctor", env=env, timeout=TIMEOUT)
    assert done.returncode == 2, done.output
    assert f"TRITON_CUDART_PATH='{include}'" in done.output, done.output
    assert done.seconds < 10
