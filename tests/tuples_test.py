"""agitmem/tuples.py makes the class typing.NamedTuple makes from the same
class statement (the hot hooks' modules use it so as not to import typing)."""
from __future__ import annotations

import pickle
import typing

import pytest

from agitmem import tuples


def _made(base: type) -> type:
    class Point(base):  # type: ignore[valid-type,misc]
        """A point."""
        x: int
        y: int
        label: str | None = None

        @property
        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

        def moved(self, dx: int) -> Point:
            return self._replace(x=self.x + dx)

    return Point


@pytest.mark.parametrize('base', [typing.NamedTuple, tuples.NamedTuple])
def test_same_class_as_typing(base: type) -> None:
    Point = _made(base)
    p = Point(1, -2)
    assert p == (1, -2, None) and p.label is None
    assert Point._fields == ('x', 'y', 'label')
    assert Point._field_defaults == {'label': None}
    assert p.norm == 3 and p.moved(2) == Point(3, -2)
    assert p._asdict() == {'x': 1, 'y': -2, 'label': None}
    assert Point.__doc__ == 'A point.'
    assert Point.__mro__[1:] == (tuple, object)
    assert Point.__module__ == __name__ and Point.__qualname__.endswith('Point')
    assert repr(Point(1, 2, 'a')) == "Point(x=1, y=2, label='a')"
    assert hash(p) == hash((1, -2, None))
    with pytest.raises(TypeError):
        Point(1)
    with pytest.raises(AttributeError):
        p.x = 3  # type: ignore[misc]


def test_default_before_a_field_without_one() -> None:
    for base in (typing.NamedTuple, tuples.NamedTuple):
        with pytest.raises(TypeError):
            class Bad(base):  # type: ignore[valid-type,misc]
                a: int = 0
                b: int


def test_pickles() -> None:
    from agitmem.repo import Repo
    r = Repo('/a', '/a/.git', '/a/.git')
    assert pickle.loads(pickle.dumps(r)) == r
