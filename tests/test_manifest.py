"""Manifest schemas 1 and 2: strict validation with errors that name the file, the field and
the fix; lookup order; and `lock` writing one that reads back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tool_fixtures import fake_ptxas
from triton_toolchain import Host, ManifestError, SettingError
from triton_toolchain.resolver._manifest import find, load, search_locations, to_json


def _write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "cuda.h").write_text("#define CUDA_VERSION 12080\n")
    bc = tmp_path / "libdevice.10.bc"
    bc.write_bytes(b"BC\xc0\xde" + b"\0" * 16)
    return {"ptxas": fake_ptxas(tmp_path / "bin", "12.8"), "include": inc, "libdevice": bc}


def test_valid_manifest_loads_every_field(tmp_path: Path, tree: dict[str, Path]) -> None:
    file = _write(
        tmp_path / "m.json",
        {
            "schema": 1,
            "generator": "test",
            "strict": True,
            "driver_dirs": ["/run/opengl-driver/lib"],
            "components": {
                "ptxas": {"path": str(tree["ptxas"]), "version": "12.8"},
                "cuda-headers": {"path": str(tree["include"])},
                "libdevice": {"path": str(tree["libdevice"])},
            },
        },
    )
    m = load(file)
    assert m.strict is True
    assert m.generator == "test"
    assert m.driver_dirs == (Path("/run/opengl-driver/lib"),)
    assert m.components["ptxas"].path == tree["ptxas"]
    assert m.components["ptxas"].version == "12.8"
    assert m.components["cuda-headers"].version is None


@pytest.mark.parametrize(
    ("doc", "field", "fix"),
    [
        ("{not json", "line 1, column 2", "fix the file"),
        ([1, 2], "(top level)", "JSON object"),
        ({"schema": 3, "components": {}}, "schema", "reads schemas 1 and 2"),
        ({"components": {}}, "schema", "reads schemas 1 and 2"),
        (
            {"schema": 1, "components": {"cxx": {"path": "/usr/bin/g++"}}},
            "components.cxx",
            "arrived in schema 2",
        ),
        ({"schema": "1", "components": {}}, "schema", "JSON integer"),
        ({"schema": True, "components": {}}, "schema", "JSON integer"),
        ({"schema": 1}, "components", "add"),
        ({"schema": 1, "components": {}, "colour": "red"}, "colour", "the schema knows"),
        ({"schema": 1, "components": {}, "strict": "yes"}, "strict", "JSON boolean"),
        ({"schema": 1, "components": {}, "driver_dirs": "/x"}, "driver_dirs", "JSON array"),
        ({"schema": 1, "components": {}, "driver_dirs": ["lib"]}, "driver_dirs[0]", "absolute"),
        ({"schema": 1, "components": {}, "driver_dirs": [3]}, "driver_dirs[0]", "strings"),
        (
            {"schema": 1, "components": {"ptxsa": {"path": "/x"}}},
            "components.ptxsa",
            "schema 1 knows",
        ),
        (
            {"schema": 1, "components": {"libcuda": {"path": "/x"}}},
            "components.libcuda",
            "driver_dirs",
        ),
        ({"schema": 1, "components": {"ptxas": "/x"}}, "components.ptxas", "object"),
        ({"schema": 1, "components": {"ptxas": {}}}, "components.ptxas", "has no path"),
        (
            {"schema": 1, "components": {"ptxas": {"path": "bin/ptxas"}}},
            "components.ptxas.path",
            "absolute",
        ),
        (
            {"schema": 1, "components": {"ptxas": {"path": "/nonexistent/ptxas"}}},
            "components.ptxas.path",
            "regenerate",
        ),
        (
            {"schema": 1, "components": {"ptxas": {"path": "/usr/bin", "version": "12.8"}}},
            "components.ptxas.path",
            "file itself",
        ),
        (
            {"schema": 1, "components": {"ptxas": {"path": "@plain"}}},
            "components.ptxas.path",
            "executable",
        ),
        (
            {"schema": 1, "components": {"cuda-headers": {"path": "@plain"}}},
            "components.cuda-headers.path",
            "directory",
        ),
        (
            {"schema": 1, "components": {"ptxas": {"path": "/usr/bin/env", "version": 12.8}}},
            "components.ptxas.version",
            "JSON string",
        ),
        (
            {"schema": 1, "components": {"ptxas": {"path": "/usr/bin/env", "sha": "x"}}},
            "components.ptxas.sha",
            "knows path, version",
        ),
    ],
)
def test_bad_manifest_names_file_field_and_fix(
    tmp_path: Path, doc: object, field: str, fix: str
) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program\n")
    if not isinstance(doc, str):
        doc = json.loads(json.dumps(doc).replace('"@plain"', json.dumps(str(plain))))
    file = _write(tmp_path / "bad.json", doc)
    with pytest.raises(ManifestError) as info:
        load(file)
    message = str(info.value)
    assert str(file) in message
    assert field in message
    assert fix in message


def test_symlink_loop_is_a_manifest_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    file = _write(tmp_path / "m.json", {"schema": 1, "components": {"ptxas": {"path": str(loop)}}})
    with pytest.raises(ManifestError, match=r"components\.ptxas\.path.*loop"):
        load(file)


def test_unreadable_manifest_is_a_manifest_error(tmp_path: Path) -> None:
    file = tmp_path / "bin.json"
    file.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ManifestError, match="not UTF-8 text"):
        load(file)


def test_variable_wins_and_must_name_an_existing_absolute_file(tmp_path: Path) -> None:
    etc = tmp_path / "etc" / "triton-toolchain"
    etc.mkdir(parents=True)
    system = _write(etc / "manifest.json", {"schema": 1, "components": {}})
    mine = _write(tmp_path / "mine.json", {"schema": 1, "components": {}})
    host = Host(root=tmp_path, environ={"HOME": str(tmp_path / "home")}, prefix=tmp_path / "prefix")
    assert find(host) == system
    assert find(Host(root=tmp_path, environ={"TRITON_TOOLCHAIN_MANIFEST": str(mine)})) == mine
    for bad in ("relative.json", str(tmp_path / "absent.json")):
        with pytest.raises(SettingError, match="TRITON_TOOLCHAIN_MANIFEST"):
            find(Host(root=tmp_path, environ={"TRITON_TOOLCHAIN_MANIFEST": bad}))


def test_lookup_order_prefix_then_user_then_etc(tmp_path: Path) -> None:
    host = Host(
        root=tmp_path,
        environ={"XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        prefix=tmp_path / "venv",
    )
    places = search_locations(host)
    assert places[0].name == "manifest.json" and places[0].parent.name == "triton_toolchain"
    assert places[1:] == (
        tmp_path / "venv/share/triton-toolchain/manifest.json",
        tmp_path / "cfg/triton-toolchain/manifest.json",
        tmp_path / "etc/triton-toolchain/manifest.json",
    )
    for place in reversed(places[1:]):
        place.parent.mkdir(parents=True, exist_ok=True)
        _write(place, {"schema": 1, "components": {}})
        assert find(host) == place
    # A relative XDG_CONFIG_HOME is ignored in favour of $HOME/.config.
    home = Host(root=tmp_path, environ={"XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"})
    assert Path("/home/u/.config/triton-toolchain/manifest.json") in search_locations(home)


def test_to_json_round_trips(tmp_path: Path, tree: dict[str, Path]) -> None:
    text = to_json(
        {"ptxas": (str(tree["ptxas"]), "12.8"), "libdevice": (str(tree["libdevice"]), None)},
        driver_dirs=("/usr/lib/x86_64-linux-gnu",),
        strict=True,
    )
    m = load(_write(tmp_path / "m.json", text))
    assert m.strict and m.components["ptxas"].version == "12.8"
    assert m.components["libdevice"].path == tree["libdevice"]
    assert m.driver_dirs == (Path("/usr/lib/x86_64-linux-gnu"),)
    assert os.path.isabs(str(m.file))


def test_nul_character_in_a_path_is_a_manifest_error(tmp_path: Path) -> None:
    doc = {"schema": 1, "components": {"cc": {"path": "/usr/bin/\u0000gcc"}}}
    file = _write(tmp_path / "m.json", doc)
    with pytest.raises(ManifestError, match=r"components\.cc\.path.*NUL character"):
        load(file)
    doc = {"schema": 1, "driver_dirs": ["/run/\u0000lib"], "components": {}}
    with pytest.raises(ManifestError, match=r"driver_dirs\[0\].*NUL character"):
        load(_write(tmp_path / "m.json", doc))
