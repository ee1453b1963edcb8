"""Stand-in for nixfmt (tests only): `nixfmt --check FILE...` checks rules of the standard
Nix format (RFC 166) as nixfmt 1.x applies them, on the code with its strings and
comments masked (their text is never reformatted), and exits 1 naming what breaks them:

- width: no line of code is longer than 100 columns (nixfmt's default `--width`),
  unless what makes it long cannot be broken: a comment, or a string that stands
  alone, is bound (`name = "…";`) or is the one argument of a function (`throw "…"`);
- an attribute set with more than one binding is never on one line
  (`{ a = 1; b = 2; }`);
- a list with more than one element is never on one line (`[ a b ]`);
- a function's attribute-set pattern is on one line only when it has one attribute
  without a default, with or without `...` (`{ lib }:`, `{ lib, ... }:`, `{ ... }:`);
  otherwise each attribute has its line (`{ lib, stdenv }:`, `{ pkgs ? null }:`);
- two-space indentation (no tabs) and no trailing white space outside strings, a final
  newline.

It does not decide where nixfmt breaks a long line, nor how it absorbs a last argument,
and it does not reformat. The real nixfmt is a Haskell program in no Debian release's
archive (nor on PyPI), and nixpkgs, which builds it, is not reachable from the test
machines.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

WIDTH = 100
# What a string's characters (newlines excepted) become in the masked text: a character
# that Nix code cannot contain outside strings and comments.
STRING = "`"
# A long line nixfmt leaves long: a string alone, bound to a name, or the one argument
# of a function, with what closes the line after it.
_ATTR = rf"(?:[A-Za-z_][\w'-]*|{STRING}+)"
_UNBREAKABLE = re.compile(
    rf"(?:{_ATTR}(?:\.{_ATTR})*\s*=\s*|[A-Za-z_][\w'.-]*\s+)?{STRING}+\s*[;,)\]}}]*"
)


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


def masked(text: str) -> str:
    """The file with every string (its interpolations included) masked by STRING and
    every comment by spaces, newlines kept: each character keeps its line and column,
    and brackets, semicolons and commas are the code's."""
    scan = _Scanner(text)
    out: list[str] = []
    i, n = 0, len(text)

    def mask(start: int, end: int, by: str) -> None:
        out.append("".join("\n" if c == "\n" else by for c in text[start:end]))

    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            mask(i, end, " ")
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            mask(i, end, " ")
        elif c == '"' or text.startswith("''", i):
            indented = c != '"'
            end = scan.string_end(i + (2 if indented else 1), indented=indented)
            mask(i, end, STRING)
        else:
            out.append(c)
            end = i + 1
        i = end
    return "".join(out)


def code_lines(text: str) -> list[str]:
    """The file's lines, masked (see `masked`)."""
    return masked(text).split("\n")


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


def _one_line_pattern(formals: str) -> bool:
    """Whether nixfmt keeps a function's set pattern with these formals on one line: one
    attribute without a default, with or without `...` (nixfmt's `Parameter` layout)."""
    named = [f.strip() for f in formals.split(",") if f.strip() not in ("", "...")]
    return len(named) <= 1 and not any("?" in f for f in named)


def _width_problem(raw: str, code: str) -> bool:
    """A line longer than WIDTH whose code (comments masked out) reaches past WIDTH and
    is not one nixfmt leaves long."""
    if len(raw) <= WIDTH or len(code.rstrip()) <= WIDTH:
        return False
    return _UNBREAKABLE.fullmatch(code.strip()) is None


def layout_problems(text: str) -> list[str]:
    problems = []
    if not text.endswith("\n"):
        problems.append("no final newline")
    for number, (raw, code) in enumerate(zip(text.split("\n"), code_lines(text), strict=True), 1):
        outside = [r for r, c in zip(raw, code, strict=True) if c != STRING]
        if "\t" in outside:
            problems.append(f"{number}: tab")
        if code != code.rstrip() and raw != raw.rstrip():
            problems.append(f"{number}: trailing white space")
        if _width_problem(raw, code):
            problems.append(f"{number}: {len(raw)} columns, more than {WIDTH}")
        for opener, inside, after in _groups(code):
            top = _top_level(inside)
            if opener == "{" and after.lstrip()[:1] in (":", "@"):
                if not _one_line_pattern(top):
                    problems.append(f"{number}: function pattern on one line")
            elif opener == "{" and top.count(";") > 1:
                problems.append(
                    f"{number}: attribute set with {top.count(';')} bindings on one line"
                )
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
