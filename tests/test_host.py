"""``_discovery._host``, the one seam between discovery and the machine: well-known
system paths taken under the host's root, every variable read recorded as a fact (and
none of a tool's environment), packages found without importing them and looked up only
when asked, this interpreter's facts."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import SRC
from triton_toolchain.resolver._catalog import MACHINES, triton_release
from triton_toolchain.resolver._discovery._host import (
    Host,
    RecordedEnviron,
    child_environ,
    interpreter_machine,
)
from triton_toolchain.resolver._observe import recording


def test_well_known_paths_and_globs_are_taken_under_the_root(tmp_path: Path) -> None:
    host = Host(root=tmp_path, environ={})
    assert host.at("/etc/ld.so.cache") == tmp_path / "etc/ld.so.cache"
    assert host.at("usr/local/cuda") == tmp_path / "usr/local/cuda"
    for name in ("cuda-12.8", "cuda-13.0", "cuda"):
        (tmp_path / "opt" / name).mkdir(parents=True)
    found = host.glob("/opt/cuda*")
    assert found == [tmp_path / "opt" / n for n in ("cuda", "cuda-12.8", "cuda-13.0")]
    assert Host(environ={}).at("/etc/ld.so.cache") == Path("/etc/ld.so.cache")


def test_every_variable_read_is_a_fact_and_a_tools_environment_is_not() -> None:
    environ = RecordedEnviron({"CUDA_HOME": "/cuda", "SHLVL": "2", "EMPTY": ""})
    with recording() as facts:
        assert environ.get("CUDA_HOME") == "/cuda"
        assert environ.get("CUDA_PATH", "default") == "default"
        assert "EMPTY" in environ
        assert environ["SHLVL"] == "2"
        with pytest.raises(KeyError):
            environ["TRITON_PTXAS_PATH"]
        assert len(environ) == 3 and set(environ) == {"CUDA_HOME", "SHLVL", "EMPTY"}
        child = child_environ(environ)
    assert child == {"CUDA_HOME": "/cuda", "SHLVL": "2", "EMPTY": ""}
    assert facts.values == {
        ("env", "CUDA_HOME"): "/cuda",
        ("env", "CUDA_PATH"): None,
        ("env", "EMPTY"): "",
        ("env", "SHLVL"): "2",
        ("env", "TRITON_PTXAS_PATH"): None,
    }
    assert child_environ({"A": "1"}) == {"A": "1"}


def test_packages_are_given_or_looked_up_when_first_asked(tmp_path: Path) -> None:
    given = Host(environ={}, packages={"torch": (tmp_path / "torch",), "nvidia": (tmp_path,)})
    assert given.torch_dir == tmp_path / "torch" and given.nvidia_dirs == (tmp_path,)
    assert Host(environ={}).torch_dir is None and Host(environ={}).nvidia_dirs == ()
    with recording() as facts:
        looked_up = Host(environ={}, packages=None)
    assert facts.values == {}  # nothing is looked up before it is asked
    with recording() as facts:
        torch_dir = looked_up.torch_dir
        again = looked_up.torch_dir
    # The import system's answer, whether this session has torch (`tests`) or not.
    spec = importlib.util.find_spec("torch")
    found = spec.submodule_search_locations if spec is not None else None
    assert torch_dir == again == (Path(next(iter(found))) if found else None)
    assert list(facts.values) == [("package", "torch")]


def test_the_current_host_finds_triton_without_importing_it() -> None:
    """In a fresh interpreter: ``Host.current()`` knows Triton's directory and release row
    and has imported neither Triton nor torch."""
    code = (
        "import json, sys\n"
        "from triton_toolchain.resolver._discovery._host import Host\n"
        "h = Host.current()\n"
        "print(json.dumps([str(h.triton_dir), h.triton.first if h.triton else None,"
        " str(h.root), h.machine, 'triton' in sys.modules, 'torch' in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    triton_dir, release, root, machine, imported_triton, imported_torch = json.loads(done.stdout)
    spec = importlib.util.find_spec("triton")
    assert spec is not None and spec.origin
    assert triton_dir == str(Path(spec.origin).parent)
    major, minor = importlib.metadata.version("triton").split(".")[:2]
    row = triton_release((int(major), int(minor)))
    assert row is not None and tuple(release) == row.first
    assert (root, machine) == ("/", interpreter_machine())
    assert not imported_triton and not imported_torch


def test_this_interpreters_facts() -> None:
    assert interpreter_machine() == platform.machine()  # a 64-bit Python on x86_64 here
    host = Host.current()
    assert host.python_version == sys.version_info[:2]
    assert (host.include_dir / "Python.h").is_file()  # sysconfig's, Debian's posix_local mapped
    assert (host.base_prefix, host.prefix) == (Path(sys.base_prefix), Path(sys.prefix))
    facts = MACHINES[host.machine]
    assert (host.elf_machine, host.elf_class, host.cuda_targets) == (
        facts.elf_machine,
        facts.elf_class,
        facts.cuda_targets,
    )


def test_a_machine_the_catalog_does_not_know_gets_plain_defaults(tmp_path: Path) -> None:
    host = Host(environ={}, machine="riscv64", python_include=tmp_path)
    assert (host.elf_machine, host.elf_class, host.cuda_targets) == ("EM_RISCV64", 64, ())
    assert host.include_dir == tmp_path


def test_where_tools_answers_are_remembered(tmp_path: Path) -> None:
    assert Host(environ={"HOME": str(tmp_path)}).answers == tmp_path / ".cache/triton-toolchain"
    xdg = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "x")}
    assert Host(environ=xdg).answers == tmp_path / "x/triton-toolchain"
    assert Host(environ={"HOME": "relative"}).answers is None
    assert Host(environ={}).answers is None
