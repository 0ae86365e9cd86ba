"""Bounded regex work for enforce rules, which may arrive with memory
fetched from a remote.

Python's `re` backtracks: `(a+)+$` takes exponential time on `aaa...ab`, so
one such pattern in config.yaml would make `git commit` hang.  Two guards:

- `problem(pattern)`: when the config is validated, refuse the shapes that
  backtrack without bound, read from the parse tree: a variable-width item
  repeated with no mandatory separator the item cannot match (`(a+)+`,
  `(.*a){20}`, `(\\w+\\s?)*`), and a repeated alternation whose alternatives
  can start alike (`(a|aa)+`, `(ab|a.)+`).  `(\\w+\\s)+` and `(foo|bar)+`
  pass.  The analysis is cheap and errs towards refusing.
- `time_limit(seconds)`: matching that still runs too long (a shape the
  analysis does not know, e.g. `a*a*a*a*a*b`) is interrupted by SIGALRM:
  CPython's regex engine checks for signals while it backtracks, so the
  handler's exception stops it.  POSIX main thread only; elsewhere the
  analysis is the only guard.

`re._parser` is private, but the same in 3.11 to 3.13; if it changes, the
analysis refuses nothing and the time limit still holds.
"""
from __future__ import annotations

import contextlib
import re

from agitmem import platforms

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module where enforce has patterns
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator
    from collections.abc import Sequence
    from typing import Any

try:
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover (python < 3.11 or a new layout)
    _parser = None
    _c = None

_ANY = None  # a char set that may be anything
_CATEGORIES = {
    'CATEGORY_DIGIT': re.compile(r'\d'),
    'CATEGORY_NOT_DIGIT': re.compile(r'\D'),
    'CATEGORY_SPACE': re.compile(r'\s'),
    'CATEGORY_NOT_SPACE': re.compile(r'\S'),
    'CATEGORY_WORD': re.compile(r'\w'),
    'CATEGORY_NOT_WORD': re.compile(r'\W'),
}
# beside ASCII and the ends of every range a pattern names: chars that tell
# the categories apart outside ASCII
_SAMPLES = '\xa0\xe9\xdf\u0661\u4e2d\u2028\u3000\U0001f600'


class OutOfTime(Exception):
    pass


# -- char sets: the single-char items (LITERAL, IN, ANY...) an item may match

def _atoms(item: tuple[Any, Any], out: list[tuple[Any, Any]]) -> bool:
    """Collect the single-char items `item` can match into `out`; False
    when it can match something not described so (a backreference)."""
    op, av = item
    name = str(op)
    if name in ('LITERAL', 'NOT_LITERAL', 'ANY', 'IN'):
        out.append(item)
        return True
    elif name in ('MAX_REPEAT', 'MIN_REPEAT', 'POSSESSIVE_REPEAT'):
        return _atoms_of(av[2], out)
    elif name == 'SUBPATTERN':
        return _atoms_of(av[3], out)
    elif name == 'ATOMIC_GROUP':
        return _atoms_of(av, out)
    elif name == 'BRANCH':
        return all(_atoms_of(alt, out) for alt in av[1])
    elif name in ('AT', 'ASSERT', 'ASSERT_NOT'):
        return True  # width 0
    else:  # GROUPREF, GROUPREF_EXISTS...
        return False


def _atoms_of(items: Sequence[Any], out: list[tuple[Any, Any]]) -> bool:
    return all(_atoms(item, out) for item in items)


def _chars(item: tuple[Any, Any]) -> list[tuple[Any, Any]] | None:
    out: list[tuple[Any, Any]] = []
    return out if _atoms(item, out) else _ANY


def _first(items: Sequence[Any]) -> list[tuple[Any, Any]] | None:
    """The chars a match of the sequence may start with."""
    out: list[tuple[Any, Any]] = []
    for item in items:
        op, av = item
        name = str(op)
        if name in ('AT', 'ASSERT', 'ASSERT_NOT'):
            continue
        if name in ('LITERAL', 'NOT_LITERAL', 'ANY', 'IN'):
            out.append(item)
            return out
        if name == 'BRANCH':
            for alt in av[1]:
                more = _first(alt)
                if more is _ANY:
                    return _ANY
                out.extend(more)
        elif name == 'SUBPATTERN':
            more = _first(av[3])
            if more is _ANY:
                return _ANY
            out.extend(more)
        elif name in ('MAX_REPEAT', 'MIN_REPEAT', 'POSSESSIVE_REPEAT'):
            more = _first(av[2])
            if more is _ANY:
                return _ANY
            out.extend(more)
        else:
            return _ANY
        if _width(item)[0] > 0:  # it cannot be skipped: nothing after counts
            return out
    return _ANY  # the sequence may match nothing: anything may follow


def _width(item: tuple[Any, Any]) -> tuple[int, int]:
    sub = _parser.SubPattern(_parser.State(), [item])
    lo, hi = sub.getwidth()
    return int(lo), int(hi)


def _in(atom: tuple[Any, Any], ch: str, flags: int) -> bool:
    op, av = atom
    name = str(op)
    if name == 'LITERAL':
        return ch == chr(av)
    elif name == 'NOT_LITERAL':
        return ch != chr(av)
    elif name == 'ANY':
        return bool(flags & re.DOTALL) or ch != '\n'
    negate = False
    hit = False
    for sub_op, sub_av in av:
        sub = str(sub_op)
        if sub == 'NEGATE':
            negate = True
        elif sub == 'LITERAL':
            hit = hit or ch == chr(sub_av)
        elif sub == 'RANGE':
            hit = hit or sub_av[0] <= ord(ch) <= sub_av[1]
        elif sub == 'CATEGORY':
            regex = _CATEGORIES.get(str(sub_av))
            hit = hit or regex is None or bool(regex.match(ch))
        else:  # an item this analysis does not know: it may match
            hit = True
    return hit != negate


def _witnesses(atoms: list[tuple[Any, Any]]) -> set[str]:
    ret = {chr(i) for i in range(128)} | set(_SAMPLES)
    for op, av in atoms:
        points: list[int] = []
        if str(op) in ('LITERAL', 'NOT_LITERAL'):
            points.append(av)
        elif str(op) == 'IN':
            for sub_op, sub_av in av:
                if str(sub_op) == 'LITERAL':
                    points.append(sub_av)
                elif str(sub_op) == 'RANGE':
                    points.extend(sub_av)
        for p in points:
            ret.update(chr(c) for c in (p - 1, p, p + 1) if 0 <= c <= 0x10ffff)
    return ret


def _overlap(
        a: list[tuple[Any, Any]] | None,
        b: list[tuple[Any, Any]] | None,
        flags: int,
) -> bool:
    """Whether some char is in both sets (found among witnesses: ASCII,
    samples, and the ends of every literal and range either names)."""
    if a is _ANY or b is _ANY:
        return True
    for ch in _witnesses(a + b):
        variants = {ch, ch.lower(), ch.upper()} if flags & re.IGNORECASE else {ch}
        if (
                any(_in(x, v, flags) for x in a for v in variants) and
                any(_in(y, v, flags) for y in b for v in variants)
        ):
            return True
    return False


# -- the shapes that backtrack without bound ------------------------------------

def _flat(items: Sequence[Any]) -> list[tuple[Any, Any]]:
    """A repeat's body as one sequence: groups opened, zero-width items
    (anchors, lookarounds) left out."""
    ret: list[tuple[Any, Any]] = []
    for item in items:
        name = str(item[0])
        if name == 'SUBPATTERN':
            ret.extend(_flat(item[1][3]))
        elif name not in ('AT', 'ASSERT', 'ASSERT_NOT'):
            ret.append(item)
    return ret


def _separator(item: tuple[Any, Any]) -> list[tuple[Any, Any]] | None:
    """The char a match of `item` must start with, when it is one char
    (`,` or `\\s+`), else None."""
    if _single(item):
        return [item]
    op, av = item
    if str(op) in ('MAX_REPEAT', 'MIN_REPEAT', 'POSSESSIVE_REPEAT') and av[0] >= 1:
        body = _flat(av[2])
        if len(body) == 1 and _single(body[0]):
            return [body[0]]
    return None


def _single(item: tuple[Any, Any]) -> bool:
    return str(item[0]) in ('LITERAL', 'NOT_LITERAL', 'ANY', 'IN')


def _repeat_problem(body: Sequence[Any], flags: int) -> str | None:
    seq = _flat(body)
    for i, item in enumerate(seq):
        name = str(item[0])
        # the next iteration follows the body's end: the sequence is a ring
        rest = seq[i + 1:] + seq[:i]
        if name == 'BRANCH':
            alts = item[1][1]
            firsts = [_first([*alt, *rest]) for alt in alts]
            for j, a in enumerate(firsts):
                for b in firsts[j + 1:]:
                    if _overlap(a, b, flags):
                        return 'a repeated alternation whose alternatives can match alike'
        if name in ('POSSESSIVE_REPEAT', 'ATOMIC_GROUP'):
            continue  # gives nothing back: one way to match
        lo, hi = _width(item)
        if lo == hi:
            continue
        after = _separator(rest[0]) if rest else None
        if after is None or _overlap(_chars(item), after, flags):
            return 'a nested quantifier (a variable-width part repeated with nothing to tell the repeats apart)'
    return None


def _walk(items: Sequence[Any], flags: int) -> str | None:
    for op, av in items:
        name = str(op)
        subs: list[Sequence[Any]] = []
        if name in ('MAX_REPEAT', 'MIN_REPEAT', 'POSSESSIVE_REPEAT'):
            lo, hi, body = av
            if name != 'POSSESSIVE_REPEAT' and hi > 1:
                found = _repeat_problem(body, flags)
                if found:
                    return found
            subs.append(body)
        elif name == 'SUBPATTERN':
            subs.append(av[3])
        elif name == 'ATOMIC_GROUP':
            subs.append(av)
        elif name == 'BRANCH':
            subs.extend(av[1])
        elif name in ('ASSERT', 'ASSERT_NOT'):
            subs.append(av[1])
        elif name == 'GROUPREF_EXISTS':
            subs.extend(s for s in av[1:] if s is not None)
        for sub in subs:
            found = _walk(sub, flags)
            if found:
                return found
    return None


def problem(pattern: str) -> str | None:
    """Why matching `pattern` may take exponential (or high-degree
    polynomial) time, or None when no such shape is seen."""
    if _parser is None:  # pragma: no cover
        return None
    try:
        tree = _parser.parse(pattern)
        return _walk(tree, tree.state.flags)
    except Exception:  # a private parser's surprise: the time limit holds
        return None


# -- the time limit -------------------------------------------------------------

def _on_alarm(signum: int, frame: object) -> None:
    raise OutOfTime


@contextlib.contextmanager
def time_limit(seconds: float) -> Generator[None]:
    """Raise OutOfTime in the body once `seconds` have passed (and, rarely,
    just as it ends: callers catch it around the `with`)."""
    token = platforms.set_alarm(seconds, _on_alarm)
    try:
        yield
    finally:
        platforms.cancel_alarm(token)
