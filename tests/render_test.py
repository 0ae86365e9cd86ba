"""render: untrusted text made safe to show.  Properties: nothing a
terminal acts on survives; different texts stay different (a decoder
gets the original back); the stream net is idempotent and keeps JSON
valid."""
from __future__ import annotations

import json
import re
import sys
import unicodedata
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agitmem import render

UNSAFE_CATEGORIES = {'Cc', 'Cf', 'Cs', 'Zl', 'Zp'}
HOSTILE = [
    'a\x1b[8mhidden\x1b[0m', '\x1b]52;c;ZXZpbA==\x07', '\x9b31m', 'x\rover',
    'abc\u202edcb', 'zero\u200bwidth', 'tag\U000e0041', '\ufeffbom', 'nul\0',
    'sep\u2028line', 'bad\udce9byte', '\\u001b', '\\\x1b', '\\', 'a\\\\u',
]
# mostly the characters that matter: controls, bidi, zero-width, tags,
# backslashes and the letters of an escape, and some of everything else
_special = st.sampled_from(
    '\x00\x07\x08\t\n\x0b\r\x1b\x7f\x85\x9b\u00ad\u061c\u200b\u200d\u200e'
    '\u2028\u2029\u202a\u202e\u2066\u2069\ufeff\U000e0001\U000e0041'
    '\\\\\\uUx0123456789abcdef{}[]',
)
# and what an attacker would type to forge an escape
_forged = st.sampled_from(['\\u001b', '\\u202e', '\\udb40\\udc41', '\\x1b', '\\\\'])
texts = st.lists(
    st.one_of(_special, _forged, st.characters(exclude_categories=('Cs',))),
).map(''.join)


def unsafe(s: str, *, newline_ok: bool = True) -> list[str]:
    keep = '\t\n' if newline_ok else '\t'
    return [c for c in s if c not in keep and unicodedata.category(c) in UNSAFE_CATEGORIES]


_ESC = re.compile(r'\\(\\|u([0-9a-f]{4}))')


def decode(shown: str) -> str:
    """The inverse of render.text / render.line (what makes them one-to-one)."""
    def one(m: re.Match[str]) -> str:
        return '\\' if m[1] == '\\' else chr(int(m[2], 16))
    return _ESC.sub(one, shown).encode('utf-16', 'surrogatepass').decode('utf-16')


@given(texts)
def test_text_leaves_nothing_a_terminal_acts_on(s: str) -> None:
    assert unsafe(render.text(s)) == []
    assert unsafe(render.line(s), newline_ok=False) == []
    assert unsafe(render.controls(s)) == []
    assert unsafe(render.controls_line(s), newline_ok=False) == []


@given(texts)
def test_different_texts_stay_different(s: str) -> None:
    # a backslash in the text cannot forge an escape: the original comes back
    assert decode(render.text(s)) == s
    assert decode(render.line(s)) == s


@given(texts, texts)
def test_no_two_texts_look_the_same(a: str, b: str) -> None:
    if a != b:
        assert render.text(a) != render.text(b)
        assert render.line(a) != render.line(b)


@given(texts)
def test_the_net_is_idempotent_and_leaves_rendered_text_alone(s: str) -> None:
    once = render.controls(s)
    assert render.controls(once) == once
    assert render.controls(render.text(s)) == render.text(s)
    assert render.controls_line(render.line(s)) == render.line(s)


@given(st.recursive(
    st.none() | st.integers() | texts,
    lambda inner: st.lists(inner) | st.dictionaries(texts, inner),
    max_leaves=10,
))
def test_the_net_keeps_json_valid_and_its_values_whole(value: Any) -> None:
    dumped = json.dumps(value, ensure_ascii=False, indent=2)
    assert json.loads(render.controls(dumped)) == value


def test_plain_text_is_shown_as_it_is() -> None:
    for s in (
        'plain ascii: a-b_c (d) [e] {f}', '中文 目标 ✓ émoji 🙂', 'tab\there\nnewline',
        r'C:\Users\me', r'a regex \d+\.\w*', '',
    ):
        assert render.text(s) == s
        assert render.controls(s) == s


def test_hostile_examples() -> None:
    assert render.text('a\x1b[8mhidden') == r'a\u001b[8mhidden'
    assert render.text('\x9b31m') == r'\u009b31m'
    assert render.text('abc\u202edcb\u200b') == r'abc\u202edcb\u200b'
    assert render.text('tag\U000e0041') == r'tag\udb40\udc41'
    assert render.text('bad\udce9') == r'bad\udce9'  # a byte that was not UTF-8
    assert render.text('two\nlines') == 'two\nlines'
    assert render.line('two\nlines') == r'two\u000alines'
    # the literal text of an escape is not the escaped character
    assert render.text('\\u001b') == '\\\\u001b' != render.text('\x1b')
    assert render.text('\\\x1b') == '\\\\\\u001b'
    assert render.controls('\\u001b') == '\\u001b'  # the net only escapes


def test_every_unsafe_character_this_python_knows_is_escaped() -> None:
    every = ''.join(
        chr(n) for n in range(sys.maxunicode + 1)
        if unicodedata.category(chr(n)) in UNSAFE_CATEGORIES and chr(n) not in '\t\n'
    )
    assert unsafe(render.text(every)) == []
    assert unsafe(render.controls(every)) == []
    for c in HOSTILE:
        assert unsafe(render.text(c)) == []
