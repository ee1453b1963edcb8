"""The README as a new user reads it: every command in it runs as written (the
command line's against its parser, the test commands against the files, markers and
nox sessions they name), the ahead-of-time compile runs, the sample `doctor` screen
has the shape `doctor` prints here, the links lead somewhere, and it reads in five
minutes. The user documents carry no issue numbers or commit hashes."""

from __future__ import annotations

import ast
import configparser
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_screen import unwrap
from triton_toolchain import __version__
from triton_toolchain.cli._main import build_parser
from triton_toolchain.resolver._catalog import COMPONENT_NAMES, GOALS

# Reads the repository's README, docs/, noxfile.py and tools/.
pytestmark = pytest.mark.repo

README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README, re.M | re.S)
USER_DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "python/README.md",
    ROOT / "docs/measurements.md",
    ROOT / "docs/security.md",
    ROOT / "docs/manifest.md",
]


def _command_lines() -> list[str]:
    """The shell lines of the README's code blocks, comments and `$ ` prompts removed."""
    lines = []
    for kind, body in BLOCKS:
        if kind not in ("sh", ""):
            continue
        for text in body.splitlines():
            if kind == "" and not text.startswith("$ "):
                continue  # a screen: only its prompt's line is a command
            code = text.removeprefix("$ ").split("  #", 1)[0].strip()
            if code:
                lines.append(code)
    return lines


def _nox_sessions() -> set[str]:
    """The session names noxfile.py declares (its decorators, read, not run)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and "session" in ast.unparse(decorator.func):
                    given = [k.value for k in decorator.keywords if k.arg == "name"]
                    names.add(ast.unparse(given[0]).strip("'\"f") if given else node.name)
    return names


def test_every_command_line_of_the_readme_parses_as_written() -> None:
    parser = build_parser()
    seen = set()
    for line in _command_lines():
        words = shlex.split(re.sub(r'^eval "\$\((.*)\)"$', r"\1", line))
        if words[:3] == ["python", "-m", "triton_toolchain"]:
            words = ["triton-toolchain", *words[3:]]
        if words[0] != "triton-toolchain":
            continue
        if words[1:] == ["--version"]:
            continue
        args = parser.parse_args(words[1:])  # exits 2 on anything it does not know
        seen.add(args.cmd)
    every = {"doctor", "env", "which", "lock", "pkg-config", "check-manifest", "run"}
    assert seen == every, every - seen  # each command shown once at least


def test_the_readmes_test_commands_name_real_files_markers_and_sessions() -> None:
    lines = _command_lines()
    pytest_lines = [line for line in lines if " -m pytest" in line]
    assert pytest_lines, lines
    config = configparser.ConfigParser()
    config.read(ROOT / "pytest.ini")
    markers = {m.split(":")[0].strip() for m in config["pytest"]["markers"].splitlines() if m}
    for line in pytest_lines:
        words = shlex.split(line)
        for word in words:
            if word.startswith("tests/"):
                assert (ROOT / word).is_file(), word
        if "-m" in words[3:]:
            expression = words[words.index("-m", 3) + 1]
            named = set(re.findall(r"\w+", expression)) - {"not", "and", "or"}
            assert named <= markers, named - markers
    sessions = _nox_sessions()
    for line in lines:
        words = shlex.split(line)
        if words[0] == "tools/test.sh" and "-s" in words:
            assert words[words.index("-s") + 1] in sessions, (line, sessions)
    assert "tools/test.sh" in (ROOT / ".ci/run").read_text()  # CI runs what the README says
    done = subprocess.run(
        [str(ROOT / "tools/test.sh"), "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "Nothing has been done yet" in done.stdout, done.stderr
    for thing in ("apt-get", "binfmt_misc", "Triton", "torch", "disk"):
        assert thing in done.stdout, thing


def test_the_ahead_of_time_compile_runs_as_written(tmp_path: Path) -> None:
    script = next(body for kind, body in BLOCKS if kind == "python" and "triton.compile" in body)
    (tmp_path / "add.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    env.update(HOME=str(tmp_path), TRITON_CACHE_DIR=str(tmp_path / "triton-cache"))
    done = subprocess.run(
        [sys.executable, "add.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"\d+ bytes of sm_90 machine code\n", done.stdout), done.stdout


def test_the_sample_screen_has_the_shape_doctor_prints_here(tmp_path: Path) -> None:
    block = next(body for _kind, body in BLOCKS if body.startswith("$ triton-toolchain doctor\n"))
    sample = block.splitlines()[1:]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_") and k != "COLUMNS"}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    real = done.stdout.splitlines()

    def shape(lines: list[str]) -> list[str]:
        """The first words of the header, the goals' titles in order, the table's
        header and its components in order, the last line."""
        whole = unwrap("\n".join(lines))
        titles = [g.title for g in GOALS.values()]
        names = COMPONENT_NAMES
        return [
            whole[0].split(":")[0],
            *[t for line in whole for t in titles if line.startswith(t + " ")],
            " ".join(next(line for line in whole if line.startswith("component ")).split()),
            *[line.split()[0] for line in whole if line.split()[:1] in [[c] for c in names]],
            whole[-1],
        ]

    assert shape(sample) == shape(real)
    assert sample[0].startswith(f"triton-toolchain {__version__}: ")
    assert max(len(line) for line in sample if " " in line.strip()) <= 100


def test_the_readme_reads_in_five_minutes_and_its_links_lead_somewhere() -> None:
    assert len(README.split()) < 2000
    for document in [ROOT / "README.md", ROOT / "docs/measurements.md", ROOT / "docs/security.md"]:
        text = document.read_text()
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if not link.startswith("https://"):
                assert (document.parent / link).exists(), (document.name, link)


def test_user_documents_carry_no_issue_numbers_or_commit_hashes() -> None:
    for document in USER_DOCUMENTS:
        text = document.read_text()
        assert not re.search(r"\bissue \d+", text, re.I), document
        hashes = [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text) if not h.isdigit()]
        assert hashes == [], (document, hashes)
