"""agitmem.jsontext answers as json does: the same values, the same text,
the same errors (json's own JSONDecodeError, with its message and place)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agitmem import jsontext

_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.text() |
    st.floats(allow_nan=False) | st.sampled_from([float('inf'), float('-inf')])
)
VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


def _outcome(f: object, *args: object, **kwargs: object) -> object:
    try:
        return ('value', repr(f(*args, **kwargs)))  # type: ignore[operator]
    except (ValueError, TypeError, RecursionError) as e:
        return (type(e).__name__, str(e))


@given(VALUES, st.booleans(), st.booleans(), st.sampled_from([(', ', ': '), (',', ':')]))
def test_dumps_is_json_dumps(value: object, ascii: bool, sort: bool, seps: tuple[str, str]) -> None:
    kw = {'ensure_ascii': ascii, 'sort_keys': sort, 'separators': seps}
    assert jsontext.dumps(value, **kw) == json.dumps(value, **kw)  # type: ignore[arg-type]


@given(VALUES)
def test_loads_reads_back_what_json_wrote(value: object) -> None:
    text = json.dumps(value)
    assert repr(jsontext.loads(text)) == repr(json.loads(text))


# what a hostile payload or a cut cache holds: every prefix of real JSON,
# and text that is not JSON at all
@given(VALUES.map(json.dumps).flatmap(lambda t: st.integers(0, len(t)).map(lambda n: t[:n])) | st.text())
def test_loads_fails_where_json_fails_and_says_the_same(text: str) -> None:
    assert _outcome(jsontext.loads, text) == _outcome(json.loads, text)


@given(
    st.binary() |
    st.tuples(VALUES.map(json.dumps), st.sampled_from(['utf-8', 'utf-8-sig', 'utf-16', 'utf-16-le', 'utf-32-be']))
    .map(lambda t: t[0].encode(t[1])),
)
def test_loads_reads_bytes_as_json_does(data: bytes) -> None:
    assert _outcome(jsontext.loads, data) == _outcome(json.loads, data)


@pytest.mark.parametrize('text', [
    '', ' ', '\ufeff{}', '{"a": 1} x', '[1,]', '{"a" 1}', '"\x01"', '01', 'NaN', '[-Infinity]',
    '{"a": 1, "a": 2}', ' \t\n\r{}\r\n', '"\\ud800"', '1' * 5000, '[' * 100000,
    b'', b'1', b'12', b'\x001', b'1\x00', b'"\xed\xa0\x80"', b'\xef\xbb\xbf[1]', b'\xff\xfe1\x00', b'[1]\n\x00',
])
def test_loads_on_the_edges(text: str | bytes) -> None:
    assert _outcome(jsontext.loads, text) == _outcome(json.loads, text)


@given(VALUES.map(json.dumps).flatmap(lambda t: st.integers(0, len(t)).map(lambda n: t[:n])) | st.text())
def test_a_decoder_is_json_loads(text: str) -> None:
    decode = jsontext.decoder()
    assert _outcome(decode, text) == _outcome(json.loads, text)
    assert _outcome(decode, ' 1 ') == ('value', '1')  # the one scanner again


@pytest.mark.parametrize('text', [
    '', ' ', '\ufeff{}', '{"a": 1} x', '{"a": 1}, {"b": 2}', '{"a": 1', '"b": 2}', '[1,]', '"\x01"', '01',
    'NaN', ' \t{}\r', '1' * 5000, '[' * 100000, '{"a": 1}\r',
])
def test_a_decoder_on_the_edges(text: str) -> None:
    def refuse(name: str) -> object:
        raise ValueError(f'no {name}')
    assert _outcome(jsontext.decoder(), text) == _outcome(json.loads, text)
    assert _outcome(jsontext.decoder(refuse), text) == _outcome(json.loads, text, parse_constant=refuse)


def test_parse_constant_is_called_as_json_calls_it() -> None:
    def refuse(name: str) -> object:
        raise ValueError(f'no {name}')
    for text in ('[NaN]', '{"a": -Infinity}', '[1.5]'):
        assert _outcome(jsontext.loads, text, parse_constant=refuse) == _outcome(
            json.loads, text, parse_constant=refuse,
        )


def test_dumps_refuses_what_json_refuses() -> None:
    loop: list[object] = []
    loop.append(loop)
    for value in ({'a': object()}, {'a': {1}}, loop, {1: 2, None: 3}):
        for sort in (False, True):
            assert _outcome(jsontext.dumps, value, sort_keys=sort) == _outcome(json.dumps, value, sort_keys=sort)


def test_raw_decode_and_scanstring_are_jsons() -> None:
    text = '{"k\\u00e9y": [1, "v"], "x": 2}'
    assert jsontext.scanstring(text, 2) == json.decoder.scanstring(text, 2)  # type: ignore[attr-defined]
    assert jsontext.raw_decode(text, 10) == json.JSONDecoder().raw_decode(text, 10)
    assert _outcome(jsontext.raw_decode, text, 1) == _outcome(json.JSONDecoder().raw_decode, text, 1)


def test_reading_and_writing_imports_neither_json_nor_re() -> None:
    code = (
        'import sys\n'
        'before = set(sys.modules)\n'  # an editable install's finder imports re itself
        'from agitmem import jsontext\n'
        'v = jsontext.loads(\'{"a": [1, 2.5, "\\\\u00e9", null]}\')\n'
        'jsontext.dumps(v, ensure_ascii=False, sort_keys=True)\n'
        'print(sorted(m for m in ("json", "re", "enum", "typing") if m in set(sys.modules) - before))\n'
    )
    out = subprocess.run([sys.executable, '-I', '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]'


def test_errors_are_jsons_before_json_is_imported() -> None:
    # _json's C code finds JSONDecodeError in sys.modules, without importing
    # json.decoder: in a hook nothing else has imported it
    code = (
        'import sys\n'
        # coverage's start-up (CI) imports json itself: as if it had not
        'for name in [m for m in sys.modules if m == "json" or m.startswith("json.")]:\n'
        '    del sys.modules[name]\n'
        'from agitmem import jsontext\n'
        'assert "json.decoder" not in sys.modules\n'
        'for text in sys.argv[1:]:\n'
        '    for call in (jsontext.loads, lambda t: jsontext.raw_decode(t, 0), lambda t: jsontext.scanstring(t, 1)):\n'
        '        try:\n'
        '            call(text)\n'
        '        except ValueError as e:\n'
        '            print(type(e).__name__, e)\n'
        '        else:\n'
        '            print("read")\n'
    )
    texts = ['"unterminated', '{"a": "b\x01"}', '{"a" 1}', '[1,]', '"\\q"', '', '[1] x', '"ok"']
    out = subprocess.run([sys.executable, '-c', code, *texts], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    want = []
    for text in texts:
        for call in (json.loads, lambda t: json.JSONDecoder().raw_decode(t, 0),
                     lambda t: json.decoder.scanstring(t, 1)):  # type: ignore[attr-defined]
            try:
                call(text)
            except ValueError as e:
                want.append(f'{type(e).__name__} {e}')
            else:
                want.append('read')
    assert out.stdout.splitlines() == want


def test_too_deep_counts_lists_and_objects_without_recursing() -> None:
    assert not jsontext.too_deep('x') and not jsontext.too_deep({}) and not jsontext.too_deep([1, 'a'])
    value: object = 'leaf'
    for _ in range(jsontext.MAX_DEPTH):
        value = [value]
    assert not jsontext.too_deep({'x': 1, 'y': [2]}) and not jsontext.too_deep(value)
    assert jsontext.too_deep([value]) and jsontext.too_deep({'a': 1, 'b': {'c': value}})
    for _ in range(100_000):  # past the recursion limit: walked level by level
        value = {'k': value}
    assert jsontext.too_deep(value)
