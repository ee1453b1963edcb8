"""Stand-in for nixfmt (tests only): `nixfmt --check FILE...` checks the layout rules of
the standard Nix format (RFC 166) that hand-written Nix most often breaks, on the code
with its strings and comments taken out, and exits 1 naming what breaks them:

- an attribute set with more than one binding is never on one line
  (`{ a = 1; b = 2; }`);
- a list with more than one element is never on one line (`[ a b ]`);
- a function's attribute-set pattern with more than one attribute is never on one line
  (`{ lib, stdenv }:`);
- two-space indentation (no tabs), no trailing white space, a final newline.

It does not decide what the real nixfmt decides by width (where a long line breaks), nor
how it absorbs a last argument; and it does not reformat. The real nixfmt is a Haskell
program in no Debian release's archive (nor on PyPI), and nixpkgs, which builds it, is
not reachable from the test machines.
"""

from __future__ import annotations

import sys
from pathlib import Path


class _Scanner:
    """Walks Nix source, telling strings (with their interpolations) and comments from
    code."""

    def __init__(self, text: str) -> None:
        self.text, self.n = text, len(text)

    def string_end(self, i: int, *, indented: bool) -> int:
        """From just after the opening quote, the index just after the closing one."""
        text = self.text
        while i < self.n:
            if indented and text.startswith(("'''", "''$", "''\\"), i):
                i += 3
                continue
            if indented and text.startswith("''", i):
                return i + 2
            if not indented and text[i] == "\\":
                i += 2
                continue
            if not indented and text[i] == '"':
                return i + 1
            i = self.interpolation_end(i + 2) if text.startswith("${", i) else i + 1
        return i

    def interpolation_end(self, i: int) -> int:
        """Inside `${`: the index just after its closing brace."""
        depth = 0
        while i < self.n:
            c = self.text[i]
            if c == '"' or self.text.startswith("''", i):
                indented = c != '"'
                i = self.string_end(i + (2 if indented else 1), indented=indented)
                continue
            if c == "}" and depth == 0:
                return i + 1
            depth += {"{": 1, "}": -1}.get(c, 0)
            i += 1
        return i


def code_lines(text: str) -> list[str]:
    """The file's lines with comments removed and every string (its interpolations
    included) replaced by `S`, so that brackets and semicolons are the code's."""
    scan = _Scanner(text)
    out: list[str] = []
    line: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            out.append("".join(line))
            line = []
            i += 1
        elif c == "#":
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.extend([""] * text.count("\n", i, end))
            i = end
        elif c == '"' or text.startswith("''", i):
            indented = c != '"'
            start, i = i, scan.string_end(i + (2 if indented else 1), indented=indented)
            line.append("S")
            if newlines := text.count("\n", start, i):
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
                problems.append(
                    f"{number}: attribute set with {top.count(';')} bindings on one line"
                )
            if opener == "{" and "," in top and after.lstrip()[:1] in (":", "@"):
                problems.append(f"{number}: function pattern with several attributes on one line")
            if opener == "[" and len(top.split()) > 1:
                problems.append(f"{number}: list with {len(top.split())} elements on one line")
    return problems


def main(argv: list[str]) -> int:
    files = [a for a in argv if a != "--check"]
    if "--check" not in argv:
        print("stand-in nixfmt: only --check is implemented", file=sys.stderr)
        return 2
    failed = False
    for name in files:
        for problem in layout_problems(Path(name).read_text()):
            print(f"{name}:{problem}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
