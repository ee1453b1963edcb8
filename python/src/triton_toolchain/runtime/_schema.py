"""The plan's shape, once: the ``TypedDict``s an activation plan is made of (``_plan``
makes one, the adapters read one, the activation record keeps one), and ``valid``, which
checks a decoded JSON value against them (the record believes a plan only if it is
valid).

The annotations are real (no ``from __future__ import annotations`` here), so ``valid``
reads them as they are (a ``TypedDict``'s ``__annotations__``, ``typing.get_origin`` and
``get_args``): ``str``, ``int``, ``bool`` (a ``bool`` is no ``int`` here), ``None``,
``list[X]``, ``dict[str, X]``, ``X | None``, ``Literal[...]`` and nested ``TypedDict``s
of exactly their keys. (``typing.get_type_hints`` would take a process's first check
from 0.06 to 0.3 ms, resolving names that are no strings here.)
"""

import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypedDict

UsedBy = Literal["compile", "build", "inductor", "extension"]
# When a component is first needed (``_catalog.Component.parts``): at the import, torch's
# part at `import torch`, the launcher's at Triton's first launcher build, the compile
# target's at the first compile that runs ptxas-blackwell, the SASS tools' at the first
# SASS dump. A plan's ``pending`` lists the later parts it does not hold yet.
Part = Literal["import", "torch", "launcher", "target", "sass"]


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


class Driver(TypedDict):
    """One backend's driver: the library loaded at run time, the directory the launcher
    links against, and whether the user's variable names it (``None``: not found)."""

    library: str | None
    link: str | None
    user: bool


class CacheDir(TypedDict):
    """A library's cache directory as judged (``resolver._caches``): the directory it
    will use (``None``: none usable) and where that came from (``source``: the variable,
    ``"manifest"``, ``"default"`` or the variable of the private directory the shim
    chose); ``default``, the library's own default; ``apply``: the shim sets
    ``variable`` to ``path``; the verdict (``fstype``, ``local``, ``flock``,
    ``untrusted``: why not trusted, ``writable``); ``error``: what stops the library's
    first use of it (an explicit setting others can change, none usable); ``warning``: a
    slow one;
    ``said``: the one line said at the first use and by ``doctor``."""

    variable: str
    path: str | None
    source: str
    default: str | None
    apply: bool
    fstype: str | None
    local: bool
    flock: bool
    untrusted: str | None
    writable: bool
    error: str | None
    warning: str | None
    said: str | None


class Plan(TypedDict):
    """A plan (``_plan``'s docstring): ``drivers`` per backend (``_process.BACKENDS``);
    ``pending``, the later parts it does not hold yet; ``torch``: ``None`` while torch's
    part is pending; ``caches``: Triton's and Inductor's cache directories (empty in a
    plan of a later part only)."""

    toolchain: ToolchainData
    history: bool
    settings: list[Setting]
    drivers: dict[str, Driver]
    pending: list[Part]
    torch: TorchPart | None
    caches: dict[str, CacheDir]


MAX_ITEMS = 1 << 12  # in one list or dictionary; a plan's longest holds a few dozen
Check = Callable[[object], bool]
_CHECKS: dict[Any, Check] = {}  # per type, its check, made once (``valid`` is on the fast path)


def valid(value: object, shape: Any) -> bool:
    """Whether the decoded JSON ``value`` has the type ``shape`` (see the module
    docstring): exact types, so no subclass is believed either; a string that cannot be
    a file name (a lone surrogate, which JSON's ``\\ud800`` makes) is refused."""
    return check(shape)(value)


def check(shape: Any) -> Check:
    """The test of ``valid`` for ``shape``, made from its annotations the first time."""
    found = _CHECKS.get(shape)
    if found is None:
        found = _CHECKS[shape] = _made(shape)
    return found


def _made(shape: Any) -> Check:
    if shape is str:
        return lambda v: type(v) is str and (v.isascii() or _file_name(v))
    if shape is int or shape is bool:
        return lambda v: type(v) is shape
    if shape is None or shape is type(None):
        return lambda v: v is None
    if typing.is_typeddict(shape):
        fields = {k: check(t) for k, t in shape.__annotations__.items()}
        keys = fields.keys()
        return lambda v: (
            type(v) is dict and v.keys() == keys and all(f(v[k]) for k, f in fields.items())
        )
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin in _UNIONS:
        either = [check(t) for t in args]
        return lambda v: any(c(v) for c in either)
    if origin is Literal:
        return lambda v: any(type(v) is type(a) and v == a for a in args)
    if origin is list:
        item = check(args[0])
        return lambda v: type(v) is list and len(v) <= MAX_ITEMS and all(map(item, v))
    if origin is dict:
        key, item = check(args[0]), check(args[1])
        return lambda v: (
            type(v) is dict
            and len(v) <= MAX_ITEMS
            and all(map(key, v))
            and all(map(item, v.values()))
        )
    raise TypeError(f"no check for {shape!r}")  # a mistake of the schema, not of data


_UNIONS = (typing.Union, types.UnionType)


def _file_name(text: str) -> bool:
    """Whether ``text`` is one that ``os.fsencode`` encodes (a lone surrogate is not)."""
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True
