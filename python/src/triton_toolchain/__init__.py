"""triton-toolchain: tells OpenAI Triton, and the torch.compile stack, where its run-time
toolchain is.

``resolve()`` finds every component (explicit settings, a manifest, discovery) and
says where each came from; ``activate()`` makes this process use the result.

Importing the package is cheap (the import hook does it in every process that imports
Triton or torch): the resolver and the report load when first used.
"""

from __future__ import annotations

__version__ = "0.1.0"  # the one place: pyproject.toml and nix/package.nix read it here

from typing import TYPE_CHECKING, Any

from ._activate import Activation as Activation
from ._activate import activate as activate
from ._activate import after_triton_import as after_triton_import

if TYPE_CHECKING:
    from ._discovery._host import Host as Host
    from ._errors import BuildError as BuildError
    from ._errors import ManifestError as ManifestError
    from ._errors import MissingComponentError as MissingComponentError
    from ._errors import SettingError as SettingError
    from ._errors import ToolchainError as ToolchainError
    from ._model import Choice as Choice
    from ._model import Rejection as Rejection
    from ._model import Source as Source
    from ._model import SourceKind as SourceKind
    from ._model import Toolchain as Toolchain
    from ._resolve import resolve as resolve
    from ._selftest import SelfTestReport as SelfTestReport
    from ._selftest import self_test as self_test

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

# Public names that load their module on first use: name -> module.
_LAZY = {
    "BuildError": "._errors",
    "ManifestError": "._errors",
    "MissingComponentError": "._errors",
    "SettingError": "._errors",
    "ToolchainError": "._errors",
    "Host": "._discovery._host",
    "Choice": "._model",
    "Rejection": "._model",
    "Source": "._model",
    "SourceKind": "._model",
    "Toolchain": "._model",
    "resolve": "._resolve",
    "SelfTestReport": "._selftest",
    "self_test": "._selftest",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # noqa: PLC0415  a lazy name's first use only (not on the import path)

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
