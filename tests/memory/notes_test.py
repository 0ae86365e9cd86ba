"""notes.md: the newest notes, read from the end, are parse's last."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agitmem.memory import notes

_LINE = st.sampled_from(['', '- a', '-  ', '- \u2028', '-b', '  - c', '- d ', '- 笔记', 'text', '\t', '- \x1c'])


@given(st.lists(_LINE, max_size=15).map('\n'.join) | st.text(alphabet='- ab\n\t\u2028', max_size=40), st.integers(-1, 16))
def test_newest_is_parses_last(text: str, count: int) -> None:
    assert notes.newest(text, count) == (notes.parse(text)[-count:] if count > 0 else [])
