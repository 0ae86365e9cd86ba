from __future__ import annotations

from typing import NamedTuple


class Finding(NamedTuple):
    id: str  # the check id of DESIGN.md section 6, e.g. 'secrets'
    severity: str  # 'error' blocks, 'warning' informs
    message: str  # one sentence that says what to do
    path: str | None = None
    line: int | None = None


def json_line(text: str, key: str) -> int | None:
    """The line of a JSON file where "key" appears, for a finding's line."""
    needle = f'"{key}"'
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    return None
