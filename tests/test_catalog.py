"""Every row of the catalog, checked: its fields agree with each other, with the locators,
the manifest schema and the goals, and, where a real tool or Triton can say, with them
(the architecture table against real ptxas releases; the Triton release table against
the installed Triton's own ``get_ptxas`` and knobs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import triton_toolchain
from tool_fixtures import REAL_CUDA
from triton_layouts import nvidia_dir
from triton_toolchain.cli._report import _read_version
from triton_toolchain.resolver._catalog import (
    ARCH_RELEASES,
    CATALOG,
    COMPONENT,
    COMPONENTS,
    GOALS,
    MACHINES,
    TRITON_RELEASES,
    arch_name,
    arch_problem,
    assigned_version,
    exported_variables,
    major_minor,
    parse_release,
    triple_machine,
    wrapper_variables,
)
from triton_toolchain.resolver._discovery import (
    LOCATORS,
    _compiler,
    _cudahome,
    _driver,
    _headers,
    _hip,
    _openmp,
    _tools,
)
from triton_toolchain.resolver._discovery._host import triton_version
from triton_toolchain.resolver._guards import imported_triton_version
from triton_toolchain.resolver._manifest import SCHEMA, SCHEMAS


@pytest.mark.parametrize("spec", CATALOG, ids=lambda c: c.name)
def test_every_component_row_is_consistent(spec: object) -> None:
    c = COMPONENT[spec.name]  # type: ignore[attr-defined]
    assert c is spec
    assert c.name in LOCATORS, "every component has a locator"
    assert c.what and c.fix and not c.what.endswith(".")
    assert c.used_by in ("compile", "build", "inductor", "extension")
    assert c.schema in SCHEMAS and c.schema <= SCHEMA
    assert c.in_manifest == (c.kind != "driver")
    if c.exported:
        assert c.variable is not None and not c.variable_names_dir
    if c.variable_names_dir:
        assert c.kind == "driver"
    if c.also_read:
        assert c.variable is not None and c.variable not in c.also_read
    if c.serves is not None or c.always_assembles:
        assert c.area == "bin" and c.kind == "tool"
    assert all(a in ARCH_RELEASES for a in c.always_assembles)
    if c.area is not None:
        assert c.names, "a layout area needs the names looked for"
    if c.knob is not None:
        assert c.variable is not None, "a knob stands for Triton's variable"
    if c.variable is not None:
        assert c.variable == c.variable.upper() and " " not in c.variable


def test_locators_and_components_are_the_same_set() -> None:
    assert set(LOCATORS) == set(COMPONENT)
    assert len(CATALOG) == len(COMPONENT)
    # The default rows are every row but another backend's (the AMD one's are resolved
    # where that backend is asked for).
    assert [c for c in CATALOG if c.backend in (None, "nvidia")] == list(COMPONENTS)


def test_each_locator_is_in_exactly_one_module() -> None:
    """``_discovery.LOCATORS`` joins the locator modules' tables: every component's
    locator is the one its module defines, and no two modules define one component."""
    tables = [_compiler, _cudahome, _driver, _headers, _hip, _openmp, _tools]
    names = [name for module in tables for name in module.LOCATORS]
    assert sorted(names) == sorted(COMPONENT)
    for module in tables:
        for name, locator in module.LOCATORS.items():
            assert LOCATORS[name] is locator, (module.__name__, name)


def test_the_link_directory_follows_the_driver() -> None:
    names = [c.name for c in COMPONENTS]
    assert names.index("libcuda") < names.index("libcuda-link")
    assert names.index("cxx") < names.index("openmp")


def test_goals_name_components() -> None:
    for goal in GOALS.values():
        for step in goal.steps:
            assert step.components, goal
            assert set(step.components) <= set(COMPONENT)


def test_exported_variables_are_one_variable_each() -> None:
    exported = exported_variables()
    assert len(set(exported.values())) == len(exported)
    assert exported["cc"] == "CC" and exported["ptxas"] == "TRITON_PTXAS_PATH"


def test_the_nix_wrappers_variables_json_is_generated_from_the_catalog() -> None:
    """``variables.json``, which ``nix/wrap.nix`` reads (``tritonVariables``,
    ``sameSettingAs``), is ``wrapper_variables()`` exactly. To regenerate it::

        python -c 'import json
        from triton_toolchain.resolver._catalog import wrapper_variables as w
        print(json.dumps(w(), indent=2))' > python/src/triton_toolchain/variables.json
    """
    path = Path(triton_toolchain.__file__).with_name("variables.json")  # the package's top
    assert path.read_text() == json.dumps(wrapper_variables(), indent=2) + "\n"
    table = json.loads(path.read_text())
    assert table["exported"] == exported_variables()
    assert table["also_read"] == {"CUDA_HOME": ["CUDA_PATH"]}


@pytest.mark.parametrize("machine", MACHINES)
def test_every_machine_row(machine: str) -> None:
    facts = MACHINES[machine]
    assert facts.elf_machine.startswith("EM_") and facts.elf_class in (32, 64)
    assert facts.ld_cache_flags & 0xFF == 0x03  # libc6
    assert facts.multiarch.endswith("-linux-gnu")
    for first in facts.triples:
        assert triple_machine(f"{first}-unknown-linux-gnu") == machine


def test_architecture_rows_are_ordered_and_bounded() -> None:
    assert list(ARCH_RELEASES) == sorted(ARCH_RELEASES)
    for arch, (first, last) in ARCH_RELEASES.items():
        assert last is None or first <= last, arch
        assert arch_name(arch) == (f"sm_{arch}a" if arch >= 90 else f"sm_{arch}")


PTX = """.version {ptx}
.target {target}
.address_size 64
.visible .entry k() {{ ret; }}
"""
# The PTX ISA version of each CUDA release's ptxas (the newest it reads).
PTX_ISA = {(12, 8): "8.7", (12, 9): "8.8", (13, 0): "9.0", (13, 1): "9.1", (13, 4): "9.4"}


def _ptxas_releases() -> dict[str, Path]:
    """Real ptxas binaries on this machine, by release: the CUDA toolkit's and Triton's."""
    found = {}
    for path in (
        REAL_CUDA / "bin/ptxas",
        nvidia_dir() / "bin/ptxas",
        nvidia_dir() / "bin/ptxas-blackwell",
    ):
        if path.exists():
            out = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, check=True
            ).stdout
            release = out.split("release ")[1].split(",")[0]
            found[release] = path
    assert found, "no real ptxas (the README's set-up installs the CUDA toolkit and Triton)"
    return found


@pytest.mark.network  # a real ptxas release from PyPI
def test_the_architecture_table_agrees_with_real_ptxas(tmp_path: Path) -> None:
    """For every architecture of the table and every real ptxas here, the table says it
    can assemble exactly when that ptxas does."""
    for release, ptxas in _ptxas_releases().items():
        parsed = parse_release(release)
        assert parsed is not None
        ptx = PTX_ISA.get(parsed)
        if ptx is None:
            continue
        for arch in ARCH_RELEASES:
            source = tmp_path / f"k-{arch}.ptx"
            source.write_text(PTX.format(ptx=ptx, target=arch_name(arch)))
            done = subprocess.run(
                [str(ptxas), f"--gpu-name={arch_name(arch)}", str(source), "-o", os.devnull],
                capture_output=True,
                text=True,
                check=False,
            )
            table = arch_problem(arch, release) is None
            assert (done.returncode == 0) == table, (release, arch, done.stderr[-300:])


def test_triton_release_rows_are_ordered() -> None:
    firsts = [r.first for r in TRITON_RELEASES]
    assert firsts == sorted(firsts)
    for row in TRITON_RELEASES:
        assert (row.blackwell_from is None) == (row.blackwell_variable is None)


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("__version__ = '3.9.0'", "3.9.0"),
        ('__version__: str = "3.9.0"', "3.9.0"),
        ('__version__ = "3.10.0+git1a2b3c4"', "3.10.0+git1a2b3c4"),
    ],
)
def test_tritons_version_is_read_one_way_from_its_file_and_its_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, version: str
) -> None:
    """Discovery (``triton_version``), doctor (``Installed``) and the guards (the
    imported module's ``__version__``) read the same version, annotated or not."""
    (tmp_path / "__init__.py").write_text(f'"""Triton."""\nimport os\n{line}\n')
    wanted = major_minor(version)
    assert wanted is not None and assigned_version(line) == version
    assert triton_version(tmp_path) == wanted
    assert _read_version(tmp_path / "__init__.py") == version
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(__version__=version))
    assert imported_triton_version() == wanted


def test_major_minor_needs_two_numbers() -> None:
    assert major_minor("3.9") == (3, 9)
    assert major_minor("3.9rc1") == (3, 9)
    assert major_minor("3") is None
    assert major_minor("v3.9") is None
    assert major_minor("") is None
