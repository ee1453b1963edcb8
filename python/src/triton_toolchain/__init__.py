"""triton-toolchain: tells OpenAI Triton where its run-time toolchain is.

``resolve()`` finds every component (explicit settings, a manifest, discovery) and
says where each came from; ``activate()`` makes Triton use the result.
"""

from __future__ import annotations

from typing import Any

from ._activate import Activation as Activation
from ._activate import activate as activate
from ._errors import BuildError as BuildError
from ._errors import ManifestError as ManifestError
from ._errors import MissingComponentError as MissingComponentError
from ._errors import SettingError as SettingError
from ._errors import ToolchainError as ToolchainError
from ._hook import after_triton_import as after_triton_import
from ._host import Host as Host
from ._model import Choice as Choice
from ._model import Rejection as Rejection
from ._model import Source as Source
from ._model import SourceKind as SourceKind
from ._model import Toolchain as Toolchain
from ._resolve import resolve as resolve

__all__ = [
    "Activation",
    "BuildError",
    "Choice",
    "Host",
    "ManifestError",
    "MissingComponentError",
    "Rejection",
    "SelfTestReport",
    "SettingError",
    "Source",
    "SourceKind",
    "Toolchain",
    "ToolchainError",
    "activate",
    "after_triton_import",
    "resolve",
    "self_test",
]


def __getattr__(name: str) -> Any:
    """``self_test`` and ``SelfTestReport`` (``doctor --run``) load on first use: the
    self-test is not needed when ``import triton`` activates the shim."""
    if name in ("self_test", "SelfTestReport"):
        from . import _selftest

        return getattr(_selftest, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
