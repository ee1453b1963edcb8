"""Hostile corpus, round 4, `env`: what `triton-toolchain env` prints is evaluated by real
shells (bash, dash, zsh, fish) and read by real JSON readers (Python's, jq), and every
variable comes back with exactly the bytes of its value, whatever bytes the path holds
(a quote, a backslash at the end, a newline, `$(...)`, bytes that are not UTF-8); or
the value is refused by name (JSON holds text only). Nothing a path says ever runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from elf_fixtures import install_driver
from hostile import clean_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_fixtures import libdevice
from triton_toolchain.resolver._catalog import COMPONENTS
from triton_toolchain.resolver._exports import EXPORTS_VARIABLE, shell_script, toolchain_env
from triton_toolchain.resolver._model import Choice, Source, Toolchain
from triton_toolchain.runtime._errors import ToolchainError

# How each shell takes `env`'s output, as the README tells users to.
SHELLS = {
    "bash": (["bash", "--norc", "--noprofile", "-c"], 'eval "$(cat "$0")"; exec env -0', "sh"),
    "dash": (["dash", "-c"], 'eval "$(cat "$0")"; exec env -0', "sh"),
    "zsh": (["zsh", "-f", "-c"], 'eval "$(cat "$0")"; exec env -0', "sh"),
    "fish": (["fish", "--no-config", "-c"], "source $argv[1]; exec env -0", "fish"),
}


def _shell(name: str) -> list[str]:
    argv, _, _ = SHELLS[name]
    found = shutil.which(argv[0])
    assert found, f"{argv[0]} is not installed: apt-get install -y zsh fish (tools/test.sh does)"
    return [found, *argv[1:]]


def _evaluated(shell: str, script: bytes, directory: Path) -> dict[bytes, bytes]:
    """The environment a program started by ``shell`` gets after the shell has evaluated
    ``script``, as bytes."""
    _, code, _ = SHELLS[shell]
    path = directory / f"env.{shell}"
    path.write_bytes(script)
    # The script's path is the shell's argument: $0 in a POSIX shell, $argv[1] in fish.
    done = subprocess.run(
        [*_shell(shell), code, str(path)],
        capture_output=True,
        env={"PATH": os.defpath, "HOME": str(directory), "LC_ALL": "C.UTF-8"},
        cwd=directory,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, (shell, done.stderr.decode("utf-8", "replace"))
    return dict(e.split(b"=", 1) for e in done.stdout.split(b"\0") if b"=" in e)


def _json_read(script: bytes) -> dict[str, bytes]:
    """``script`` as two JSON readers read it: Python's and jq's, which must agree."""
    doc = json.loads(script.decode("utf-8"))
    jq = shutil.which("jq")
    assert jq, "jq is not installed (apt-get install -y jq)"
    done = subprocess.run(
        [jq, "-j", 'to_entries[] | .key, "\\u0000", .value, "\\u0000"'],
        input=script,
        capture_output=True,
        check=True,
    )
    parts = done.stdout.split(b"\0")[:-1]
    by_jq = dict(zip(parts[0::2], parts[1::2], strict=True))
    assert {k.encode(): v.encode() for k, v in doc.items()} == by_jq
    return {k.decode(): v for k, v in by_jq.items()}


def _toolchain(paths: list[str]) -> Toolchain:
    """A resolution as data: the first components found at ``paths``, one each."""
    choices = {}
    for spec, path in zip(COMPONENTS, [*paths, *[None] * len(COMPONENTS)], strict=False):
        source = Source.parse("discovered:PATH") if path else None
        choices[spec.name] = Choice(spec.name, path, None, source)
    return Toolchain(choices)


# Any byte a path may hold: all but NUL, "/" included (a directory in the middle); and
# paths of the characters shells treat apart, and of those left unquoted.
SPECIAL = "aZ09/_@+=:,.-%~#!$&*?;|<>(){}[]`'\"\\ \t\n\r"
PATH_BYTES = st.binary(min_size=1, max_size=24).filter(lambda b: b"\0" not in b) | st.text(
    SPECIAL, min_size=1, max_size=24
).map(str.encode)
PATHS = st.lists(PATH_BYTES.map(lambda b: os.fsdecode(b"/" + b)), min_size=1, max_size=4)


@pytest.mark.parametrize("shell", list(SHELLS))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(paths=PATHS)
def test_every_shell_gets_back_every_byte_of_every_value(
    tmp_path: Path, shell: str, paths: list[str]
) -> None:
    env = toolchain_env(_toolchain(paths))
    script = shell_script(env, SHELLS[shell][2])
    got = _evaluated(shell, script, tmp_path)
    for name, value in env.items():
        assert got.get(name.encode()) == os.fsencode(value), (shell, name, script)


@settings(max_examples=150, deadline=None)
@given(paths=PATHS)
def test_json_gives_back_every_value_or_refuses_it_by_name(paths: list[str]) -> None:
    env = toolchain_env(_toolchain(paths))
    not_text = [k for k, v in env.items() if os.fsencode(v).decode("utf-8", "replace") != v]
    if not_text:
        with pytest.raises(ToolchainError, match="not UTF-8 text") as refused:
            shell_script(env, "json")
        assert all(f"{name}=b" in str(refused.value) for name in not_text), refused.value
        assert "--format sh" in str(refused.value)
        return
    read = _json_read(shell_script(env, "json"))
    assert read == {k: os.fsencode(v) for k, v in env.items()}


# Paths that break quoting: each with the bytes that did it.
HOSTILE_DIRS = {
    "backslash-at-the-end": b"drv\\",
    "quote": b"it's",
    "fish-escaped-quote": b"a\\'; touch PWNED; echo \\'",
    "command-substitution": b"$(touch PWNED)`touch PWNED`",
    "newline": b"line\nexport PWNED=1\n",
    "not-utf8": b"\xff\xfe\x80",
    "c1-and-bidi": "\u009b\u202e".encode(),
}


def _hostile_env(tmp_path: Path, case: str) -> tuple[dict[str, str], list[str]]:
    """The command line's environment naming a real driver and a real libdevice under
    directories named by ``case`` (the first followed by one holding a command: a path
    ending in a backslash before it is how fish ran it), and the variables that must
    come back."""
    hostile = os.fsdecode(HOSTILE_DIRS[case])
    driver = tmp_path / ("d-" + hostile)
    install_driver(driver)
    device = libdevice(tmp_path / ("l-" + hostile) / "; touch PWNED; #")
    env = clean_env(
        tmp_path / "home",
        TRITON_LIBCUDA_PATH=str(driver),
        TRITON_LIBDEVICE_PATH=str(device),
    )
    return env, ["TRITON_LIBCUDA_PATH", "TRITON_LIBDEVICE_PATH"]


def _stdout_bytes(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes, str]:
    """The command line's exit status, standard output as bytes, standard error."""
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return done.returncode, done.stdout, err


@pytest.mark.parametrize("shell", list(SHELLS))
@pytest.mark.parametrize("case", list(HOSTILE_DIRS))
def test_env_output_evaluated_by_each_shell_gives_back_the_paths(
    tmp_path: Path, case: str, shell: str
) -> None:
    env, names = _hostile_env(tmp_path, case)
    fmt = SHELLS[shell][2]
    status, script, err = _stdout_bytes(["env", "--format", fmt], env, tmp_path)
    assert status in (0, 1), err
    got = _evaluated(shell, script, tmp_path)
    # What the user gave comes back as the user gave it, and the record of what was
    # exported (JSON, full of backslashes) reads back to the same values.
    exports = json.loads(got[EXPORTS_VARIABLE.encode()])
    for name in names:
        assert got[name.encode()] == os.fsencode(env[name]), (name, script)
        assert os.fsencode(exports[name][0]) == os.fsencode(env[name])
    assert not list(tmp_path.rglob("PWNED")) and b"PWNED" not in got


@pytest.mark.parametrize("case", list(HOSTILE_DIRS))
def test_env_json_is_read_back_by_json_readers_or_refused_by_name(
    tmp_path: Path, case: str
) -> None:
    env, _ = _hostile_env(tmp_path, case)
    status, out, err = _stdout_bytes(["env", "--format", "json"], env, tmp_path)
    if case == "not-utf8":
        assert status == 2 and out == b"", err
        assert err.startswith("error: env --format json: TRITON_LIBDEVICE_PATH=b'"), err
        assert ", TRITON_LIBCUDA_PATH=b'" in err and "\\xff\\xfe\\x80" in err
        assert "not UTF-8 text" in err and "use --format sh" in err
        return
    assert status in (0, 1), err
    read = _json_read(out)
    for name in ("TRITON_LIBCUDA_PATH", "TRITON_LIBDEVICE_PATH"):
        assert read[name] == os.fsencode(env[name])
