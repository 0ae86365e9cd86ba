"""snapshot.heading_title: what the heading pattern matched, without re."""
from __future__ import annotations

import re

from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st

from agitmem.memory import snapshot

_PATTERN = re.compile(r'^(#{1,6})\s+(.+?)\s*#*\s*$')


@given(st.lists(st.sampled_from([*'## \t\r\x0b\x1ca', 'é', '\u2028', '\u3000', '\x85', 'Goal']), max_size=14).map(''.join))
@example('#  ')
@example('# ')
@example('####### Goal')
@example('## Goal ##  ')
@example('# ##')
@example('## In progress\r')
def test_heading_title_is_the_pattern_it_was(line: str) -> None:
    m = _PATTERN.match(line)
    assert snapshot.heading_title(line) == (m[2] if m else None)
