"""The shim's errors: one base class, each subclass raised in one kind of situation.

Every message names the setting or file, the value, and the fix; and is ``printable``:
what a file name or a tool's output holds cannot act on the terminal that shows it.
"""

from __future__ import annotations

# What a terminal acts on rather than shows: the C0 controls but tab and newline (a
# message's own lines), DEL, the C1 controls (U+009B is the 8-bit CSI: ESC [), and the
# bidirectional overrides and isolates, which reorder the text shown after them.
_ACTIVE = [c for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (9, 10)]
_ACTIVE += [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {c: repr(chr(c))[1:-1] for c in _ACTIVE}


def printable(text: str) -> str:
    r"""``text`` with every character a terminal acts on written as its escape, as
    ``repr`` writes it: ``"a\x1b[2Jb\u202e"`` -> ``"a\\x1b[2Jb\\u202e"``. The one
    escaping of messages: errors (``ToolchainError``), warnings, the command line's
    output, a tool's words."""
    return text.translate(_ESCAPES)


class ToolchainError(Exception):
    """Base class of every error this package raises on purpose; its message is
    ``printable``."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(printable(a) if isinstance(a, str) else a for a in args))


class SettingError(ToolchainError):
    """An explicit setting (an environment variable such as ``TRITON_PTXAS_PATH`` or
    ``CC``, an argument, or an entry of a strict manifest) is invalid. Never replaced
    silently by a discovered value."""


class ManifestError(ToolchainError):
    """A manifest file cannot be read or does not follow schema 1 (see docs/manifest.md)."""


class MissingComponentError(ToolchainError):
    """A component that the caller requires was not found; the message lists every
    place searched, every candidate rejected with its reason, and the fix."""


class BuildError(ToolchainError):
    """Building Triton's launcher module failed; the message shows the command, the
    compiler's output and what to change."""


class AdapterBugWarning(RuntimeWarning):
    """A check of the shim's inside Triton's own code (an adapter's wrapper) failed with
    something other than the errors above: a bug of the shim's. Triton goes on as it
    would without the shim; the tests run with this warning as an error."""
