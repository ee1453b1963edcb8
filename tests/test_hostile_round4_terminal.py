"""Hostile corpus, round 4, the terminal: what a file name or a tool's output holds is
shown, never acted on. C1 controls (U+009B is the 8-bit CSI) and the bidirectional
overrides and isolates are escaped as the C0 controls are, by one function
(``runtime._errors.printable``), in errors, warnings and everything the command line
writes for a person; a path ending in a newline is refused by name, not written into a
``.pc`` file as a line of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from elf_fixtures import install_driver
from hostile import clean_env, cli
from hypothesis import given
from hypothesis import strategies as st
from tool_fixtures import write_script
from triton_layouts import Layout, run_scenario, scenario_env
from triton_toolchain.runtime._errors import ToolchainError, printable

C0 = [chr(c) for c in range(0x20) if chr(c) not in "\t\n"]
ACTIVE = [*C0, "\x7f", *(chr(c) for c in range(0x80, 0xA0))]
ACTIVE += [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
# Bytes a terminal acts on, as they reach it (UTF-8).
ACTIVE_BYTES = [c.encode() for c in ACTIVE]


def _acted_on(raw: bytes) -> list[bytes]:
    return [b for b in ACTIVE_BYTES if b in raw]


@given(st.text())
def test_printable_leaves_nothing_a_terminal_acts_on(text: str) -> None:
    shown = printable(text)
    assert not [c for c in ACTIVE if c in shown]
    # Everything else is left as it is; each escape is the one repr() writes.
    assert shown == "".join(repr(c)[1:-1] if c in ACTIVE else c for c in text)
    assert printable(shown) == shown


def test_errors_are_printable_whoever_builds_them() -> None:
    error = ToolchainError("TRITON_PTXAS_PATH='/x\x1b[2J\u009b31m\u202etxt.exe': no such file")
    assert str(error) == "TRITON_PTXAS_PATH='/x\\x1b[2J\\x9b31m\\u202etxt.exe': no such file"


def _failing_tool(path: Path) -> Path:
    """A ``ptxas`` whose ``--version`` fails saying ESC [2J, BEL, CSI, RLO."""
    body = "printf 'ptxas fatal \\033[2J\\007\\302\\23331m\\342\\200\\256gnp.exe\\n'\nexit 3\n"
    return write_script(path, f"#!/bin/sh\n{body}")


def _raw(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", *args],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert b"Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("command", [["doctor"], ["doctor", "-v"], ["which", "ptxas"], ["lock"]])
def test_a_tools_failing_version_reaches_the_terminal_escaped(
    tmp_path: Path, command: list[str]
) -> None:
    ptxas = _failing_tool(tmp_path / "bin" / "ptxas")
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=str(ptxas))
    status, out = _raw(command, env)
    assert status == 2, out
    assert not _acted_on(out), out
    assert b"exited with 3: ptxas fatal \\x1b[2J\\x07\\x9b31m\\u202egnp.exe" in out, out


def test_import_triton_warns_with_the_tools_words_escaped(tmp_path: Path) -> None:
    ptxas = _failing_tool(tmp_path / "bin" / "ptxas")
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False, TRITON_PTXAS_PATH=str(ptxas))
    report = run_scenario(layout, "hook", [], env=env)
    assert "RuntimeWarning" in report["stderr"], report["stderr"]
    assert not [c for c in ACTIVE if c in report["stderr"]], report["stderr"]
    assert "\\x1b[2J\\x07\\x9b31m\\u202egnp.exe" in report["stderr"], report["stderr"]


@pytest.mark.parametrize("char", ["\u009b", "\u202e", "\u2066", "\x1b", "\r"])
def test_a_manifest_named_with_controls_is_named_escaped(tmp_path: Path, char: str) -> None:
    manifest = tmp_path / f"m{char}[2J.json"
    manifest.write_text("{not json")
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    for args in (["check-manifest", str(manifest)], ["doctor"], ["env"]):
        status, out = _raw(args, env)
        assert status == 2, out
        assert not _acted_on(out), (args, out)
        assert printable(str(manifest)).encode() in out, (args, out)


@pytest.mark.parametrize("name", ["drv\n", "drv\nLibs: -lpwned", "\ndrv"])
def test_a_path_with_a_newline_is_refused_by_name_not_written_into_the_pc_file(
    tmp_path: Path, name: str
) -> None:
    driver = tmp_path / name
    install_driver(driver)
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(driver))
    out_dir = tmp_path / "pc"
    out_dir.mkdir()
    done = cli("pkg-config", "-o", str(out_dir), env=env)
    assert done.returncode == 2, done.output
    assert done.stderr.startswith("error: libcuda-link: "), done.stderr
    assert repr(str(driver)) in done.stderr and "a .pc file cannot hold" in done.stderr
    assert os.listdir(out_dir) == []
    shown = cli("pkg-config", env=env)
    assert shown.returncode == 2 and shown.stdout == ""
