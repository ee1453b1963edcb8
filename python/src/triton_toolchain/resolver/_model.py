"""Immutable results of a resolution: where each component came from and what was rejected.

Guarantees: every object here is frozen; a ``Choice`` with a ``path`` always has a
``source``; rejected candidates keep the order in which they were seen; ``to_dict`` and
``from_dict`` round-trip (the activation record stores resolutions as JSON).
"""

import enum
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from ..runtime import ChoiceData, ToolchainData
from ..runtime._errors import MissingComponentError
from ._catalog import COMPONENT, COMPONENT_NAMES


class SourceKind(enum.Enum):
    """Closed vocabulary of where a path came from."""

    ENV = "env"  # detail: the variable, e.g. "TRITON_PTXAS_PATH"
    MANIFEST = "manifest"  # detail: the manifest file
    BUNDLED = "triton-bundled"  # detail: Triton's package directory
    DISCOVERED = "discovered"  # detail: the discovery step, e.g. "ld.so.cache"


class Source(NamedTuple):
    """Where a candidate came from, e.g. ``discovered:ld.so.cache``."""

    kind: SourceKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.detail}"

    @classmethod
    def parse(cls, text: str) -> "Source | None":
        """``"discovered:ld.so.cache"`` -> the ``Source``; ``None`` for anything else."""
        kind, sep, detail = text.partition(":")
        try:
            return cls(SourceKind(kind), detail) if sep else None
        except ValueError:
            return None


class Rejection(NamedTuple):
    """A candidate that was looked at and not chosen, and why."""

    path: str
    reason: str
    source: Source

    def __str__(self) -> str:
        return f"{self.path} ({self.source}): {self.reason}"


class Choice(NamedTuple):
    """The outcome for one component: the chosen path (or ``None``) and its history.

    ``searched`` lists the places looked at, in order, as ``"source: location"`` strings;
    ``notes`` are facts worth showing even when something was found (e.g. that the
    manifest's driver directories were empty and the host's driver was discovered);
    ``error`` is set when the component's explicit setting is wrong (the message of the
    ``SettingError`` that ``resolve()`` raises for it).
    """

    component: str
    path: str | None = None
    version: str | None = None
    source: Source | None = None
    rejected: tuple[Rejection, ...] = ()
    searched: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None

    @property
    def found(self) -> bool:
        return self.path is not None

    def __repr__(self) -> str:
        if self.error:
            return f"Choice({self.component!r}, error={self.error!r})"
        if self.path is None:
            return f"Choice({self.component!r}, missing, {len(self.rejected)} rejected)"
        version = f", {self.version!r}" if self.version else ""
        return f"Choice({self.component!r}, {self.path!r}{version}, {self.source})"

    def history(self) -> list[str]:
        """The places looked at and the candidates rejected, as indented lines."""
        lines = ["  looked at:", *(f"    {place}" for place in self.searched)]
        lines = lines if self.searched else []
        if self.rejected:
            lines += ["  rejected:", *(f"    {rejection}" for rejection in self.rejected)]
        return lines

    def explain(self, *, strict_manifest: str | None = None) -> str:
        """A multi-line account of a missing component: what it is, where the shim looked,
        what it rejected and why, and the fix."""
        spec = COMPONENT[self.component]
        lines = [f"{self.component} not found ({spec.what})."]
        if self.error:
            lines.append(f"  error: {self.error}")
        lines += [f"  note: {note}" for note in self.notes]
        lines += self.history()
        if strict_manifest:
            lines.append(
                f"  the manifest {strict_manifest} is strict, so nothing else was searched"
            )
        lines.append(f"  fix: {spec.fix}")
        return "\n".join(lines)

    def to_dict(self) -> ChoiceData:
        return {
            "path": self.path,
            "version": self.version,
            "source": str(self.source) if self.source else None,
            "rejected": [
                {"path": r.path, "reason": r.reason, "source": str(r.source)} for r in self.rejected
            ],
            "searched": list(self.searched),
            "notes": list(self.notes),
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any]) -> "Choice":
        def source(text: object) -> Source | None:
            return Source.parse(text) if isinstance(text, str) else None

        return cls(
            name,
            data.get("path"),
            data.get("version"),
            source(data.get("source")),
            tuple(
                Rejection(r["path"], r["reason"], source(r["source"]) or _UNKNOWN)
                for r in data.get("rejected", ())
            ),
            tuple(data.get("searched", ())),
            tuple(data.get("notes", ())),
            data.get("error"),
        )


_UNKNOWN = Source(SourceKind.DISCOVERED, "unknown")


class Toolchain:
    """Every component, resolved once (read-only). Index it by component name.

    Example::

        tc = triton_toolchain.resolve(arch=90)
        tc["ptxas-blackwell"].path   # '/usr/local/cuda-13.0/bin/ptxas'
        tc.require("libcuda")        # the path, or MissingComponentError explaining why not

    Two are equal when every field is. A plain class: a dataclass costs the resolver's
    import a few milliseconds (issue 23).
    """

    __slots__ = ("arch", "choices", "manifest", "notes", "strict")
    choices: Mapping[str, Choice]
    arch: int | None
    manifest: str | None
    strict: bool
    notes: tuple[str, ...]

    def __init__(
        self,
        choices: Mapping[str, Choice],
        arch: int | None = None,
        manifest: str | None = None,
        strict: bool = False,
        notes: tuple[str, ...] = (),
    ) -> None:
        set_ = object.__setattr__
        set_(self, "choices", choices)
        set_(self, "arch", arch)
        set_(self, "manifest", manifest)
        set_(self, "strict", strict)
        set_(self, "notes", notes)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Toolchain is read-only: {name}; use Toolchain.replace")

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in Toolchain.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Toolchain) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # choices is a mapping

    def replace(self, **changes: Any) -> "Toolchain":
        """A copy with ``changes`` (keyword arguments of ``Toolchain``)."""
        fields = {name: getattr(self, name) for name in Toolchain.__slots__}
        return Toolchain(**{**fields, **changes})

    def __getitem__(self, name: str) -> Choice:
        try:
            return self.choices[name]
        except KeyError:
            raise KeyError(
                f"unknown component {name!r}; known: {', '.join(self.choices or COMPONENT_NAMES)}"
            ) from None

    def __iter__(self) -> Iterator[Choice]:
        return iter(self.choices.values())

    def __repr__(self) -> str:
        missing = [c.component for c in self.missing()]
        target = f"sm_{self.arch}" if self.arch else "any architecture"
        manifest = f", manifest={self.manifest!r}" if self.manifest else ""
        state = f"missing: {', '.join(missing)}" if missing else "complete"
        return f"<Toolchain for {target}{manifest}: {state}>"

    def require(self, name: str) -> str:
        """The chosen path of ``name``; raises ``MissingComponentError`` with the full
        explanation (places searched, candidates rejected, fix) when there is none."""
        choice = self[name]
        if choice.path is None:
            strict = self.manifest if self.strict else None
            raise MissingComponentError(choice.explain(strict_manifest=strict))
        return choice.path

    def missing(self, stage: str | None = None) -> tuple[Choice, ...]:
        """Required components that were not found; ``stage`` ("compile" or "launch")
        limits it to what that stage needs."""
        return tuple(
            c
            for c in self
            if c.path is None
            and COMPONENT[c.component].stage is not None
            and (stage is None or COMPONENT[c.component].stage == stage)
        )

    def errors(self) -> tuple[Choice, ...]:
        """Components whose explicit setting is wrong."""
        return tuple(c for c in self if c.error)

    def to_dict(self) -> ToolchainData:
        return {
            "arch": self.arch,
            "manifest": self.manifest,
            "strict": self.strict,
            "notes": list(self.notes),
            "components": {name: c.to_dict() for name, c in self.choices.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Toolchain":
        return cls(
            {name: Choice.from_dict(name, c) for name, c in data["components"].items()},
            arch=data.get("arch"),
            manifest=data.get("manifest"),
            strict=bool(data.get("strict")),
            notes=tuple(data.get("notes", ())),
        )
