"""triton-toolchain: tells OpenAI Triton, and the torch.compile stack, where its run-time
toolchain is.

``resolve()`` finds every component (explicit settings, a manifest, discovery) and
says where each came from; ``activate()`` makes this process use the result.

Importing the package is cheap (the import hook does it in every process that imports
Triton or torch): the resolver and the report load when first used.
"""

from __future__ import annotations

__version__ = "0.2.0"  # the one place: pyproject.toml and nix/package.nix read it here

import importlib
from typing import TYPE_CHECKING, Any

from .runtime._activate import Activation as Activation
from .runtime._activate import activate as activate
from .runtime._activate import after_triton_import as after_triton_import

if TYPE_CHECKING:
    from .cli._selftest import SelfTestReport as SelfTestReport
    from .cli._selftest import self_test as self_test
    from .resolver._discovery._host import Host as Host
    from .resolver._model import Choice as Choice
    from .resolver._model import Rejection as Rejection
    from .resolver._model import Source as Source
    from .resolver._model import SourceKind as SourceKind
    from .resolver._model import Toolchain as Toolchain
    from .resolver._resolve import resolve as resolve
    from .runtime._errors import BuildError as BuildError
    from .runtime._errors import ManifestError as ManifestError
    from .runtime._errors import MissingComponentError as MissingComponentError
    from .runtime._errors import SettingError as SettingError
    from .runtime._errors import ToolchainError as ToolchainError

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
    "BuildError": ".runtime._errors",
    "ManifestError": ".runtime._errors",
    "MissingComponentError": ".runtime._errors",
    "SettingError": ".runtime._errors",
    "ToolchainError": ".runtime._errors",
    "Host": ".resolver._discovery._host",
    "Choice": ".resolver._model",
    "Rejection": ".resolver._model",
    "Source": ".resolver._model",
    "SourceKind": ".resolver._model",
    "Toolchain": ".resolver._model",
    "resolve": ".resolver._resolve",
    "SelfTestReport": ".cli._selftest",
    "self_test": ".cli._selftest",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
