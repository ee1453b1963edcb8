"""``_tuple.NamedTuple`` makes the class ``typing.NamedTuple`` makes: the same fields,
defaults, docstring, methods, properties, class methods and constants, the same
equality, order, hashing, ``_replace``/``_asdict``/``_make``, copying and pickling, the
same constructor (positions, keywords, defaults, and the errors for wrong ones) for
every number of fields."""

from __future__ import annotations

import copy
import pickle
import typing
from typing import Any

import pytest
from triton_toolchain.resolver._tuple import NamedTuple, TypedDict


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


def _same_error(make: Any, other: Any, *args: Any, **kwargs: Any) -> None:
    """Both raise the same exception, with the same message but for the class's name."""
    with pytest.raises(Exception) as mine:
        make(*args, **kwargs)
    with pytest.raises(Exception) as theirs:
        other(*args, **kwargs)
    assert type(mine.value) is type(theirs.value)
    named = str(theirs.value).replace(other.__name__, make.__name__)
    assert str(mine.value) == named


def test_the_constructor_and_its_errors_are_typings() -> None:
    assert Ours("a", tags=("t",)) == Theirs("a", tags=("t",))
    assert Ours(size=2, name="b") == Theirs(size=2, name="b")
    assert Ours._field_defaults == Theirs._field_defaults == {"size": 0, "tags": ()}
    assert Ours.__match_args__ == Theirs.__match_args__ == ("name", "size", "tags")
    assert Ours.__new__.__doc__ == Theirs.__new__.__doc__.replace("Theirs", "Ours")
    for args, kwargs in [((), {}), (("a", 1, (), 4), {}), (("a",), {"name": "b"})]:
        _same_error(Ours, Theirs, *args, **kwargs)
    _same_error(Ours, Theirs, "a", colour="red")
    _same_error(Ours._make, Theirs._make, ["a"])
    _same_error(Ours("a")._replace, Theirs("a")._replace, colour="red")
    ours = Ours("a", 1, ("t",))
    assert copy.copy(ours) == ours and copy.deepcopy(ours) == ours
    replace = getattr(copy, "replace", None)  # Python 3.13+
    assert hasattr(Ours, "__replace__") == hasattr(Theirs, "__replace__") == bool(replace)
    if replace is not None:
        assert replace(ours, size=3) == replace(Theirs("a", 1, ("t",)), size=3)
    assert ours.__getnewargs__() == Theirs("a", 1, ("t",)).__getnewargs__()


def _pair(count: int) -> tuple[Any, Any]:
    """A class of ``count`` fields (the last one with a default) made by each."""
    body = [f"    f{i}: int" + (" = -1" if i == count - 1 else "") for i in range(count)]
    text = "\n".join(body or ["    pass"])
    made: dict[str, Any] = {"NamedTuple": NamedTuple, "typing": typing}
    exec(  # noqa: S102  the test's own class statements
        f"class Many(NamedTuple):\n{text}\nclass Other(typing.NamedTuple):\n{text}\n", made
    )
    return made["Many"], made["Other"]


@pytest.mark.parametrize("count", range(22))  # compiled with _tuple up to 8, then at run time
def test_every_number_of_fields(count: int) -> None:
    ours, theirs = _pair(count)
    values = list(range(count))
    assert ours(*values) == theirs(*values) == tuple(values)
    assert ours(**{f"f{i}": i for i in range(count)}) == tuple(values)
    assert ours._fields == theirs._fields
    if count:
        assert ours(*values[:-1]) == (*values[:-1], -1)
        assert ours(*values).__getattribute__(f"f{count - 1}") == count - 1
    assert repr(ours(*values)) == repr(theirs(*values)).replace("Other", "Many")
    for wrong in ([*values, 0], ["x"] * (count + 2)):  # one or two values too many
        with pytest.raises(TypeError) as mine:
            ours(*wrong)
        with pytest.raises(TypeError) as typings:
            theirs(*wrong)
        assert str(mine.value) == str(typings.value).replace("Other", "Many")
