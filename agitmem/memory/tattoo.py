"""tattoo.md: hard constraints, one rule per "- " line."""
from __future__ import annotations

import re

from agitmem.memory import bullets

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

# `key: value` with a short key: "indent: 4 spaces", "language: Python 3.11"
_KEY_VALUE = re.compile(r'^([^\s:`][^:`]{0,39}?)\s*[:：]\s*(\S.*)$')
_NEGATIVE = re.compile(
    r"(?:\b(?:never|no|do not|don't|must not|mustn't)\b|禁止|不要|不得)",
    re.IGNORECASE,
)
_TERM = re.compile(r'`([^`\n]+)`')


class Rule(NamedTuple):
    line: int
    text: str
    key: str | None
    value: str | None
    negative: bool
    terms: tuple[str, ...]


def parse_rule(text: str, line: int = 0) -> Rule:
    m = _KEY_VALUE.match(text)
    key = value = None
    if m and len(m[1].split()) <= 4:
        key, value = m[1].strip().lower(), m[2].strip()
    negative = bool(_NEGATIVE.search(text))
    terms = tuple(_TERM.findall(text)) if negative else ()
    return Rule(line, text, key, value, negative, terms)


def parse(text: str) -> list[Rule]:
    return [parse_rule(t, i) for i, t in bullets(text)]


def render(rules: list[Rule]) -> str:
    return ''.join(f'- {r.text}\n' for r in rules)


def injected_chars(rules: list[Rule]) -> int:
    """How many characters the rules take in the injection (`- rule` lines)."""
    return sum(len(r.text) + 3 for r in rules)


def combine(user: list[Rule], project: list[Rule]) -> list[Rule]:
    """User rules first, then the project's; for `key: value` rules the
    project's value wins."""
    project_keys = {r.key for r in project if r.key}
    return [r for r in user if r.key not in project_keys] + project
