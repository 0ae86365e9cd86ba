"""`tattoo-vs-snapshot`: memory that contradicts its own hard rules.

A `key: value` tattoo rule whose key the snapshot's Decisions or the state
give another value is an error; a backticked term that a negative tattoo
rule forbids (`never use `var``), used in the snapshot's Decisions or In
progress or in the state, is a warning."""
from __future__ import annotations

from agitmem.checks import Finding
from agitmem.checks import json_line
from agitmem.memory import snapshot as snapshot_mod
from agitmem.memory import tattoo as tattoo_mod
from agitmem.memory.tattoo import Rule
from agitmem.textmatch import is_word
from agitmem.textmatch import occurs

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

ID = 'tattoo-vs-snapshot'
# forbidden terms tried on the texts, in all (a second's worth): the
# ones a text may use are looked up by its words, but a term with none
# (`->`) is tried on every text
_TRIES_MAX = 1_000_000
_STATE_TEXT_KEYS = ('current_goal', 'last_action', 'next_intent')


def _unbulleted(text: str) -> str:
    """text without its list marker: what `^(?:[-*+]|\\d+[.)])\\s+`
    matched, by str's methods (agitmem/textmatch.py)."""
    if text[:1] in ('-', '*', '+'):
        end = 1
    else:
        end = 0
        while end < len(text) and text[end].isdecimal():
            end += 1
        if not end or text[end:end + 1] not in ('.', ')'):
            return text
        end += 1
    # (lstrip() takes what isspace() says, as \s does)
    rest = text[end:].lstrip()
    return rest if len(rest) < len(text) - end else text


def _norm_key(key: str) -> str:
    """key.strip().strip('`*_'), each run of spaces, `_` and `-` one
    space (what re.sub(r'[\\s_-]+', ' ', ...) made), casefolded."""
    out: list[str] = []
    gap = False
    for ch in key.strip().strip('`*_'):
        if ch.isspace() or ch in '_-':
            gap = True
            continue
        if gap:
            out.append(' ')
            gap = False
        out.append(ch)
    if gap:
        out.append(' ')
    return ''.join(out).casefold()


def _norm_value(value: str) -> str:
    value = value.strip().rstrip('.;,。；').strip().strip('`*"\'')
    return ' '.join(value.split()).casefold()


def _key_value(text: str) -> tuple[str, str] | None:
    rule = tattoo_mod.parse_rule(_unbulleted(text).replace('**', ''))
    if rule.key is None or rule.value is None:
        return None
    return _norm_key(rule.key), rule.value.strip()


def _quote(path: str, rule: Rule) -> str:
    return f'tattoo rule "{rule.text}" ({path}:{rule.line})'


def _uses(text: str, term: str) -> bool:
    """Whether text uses term: as a word at an end of it that is a word
    character (`var` is not in `variable`; `.env` is in `a.env`)."""
    return occurs(text, term, left=is_word(term[:1]), right=is_word(term[-1:]))


def _words(text: str) -> set[str]:
    """text's words: its runs of word characters, each whole."""
    words = set()
    start = -1
    for i, ch in enumerate(text):
        if is_word(ch):
            if start < 0:
                start = i
        elif start >= 0:
            words.add(text[start:i])
            start = -1
    if start >= 0:
        words.add(text[start:])
    return words


def _key(term: str) -> str | None:
    """A word of term that a text using it holds whole (_words): its
    first when it begins with a word character (_uses asks for none just
    before it), its last when it ends with one, else any (a non-word
    character of term's on each side); None when it has none."""
    if is_word(term[:1]):
        end = 1
        while is_word(term[end:end + 1]):
            end += 1
        return term[:end]
    if is_word(term[-1:]):
        start = len(term) - 1
        while start and is_word(term[start - 1]):
            start -= 1
        return term[start:]
    words = _words(term)
    return min(words) if words else None


def _state_texts(state: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for key, value in state.items():
        if isinstance(value, str) and key not in ('tree', 'updated_at'):
            yield key, value


def check(
        rules: list[tuple[str, Rule]],
        snapshot_text: str,
        state: dict[str, Any],
        *,
        snapshot_path: str,
        state_path: str,
        state_text: str = '',
) -> list[Finding]:
    """rules: (shown path of its tattoo, rule), user tattoo first; state:
    the parsed state.json ({} when unreadable), state_text its text (for
    line numbers)."""
    ret: list[Finding] = []
    snap = snapshot_mod.parse(snapshot_text)
    decisions = snapshot_mod.content_lines(snap.get(snapshot_mod.DECISIONS))
    in_progress = snapshot_mod.content_lines(snap.get(snapshot_mod.IN_PROGRESS))

    by_key: dict[str, tuple[str, Rule]] = {}
    for path, rule in rules:
        if rule.key is not None and rule.value is not None:
            by_key[_norm_key(rule.key)] = (path, rule)  # the project's wins

    # `key: value` against the Decisions
    for n, text in decisions:
        kv = _key_value(text)
        if kv is None or kv[0] not in by_key:
            continue
        path, rule = by_key[kv[0]]
        assert rule.value is not None
        if _norm_value(kv[1]) != _norm_value(rule.value):
            ret.append(
                Finding(
                    ID, 'error',
                    f'decision "{_unbulleted(text)}" contradicts '
                    f'{_quote(path, rule)}; change the decision to '
                    f'"{rule.key}: {rule.value}", or change the tattoo rule '
                    f'if the decision is right',
                    path=snapshot_path, line=n,
                ),
            )

    # ... and against the state: a key of its own, or "key: value" text
    for key, value in _state_texts(state):
        hit = None
        if _norm_key(key) in by_key:
            hit = _norm_key(key), value
        else:
            kv = _key_value(value)
            if kv is not None and kv[0] in by_key:
                hit = kv
        if hit is None:
            continue
        path, rule = by_key[hit[0]]
        assert rule.value is not None
        if _norm_value(hit[1]) != _norm_value(rule.value):
            ret.append(
                Finding(
                    ID, 'error',
                    f'state "{key}" says "{value}", which contradicts '
                    f'{_quote(path, rule)}; update the state (`agitmem state '
                    f'set {key}=...`), or the tattoo rule if the state is '
                    f'right',
                    path=state_path, line=json_line(state_text, key),
                ),
            )

    # terms a negative rule forbids
    # (a term a rule names twice is one)
    forbidden = list(dict.fromkeys(
        (term, path, rule)
        for path, rule in rules if rule.negative
        for term in rule.terms
    ))
    if not forbidden:
        return ret
    places: list[tuple[str, int | None, str]] = [
        (snapshot_path, n, text) for n, text in (*decisions, *in_progress)
    ]
    places.sort(key=lambda p: p[1] or 0)
    places.extend(
        (state_path, json_line(state_text, key), value)
        for key, value in _state_texts(state)
    )
    # the terms a text may use, by a word it would hold (_key): a
    # tattoo's thousands of terms are not each tried on each line
    by_word: dict[str | None, list[int]] = {}
    for i, (term, _, _) in enumerate(forbidden):
        by_word.setdefault(_key(term), []).append(i)
    tries = 0
    for where, line, text in places:
        keys = (None, *(_words(text) & by_word.keys()))
        # (a try on a long text counts as many: each reads all of it)
        tries += sum(len(by_word.get(key, ())) for key in keys) * (1 + len(text) // 512)
        if tries > _TRIES_MAX:
            # terms with no word (`->`), or many sharing one, on many lines
            _, path, rule = forbidden[0]
            ret.append(
                Finding(
                    ID, 'warning',
                    f'the tattoo forbids more terms ({len(forbidden):,}) than '
                    f'are looked for in the snapshot and state; the rest were '
                    f'not; name fewer in its rules',
                    path=path, line=rule.line,
                ),
            )
            break
        maybe = sorted(i for key in keys for i in by_word.get(key, ()))
        for term, path, rule in (forbidden[i] for i in maybe):
            if _uses(text, term):
                ret.append(
                    Finding(
                        ID, 'warning',
                        f'uses `{term}`, which {_quote(path, rule)} forbids; '
                        f'drop it from the plan, or change the rule',
                        path=where, line=line,
                    ),
                )
    return ret
