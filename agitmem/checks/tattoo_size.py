"""`tattoo-size`: a tattoo is read in full after every compaction, so it must
stay short: over `max_rules` rules warns, over 200 lines errors."""
from __future__ import annotations

from agitmem.checks import Finding
from agitmem.memory import bullets

ID = 'tattoo-size'
MAX_LINES = 200


def check(text: str, *, max_rules: int, path: str) -> list[Finding]:
    ret = []
    rules = bullets(text)
    if len(rules) > max_rules:
        first_extra, _ = rules[max_rules]
        ret.append(
            Finding(
                ID, 'warning',
                f'{len(rules)} rules, over max_rules ({max_rules}); merge or '
                f'drop rules so that each one still gets read (or raise '
                f'max_rules in .agent/config.yaml)',
                path=path, line=first_extra,
            ),
        )
    lines = len(text.splitlines())
    if lines > MAX_LINES:
        ret.append(
            Finding(
                ID, 'error',
                f'{lines} lines, over the limit of {MAX_LINES}; keep only the '
                f'rules that must never be broken and move the rest to '
                f'snapshot.md or notes.md',
                path=path, line=MAX_LINES + 1,
            ),
        )
    return ret
