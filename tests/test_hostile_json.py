"""Hostile corpus, JSON and text edge cases: every malformed manifest is exit 2 with the
file and the key named (never a RecursionError, a ValueError about digits or a
UnicodeEncodeError), file names that are not UTF-8 are printed as they are, and a
closed or full standard output is exit 2 without a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hostile import clean_env, cli, run
from tool_fixtures import fake_ptxas
from triton_layouts import Layout, run_scenario, scenario_env

DEEP = 100_000
DIGITS = "9" * 5000


def _tool(tmp: Path) -> str:
    return str(fake_ptxas(tmp / "safe", "13.0"))


def _with_ptxas(value: str) -> str:
    return '{"schema": 1, "components": {"ptxas": ' + value + "}}"


# name -> (manifest text or bytes; "{tool}" is a real ptxas), words the error must hold
CASES: dict[str, tuple[str | bytes, list[str]]] = {
    "deep-arrays": ("[" * DEEP + "]" * DEEP, ["(top level)", "nested deeper than 16 levels"]),
    "deep-unclosed": ("[" * DEEP, ["nested deeper than 16 levels"]),
    "deep-under-an-entry": (
        _with_ptxas("[" * DEEP + "]" * DEEP),
        ["components.ptxas", "nested deeper"],
    ),
    "deep-objects": ('{"a":' * DEEP + "1" + "}" * DEEP, ["a.a.a", "nested deeper"]),
    "deep-inside-a-string-is-fine": (
        '{"schema": 1, "generator": "' + "[" * DEEP + '", "components": {}}',
        [],
    ),
    "5000-digit-schema": (
        '{"schema": ' + DIGITS + ', "components": {}}',
        ["schema", "5000 digits"],
    ),
    "5000-digit-negative": ('{"schema": -' + DIGITS + "}", ["schema", "5000 digits"]),
    "5000-digit-path": (_with_ptxas('{"path": ' + DIGITS + "}"), ["components.ptxas.path", "5000"]),
    "5000-digit-driver-dir": (
        '{"schema": 1, "driver_dirs": [' + DIGITS + '], "components": {}}',
        ["driver_dirs[0]", "5000 digits"],
    ),
    "float-overflow": ('{"schema": 1e999999, "components": {}}', ["schema", "inf"]),
    "nan": ('{"schema": NaN, "components": {}}', ["schema", "NaN"]),
    "infinity-version": (
        _with_ptxas('{"path": "{tool}", "version": -Infinity}'),
        ["components.ptxas.version", "-Infinity"],
    ),
    "lone-surrogate-path": (
        _with_ptxas('{"path": "/opt/\\ud800/ptxas"}'),
        ["components.ptxas.path", "lone surrogate"],
    ),
    "lone-surrogate-key": ('{"schema": 1, "\\udc80x": 1}', ["\\udc80x", "unknown key"]),
    "lone-surrogate-component": (
        '{"schema": 1, "components": {"\\ud800": {}}}',
        ["components.\\ud800", "unknown component"],
    ),
    "lone-surrogate-driver-dir": (
        '{"schema": 1, "driver_dirs": ["/x/\\udfff"], "components": {}}',
        ["driver_dirs[0]", "lone surrogate"],
    ),
    "lone-surrogate-generator": (
        '{"schema": 1, "generator": "\\ud83d", "components": {}}',
        ["generator", "lone surrogate"],
    ),
    "nul-in-path": (
        _with_ptxas('{"path": "/usr/bin/\\u0000ptxas"}'),
        ["components.ptxas.path", "NUL"],
    ),
    "invalid-utf8": (
        b'{"schema": 1, "generator": "\xff\xfe", "components": {}}',
        ["not UTF-8", "byte"],
    ),
    "utf16": ('{"schema": 1, "components": {}}'.encode("utf-16"), ["not UTF-8"]),
    "utf8-bom": ("\ufeff" + '{"schema": 1, "components": {}}', ["not valid JSON", "BOM"]),
    "duplicate-component": (
        '{"schema": 1, "components": {"ptxas": {"path": "{tool}"}, "ptxas": {"path": "/x"}}}',
        ["components.ptxas", "given twice"],
    ),
    "duplicate-path": (
        _with_ptxas('{"path": "{tool}", "path": "/tmp/evil"}'),
        ["components.ptxas.path", "given twice"],
    ),
    "duplicate-schema": ('{"schema": 1, "schema": 1, "components": {}}', ["schema", "given twice"]),
    "empty": ("", ["not valid JSON", "line 1, column 1"]),
    "whitespace": (" \n\t\n", ["not valid JSON"]),
    "null": ("null", ["(top level)", "must be a JSON object"]),
    "array": ("[]", ["(top level)", "must be a JSON object"]),
    "string": ('"manifest"', ["(top level)", "must be a JSON object"]),
    "truncated": ('{"schema": 1, "components": {"ptx', ["not valid JSON", "line 1"]),
    "trailing-garbage": ('{"schema": 1, "components": {}} {}', ["not valid JSON", "Extra data"]),
    "schema-true": ('{"schema": true, "components": {}}', ["schema", "bool True", "integer"]),
    "schema-string": ('{"schema": "1", "components": {}}', ["schema", "must be a JSON integer"]),
    "schema-float": ('{"schema": 1.0, "components": {}}', ["schema", "must be a JSON integer"]),
    "schema-3": ('{"schema": 3, "components": {}}', ["schema", "reads schemas 1 and 2"]),
    "no-components": ('{"schema": 1}', ["components", "is missing"]),
    "components-list": ('{"schema": 1, "components": []}', ["components", "JSON object"]),
    "entry-string": (_with_ptxas('"/usr/bin/ptxas"'), ["components.ptxas", "must be an object"]),
    "entry-without-path": (_with_ptxas("{}"), ["components.ptxas", "has no path"]),
    "unknown-top-key": (
        '{"schema": 1, "components": {}, "shell": "rm -rf /"}',
        ["shell", "unknown key"],
    ),
    "long-key": ('{"schema": 1, "' + "k" * 5000 + '": 1}', ["kkk...", "unknown key"]),
    "control-character-key": ('{"schema": 1, "a\\u001b[2Jb": 1}', ["unknown key"]),
    "driver-component": (_with_ptxas("{}").replace("ptxas", "libcuda"), ["driver_dirs"]),
    "relative-path": (
        _with_ptxas('{"path": "bin/ptxas"}'),
        ["components.ptxas.path", "not an absolute"],
    ),
    "tilde-path": (
        _with_ptxas('{"path": "~/bin/ptxas"}'),
        ["components.ptxas.path", "not an absolute"],
    ),
    "newline-in-path": (_with_ptxas('{"path": "/usr/bin/\\nptxas"}'), ["components.ptxas.path"]),
    "path-over-path-max": (
        _with_ptxas('{"path": "/' + "a/" * 3000 + 'ptxas"}'),
        ["components.ptxas.path", "cannot be used"],
    ),
    "name-over-name-max": (
        _with_ptxas('{"path": "/' + "a" * 300 + '"}'),
        ["components.ptxas.path", "File name too long"],
    ),
    "50000-components": (
        '{"schema": 1, "components": {' + ", ".join(f'"c{i}": {{}}' for i in range(50_000)) + "}}",
        ["components.c0", "unknown component"],
    ),
    "over-1-mib": ('{"schema": 1, "components": {}}' + " " * (1 << 20), ["larger than 1048576"]),
}


def _manifest(tmp: Path, case: str) -> tuple[Path, list[str]]:
    content, words = CASES[case]
    path = tmp / "safe" / "manifest.json"
    tool = _tool(tmp)
    if isinstance(content, str):
        path.write_text(content.replace("{tool}", tool), encoding="utf-8", errors="surrogatepass")
    else:
        path.write_bytes(content)
    return path, words


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_manifest_names_the_file_and_key(tmp_path: Path, case: str) -> None:
    path, words = _manifest(tmp_path, case)
    done = cli("check-manifest", str(path), env=clean_env(tmp_path / "home"), timeout=30)
    if not words:  # the control: valid
        assert done.returncode == 0, done.output
        return
    assert done.returncode == 2, done.output
    assert done.stderr.startswith(f"error: {path}: "), done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr[:2000])
    assert done.seconds < 10


@pytest.mark.parametrize(
    "case", ["deep-arrays", "5000-digit-path", "lone-surrogate-component", "duplicate-path"]
)
def test_doctor_names_the_file_and_key(tmp_path: Path, case: str) -> None:
    path, words = _manifest(tmp_path, case)
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(path))
    done = cli("doctor", env=env)
    assert done.returncode == 2
    assert all(word in done.stderr for word in words), done.stderr


@pytest.mark.parametrize("case", ["deep-arrays", "5000-digit-schema", "lone-surrogate-path"])
def test_import_triton_warns_with_the_file_and_key(tmp_path: Path, case: str) -> None:
    path, words = _manifest(tmp_path, case)
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False, TRITON_TOOLCHAIN_MANIFEST=str(path))
    report = run_scenario(layout, "hook", [], env=env)
    stderr = report["stderr"]
    assert f"ManifestError: {path}: " in stderr
    assert all(word in stderr for word in words), stderr
    assert "RecursionError" not in stderr and "Traceback" not in stderr


# ------------------------------------------------------------ names that are not UTF-8


def test_a_manifest_whose_name_is_not_utf8_is_named_byte_for_byte(tmp_path: Path) -> None:
    directory = os.fsencode(tmp_path / "safe")
    os.makedirs(directory)
    name = directory + b"/m\xff\xfe.json"
    with open(name, "wb") as f:
        f.write(b"[" * DEEP)
    env = clean_env(tmp_path / "home")
    env_bytes = {k.encode(): v.encode() for k, v in env.items()}
    env_bytes[b"TRITON_TOOLCHAIN_MANIFEST"] = name
    import subprocess

    for argv, extra in (
        ([b"check-manifest", name], {}),
        ([b"doctor"], {b"TRITON_TOOLCHAIN_MANIFEST": name}),
    ):
        done = subprocess.run(
            [os.fsencode(sys.executable), b"-m", b"triton_toolchain", *argv],
            env={
                **{k: v for k, v in env_bytes.items() if k != b"TRITON_TOOLCHAIN_MANIFEST"},
                **extra,
            },
            capture_output=True,
            check=False,
            timeout=30,
        )
        assert done.returncode == 2, done.stderr
        assert b"error: " + name + b": (top level): nested deeper" in done.stderr
        assert b"Traceback" not in done.stderr


def test_a_component_path_that_is_not_utf8_is_refused_by_lock(tmp_path: Path) -> None:
    """A path a manifest cannot hold (JSON strings are Unicode): ``lock`` names it and
    the component, and writes nothing."""
    directory = os.fsencode(
        tmp_path / "bin\xff".encode("latin-1").decode("utf-8", "surrogateescape")
    )
    tool = os.fsencode(fake_ptxas(Path(os.fsdecode(directory)), "13.0"))
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=os.fsdecode(tool))
    out = tmp_path / "m.json"
    done = cli("lock", "-o", str(out), env=env)
    assert done.returncode == 2, done.output
    assert "ptxas" in done.stderr and "not UTF-8" in done.stderr
    assert not out.exists()


# ------------------------------------------------------- closed or full standard output


COMMANDS = [
    ["doctor"],
    ["doctor", "--json"],
    ["doctor", "-v"],
    ["env"],
    ["which", "ptxas"],
    ["lock"],
]


@pytest.mark.parametrize("args", COMMANDS, ids="-".join)
def test_a_closed_standard_output_is_exit_2_without_traceback(
    tmp_path: Path, args: list[str]
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = cli(*args, env=clean_env(tmp_path / "home"), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 2, done.output
    assert "standard output is closed" in done.stderr


@pytest.mark.parametrize("args", [["doctor"], ["env"]], ids="-".join)
def test_a_full_standard_output_is_exit_2_without_traceback(
    tmp_path: Path, args: list[str]
) -> None:
    with open("/dev/full", "wb") as full:
        done = cli(*args, env=clean_env(tmp_path / "home"), stdout=full.fileno())
    assert done.returncode == 2, done.output
    assert "standard output cannot be written" in done.stderr


def test_doctor_piped_into_head_is_quiet(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    command = f"{sys.executable} -m triton_toolchain doctor -v | head -c 0; echo ${{PIPESTATUS[0]}}"
    done = run(["/bin/bash", "-c", command], env).clean()
    assert done.stdout.strip() in ("0", "1", "2")
    assert done.stderr in ("", "triton-toolchain: standard output is closed\n"), done.stderr


def test_json_output_of_doctor_escapes_names_that_are_not_utf8(tmp_path: Path) -> None:
    tool = os.fsencode(fake_ptxas(tmp_path / os.fsdecode(b"\xffbin"), "13.0"))
    env = clean_env(tmp_path / "home", TRITON_PTXAS_PATH=os.fsdecode(tool))
    done = cli("doctor", "--json", env=env)
    doc = json.loads(done.stdout)
    assert os.fsencode(doc["components"]["ptxas"]["path"]) == tool
