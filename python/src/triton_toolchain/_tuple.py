"""``NamedTuple`` and ``TypedDict`` for the value types, made without ``typing``'s
check of each field.

``typing.NamedTuple`` checks every field's annotation when it makes the class; under
``from __future__ import annotations`` each one is a string that it compiles, which is
most of the cost of making the class (the resolver's two dozen value types cost a miss
a millisecond or two of ``import triton``: issue 23). This ``NamedTuple`` makes the
same class as ``typing``'s: ``collections.namedtuple`` of the annotated fields, in
order, with their defaults, the module and the class body's docstring, methods and
properties; the annotations are kept as written. Type checkers see
``typing.NamedTuple`` itself, and check the fields (mypy: a field without a default
after one with a default is an error; ``collections.namedtuple`` would give it one).

``TypedDict`` likewise: ``typing.TypedDict`` compiles every field's annotation too (the
plan's three shapes cost 0.85 ms in a bare interpreter); a ``TypedDict`` is a plain
``dict`` at run time whatever makes it, so here the class statement gives ``dict``
itself. Type checkers see ``typing.TypedDict``.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

__all__ = ["NamedTuple", "TypedDict"]

if TYPE_CHECKING:
    from typing import NamedTuple, TypedDict
else:
    # What ``collections.namedtuple`` makes itself, or the class statement gives.
    _NOT_COPIED = frozenset({"__module__", "__annotations__"})

    class _Maker(type):
        def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            fields = namespace.get("__annotations__", {})
            made = collections.namedtuple(
                name,
                list(fields),
                defaults=[namespace[f] for f in fields if f in namespace],
                module=namespace["__module__"],
            )
            made.__annotations__ = fields
            for key, value in namespace.items():
                if key not in _NOT_COPIED and key not in fields:
                    setattr(made, key, value)
            return made

    NamedTuple = type.__new__(_Maker, "NamedTuple", (), {})

    class _DictMaker(type):
        def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            return dict

    TypedDict = type.__new__(_DictMaker, "TypedDict", (), {})
