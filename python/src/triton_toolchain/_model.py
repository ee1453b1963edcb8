"""Immutable results of a resolution: where each component came from and what was rejected.

Guarantees: every object here is frozen; a ``Choice`` with a ``path`` always has a
``source``; rejected candidates keep the order in which they were seen.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._errors import MissingComponentError


class SourceKind(enum.Enum):
    """Closed vocabulary of where a path came from."""

    ENV = "env"  # detail: the variable, e.g. "TRITON_PTXAS_PATH"
    MANIFEST = "manifest"  # detail: the manifest file
    BUNDLED = "triton-bundled"  # detail: Triton's package directory
    DISCOVERED = "discovered"  # detail: the discovery step, e.g. "ld.so.cache"


@dataclass(frozen=True)
class Source:
    """Where a candidate came from, e.g. ``discovered:ld.so.cache``."""

    kind: SourceKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.detail}"


@dataclass(frozen=True)
class Rejection:
    """A candidate that was looked at and not chosen, and why."""

    path: str
    reason: str
    source: Source

    def __str__(self) -> str:
        return f"{self.path} ({self.source}): {self.reason}"


@dataclass(frozen=True)
class Choice:
    """The outcome for one component: the chosen path (or ``None``) and its history.

    ``searched`` lists the places looked at, in order, as ``"step: location"`` strings;
    ``notes`` are facts worth showing even when something was found (e.g. that the
    manifest's driver directories were empty and the host's driver was discovered).
    """

    component: str
    path: str | None = None
    version: str | None = None
    source: Source | None = None
    rejected: tuple[Rejection, ...] = ()
    searched: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.path is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "version": self.version,
            "source": str(self.source) if self.source else None,
            "rejected": [
                {"path": r.path, "reason": r.reason, "source": str(r.source)} for r in self.rejected
            ],
            "searched": list(self.searched),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Toolchain:
    """Every component Triton needs, resolved once. Index it by component name.

    Example::

        tc = triton_toolchain.resolve(arch=90)
        tc["ptxas-blackwell"].path   # '/usr/local/cuda-13.0/bin/ptxas'
        tc.require("libcuda")        # the path, or MissingComponentError explaining why not
    """

    choices: Mapping[str, Choice]
    arch: int | None = None
    manifest: str | None = None
    strict: bool = False
    notes: tuple[str, ...] = field(default=())

    def __getitem__(self, name: str) -> Choice:
        try:
            return self.choices[name]
        except KeyError:
            from ._catalog import COMPONENT_NAMES

            raise KeyError(
                f"unknown component {name!r}; known: {', '.join(COMPONENT_NAMES)}"
            ) from None

    def __iter__(self) -> Iterator[Choice]:
        return iter(self.choices.values())

    def require(self, name: str) -> str:
        """The chosen path of ``name``; raises ``MissingComponentError`` with the full
        explanation (places searched, candidates rejected, fix) when there is none."""
        choice = self[name]
        if choice.path is None:
            from ._explain import explain_missing

            raise MissingComponentError(explain_missing(choice, self))
        return choice.path

    def missing(self, stage: str | None = None) -> tuple[Choice, ...]:
        """Required components that were not found; ``stage`` ("compile" or "launch")
        limits it to what that stage needs."""
        from ._catalog import SPECS

        return tuple(
            c
            for c in self
            if c.path is None
            and SPECS[c.component].stage is not None
            and (stage is None or SPECS[c.component].stage == stage)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "manifest": self.manifest,
            "strict": self.strict,
            "notes": list(self.notes),
            "components": {name: c.to_dict() for name, c in self.choices.items()},
        }
