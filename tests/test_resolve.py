"""resolve(): explicit settings, then a manifest, then discovery, on a complete fake
machine built from real files; errors name the setting; the environment export."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from elf_fixtures import install_driver, install_stub, kernel_module
from tool_fixtures import (
    cuda_include,
    fake_compiler,
    fake_host,
    fake_ptxas,
    libdevice,
    python_include,
)
from triton_toolchain import (
    ManifestError,
    MissingComponentError,
    SettingError,
    SourceKind,
    resolve,
)
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._exports import merged_env, toolchain_env
from triton_toolchain.resolver._manifest import load
from triton_toolchain.resolver._resolve import judge_manifest, resolve_all


def machine(root: Path, *, ptxas: str = "12.8", blackwell: str = "12.9") -> dict[str, Path]:
    """A whole machine under ``root``: Triton's package with its bundled tools and
    headers, gcc on PATH, this Python's headers, the driver in the multiarch dir."""
    triton = root / "site/triton"
    nv = triton / "backends/nvidia"
    log = root / "runs.log"
    fake_ptxas(nv / "bin", ptxas, log=log)
    fake_ptxas(nv / "bin", blackwell, name="ptxas-blackwell", log=log)
    cuda_include(nv / "include")
    libdevice(nv / "lib")
    fake_compiler(root / "usr/bin/gcc", target="x86_64-linux-gnu", log=log)
    python_include(root / "py/include/python3.11")
    driver = install_driver(root / "usr/lib/x86_64-linux-gnu")
    kernel_module(root)
    return {"triton": triton, "log": log, "driver": driver, "bin": root / "usr/bin"}


def host_of(root: Path, paths: dict[str, Path], **env: str) -> Host:
    return fake_host(root, {"PATH": str(paths["bin"]), **env}, triton_dir=paths["triton"])


def test_discovery_finds_every_component_and_says_where(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    tc = resolve(90, host=host_of(tmp_path, paths))
    assert tc.missing() == ()
    assert tc["ptxas"].version == "12.8"
    assert tc["ptxas-blackwell"].version == "12.9"
    assert tc["ptxas"].source is not None and tc["ptxas"].source.kind is SourceKind.BUNDLED
    assert tc["cc"].path == str(paths["bin"] / "gcc")
    assert tc["libcuda"].path is not None
    assert Path(tc["libcuda"].path).resolve() == paths["driver"].resolve()
    assert tc["libcuda-link"].path == str(paths["driver"].parent)
    assert tc.manifest is None


def test_explicit_setting_wins_and_is_reported_as_env(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    mine = fake_ptxas(tmp_path / "opt/bin", "12.4")
    host = host_of(tmp_path, paths, TRITON_PTXAS_PATH=str(mine))
    tc = resolve(90, host=host)
    assert tc["ptxas"].path == str(mine)
    assert str(tc["ptxas"].source) == "env:TRITON_PTXAS_PATH"
    # Setting only TRITON_PTXAS_PATH is noted where the release runs ptxas-blackwell on
    # sm_90 (3.9), not where TRITON_PTXAS_PATH is what runs there (3.6).
    switch = host.triton.blackwell_from if host.triton else None
    noted = any("TRITON_PTXAS_BLACKWELL_PATH" in note for note in tc.notes)
    assert noted == (switch is not None and switch <= 90), (switch, tc.notes)


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("TRITON_PTXAS_PATH", "/nonexistent/ptxas", "does not exist"),
        ("TRITON_PTXAS_PATH", "@old", "release 11.4 cannot assemble sm_90a"),
        ("TRITON_PTXAS_BLACKWELL_PATH", "@dir", "directory"),
        ("TRITON_LIBDEVICE_PATH", "@text", "bitcode"),
        ("TRITON_CUDART_PATH", "/nonexistent", "does not exist"),
        ("CC", "/nonexistent/cc", "does not exist"),
        ("CC", "no-such-compiler", "PATH"),
        ("TRITON_LIBCUDA_PATH", "/nonexistent", "TRITON_LIBCUDA_PATH"),
    ],
)
def test_invalid_explicit_setting_raises_naming_the_variable(
    tmp_path: Path, variable: str, value: str, words: str
) -> None:
    paths = machine(tmp_path)
    text = tmp_path / "notes.txt"
    text.write_text("not bitcode\n")
    value = {
        "@old": str(fake_ptxas(tmp_path / "old/bin", "11.4")),
        "@dir": str(tmp_path),
        "@text": str(text),
    }.get(value, value)
    with pytest.raises(SettingError) as info:
        resolve(90, host=host_of(tmp_path, paths, **{variable: value}))
    message = str(info.value)
    assert variable in message
    assert words in message
    assert "fix" in message


def _manifest(tmp_path: Path, doc: dict[str, object]) -> Path:
    file = tmp_path / "manifest.json"
    file.write_text(json.dumps({"schema": 1, **doc}))
    return file


def test_manifest_entry_is_used_with_its_recorded_version_and_runs_nothing(
    tmp_path: Path,
) -> None:
    paths = machine(tmp_path)
    log = tmp_path / "store.log"
    store_ptxas = fake_ptxas(tmp_path / "store/bin", "12.8", log=log)
    file = _manifest(
        tmp_path,
        {
            "components": {
                "ptxas": {"path": str(store_ptxas), "version": "12.8"},
                "ptxas-blackwell": {"path": str(store_ptxas), "version": "12.8"},
            }
        },
    )
    tc = resolve(90, host=host_of(tmp_path, paths, TRITON_TOOLCHAIN_MANIFEST=str(file)))
    for name in ("ptxas", "ptxas-blackwell"):
        assert tc[name].path == str(store_ptxas)
        assert str(tc[name].source) == f"manifest:{file}"
        assert tc[name].version == "12.8"
    assert not log.exists(), "a recorded version must not run the tool"
    assert tc.manifest == str(file)


def test_rejected_manifest_entry_falls_back_to_discovery_unless_strict(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    other = python_include(tmp_path / "store/include/python3.12", "3.12.9")
    doc: dict[str, object] = {"components": {"python-headers": {"path": str(other)}}}
    file = _manifest(tmp_path, doc)
    host = host_of(tmp_path, paths, TRITON_TOOLCHAIN_MANIFEST=str(file))
    tc = resolve(host=host)
    choice = tc["python-headers"]
    assert choice.path == str(tmp_path / "py/include/python3.11")
    assert choice.rejected[0].path == str(other)
    assert "3.12" in choice.rejected[0].reason and "3.11" in choice.rejected[0].reason
    assert choice.rejected[0].source.kind is SourceKind.MANIFEST

    _manifest(tmp_path, {**doc, "strict": True})
    strict = resolve(host=host)
    assert strict["python-headers"].path is None
    assert strict.strict
    # strict: components the manifest does not name are missing too, not discovered.
    assert strict["ptxas"].path is None
    with pytest.raises(MissingComponentError) as info:
        strict.require("python-headers")
    message = str(info.value)
    assert "strict" in message and "3.12" in message and "fix:" in message


def test_malformed_manifest_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    file = tmp_path / "manifest.json"
    file.write_text('{"schema": 1, "components": {"ptxas": {"path": "ptxas"}}}')
    with pytest.raises(ManifestError, match=r"components\.ptxas\.path.*absolute"):
        resolve(host=host_of(tmp_path, paths, TRITON_TOOLCHAIN_MANIFEST=str(file)))


def test_manifest_driver_dirs_empty_off_nixos_fall_back_to_the_hosts_driver(
    tmp_path: Path,
) -> None:
    paths = machine(tmp_path)
    stub_dir = install_stub(tmp_path / "store/stubs/lib/stubs").parent
    file = _manifest(
        tmp_path,
        {
            "driver_dirs": [str(tmp_path / "run/opengl-driver/lib")],
            "components": {"libcuda-link": {"path": str(stub_dir)}},
        },
    )
    tc = resolve(host=host_of(tmp_path, paths, TRITON_TOOLCHAIN_MANIFEST=str(file)))
    assert tc["libcuda"].path is not None
    assert Path(tc["libcuda"].path).resolve() == paths["driver"].resolve()
    assert tc["libcuda"].notes, "doctor must say the manifest's driver dirs were empty"


@pytest.mark.parametrize("arch", [0, 91, "90", True, -1])
def test_unknown_architecture_is_a_setting_error(tmp_path: Path, arch: object) -> None:
    with pytest.raises(SettingError, match="compute capability"):
        resolve(arch, host=fake_host(tmp_path))  # type: ignore[arg-type]


def test_too_old_bundled_ptxas_is_rejected_and_a_newer_one_chosen(tmp_path: Path) -> None:
    paths = machine(tmp_path, ptxas="11.4", blackwell="11.4")
    fake_ptxas(tmp_path / "usr/local/cuda/bin", "12.8")
    tc = resolve(90, host=host_of(tmp_path, paths))
    assert tc["ptxas"].path == str(tmp_path / "usr/local/cuda/bin/ptxas")
    bundled = tc["ptxas"].rejected[0]
    assert bundled.source.kind is SourceKind.BUNDLED
    assert "release 11.4 cannot assemble sm_90a, needs 12.0" in bundled.reason


def test_environment_export_never_overrides_the_user(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    tc = resolve(90, host=host_of(tmp_path, paths))
    env = toolchain_env(tc)
    assert env["TRITON_PTXAS_BLACKWELL_PATH"].endswith("ptxas-blackwell")
    assert env["TRITON_LIBCUDA_PATH"] == str(paths["driver"].parent)
    assert env["CC"] == str(paths["bin"] / "gcc")
    assert "TRITON_TOOLCHAIN_MANIFEST" not in env
    merged = merged_env(tc, {"CC": "/opt/my/cc", "TRITON_PTXAS_PATH": ""})
    assert merged["CC"] == "/opt/my/cc"
    assert merged["TRITON_PTXAS_PATH"] == env["TRITON_PTXAS_PATH"]


def test_link_dir_stands_in_for_the_driver_in_the_export_when_there_is_no_driver(
    tmp_path: Path,
) -> None:
    paths = machine(tmp_path)
    for f in paths["driver"].parent.glob("libcuda*"):
        f.unlink()
    conda = tmp_path / "conda"
    install_stub(conda / "lib/stubs")
    tc = resolve(host=host_of(tmp_path, paths, CONDA_PREFIX=str(conda)))
    assert tc["libcuda"].path is None
    assert tc["libcuda-link"].path == str(conda / "lib/stubs")
    assert toolchain_env(tc)["TRITON_LIBCUDA_PATH"] == str(conda / "lib/stubs")
    assert [c.component for c in tc.missing()] == ["libcuda"]
    assert tc.missing("compile") == ()
    # What `triton-toolchain run` and `env` export resolves again in the child, under
    # the source it came from in the parent (not as the user's setting).
    again = resolve(host=host_of(tmp_path, paths, **toolchain_env(tc)))
    assert again["libcuda-link"].path == str(conda / "lib/stubs")
    assert str(again["libcuda-link"].source) == "discovered:CONDA_PREFIX"
    assert str(again["ptxas"].source) == str(tc["ptxas"].source)
    assert [c.component for c in again.missing()] == ["libcuda"]


def test_this_machine_resolves_without_error() -> None:
    tc = resolve()
    # This interpreter's headers are where sysconfig says (the README's set-up has them).
    assert tc["python-headers"].path is not None
    assert tc["python-headers"].version is not None
    assert tc["python-headers"].version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert json.loads(json.dumps(tc.to_dict()))["components"].keys() == tc.choices.keys()


def test_judge_manifest_is_the_cascades_verdict_on_every_entry(tmp_path: Path) -> None:
    """``judge_manifest`` (what check-manifest and doctor print) rejects what the cascade
    rejects, for the same reason, under the manifest's key; a driver directory without a
    driver has no verdict, one with a driver that does not fit is rejected."""
    paths = machine(tmp_path)
    old = fake_ptxas(tmp_path / "old/bin", "11.4")
    i386 = install_driver(tmp_path / "i386", variant="i386")
    file = _manifest(
        tmp_path,
        {
            "driver_dirs": [str(tmp_path / "run/opengl-driver/lib"), str(i386.parent)],
            "components": {"ptxas": {"path": str(old)}, "cc": {"path": str(paths["bin"] / "gcc")}},
        },
    )
    # Every fact checked (check-manifest's and doctor's host): an ELF32 driver is no fit.
    host = host_of(tmp_path, paths, TRITON_TOOLCHAIN_MANIFEST=str(file)).replace(verify=True)
    verdicts = judge_manifest(load(file), host, 90)
    seen = {(v.key, str(v.path)): v.verdict.problem for v in verdicts}
    assert set(seen) == {
        ("components.cc", str(paths["bin"] / "gcc")),
        ("components.ptxas", str(old)),
        ("driver_dirs[1]", str(i386)),
    }
    assert seen[("components.cc", str(paths["bin"] / "gcc"))] is None
    tc = resolve_all(90, host=host)
    for name, key, path in (
        ("ptxas", "components.ptxas", old),
        ("libcuda", "driver_dirs[1]", i386),
    ):
        (rejection,) = [r for r in tc[name].rejected if r.path == str(path)]
        assert rejection.source.kind is SourceKind.MANIFEST
        assert seen[(key, str(path))] == rejection.reason
