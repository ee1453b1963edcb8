"""The shim's errors: one base class, each subclass raised in one kind of situation.

Every message names the setting or file, the value, and the fix.
"""

from __future__ import annotations


class ToolchainError(Exception):
    """Base class of every error this package raises on purpose."""


class SettingError(ToolchainError):
    """An explicit setting (an environment variable such as ``TRITON_PTXAS_PATH`` or
    ``CC``, or an argument) is invalid. Never replaced silently by a discovered value."""


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
