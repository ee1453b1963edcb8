"""Words for results: why a component is missing, and the ``doctor`` table."""

from __future__ import annotations

from collections.abc import Sequence

from ._catalog import SPECS
from ._model import Choice, SourceKind, Toolchain


def explain_missing(choice: Choice, tc: Toolchain | None = None) -> str:
    """A multi-line account of a missing component: what it is, where the shim looked,
    what it rejected and why, and the fix."""
    spec = SPECS[choice.component]
    lines = [f"{choice.component} not found ({spec.what})."]
    lines += [f"  note: {note}" for note in choice.notes]
    if choice.searched:
        lines.append("  looked at:")
        lines += [f"    {place}" for place in choice.searched]
    if choice.rejected:
        lines.append("  rejected:")
        lines += [f"    {rejection}" for rejection in choice.rejected]
    if tc is not None and tc.strict:
        lines.append(f"  the manifest {tc.manifest} is strict, so nothing else was searched")
    lines.append(f"  fix: {spec.fix}")
    return "\n".join(lines)


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
        spec = SPECS[choice.component]
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
        spec = SPECS[choice.component]
        if not choice.found and spec.stage:
            out.append("\n" + explain_missing(choice, tc))
        elif choice.notes:
            out += [f"\n{choice.component}: {note}" for note in choice.notes]
        if verbose and choice.found and choice.rejected:
            out.append(f"\n{choice.component}: rejected before choosing {choice.path}:")
            out += [f"  {r}" for r in choice.rejected]
    return "\n".join(out)
