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
    long_call = "  x = f " + " ".join(["argument"] * 11) + ";\n"
    bad = (
        'x = { a = 1; b = "c; d;"; };\ny = [ a (f b) ];\nf = { lib, stdenv }: 1;\n'
        "g = { pkgs ? null }: 1;\n" + long_call + "\th = 1;  \n"
    )
    assert nixfmt.layout_problems(bad) == [
        "1: attribute set with 2 bindings on one line",
        "2: list with 2 elements on one line",
        "3: function pattern on one line",
        "4: function pattern on one line",
        f"5: {len(long_call) - 1} columns, more than 100",
        "6: tab",
        "6: trailing white space",
    ]
    long_string = '"' + "word " * 25 + '"'
    good = (
        "{ lib, ... }:\n# { a = 1; b = 2; }\nx = {\n  a = 1;\n  b = 2;\n};\n"
        "y = [ (f a b) ];\nz = \"[ a b ]\";\nw = ''\n  { a = 1; b = ${\"x\"}; }\n'';\n"
        "v = { inherit (a) b c; };\nu = { ... }: { x }: args@{ y, ... }: 1;\n"
        # Long, but not for nixfmt to break: a comment, a bound string, a string that
        # is a function's one argument, a line inside a string; tabs and trailing
        # spaces inside strings are the string's.
        f"# {'comment ' * 13}x\nmessage = {long_string};\n  throw {long_string}\n"
        f"text = ''\n  {'word ' * 25}\n\tindented  \n'';\n"
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
