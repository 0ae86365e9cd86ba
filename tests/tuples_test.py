"""agitmem/tuples.py makes the class typing.NamedTuple makes from the same
class statement (the hot hooks' modules use it so as not to import typing)."""
from __future__ import annotations

import inspect
import pickle
import typing
from pathlib import Path

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


@pytest.mark.parametrize('fields', [
    ('x', 'y', 'label'), ('only',),
    # every size of __new__ compiled with the module, and one past them
    *(tuple(f'field{i}' for i in range(n)) for n in range(2, len(tuples._NEW) + 2)),
])
def test_the_same_class_as_collections_namedtuple(fields: tuple[str, ...]) -> None:
    """agitmem/tuples.py makes the class from namedtuple's parts, without
    importing collections: each of namedtuple's behaviours, side by side."""
    import collections
    defaults = (None,) if len(fields) > 1 else ()
    theirs = collections.namedtuple('T', fields, defaults=defaults, module=__name__)  # type: ignore[misc]
    ours = tuples._class('T', fields, defaults, __name__)
    args = tuple(range(len(fields)))
    a, b = theirs(*args), ours(*args)
    assert a == b and repr(a) == repr(b) and hash(a) == hash(b)
    assert ours._fields == theirs._fields and ours._field_defaults == theirs._field_defaults
    assert ours.__match_args__ == theirs.__match_args__ and ours.__doc__ == theirs.__doc__
    assert b._asdict() == a._asdict() and b.__getnewargs__() == a.__getnewargs__()
    assert ours._make(args) == b and b._replace(**{fields[0]: 9}) == a._replace(**{fields[0]: 9})
    assert ours(**dict(zip(fields, args))) == b
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__new__.__qualname__ == theirs.__new__.__qualname__
    assert ours.__new__.__name__ == theirs.__new__.__name__
    assert ours.__new__.__defaults__ == theirs.__new__.__defaults__
    assert [getattr(ours, f).__doc__ for f in fields] == [getattr(theirs, f).__doc__ for f in fields]
    for call in (lambda cls: cls._make(args + (1,)), lambda cls: cls(*args)._replace(nope=1),
                 lambda cls: cls(*args, 1), lambda cls: cls(), lambda cls: cls(*args).__setattr__(fields[0], 1)):
        with pytest.raises(Exception) as mine:
            call(ours)
        with pytest.raises(Exception) as namedtuples:
            call(theirs)
        assert type(mine.value) is type(namedtuples.value)
        assert str(mine.value).replace('T.', '') == str(namedtuples.value).replace('T.', '')
    assert not hasattr(b, '__dict__')


def test_the_hooks_tuples_import_no_collections() -> None:
    import subprocess
    import sys
    code = (
        'import sys\n'
        'before = set(sys.modules)\n'
        'from agitmem.tuples import NamedTuple\n'
        'class P(NamedTuple):\n'
        '    x: int\n'
        'assert P(1).x == 1\n'
        'print(sorted(m for m in ("collections", "operator", "keyword") if m in set(sys.modules) - before))\n'
    )
    out = subprocess.run([sys.executable, '-S', '-c', code], capture_output=True, text=True,
                         env={'PYTHONPATH': str(Path(tuples.__file__).parent.parent)})
    assert out.stdout.strip() == '[]', out.stderr
