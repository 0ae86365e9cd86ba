from __future__ import annotations

from agitmem.findings import Finding as Finding  # the checks' own name for it

# every check id (DESIGN.md section 6), in the order the checks run; each
# is its module's ID (tests/checks/ids_test.py), written out here so that
# AGITMEM_SKIP is read without importing every check (the commit-msg hook
# runs one rule kind only)
IDS = (
    'tattoo-size', 'tattoo-vs-snapshot', 'state-vs-worktree',
    'verification-stale', 'progress-not-updated', 'enforce', 'secrets',
    'size', 'schema', 'merge-conflict',
)



def json_line(text: str, key: str) -> int | None:
    """The line of a JSON file where "key" appears, for a finding's line."""
    needle = f'"{key}"'
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    return None


def parse_skip(value: str) -> tuple[frozenset[str], list[str]]:
    """AGITMEM_SKIP=id1,id2: the ids to skip, and names that are no id."""
    names = [s.strip() for s in value.split(',') if s.strip()]
    return (
        frozenset(n for n in names if n in IDS),
        [n for n in names if n not in IDS],
    )
