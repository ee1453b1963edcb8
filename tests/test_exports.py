"""``_exports``, the environment that hands a resolution to another process: which
component goes to which variable, what the user set always winning (``CUDA_PATH``
keeping ``CUDA_HOME`` out), ``TRITON_TOOLCHAIN_EXPORTS`` saying only what was really
exported, search paths without empty or relative entries, and ``triton-toolchain run``
replacing itself by the program (real processes: the status a shell would give)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import clean_env, cli
from tool_fixtures import REAL_GCC, fake_ptxas, wrapper, write_script
from triton_toolchain.resolver._catalog import COMPONENTS, exported_variables
from triton_toolchain.resolver._exports import (
    EXPORTS_VARIABLE,
    MANIFEST_VARIABLE,
    MAX_EXPORTS_BYTES,
    clean_search_path,
    merged_env,
    read_exports,
    toolchain_env,
)
from triton_toolchain.resolver._model import Choice, Source, SourceKind, Toolchain

FOUND = {
    "ptxas": ("/cuda/bin/ptxas", "discovered:cuda-toolkit"),
    "cc": ("/usr/bin/gcc", "discovered:PATH"),
    "cuda-home": ("/cuda", "manifest:/etc/m.json"),
    "libcuda": ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "discovered:ld.so.cache"),
    "libcuda-link": ("/cuda/lib64/stubs", "discovered:cuda-toolkit"),
}


def toolchain(found: dict[str, tuple[str, str]], manifest: str | None = None) -> Toolchain:
    """A resolution as data: ``found`` components at their paths, the others missing."""
    choices = {}
    for spec in COMPONENTS:
        path, source = found.get(spec.name, (None, None))
        choices[spec.name] = Choice(spec.name, path, None, Source.parse(source) if source else None)
    return Toolchain(choices, manifest=manifest)


def test_every_found_component_goes_to_its_variable_with_its_source() -> None:
    env = toolchain_env(toolchain(FOUND, manifest="/etc/m.json"))
    assert env["TRITON_PTXAS_PATH"] == "/cuda/bin/ptxas"
    assert env["CC"] == "/usr/bin/gcc" and env["CUDA_HOME"] == "/cuda"
    # The run-time driver's directory, not the link stub's.
    assert env["TRITON_LIBCUDA_PATH"] == "/usr/lib/x86_64-linux-gnu"
    assert env[MANIFEST_VARIABLE] == "/etc/m.json"
    exported = {k: v for k, v in env.items() if k not in (MANIFEST_VARIABLE, EXPORTS_VARIABLE)}
    assert json.loads(env[EXPORTS_VARIABLE]) == {
        "TRITON_PTXAS_PATH": ["/cuda/bin/ptxas", "discovered:cuda-toolkit"],
        "CC": ["/usr/bin/gcc", "discovered:PATH"],
        "CUDA_HOME": ["/cuda", "manifest:/etc/m.json"],
        "TRITON_LIBCUDA_PATH": ["/usr/lib/x86_64-linux-gnu", "discovered:ld.so.cache"],
    }
    assert set(exported) == set(json.loads(env[EXPORTS_VARIABLE]))
    assert set(exported) - {"TRITON_LIBCUDA_PATH"} <= set(exported_variables().values())


def test_without_a_driver_the_link_directory_is_exported() -> None:
    found = {k: v for k, v in FOUND.items() if k != "libcuda"}
    assert toolchain_env(toolchain(found))["TRITON_LIBCUDA_PATH"] == "/cuda/lib64/stubs"


def test_nothing_found_exports_nothing() -> None:
    assert toolchain_env(toolchain({})) == {}
    assert toolchain_env(toolchain({}, manifest="/m.json")) == {MANIFEST_VARIABLE: "/m.json"}


def test_what_the_user_set_wins_and_the_record_says_only_what_was_exported() -> None:
    tc = toolchain(FOUND)
    user = {"CC": "/opt/my/cc", "CUDA_PATH": "/opt/my-cuda", "TRITON_PTXAS_PATH": ""}
    merged = merged_env(tc, user)
    assert merged["CC"] == "/opt/my/cc"
    assert "CUDA_HOME" not in merged  # torch reads CUDA_PATH in its place: the user's
    assert merged["CUDA_PATH"] == "/opt/my-cuda"
    assert merged["TRITON_PTXAS_PATH"] == "/cuda/bin/ptxas"  # empty is unset
    assert set(read_exports(merged[EXPORTS_VARIABLE])) == {
        "TRITON_PTXAS_PATH",
        "TRITON_LIBCUDA_PATH",
    }
    mine = {"CC": "/x", "CUDA_HOME": "/y", "TRITON_PTXAS_PATH": "/z", "TRITON_LIBCUDA_PATH": "/w"}
    assert EXPORTS_VARIABLE not in merged_env(tc, mine)
    assert merged_env(tc, {**mine, EXPORTS_VARIABLE: "theirs"})[EXPORTS_VARIABLE] == "theirs"


def test_search_paths_lose_their_empty_and_relative_entries() -> None:
    assert clean_search_path("::/usr/bin:bin:./x:/opt/bin:") == "/usr/bin:/opt/bin"
    merged = merged_env(toolchain({}), {"PATH": ":/usr/bin:.", "LD_LIBRARY_PATH": "lib::"})
    assert merged["PATH"] == "/usr/bin"
    assert "LD_LIBRARY_PATH" not in merged  # nothing left: not an empty entry
    assert merged_env(toolchain({}), {"OTHER": "a::b"}) == {"OTHER": "a::b"}


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "{",
        "[]",
        '"x"',
        "[" * 10_000,
        json.dumps({"A": ["x", "y"]}) + " " * MAX_EXPORTS_BYTES,
    ],
)
def test_exports_that_are_not_what_was_written_count_as_none(value: str | None) -> None:
    assert read_exports(value) == {}


def test_exports_read_back_keep_only_well_formed_entries() -> None:
    value = json.dumps(
        {"A": ["/a", "discovered:x"], "B": ["/b"], "C": "/c", "D": [1, "x"], "E": ["/e", "s"]}
    )
    assert read_exports(value) == {"A": ("/a", "discovered:x"), "E": ("/e", "s")}
    tc = toolchain(FOUND)
    written = toolchain_env(tc)[EXPORTS_VARIABLE]
    assert read_exports(written)["CC"] == (
        "/usr/bin/gcc",
        str(Source(SourceKind.DISCOVERED, "PATH")),
    )


# ---------------------------------------------------------------------- triton-toolchain run


def test_run_replaces_itself_by_the_program_with_the_toolchain_exported(tmp_path: Path) -> None:
    ptxas = fake_ptxas(tmp_path / "mine", "13.0")
    write_script(
        tmp_path / "bin" / "show",
        'echo "CC=${CC-unset}"; echo "PTXAS=$TRITON_PTXAS_PATH"\n'
        'echo "PATH=$PATH"; echo "ARGS=$*"; exit 3\n',
    )
    cc = wrapper(tmp_path / "mine" / "cc", REAL_GCC)
    env = clean_env(
        tmp_path / "home",
        TRITON_PTXAS_PATH=str(ptxas),
        CC=str(cc),
        PATH=f":{tmp_path / 'bin'}:relative:/usr/bin:/bin",
    )
    done = cli("run", "--", "show", "a b", "c", env=env)
    assert done.returncode == 3, done.output  # the program's own status
    lines = dict(line.split("=", 1) for line in done.stdout.splitlines())
    assert lines["CC"] == str(cc) and lines["PTXAS"] == str(ptxas)
    assert lines["PATH"] == f"{tmp_path / 'bin'}:/usr/bin:/bin"
    assert lines["ARGS"] == "a b c"


def test_run_says_what_a_shell_says_when_the_program_cannot_run(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home", PATH="/usr/bin:/bin")
    missing = cli("run", "--", "no-such-program-here", env=env)
    assert missing.returncode == 127
    assert "triton-toolchain run: no-such-program-here: command not found" in missing.stderr
    plain = tmp_path / "plain"
    plain.write_text("not a program\n")
    denied = cli("run", "--", str(plain), env=env)
    assert denied.returncode == 126
    assert f"triton-toolchain run: {plain}: Permission denied" in denied.stderr
    gone = cli("run", "--", str(tmp_path / "gone"), env=env)
    assert gone.returncode == 127
