"""Hostile corpus, round 4, digits that are not ASCII: a number read from outside (a
manifest's version, a tool's answer, a file's name, an argument) is made of ASCII
digits or is no number. ``"¹²"`` passes ``str.isdigit()`` and Unicode ``\\d`` but not
``int()``: each parser is given Unicode digits of every script (Hypothesis), and the
command line a manifest version in superscripts and a ``gcc-²`` on ``PATH``: a named
error or nothing, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile import SRC, clean_env, cli
from hypothesis import given, settings
from hypothesis import strategies as st
from tool_fixtures import REAL_GCC, fake_ptxas, write_script
from triton_layouts import Layout, run_scenario, scenario_env
from triton_toolchain.cli._main import parse_arch
from triton_toolchain.resolver._catalog import major_minor, parse_release
from triton_toolchain.resolver._discovery import _compiler, _driver, _headers, _layouts, _probe
from triton_toolchain.resolver._discovery._tools import release_in

# Every character that is not ASCII and that Unicode gives a digit value (Arabic-Indic,
# Devanagari, fullwidth, superscripts, circled...), by value.
UNICODE_DIGITS: dict[int, list[str]] = {d: [] for d in range(10)}
for _code in range(0x80, sys.maxunicode + 1):
    _value = unicodedata.digit(chr(_code), None)
    if _value is not None:
        UNICODE_DIGITS[_value].append(chr(_code))
NOT_ASCII = str.maketrans({c: "x" for chars in UNICODE_DIGITS.values() for c in chars})


def _parse_arch(text: str) -> object:
    try:
        return parse_arch(text)
    except argparse.ArgumentTypeError as refused:  # the parser's own refusal
        return str(refused).replace(text, "<text>")


def _search(pattern: str | bytes) -> Callable[[str], object]:
    def parse(text: str) -> object:
        found = re.search(pattern, text if isinstance(pattern, str) else text.encode())
        return found.groups() if found else None

    return parse


# Each parser of numbers from outside, and an ASCII text it reads a number from.
PARSERS: dict[str, tuple[Callable[[str], object], str]] = {
    "doctor --arch": (_parse_arch, "sm_90a"),
    "doctor --arch with a dot": (_parse_arch, "9.0"),
    "manifest version": (parse_release, "12.9"),
    "Triton's __version__": (major_minor, "3.9.0"),
    "ptxas --version": (release_in, "Cuda compilation tools, release 12.8, V12.8.93"),
    "cc -v": (_search(_compiler._VERSION), "gcc version 12.2.0 (Debian 12.2.0-14)"),
    "libcuda's file name": (_search(_driver._FILE_VERSION), "libcuda.so.580.95.05"),
    "/proc/driver/nvidia/version": (
        _search(_driver._KERNEL_VERSION),
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 2025",
    ),
    "cuda.h": (_search(_headers._CUDA_VERSION), "#define CUDA_VERSION 13000\n"),
    "a toolkit's directory": (lambda t: _layouts._release_key(Path(t)), "cuda-12.8"),
    "cuDriverGetVersion's answer": (_search(_probe._DRIVER_VERSION), "0 12080"),
    "the GPU's capability": (_search(_probe._ARCH_ANSWER), "0 9 0"),
}


@st.composite
def _with_unicode_digits(draw: st.DrawFn, text: str) -> str:
    """``text`` with some of its ASCII digits replaced by other scripts' digits of the
    same value, and some such digits added."""
    out = []
    for char in text:
        mine = char.isascii() and char.isdigit() and draw(st.booleans())
        out.append(draw(st.sampled_from(UNICODE_DIGITS[int(char)])) if mine else char)
        if draw(st.integers(0, 9)) == 0:
            out.append(draw(st.sampled_from(UNICODE_DIGITS[draw(st.integers(0, 9))])))
    return "".join(out)


@pytest.mark.parametrize("name", list(PARSERS))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_digits_of_other_scripts_read_as_no_digits(name: str, data: st.DataObject) -> None:
    """A parser reads the same from a text as from that text with every digit that is
    not ASCII replaced by a letter: what it reads comes from ASCII digits only, and it
    never fails where it would not fail on a letter."""
    parse, sample = PARSERS[name]
    text = data.draw(_with_unicode_digits(sample))
    assert parse(text) == parse(text.translate(NOT_ASCII)), text


def test_the_parsers_read_their_ascii_samples() -> None:
    """The control: each parser reads a number from its sample."""
    for name, (parse, sample) in PARSERS.items():
        assert parse(sample) not in (None, (0, ())), name
        assert not isinstance(parse(sample), str), name


def test_no_unicode_digit_class_or_isdigit_in_the_package() -> None:
    """Unicode ``\\d`` and ``str.isdigit()`` are not used anywhere: ``[0-9]`` says which
    digits are meant."""
    for path in (SRC / "triton_toolchain").rglob("*.py"):
        text = path.read_text()
        assert "\\d" not in text and ".isdigit()" not in text, path


# ---------------------------------------------------------------- the command line


def _superscript_manifest(tmp_path: Path) -> tuple[Path, Path]:
    """A manifest whose ptxas records version ``"¹².⁹"``, and that ptxas."""
    ptxas = fake_ptxas(tmp_path / "tools" / "ptxas", "12.9")
    manifest = tmp_path / "manifest.json"
    doc = {"schema": 2, "components": {"ptxas": {"path": str(ptxas), "version": "¹².⁹"}}}
    manifest.write_text(json.dumps(doc, ensure_ascii=False))
    return manifest, ptxas


@pytest.mark.parametrize("command", ["check-manifest", "doctor"])
def test_a_manifest_version_in_superscripts_is_named(tmp_path: Path, command: str) -> None:
    manifest, ptxas = _superscript_manifest(tmp_path)
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    args = [command, str(manifest)] if command == "check-manifest" else [command]
    done = cli(*args, env=env)
    assert "ValueError" not in done.output
    line = next(x for x in done.output.splitlines() if "¹².⁹" in x)
    assert str(ptxas) in line and "components.ptxas" in line and str(manifest) in line


def test_env_with_a_manifest_version_in_superscripts_exports_no_such_entry(
    tmp_path: Path,
) -> None:
    """``env`` takes the entry as a rejected one (``doctor`` says why): not exported."""
    manifest, ptxas = _superscript_manifest(tmp_path)
    env = clean_env(tmp_path / "home", TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    done = cli("env", "--format", "json", env=env)
    assert done.returncode in (0, 1), done.output
    assert json.loads(done.stdout).get("TRITON_PTXAS_PATH") != str(ptxas)


def test_import_triton_with_a_manifest_version_in_superscripts_is_configured(
    tmp_path: Path,
) -> None:
    manifest, ptxas = _superscript_manifest(tmp_path)
    layout = Layout(tmp_path, tmp_path / "ptxas.log")
    env = scenario_env(layout, manifest=False, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
    report = run_scenario(layout, "hook", [], env=env)
    assert "Traceback" not in report["stderr"] and "ValueError" not in report["stderr"]
    ptxas_choice = report["activation"]["toolchain"]["components"]["ptxas"]
    assert report["knobs"]["ptxas"] == ptxas_choice["path"] != str(ptxas)
    rejected = ptxas_choice["rejected"][0]
    assert rejected["path"] == str(ptxas) and "'¹².⁹' is not a CUDA release" in rejected["reason"]


@pytest.mark.parametrize("name", ["gcc-²", "gcc-١٢", "gcc-\uff11\uff12", "clang-⁹"])
def test_a_compiler_named_with_other_digits_is_passed_over(tmp_path: Path, name: str) -> None:
    """``gcc-²`` is no versioned compiler (nor is ``gcc-١٢`` a 12): where ``PATH`` has
    no plain ``cc`` and discovery comes to the ``gcc-<N>`` names, it takes the real
    ``gcc-11`` beside it."""
    bin_dir = tmp_path / "bin"
    write_script(bin_dir / name, f'#!/bin/sh\nexec {REAL_GCC} "$@"\n')
    (bin_dir / "gcc-11").symlink_to(REAL_GCC)
    env = clean_env(tmp_path / "home", PATH=str(bin_dir))
    done = cli("which", "cc", env=env)
    assert done.returncode == 0, done.output
    assert done.stdout.strip() == str(bin_dir / "gcc-11")
    doctor = cli("doctor", "--for", "torch-cpu", env=env)
    assert doctor.returncode in (0, 1), doctor.output
