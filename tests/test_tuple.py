"""``_tuple.NamedTuple`` makes the class ``typing.NamedTuple`` makes: the same fields,
defaults, docstring, methods, properties, class methods and constants, the same
equality, order, hashing, ``_replace``/``_asdict``/``_make`` and pickling."""

from __future__ import annotations

import pickle
import typing

from triton_toolchain._tuple import NamedTuple, TypedDict


class Ours(NamedTuple):
    """A value type."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()
    LIMIT = 10  # a class constant, no field

    @property
    def big(self) -> bool:
        return self.size > self.LIMIT

    def label(self) -> str:
        return f"{self.name}:{self.size}"

    @classmethod
    def parse(cls, text: str) -> Ours:
        name, _, size = text.partition(":")
        return cls(name, int(size))


class Theirs(typing.NamedTuple):
    """A value type."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()
    LIMIT = 10

    @property
    def big(self) -> bool:
        return self.size > self.LIMIT

    def label(self) -> str:
        return f"{self.name}:{self.size}"

    @classmethod
    def parse(cls, text: str) -> Theirs:
        name, _, size = text.partition(":")
        return cls(name, int(size))


def test_the_class_is_typings() -> None:
    for attribute in ("_fields", "_field_defaults", "__doc__", "__module__", "__qualname__"):
        mine, theirs = getattr(Ours, attribute), getattr(Theirs, attribute)
        if attribute == "__qualname__":
            mine, theirs = mine.replace("Ours", "X"), theirs.replace("Theirs", "X")
        assert mine == theirs, attribute
    # typing turns the annotations into ForwardRef objects; ours are kept as written,
    # and both resolve to the same types.
    assert typing.get_type_hints(Ours) == typing.get_type_hints(Theirs)
    assert Ours.__mro__[1:] == Theirs.__mro__[1:] == (tuple, object)
    assert Ours.LIMIT == Theirs.LIMIT == 10 and "LIMIT" not in Ours._fields


def test_the_values_behave_as_typings() -> None:
    ours, theirs = Ours("a", 20, ("x",)), Theirs("a", 20, ("x",))
    assert tuple(ours) == tuple(theirs) and ours == theirs and hash(ours) == hash(theirs)
    assert repr(ours) == repr(theirs).replace("Theirs", "Ours")
    assert (ours.big, ours.label()) == (theirs.big, theirs.label()) == (True, "a:20")
    assert Ours.parse("b:3") == Ours("b", 3) and Ours("b") == ("b", 0, ())
    assert ours._replace(size=1)._asdict() == theirs._replace(size=1)._asdict()
    assert Ours._make(["c", 1, ()]) == Theirs._make(["c", 1, ()])
    assert sorted([Ours("b"), Ours("a", 2), Ours("a", 1)])[0] == ("a", 1, ())
    again = pickle.loads(pickle.dumps(ours))  # noqa: S301  bytes made on this line
    assert again == ours and type(again) is Ours


class OursDict(TypedDict):
    """A plain shape."""

    name: str
    size: int | None


class TheirsDict(typing.TypedDict):
    """A plain shape."""

    name: str
    size: int | None


def test_a_typed_dict_makes_what_typings_makes_a_plain_dict() -> None:
    mine, theirs = OursDict(name="a", size=None), TheirsDict(name="a", size=None)
    assert type(mine) is type(theirs) is dict
    assert mine == theirs == {"name": "a", "size": None}
    assert OursDict(mine) == TheirsDict(theirs) == mine  # a copy, as dict(...) makes
