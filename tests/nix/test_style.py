"""The Nix files keep the layout nixfmt (RFC 166) gives them, checked without nixfmt.

`checks.formatting` runs the real nixfmt (`nixfmt --check`) on a machine with nixpkgs.
Here no nixfmt can be had: it is a Haskell program, in no Debian release's archive (nor
on PyPI), and nixpkgs is not reachable to build it. So this test checks the rules of the
standard that hand-written Nix most often breaks, on the code with its strings and
comments taken out:

- an attribute set with more than one binding is never on one line
  (`{ a = 1; b = 2; }`);
- a list with more than one element is never on one line (`[ a b ]`);
- a function's attribute-set pattern with more than one attribute is never on one line
  (`{ lib, stdenv }:`);
- two-space indentation (no tabs), no trailing white space, a final newline.

It does not check what nixfmt decides by width (where a line breaks when it is too
long), nor how it absorbs a last argument.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NIX_FILES = sorted(
    [REPO / "flake.nix", REPO / "default.nix"]
    + list((REPO / "nix").rglob("*.nix"))
    + list((REPO / "tests" / "nix").rglob("*.nix"))
)


def code_lines(text: str) -> list[str]:
    """The file's lines with comments removed and every string (its interpolations
    included) replaced by `S`, so that brackets and semicolons are the code's."""
    out: list[str] = []
    i, n = 0, len(text)

    def skip_string(i: int, indented: bool) -> int:
        """From just after the opening quote, the index just after the closing one."""
        while i < n:
            if indented:
                if text.startswith("'''", i) or text.startswith("''$", i) or text.startswith("''\\", i):
                    i += 3
                    continue
                if text.startswith("''", i):
                    return i + 2
            else:
                if text[i] == "\\":
                    i += 2
                    continue
                if text[i] == '"':
                    return i + 1
            if text.startswith("${", i):
                i = skip_code(i + 2, "}")
                continue
            i += 1
        return i

    def skip_code(i: int, close: str) -> int:
        """Inside an interpolation: the index just after its closing brace."""
        depth = 0
        while i < n:
            c = text[i]
            if c == '"':
                i = skip_string(i + 1, indented=False)
                continue
            if text.startswith("''", i):
                i = skip_string(i + 2, indented=True)
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0:
                    return i + 1
                depth -= 1
            i += 1
        return i

    line = []
    while i < n:
        c = text[i]
        if c == "\n":
            out.append("".join(line))
            line = []
            i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.extend([""] * text.count("\n", i, end))
            i = end
        elif c == '"' or text.startswith("''", i):
            start = i
            i = skip_string(i + 1, indented=False) if c == '"' else skip_string(i + 2, indented=True)
            newlines = text.count("\n", start, i)
            line.append("S")
            if newlines:
                out.append("".join(line))
                out.extend([""] * (newlines - 1))
                line = []
        else:
            line.append(c)
            i += 1
    out.append("".join(line))
    return out


def _groups(line: str) -> list[tuple[str, str, str]]:
    """Bracketed groups opened and closed on this line: (opener, inside, after)."""
    found = []
    stack: list[int] = []
    pairs = {"}": "{", "]": "[", ")": "("}
    for i, c in enumerate(line):
        if c in "{[(":
            stack.append(i)
        elif c in pairs and stack and line[stack[-1]] == pairs[c]:
            start = stack.pop()
            found.append((line[start], line[start + 1 : i], line[i + 1 :]))
        elif c in pairs:
            stack.clear()
    return found


def _top_level(inside: str) -> str:
    """`inside` with its nested bracketed groups replaced by `G`."""
    out, depth = [], 0
    for c in inside:
        if c in "{[(":
            if depth == 0:
                out.append("G")
            depth += 1
        elif c in "}])":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def layout_problems(text: str) -> list[str]:
    problems = []
    raw = text.split("\n")
    if not text.endswith("\n"):
        problems.append("no final newline")
    for number, line in enumerate(raw, 1):
        if "\t" in line:
            problems.append(f"{number}: tab")
        if line != line.rstrip():
            problems.append(f"{number}: trailing white space")
    for number, line in enumerate(code_lines(text), 1):
        for opener, inside, after in _groups(line):
            top = _top_level(inside)
            if opener == "{" and top.count(";") > 1:
                problems.append(f"{number}: attribute set with {top.count(';')} bindings on one line")
            if opener == "{" and "," in top and after.lstrip()[:1] in (":", "@"):
                problems.append(f"{number}: function pattern with several attributes on one line")
            if opener == "[" and len(top.split()) > 1:
                problems.append(f"{number}: list with {len(top.split())} elements on one line")
    return problems


def test_checker_sees_the_rules() -> None:
    """The checker itself, on code that breaks each rule once, and on code that does not."""
    bad = 'x = { a = 1; b = "c; d;"; };\ny = [ a (f b) ];\nf = { lib, stdenv }: 1;\n'
    assert layout_problems(bad) == [
        "1: attribute set with 2 bindings on one line",
        "2: list with 2 elements on one line",
        "3: function pattern with several attributes on one line",
    ]
    good = (
        "{ lib }:\n# { a = 1; b = 2; }\nx = {\n  a = 1;\n  b = 2;\n};\n"
        'y = [ (f a b) ];\nz = "[ a b ]";\nw = \'\'\n  { a = 1; b = ${"x"}; }\n\'\';\n'
        "v = { inherit (a) b c; };\n"
    )
    assert layout_problems(good) == []


def test_nix_files_keep_nixfmt_layout() -> None:
    assert len(NIX_FILES) >= 15
    problems = {
        str(f.relative_to(REPO)): p for f in NIX_FILES if (p := layout_problems(f.read_text()))
    }
    assert problems == {}
