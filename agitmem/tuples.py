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
statement makes the same `collections.namedtuple` (fields from the
annotations, in order; defaults from the values; the methods, properties
and docstring of the body), as typing's NamedTupleMeta does."""
from __future__ import annotations

import collections

# what a class body holds that is the class's own, not a field's or a method's
_OWN = frozenset(('__module__', '__qualname__', '__annotations__', '__dict__', '__weakref__', '__orig_bases__', '__classcell__'))


class _Maker(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, ns)
        annotations = ns.get('__annotations__', {})
        assert isinstance(annotations, dict)
        fields = list(annotations)
        defaults = [ns[f] for f in fields if f in ns]
        if any(f not in ns for f in fields[len(fields) - len(defaults):]):
            raise TypeError(f'{name}: a field without a default follows one with a default')
        module = str(ns['__module__'])
        made = collections.namedtuple(name, fields, defaults=defaults, module=module)  # type: ignore[misc]
        made.__qualname__ = str(ns.get('__qualname__', name))
        made.__annotations__ = annotations
        for key, value in ns.items():
            if key not in annotations and key not in _OWN:
                setattr(made, key, value)
        return made


class NamedTuple(metaclass=_Maker):
    """Subclass it as typing.NamedTuple (see the module's docstring)."""
