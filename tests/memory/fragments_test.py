"""fragments.id_parts: what the id pattern matched, without re."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agitmem.memory import fragments


@given(
    st.lists(st.sampled_from([*'Aa9_.-\n', '٣', 'é', ' ']), max_size=10).map(''.join) |
    st.text(max_size=10),
)
def test_id_parts_is_the_pattern_ids_had(fid: str) -> None:
    import re
    m = re.match(r'^([A-Za-z0-9_.]+)-(\d+)$', fid)
    assert fragments.id_parts(fid) == (None if m is None else (m[1], m[2]))
