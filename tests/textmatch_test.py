"""The checks' patterns, by str's methods (agitmem/textmatch.py): each
is what the regular expression it replaced matched, on text built from
the pieces those patterns turn on."""
from __future__ import annotations

import re

from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st

from agitmem import textmatch
from agitmem.checks import merge_conflict
from agitmem.checks import schema
from agitmem.checks import state_vs_worktree
from agitmem.checks import tattoo_vs_snapshot

# characters on each side of what the patterns ask: word characters of
# every kind (a digit that is no decimal: `²`), spaces that are not ' ',
# the separators a path and a suffix use
_PIECES = st.sampled_from([
    'a', 'Z', '_', 'é', 'ſ', '١', '²', '7', '42', ' ', '\t', '\n', '\u3000', '\x1c',
    '`', ':', '::', '.', './', '/', '-', '$', '@', '+', '*', ')', 'x.y',
    '<<<<<<<', '>>>>>>>', 'var', 'never', 'NO', "Don't", 'must not', '不要',
])
TEXT = st.lists(_PIECES, max_size=12).map(''.join)
TERM = st.lists(_PIECES, max_size=3).map(''.join)


@given(TEXT)
@example('``a`')
@example('`a\nb` `c`')
def test_backticked_is_the_pattern(text: str) -> None:
    assert textmatch.backticked(text) == re.findall(r'`([^`\n]+)`', text)


@given(TEXT, TERM, st.booleans(), st.booleans(), st.sampled_from(['', '$', '.-']))
@example('a$b', 'b', True, True, '$')
@example('', '', True, True, '')
def test_occurs_is_the_pattern(text: str, term: str, left: bool, right: bool, also: str) -> None:
    word = '\\w' + re.escape(also)
    pattern = (f'(?<![{word}])' if left else '') + re.escape(term) + (f'(?![{word}])' if right else '')
    expected = re.search(pattern, text) is not None
    assert textmatch.occurs(text, term, left=left, right=right, also=also) is expected


def test_occurs_past_many_occurrences_is_the_pattern() -> None:
    # a one-letter symbol in a big file: the C engine takes over
    text = 'ab' * 10_000
    assert textmatch.occurs(text, 'a') is False
    assert textmatch.occurs(text + ' a', 'a') is True
    assert textmatch.occurs('$a' * 1000 + ' a', 'a', also='$') is True
    assert textmatch.occurs('$a' * 1000, 'a', also='$') is False


@given(TEXT)
@example('-  x')
@example('12) x')
@example('- ')
@example('-5. x')
@example('١. x')
@example('². x')
def test_unbulleted_is_the_pattern(text: str) -> None:
    assert tattoo_vs_snapshot._unbulleted(text) == re.sub(r'^(?:[-*+]|\d+[.)])\s+', '', text)


@given(TEXT)
@example(' `my_key`-- name ')
def test_norm_key_is_the_pattern(key: str) -> None:
    expected = re.sub(r'[\s_-]+', ' ', key.strip().strip('`*_')).casefold()
    assert tattoo_vs_snapshot._norm_key(key) == expected


@given(TERM.filter(lambda t: '\n' not in t), TEXT)
@example('.env', 'a.env')
@example('var', 'variable')
def test_uses_is_the_pattern(term: str, text: str) -> None:
    left = r'(?<![\w])' if re.match(r'\w', term) else ''
    right = r'(?![\w])' if re.search(r'\w$', term) else ''
    expected = re.search(f'{left}{re.escape(term)}{right}', text) is not None
    assert tattoo_vs_snapshot._uses(text, term) is expected


@given(TEXT)
@example('<<<<<<< HEAD')
@example('<<<<<<<<')
@example('>>>>>>>\n')
def test_merge_markers_are_the_pattern(line: str) -> None:
    assert merge_conflict._is_marker(line, merge_conflict._OPEN) is (re.match(r'^<{7}(?: |$)', line) is not None)
    assert merge_conflict._is_marker(line, merge_conflict._CLOSE) is (re.match(r'^>{7}(?: |$)', line) is not None)


@given(TEXT, st.integers(0, 3))
@example('p:12: bad', 1)
@example('p: 5: bad', 1)
@example('p:12x', 1)
@example('p:١٢: bad', 1)
def test_schema_line_is_the_pattern(problem: str, start: int) -> None:
    m = re.compile(r'(?::(\d+))?: ').match(problem, start)
    expected = None if m is None else (int(m[1]) if m[1] else None, m.end())
    assert schema._line_at(problem, start) == expected


@given(TEXT)
@example('./')
@example('./-a/b')
@example('src/a.py\n')
@example('a//')
@example('-x/y')
def test_is_path_is_the_pattern(term: str) -> None:
    expected = re.match(r'^(?:\./)?[\w.@+][\w.@+-]*(?:/[\w.@+-]+)*/?$', term) is not None
    assert state_vs_worktree._is_path(term) is expected


@given(TEXT)
@example('src/a.py:12')
@example('src/a.py:12:4')
@example('t.py::test_x')
@example('a:::b')
@example('a::b c')
@example('a:1\n')
@example('a:1:2:3')
@example('a::\n\n')
def test_without_suffix_is_the_pattern(name: str) -> None:
    expected = re.sub(r'(?:::\S+|:\d+(?::\d+)?)$', '', name)
    assert state_vs_worktree._without_suffix(name) == expected


@given(TERM.filter(lambda t: '\n' not in t), TEXT)
@example('a.b', 'xa.b')
@example('-x-', 'y-x-z')
@example('ſt', 'xſt!')
def test_a_text_using_a_term_holds_its_key_word(term: str, text: str) -> None:
    # tattoo_vs_snapshot tries a term only on the texts holding its key
    key = tattoo_vs_snapshot._key(term)
    if tattoo_vs_snapshot._uses(text, term):
        assert key is None or key in tattoo_vs_snapshot._words(text)
