"""``NamedTuple`` and ``TypedDict`` for the value types, made without ``typing``'s
check of each field and without compiling a constructor for each class.

``typing.NamedTuple`` checks every field's annotation when it makes the class; under
``from __future__ import annotations`` each one is a string that it compiles, which is
most of the cost of making the class (the resolver's two dozen value types cost a miss
a millisecond or two of ``import triton``: issue 23). ``collections.namedtuple``, which
it calls, then compiles each class's ``__new__`` from source (``eval``: two thirds of
the rest, 22 of 36 microseconds a class). This ``NamedTuple`` makes the class
``typing``'s makes: a ``tuple`` of the annotated fields, in order, with their defaults,
the module and the class body's docstring, methods and properties, and
``collections.namedtuple``'s members (``_fields``, ``_field_defaults``, ``_make``,
``_replace``, ``_asdict``, ``__repr__``, ``__getnewargs__``, ``__match_args__``, a
property per field); its ``__new__`` is one compiled constructor per number of fields,
given the field names as its parameters (``CodeType.replace``), so keywords and
defaults work as ``namedtuple``'s do. The annotations are kept as written. Type
checkers see ``typing.NamedTuple`` itself, and check the fields (mypy: a field without a
default after one with a default is an error). ``tests/test_tuple.py`` compares the
classes and their values with ``typing``'s.

``TypedDict`` likewise: ``typing.TypedDict`` compiles every field's annotation too (the
plan's three shapes cost 0.85 ms in a bare interpreter); a ``TypedDict`` is a plain
``dict`` at run time whatever makes it, so here the class statement gives ``dict``
itself. Type checkers see ``typing.TypedDict``.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import TYPE_CHECKING, Any

__all__ = ["NamedTuple", "TypedDict"]

if TYPE_CHECKING:
    from typing import NamedTuple, TypedDict
else:
    try:  # CPython's field accessor, as ``collections.namedtuple`` uses
        from _collections import _tuplegetter
    except ImportError:  # pragma: no cover  another interpreter
        from operator import itemgetter

        def _tuplegetter(index: int, doc: str) -> property:
            return property(itemgetter(index), doc=doc)

    _GLOBALS = {"_tuple_new": tuple.__new__, "__builtins__": {}}
    # Python 3.13's ``namedtuple`` (CPython gh-110275): ``_replace`` raises ``TypeError``
    # for a name that is no field (``ValueError`` before), and is ``__replace__`` too,
    # for ``copy.replace``.
    _SINCE_3_13 = sys.version_info >= (3, 13)
    _NOT_A_FIELD = TypeError if _SINCE_3_13 else ValueError

    # ``lambda _cls, _0, ..., _n: tuple.__new__(_cls, (_0, ..., _n))`` for 0 to 8 fields,
    # compiled with the module; each class renames the parameters to its fields. Every
    # value type has 2 to 8 fields but ``_catalog.Component`` (18, compiled at import).
    # Compiling all of them at import (``eval``) cost a first process 0.35 ms (issue 23).
    _tuple_new = tuple.__new__  # the name the constructors' code looks up in ``_GLOBALS``
    _CONSTRUCTORS: tuple[types.CodeType, ...] = tuple(
        made.__code__
        for made in (
            lambda _cls: _tuple_new(_cls, ()),
            lambda _cls, _0: _tuple_new(_cls, (_0,)),
            lambda _cls, _0, _1: _tuple_new(_cls, (_0, _1)),
            lambda _cls, _0, _1, _2: _tuple_new(_cls, (_0, _1, _2)),
            lambda _cls, _0, _1, _2, _3: _tuple_new(_cls, (_0, _1, _2, _3)),
            lambda _cls, _0, _1, _2, _3, _4: _tuple_new(_cls, (_0, _1, _2, _3, _4)),
            lambda _cls, _0, _1, _2, _3, _4, _5: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5)),
            lambda _cls, _0, _1, _2, _3, _4, _5, _6: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6)),
            lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7: _tuple_new(
                _cls, (_0, _1, _2, _3, _4, _5, _6, _7)
            ),
        )
    )

    @functools.cache
    def _constructor(arity: int) -> types.CodeType:
        """``_CONSTRUCTORS[arity]``; for more fields, compiled once a number."""
        if arity < len(_CONSTRUCTORS):
            return _CONSTRUCTORS[arity]
        names = ", ".join(f"_{i}" for i in range(arity))
        made: types.FunctionType = eval(  # noqa: S307  our own text, no input in it
            f"lambda _cls, {names}: _tuple_new(_cls, ({names},))", _GLOBALS
        )
        return made.__code__

    def _named_tuple(name: str, fields: tuple[str, ...], defaults: tuple[Any, ...]) -> Any:
        """The members ``collections.namedtuple(name, fields, defaults=defaults)`` gives
        a class (the module docstring)."""
        if any(f.startswith("_") for f in fields):  # as namedtuple: no field hides a member
            raise ValueError(f"{name}: field names cannot start with an underscore: {fields}")
        names: dict[str, Any] = {"co_varnames": ("_cls", *fields), "co_name": "__new__"}
        if hasattr(types.CodeType, "co_qualname"):  # Python 3.11+: what errors name
            names["co_qualname"] = f"{name}.__new__"
        code = _constructor(len(fields)).replace(**names)
        new = types.FunctionType(code, _GLOBALS, "__new__", defaults or None)
        new.__qualname__ = f"{name}.__new__"
        new.__doc__ = f"Create new instance of {name}({', '.join(fields)})"
        count = len(fields)

        def _make(cls: type, iterable: Any) -> Any:
            made = tuple.__new__(cls, iterable)
            if len(made) != count:
                raise TypeError(f"Expected {count} arguments, got {len(made)}")
            return made

        def _replace(self: Any, /, **changes: Any) -> Any:
            made = self._make(map(changes.pop, fields, self))
            if changes:
                raise _NOT_A_FIELD(f"Got unexpected field names: {list(changes)!r}")
            return made

        def __repr__(self: Any) -> str:
            shown = ", ".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True))
            return f"{self.__class__.__name__}({shown})"

        def _asdict(self: Any) -> dict[str, Any]:
            return dict(zip(fields, self, strict=True))

        def __getnewargs__(self: Any) -> tuple[Any, ...]:
            return tuple(self)

        members: dict[str, Any] = {
            "__doc__": f"{name}({', '.join(fields)})",
            "__slots__": (),
            "_fields": fields,
            "_field_defaults": dict(zip(fields[count - len(defaults) :], defaults, strict=True)),
            "__new__": new,
            "_make": classmethod(_make),
            "_replace": _replace,
            "__repr__": __repr__,
            "_asdict": _asdict,
            "__getnewargs__": __getnewargs__,
            "__match_args__": fields,
        }
        if _SINCE_3_13:
            members["__replace__"] = _replace
        for index, field in enumerate(fields):
            members[field] = _tuplegetter(index, f"Alias for field number {index}")
        return members

    # What the class statement gives that the class does not keep as it is.
    _NOT_COPIED = frozenset({"__annotations__", "__dict__", "__weakref__"})

    class _Maker(type):
        def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            fields = namespace.get("__annotations__", {})
            names = tuple(fields)
            defaults = tuple(namespace[f] for f in names if f in namespace)
            members = _named_tuple(name, names, defaults)
            for key, value in namespace.items():
                if key not in _NOT_COPIED and key not in fields:
                    members[key] = value
            made = type.__new__(type, name, (tuple,), members)
            made.__annotations__ = fields
            return made

    NamedTuple = type.__new__(_Maker, "NamedTuple", (), {})

    class _DictMaker(type):
        def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            return dict

    TypedDict = type.__new__(_DictMaker, "TypedDict", (), {})
