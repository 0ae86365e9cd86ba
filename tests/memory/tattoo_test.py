"""tattoo.key_value and a rule's negative/terms: what their patterns
matched when parse_rule compiled them, without re on the injection's path."""
from __future__ import annotations

import re

from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st

from agitmem.memory import tattoo

_KEY_VALUE = re.compile(r'^([^\s:`][^:`]{0,39}?)\s*[:：]\s*(\S.*)$')
_NEGATIVE = re.compile(r"(?:\b(?:never|no|do not|don't|must not|mustn't)\b|禁止|不要|不得)", re.IGNORECASE)
_TERM = re.compile(r'`([^`\n]+)`')

_PIECES = st.sampled_from([
    'a', 'key', ' ', ':', '：', '`', '\n', '\t', 'é', '\u3000', 'x' * 38, 'never', 'NO',
    "Don't", '不要', '`term`', 'ſ', 'MUſT', 'mu', 't not', '_', '١', 'İ', 'K',
])


@given(st.lists(_PIECES, max_size=10).map(''.join))
@example('indent: 4 spaces')
@example('a：b: c')
@example('k:  ')
@example('k: v\n')
@example('k: v\nw')
@example('x' * 41 + ': v')
def test_key_value_is_the_pattern_it_was(text: str) -> None:
    m = _KEY_VALUE.match(text)
    assert tattoo.key_value(text) == ((m[1], m[2]) if m else None)


@given(st.lists(_PIECES, max_size=10).map(''.join))
@example('muſt not push')
@example('nO')
@example('no_go')
@example('İno')
@example("do NOT use `var`")
def test_negative_and_terms_are_what_they_were(text: str) -> None:
    rule = tattoo.parse_rule(text)
    negative = _NEGATIVE.search(text) is not None
    assert rule.negative is negative
    assert rule.terms == (tuple(_TERM.findall(text)) if negative else ())
