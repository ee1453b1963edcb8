"""The ``doctor`` report: words for a resolution."""

from __future__ import annotations

from collections.abc import Sequence

from ._catalog import COMPONENT
from ._model import Choice, SourceKind, Toolchain


def explain_missing(choice: Choice, tc: Toolchain | None = None) -> str:
    """A multi-line account of a missing component (``Choice.explain``)."""
    strict = tc.manifest if tc is not None and tc.strict else None
    return choice.explain(strict_manifest=strict)


def table(rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _short_source(choice: Choice) -> str:
    """The source as the table shows it: Triton's package directory is already in the
    path column, so ``triton-bundled`` stands alone there."""
    if choice.source is None:
        return ""
    if choice.source.kind is SourceKind.BUNDLED:
        return str(choice.source.kind.value)
    return str(choice.source)


def doctor_report(tc: Toolchain, *, verbose: bool, header: str) -> str:
    """The ``doctor`` text: a header, one row per component, then the explanations of
    what is missing (and, with ``verbose``, every rejected candidate)."""
    rows = [("component", "status", "version", "source", "path")]
    for choice in tc:
        spec = COMPONENT[choice.component]
        status = "ok" if choice.found else ("MISSING" if spec.stage else "absent")
        rows.append(
            (
                choice.component,
                status,
                choice.version or "",
                _short_source(choice),
                choice.path or "",
            )
        )
    out = [header, "", table(rows)]
    for note in tc.notes:
        out.append(f"\nnote: {note}")
    for choice in tc:
        spec = COMPONENT[choice.component]
        if not choice.found and spec.stage:
            out.append("\n" + explain_missing(choice, tc))
        elif choice.notes:
            out += [f"\n{choice.component}: {note}" for note in choice.notes]
        if verbose and choice.found and choice.rejected:
            out.append(f"\n{choice.component}: rejected before choosing {choice.path}:")
            out += [f"  {r}" for r in choice.rejected]
    return "\n".join(out)
