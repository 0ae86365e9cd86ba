"""tattoo.md: hard constraints, one rule per "- " line."""
from __future__ import annotations

from agitmem.memory import bullets

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

# what a negative rule says (case aside: re's IGNORECASE matched these
# words' letters as ASCII's, and `ſ` as `s`), as a word; or these
_NEGATIVE_WORDS = ('never', 'no', 'do not', "don't", 'must not', "mustn't")
_NEGATIVE_CJK = ('禁止', '不要', '不得')
_FOLD = {**{c: c + 32 for c in range(ord('A'), ord('Z') + 1)}, 0x17f: ord('s')}
_KEY_MAX = 40  # characters


class Rule(NamedTuple):
    line: int
    text: str
    key: str | None
    value: str | None

    @property
    def negative(self) -> bool:
        """Whether the rule forbids something (never, do not, 不要 ...):
        what `(?i:\\b(?:never|no|do not|don't|must not|mustn't)\\b|禁止|不要|不得)`
        searched (agitmem/textmatch.py)."""
        if any(word in self.text for word in _NEGATIVE_CJK):
            return True
        # (the checks' only: the injection reads the rules' keys)
        from agitmem.textmatch import occurs
        # one character for one: the places are the text's own
        folded = self.text.translate(_FOLD)
        return any(occurs(folded, word) for word in _NEGATIVE_WORDS)

    @property
    def terms(self) -> tuple[str, ...]:
        """A negative rule's backticked terms (what it forbids)."""
        from agitmem.textmatch import backticked
        return tuple(backticked(self.text)) if self.negative else ()


def key_value(text: str) -> tuple[str, str] | None:
    """`key: value` with a short key ("indent: 4 spaces", "language: Python
    3.11"), as written: what `^([^\\s:`][^:`]{0,39}?)\\s*[:：]\\s*(\\S.*)$`
    matched, by str's methods."""
    if not text or text[0].isspace() or text[0] in ':`':
        return None
    for end in range(1, min(len(text), _KEY_MAX) + 1):
        if text[end - 1] in ':`' and end > 1:
            return None  # a key holds neither, and a longer one would
        colon = end + len(text[end:]) - len(text[end:].lstrip())
        if text[colon:colon + 1] not in (':', '：'):
            continue
        rest = text[colon + 1:]
        start = colon + 1 + len(rest) - len(rest.lstrip())
        newline = text.find('\n', start)
        if start < len(text) and newline in (-1, len(text) - 1):
            return text[:end], text[start:newline] if newline > 0 else text[start:]
    return None


def parse_rule(text: str, line: int = 0) -> Rule:
    kv = key_value(text)
    key = value = None
    if kv and len(kv[0].split()) <= 4:
        key, value = kv[0].strip().lower(), kv[1].strip()
    return Rule(line, text, key, value)


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
