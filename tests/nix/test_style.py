"""The Nix files keep the layout nixfmt (RFC 166) gives them.

`checks.formatting` runs nixfmt --check; against the stand-in nixpkgs that is
./nixpkgs/nixfmt.py, which checks the rules of the standard that hand-written Nix most
often breaks (its docstring says which, and why not the real nixfmt). These tests run
that checker directly: on code that breaks each rule, and on every Nix file here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NIX_FILES = sorted(
    [
        REPO / "flake.nix",
        REPO / "default.nix",
        *(REPO / "nix").rglob("*.nix"),
        *(REPO / "tests" / "nix").rglob("*.nix"),
    ]
)
_spec = importlib.util.spec_from_file_location(
    "nixfmt_standin", Path(__file__).parent / "nixpkgs/nixfmt.py"
)
assert _spec and _spec.loader
nixfmt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nixfmt)


def test_checker_sees_the_rules() -> None:
    """The checker itself, on code that breaks each rule once, and on code that does not."""
    bad = 'x = { a = 1; b = "c; d;"; };\ny = [ a (f b) ];\nf = { lib, stdenv }: 1;\n'
    assert nixfmt.layout_problems(bad) == [
        "1: attribute set with 2 bindings on one line",
        "2: list with 2 elements on one line",
        "3: function pattern with several attributes on one line",
    ]
    good = (
        "{ lib }:\n# { a = 1; b = 2; }\nx = {\n  a = 1;\n  b = 2;\n};\n"
        "y = [ (f a b) ];\nz = \"[ a b ]\";\nw = ''\n  { a = 1; b = ${\"x\"}; }\n'';\n"
        "v = { inherit (a) b c; };\n"
    )
    assert nixfmt.layout_problems(good) == []


def test_nix_files_keep_nixfmt_layout() -> None:
    assert len(NIX_FILES) >= 15
    problems = {
        str(f.relative_to(REPO)): p
        for f in NIX_FILES
        if (p := nixfmt.layout_problems(f.read_text()))
    }
    assert problems == {}
