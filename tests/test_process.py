"""``runtime`` (the package's own module): the drivers mapped into a process, read from real
``/proc/PID/maps`` text (this process's, and a child's that loaded a stand-in driver
built by the test), with hostile lines mixed in; loading a driver by its absolute path;
the replacements (``Patches``) and what one application did (``Report``); the user's own
environment (``user_environ``).

Loading a library cannot be undone, so every load happens in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import driver_standin
import pytest
from triton_toolchain import runtime as _process
from triton_toolchain.runtime import (
    ORIGINAL,
    SHIM,
    Patches,
    Report,
    drivers_in,
    loaded_drivers,
    preload_driver,
    user_environ,
)

SRC = Path(_process.__file__).resolve().parents[2]

# ----------------------------------------------------------------- drivers in /proc maps


def test_this_process_maps_no_driver_and_its_maps_are_read_whole() -> None:
    """This machine has no NVIDIA driver: nothing in the real maps text is one, though the
    text (the interpreter, libc, ...) is read whole."""
    text = Path("/proc/self/maps").read_bytes()
    assert b"libc" in text and b"/libcuda.so" not in text
    assert drivers_in(text) == []
    assert loaded_drivers() == []


def test_an_unreadable_maps_file_gives_no_driver(tmp_path: Path) -> None:
    assert loaded_drivers(str(tmp_path / "absent")) == []
    assert loaded_drivers(str(tmp_path)) == []  # a directory: read fails


def _real_maps_with(*lines: bytes) -> bytes:
    """This process's real maps text, with ``lines`` inserted in its middle."""
    real = Path("/proc/self/maps").read_bytes().splitlines()
    half = len(real) // 2
    return b"\n".join([*real[:half], *lines, *real[half:]]) + b"\n"


def test_drivers_among_real_lines_in_order_each_once() -> None:
    driver = b"/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"
    first = b"7f1e2c000000-7f1e2c200000 r-xp 00000000 08:01 1234 " + driver
    again = first.replace(b"r-xp", b"r--p").replace(b"7f1e2c0", b"7f1e2d0")
    second = b"7f00-7f10 r-xp 00000000 08:01 99 /opt/a b/libcuda.so.1"  # a space in the path
    text = _real_maps_with(first, again, second)
    assert drivers_in(text) == [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
        "/opt/a b/libcuda.so.1",
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Not the driver: a library whose name only contains it, a directory named so,
        # a deleted-file marker that changes the name, a line with no path.
        (b"7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libcudart.so.12", []),
        (b"7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libcuda.so.1.d/libfoo.so", []),
        (b"7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/xlibcuda.so.1", []),
        (b"7f00-7f10 r-xp 00000000 08:01 1", []),
        (b"7f00-7f10 r-xp 00000000 08:01 1 /libcuda.so", ["/libcuda.so"]),
        # A path with bytes that are no UTF-8 is kept as the bytes it names.
        (
            b"7f00-7f10 r-xp 00000000 08:01 1 /\xff\xfe/libcuda.so.1",
            [b"/\xff\xfe/libcuda.so.1".decode("utf-8", "surrogateescape")],
        ),
        # Truncated and garbage lines.
        (b"7f00-7f10 r-xp /usr/lib/libcuda.so.1", []),
        (b"\x00\x00\x00/libcuda.so\x00", []),
        (b"/libcuda.so" * 1000, []),
    ],
)
def test_hostile_lines(line: bytes, expected: list[str]) -> None:
    assert drivers_in(_real_maps_with(line)) == expected


def test_empty_and_driverless_text() -> None:
    assert drivers_in(b"") == []
    assert drivers_in(b"\n\n\n") == []


# A child that loads the driver named by argv[1] with ``preload_driver``, then prints
# what this module reads of its maps and what a load by bare name gets.
LOAD = """
import ctypes, json, sys
from triton_toolchain import runtime as _process
before = _process.loaded_drivers()
loaded = _process.preload_driver(sys.argv[1])
marker = ctypes.CDLL("libcuda.so.1").triton_toolchain_standin_marker
marker.restype = ctypes.c_char_p
print(json.dumps({"before": before, "loaded": loaded, "after": _process.loaded_drivers(),
                  "by_name": marker().decode()}))
"""


def _child(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "TRITON_TOOLCHAIN": "off"}
    env.pop("LD_LIBRARY_PATH", None)
    done = subprocess.run(
        [sys.executable, "-c", LOAD, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_driver_loaded_by_path_is_then_found_in_the_maps_and_by_its_bare_name(
    tmp_path: Path,
) -> None:
    """``preload_driver`` loads the stand-in by its absolute path; the real maps of that
    process then show it, and a later ``dlopen("libcuda.so.1")`` by bare name gets it
    (the marker it returns), though no search path names its directory."""
    link = driver_standin.driver(tmp_path / "drv", marker="chosen")
    result = _child(str(link))
    real = str((tmp_path / "drv" / "libcuda.so.580.159.04").resolve())
    assert result == {"before": [], "loaded": str(link), "after": [real], "by_name": "chosen"}


def test_a_driver_already_mapped_is_kept(tmp_path: Path) -> None:
    """Two drivers cannot work in one process: where one is mapped already, the one
    asked for is not loaded, and the one present is returned."""
    present = driver_standin.driver(tmp_path / "present", marker="present")
    asked = driver_standin.driver(tmp_path / "asked", marker="asked")
    code = (
        "import ctypes, json, sys\n"
        "from triton_toolchain import runtime as _process\n"
        "ctypes.CDLL(sys.argv[1])\n"
        "print(json.dumps([_process.preload_driver(sys.argv[2]), _process.loaded_drivers()]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "TRITON_TOOLCHAIN": "off"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(present), str(asked)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    real = str((tmp_path / "present" / "libcuda.so.580.159.04").resolve())
    assert json.loads(done.stdout) == [real, [real]]


def test_a_relative_driver_path_is_refused_not_searched() -> None:
    with pytest.raises(ValueError, match=r"absolute path, not 'libcuda\.so\.1'"):
        preload_driver("libcuda.so.1", loaded=[])


# ------------------------------------------------------------------- patches and reports


def _namespace() -> dict[str, Any]:
    def get_ptxas() -> str:
        return "Triton's"

    return {"get_ptxas": get_ptxas}


def _ours(original: Any) -> Any:
    def replacement() -> str:
        return "ours, then " + original()

    setattr(replacement, ORIGINAL, original)
    return replacement


def test_a_patch_replaces_wraps_and_is_undone() -> None:
    patches, namespace = Patches(), _namespace()
    original = namespace["get_ptxas"]
    assert patches.patch("compiler", namespace, "get_ptxas", _ours)
    assert namespace["get_ptxas"]() == "ours, then Triton's"
    assert getattr(namespace["get_ptxas"], ORIGINAL) is original
    patches.unpatch("compiler", namespace, "get_ptxas")
    assert namespace["get_ptxas"] is original
    assert patches.made == {}


def test_patching_twice_keeps_one_replacement() -> None:
    patches, namespace = Patches(), _namespace()
    assert patches.patch("compiler", namespace, "get_ptxas", _ours)
    ours = namespace["get_ptxas"]
    assert patches.patch("compiler", namespace, "get_ptxas", _ours)
    assert namespace["get_ptxas"] is ours
    assert ours() == "ours, then Triton's"  # not wrapped twice


def test_an_absent_name_is_not_patched() -> None:
    patches, namespace = Patches(), _namespace()
    assert not patches.patch("compiler", namespace, "make_cubin", _ours)
    assert "make_cubin" not in namespace and patches.made == {}


def test_a_replacement_made_by_someone_else_since_is_left_alone() -> None:
    """Someone replaced ours after we patched: we neither patch over theirs nor put the
    original back over it."""
    patches, namespace = Patches(), _namespace()
    patches.patch("compiler", namespace, "get_ptxas", _ours)

    def theirs() -> str:
        return "theirs"

    namespace["get_ptxas"] = theirs
    assert not patches.patch("compiler", namespace, "get_ptxas", _ours)
    patches.unpatch("compiler", namespace, "get_ptxas")
    assert namespace["get_ptxas"] is theirs


def test_the_original_put_back_by_someone_else_is_patched_again() -> None:
    patches, namespace = Patches(), _namespace()
    original = namespace["get_ptxas"]
    patches.patch("compiler", namespace, "get_ptxas", _ours)
    namespace["get_ptxas"] = original
    assert patches.patch("compiler", namespace, "get_ptxas", _ours)
    assert namespace["get_ptxas"]() == "ours, then Triton's"


def test_a_report_starts_empty_and_keeps_what_it_is_told() -> None:
    report = Report()
    assert (report.applied, report.kept, report.notes) == ({}, {}, [])
    report.applied["knobs.nvidia.ptxas"] = "/usr/local/cuda/bin/ptxas"
    report.kept["env:CC"] = "set by the user"
    assert Report().applied == {}  # no state shared between reports


# ------------------------------------------------------------------ the user's environment


def test_user_environ_leaves_out_what_the_shim_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value the shim wrote is not the user's; the user's own value of a variable the
    shim once wrote (it changed since) is."""
    monkeypatch.setenv("TRITON_PTXAS_PATH", "/shim/ptxas")
    monkeypatch.setenv("CC", "/usr/bin/gcc")
    monkeypatch.setenv("MY_OWN", "kept")
    monkeypatch.setattr(SHIM, "env", {"TRITON_PTXAS_PATH": "/shim/ptxas", "CC": "/shim/cc"})
    seen = user_environ()
    assert "TRITON_PTXAS_PATH" not in seen
    assert seen["CC"] == "/usr/bin/gcc" and seen["MY_OWN"] == "kept"
    assert seen == {k: v for k, v in os.environ.items() if k != "TRITON_PTXAS_PATH"}
