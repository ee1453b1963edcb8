"""The plan's shape, once: the ``TypedDict``s an activation plan is made of (``_plan``
makes one, the adapters read one, the activation record keeps one), and ``valid``, which
checks a decoded JSON value against them (the record believes a plan only if it is
valid).

The annotations are real (no ``from __future__ import annotations`` here), so ``valid``
reads them with ``typing.get_type_hints``: ``str``, ``int``, ``bool`` (a ``bool`` is no
``int`` here), ``None``, ``list[X]``, ``dict[str, X]``, ``X | None``, ``Literal[...]``
and nested ``TypedDict``s of exactly their keys.
"""

import types
import typing
from typing import Any, Literal, TypedDict

UsedBy = Literal["compile", "build", "inductor", "extension"]


class Rejection(TypedDict):
    """A candidate looked at and refused, and why (``_model.Rejection``)."""

    path: str
    reason: str
    source: str


class ChoiceData(TypedDict):
    """One component as resolved (``_model.Choice.to_dict``)."""

    path: str | None
    version: str | None
    source: str | None
    rejected: list[Rejection]
    searched: list[str]
    notes: list[str]
    error: str | None


class ToolchainData(TypedDict):
    """Every component resolved (``_model.Toolchain.to_dict``)."""

    arch: int | None
    manifest: str | None
    strict: bool
    notes: list[str]
    components: dict[str, ChoiceData]


class Setting(TypedDict):
    """What Triton is told of one component: its knob (3.4+) and variable, the value
    (``None``: none found), whether the variable holds the user's own setting, the
    setting's error and the step of Triton's it stops (``used_by``)."""

    component: str
    knob: str | None
    variable: str | None
    value: str | None
    user: bool
    error: str | None
    used_by: UsedBy


class TorchPart(TypedDict):
    """What ``_torch`` sets: the C++ compiler, the directories for ``CPATH`` and
    ``cpp_extension``'s CUDA home."""

    CXX: str | None
    CPATH: list[str]
    CUDA_HOME: str | None


class Plan(TypedDict):
    """A plan (``_plan``'s docstring). ``torch``: ``None`` in a plan made without
    torch's part (scope ``"triton"``)."""

    toolchain: ToolchainData
    history: bool
    settings: list[Setting]
    driver: str | None
    link: str | None
    torch: TorchPart | None


MAX_ITEMS = 1 << 12  # in one list or dictionary; a plan's longest holds a few dozen
_HINTS: dict[type, dict[str, Any]] = {}  # per TypedDict, its fields' types, read once
_UNIONS = (typing.Union, types.UnionType)


def valid(value: object, shape: Any) -> bool:
    """Whether the decoded JSON ``value`` has the type ``shape`` (see the module
    docstring): exact types, so no subclass is believed either; a string that UTF-8
    cannot encode (a lone surrogate, which JSON's ``\\ud800`` makes) is refused."""
    if shape is str:
        return type(value) is str and (value.isascii() or _encodable(value))
    if shape is int or shape is bool:
        return type(value) is shape
    if shape is None or shape is type(None):
        return value is None
    if typing.is_typeddict(shape):
        hints = _HINTS.get(shape) or _HINTS.setdefault(shape, typing.get_type_hints(shape))
        return (
            type(value) is dict
            and value.keys() == hints.keys()
            and all(valid(value[k], t) for k, t in hints.items())
        )
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin in _UNIONS:
        return any(valid(value, t) for t in args)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if origin is list:
        return (
            type(value) is list
            and len(value) <= MAX_ITEMS
            and all(valid(v, args[0]) for v in value)
        )
    if origin is dict:
        return (
            type(value) is dict
            and len(value) <= MAX_ITEMS
            and all(valid(k, args[0]) and valid(v, args[1]) for k, v in value.items())
        )
    raise TypeError(f"valid(): no rule for {shape!r}")  # a schema's mistake, not data's


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
