from __future__ import annotations

from agitmem.findings import Finding as Finding  # the checks' own name for it


def json_line(text: str, key: str) -> int | None:
    """The line of a JSON file where "key" appears, for a finding's line."""
    needle = f'"{key}"'
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    return None
