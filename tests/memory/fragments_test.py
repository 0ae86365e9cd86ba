"""fragments.id_parts: what the id pattern matched, without re."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agitmem.errors import AgitmemError
from agitmem.memory import fragments


@given(
    st.lists(st.sampled_from([*'Aa9_.-\n', '٣', 'é', ' ']), max_size=10).map(''.join) |
    st.text(max_size=10),
)
def test_id_parts_is_the_pattern_ids_had(fid: str) -> None:
    import re
    m = re.match(r'^([A-Za-z0-9_.]+)-(\d+)$', fid)
    assert fragments.id_parts(fid) == (None if m is None else (m[1], m[2]))


@pytest.mark.parametrize(
    ('text', 'where'),
    (
        # two objects on one line, one object halved over two: three lines,
        # three values in one JSON array of them, but no line is JSON alone
        ('{"id": "A-001"}, {"id": "A-002"}\n{"id": "A-003"\n"next": "x"}\n', ':1: not valid JSON: Extra data'),
        ('{"id": "A-001"}\n[{"id": "A-002"}\n{"id": "A-003"}]\n', ':2: not valid JSON: Expecting'),
        ('{"id": "A-001", "goal": "\n"}\n', ':1: not valid JSON: Unterminated string'),
    ),
)
def test_each_line_is_one_object_alone(text: str, where: str) -> None:
    with pytest.raises(AgitmemError) as excinfo:
        fragments.parse(text)
    assert str(excinfo.value).startswith(f'fragments.jsonl{where}')


def test_lines_parse_as_before() -> None:
    text = '{"id": "A-001", "goal": "g"}\r\n\n  {"id": "A-002", "next": "n\u2028"}  \n'
    assert [f['id'] for f in fragments.parse(text)] == ['A-001', 'A-002']


_LINE = st.sampled_from(['', ' ', '\t', '\x1c', '\u2028', '{"id": "A-001"}', '{"id": "B-7", "refs": []}', 'x', '\r'])


@given(
    st.lists(_LINE, max_size=12).map('\n'.join) | st.text(alphabet='{}"\n \t\u2028x-', max_size=40),
    st.integers(-1, 14),
)
def test_last_lines_are_the_last_of_split_lines(text: str, count: int) -> None:
    from agitmem.memory import last_lines
    assert last_lines(text, count, lambda line: True) == (text.split('\n')[-count:] if count > 0 else [])


@given(st.lists(_LINE, max_size=12).map('\n'.join), st.integers(-1, 14))
def test_newest_lines_are_the_last_lines_parse_reads(text: str, count: int) -> None:
    shown = [line for line in text.split('\n') if line.strip()]
    assert fragments.newest_lines(text, count).split('\n') == (shown[-count:] if count > 0 and shown else [''])


def test_newest_lines_parse_as_the_newest_fragments() -> None:
    text = ''.join(f'{{"id": "A-{i:03d}"}}\n\n' for i in range(1, 40)) + '  \n'
    assert fragments.parse(fragments.newest_lines(text, 5)) == fragments.parse(text)[-5:]


def test_parse_refuses_a_fragment_nested_too_deeply() -> None:
    """A line json reads (600 deep, under its recursion limit) that the
    injection could not escape without a RecursionError."""
    deep = '[' * 600 + ']' * 600
    with pytest.raises(AgitmemError, match=r'fragments.jsonl:2: nested too deeply'):
        fragments.parse('{"id": "A-001"}\n{"id": "A-002", "goal": ' + deep + '}\n')
    assert fragments.parse('{"id": "A-001", "goal": ' + '[' * 50 + ']' * 50 + '}\n')


def test_next_id_past_an_id_longer_than_int_reads() -> None:
    """`fragment add` after a cloned memory's `A-999...9` (5,000 digits):
    int() refused it (ValueError, a traceback)."""
    got = fragments.parse('{"id": "A-001"}\n{"id": "A-' + '9' * 5000 + '"}\n{"id": "B-007"}\n')
    assert fragments.next_id(got, 'A') == 'A-002' and fragments.next_id(got, 'B') == 'B-008'
