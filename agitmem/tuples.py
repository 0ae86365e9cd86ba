"""`typing.NamedTuple` without importing typing: the agent hooks run on
every edit, prompt and model call, and `typing` (with contextlib and
warnings) is a quarter of an interpreter's start.  Modules on the hooks'
path write

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from agitmem.tuples import NamedTuple

so mypy sees typing's and the interpreter runs this one: the same class
statement makes the class `collections.namedtuple` makes (fields from the
annotations, in order; defaults from the values; the methods, properties
and docstring of the body), as typing's NamedTupleMeta does.  It is made
here from the same parts (tuple.__new__ by a compiled lambda, C field
getters): `collections` itself imports operator, keyword, reprlib,
itertools and heapq, about 3 ms, a fifth of `python -c pass`, on every hook
(tests/tuples_test.py compares the two)."""
from __future__ import annotations

import sys
try:
    from _collections import _tuplegetter  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover (CPython has it; namedtuple falls back alike)
    def _tuplegetter(index: int, doc: str) -> property:
        from operator import itemgetter
        return property(itemgetter(index), doc=doc)

# (mypy takes any name TYPE_CHECKING as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# what a class body holds that is the class's own, not a field's or a method's
_OWN = frozenset(('__module__', '__qualname__', '__annotations__', '__dict__', '__weakref__', '__orig_bases__', '__classcell__'))


# __new__'s code for 1 to 16 fields, compiled with this module: a class's
# own is one of these under its fields' names (CodeType.replace), which
# costs a fifth of compiling one of its own (nine tenths of making a class)
_tuple_new = tuple.__new__
_NEW = (
    lambda _cls, _0: _tuple_new(_cls, (_0,)),
    lambda _cls, _0, _1: _tuple_new(_cls, (_0, _1)),
    lambda _cls, _0, _1, _2: _tuple_new(_cls, (_0, _1, _2)),
    lambda _cls, _0, _1, _2, _3: _tuple_new(_cls, (_0, _1, _2, _3)),
    lambda _cls, _0, _1, _2, _3, _4: _tuple_new(_cls, (_0, _1, _2, _3, _4)),
    lambda _cls, _0, _1, _2, _3, _4, _5: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15)),
)
if TYPE_CHECKING:
    from types import FunctionType as _FUNCTION
else:
    _FUNCTION = type(_NEW[0])  # types.FunctionType, without importing types


def _class(name: str, fields: tuple[str, ...], defaults: tuple[object, ...], module: str) -> type:
    """The class collections.namedtuple(name, fields, defaults=..., module=...) makes."""
    args = ', '.join(fields) + (',' if len(fields) == 1 else '')
    # a function of named parameters, as namedtuple's own lambda: each
    # instance is then one call, as fast as namedtuple's
    scope = {'_tuple_new': tuple.__new__, '__builtins__': {}}
    if 1 <= len(fields) <= len(_NEW):
        code = _NEW[len(fields) - 1].__code__.replace(co_varnames=('_cls', *fields), co_name='__new__')
        new = _FUNCTION(code, scope, '__new__', defaults)
    else:
        new = eval(f'lambda _cls, {args}: _tuple_new(_cls, ({args}))', scope)
        new.__name__ = '__new__'
        new.__defaults__ = defaults
    count = len(fields)
    shown = '(' + ', '.join(f'{f}=%r' for f in fields) + ')'

    def _make(cls: type, iterable: Iterable[object]) -> tuple[object, ...]:
        made: tuple[object, ...] = tuple.__new__(cls, iterable)
        if len(made) != count:
            raise TypeError(f'Expected {count} arguments, got {len(made)}')
        return made

    def _replace(self: tuple[object, ...], /, **changes: object) -> tuple[object, ...]:
        made = self._make(map(changes.pop, fields, self))  # type: ignore[attr-defined]
        if changes:
            raise ValueError(f'Got unexpected field names: {list(changes)!r}')
        return made  # type: ignore[no-any-return]

    def __repr__(self: tuple[object, ...]) -> str:
        return self.__class__.__name__ + shown % self

    def _asdict(self: tuple[object, ...]) -> dict[str, object]:
        return dict(zip(fields, self))

    def __getnewargs__(self: tuple[object, ...]) -> tuple[object, ...]:
        return tuple(self)

    ns: dict[str, object] = {
        '__doc__': f'{name}({args})', '__slots__': (), '_fields': fields,
        '_field_defaults': dict(zip(fields[count - len(defaults):], defaults)),
        '__new__': new, '_make': classmethod(_make), '_replace': _replace, '__repr__': __repr__,
        '_asdict': _asdict, '__getnewargs__': __getnewargs__, '__match_args__': fields,
        '__module__': module,
    }
    for method in (new, _make, _replace, __repr__, _asdict, __getnewargs__):
        method.__qualname__ = f'{name}.{method.__name__}'  # as a TypeError names them
    for i, field in enumerate(fields):
        ns[field] = _tuplegetter(i, sys.intern(f'Alias for field number {i}'))
    return type(name, (tuple,), ns)


class _Maker(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, ns)
        annotations = ns.get('__annotations__', {})
        assert isinstance(annotations, dict)
        fields = tuple(sys.intern(f) for f in annotations)
        defaults = tuple(ns[f] for f in fields if f in ns)
        if any(f not in ns for f in fields[len(fields) - len(defaults):]):
            raise TypeError(f'{name}: a field without a default follows one with a default')
        made = _class(name, fields, defaults, str(ns['__module__']))
        made.__qualname__ = str(ns.get('__qualname__', name))
        made.__annotations__ = annotations
        for key, value in ns.items():
            if key not in annotations and key not in _OWN:
                setattr(made, key, value)
        return made


class NamedTuple(metaclass=_Maker):
    """Subclass it as typing.NamedTuple (see the module's docstring)."""
