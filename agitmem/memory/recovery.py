"""The recovery log: each compaction, and how the agent recovered from it.

`.agent/log/recovery.jsonl` is append-only, one JSON object per line:

- `{"kind": "compaction", "id", "at", "agent", "session", "trigger",
  "tokens_before", "checkpoint", "state_step", "state_age", "stale",
  "expect", "summary", "injection"}`: written when the injection after a
  compaction is given.  `expect` is what the state said at that moment
  (current_file, current_symbol, next_intent, In progress, goal, the last
  verification): the agent's first action is judged against it.
- `{"kind": "verdict", "id", "at", "verdict", "evidence", "first_action",
  "tokens_after"}`: the heuristic's verdict on the first turn after it.
- `{"kind": "summary", "id", "at", "summary"}`: the client's summary, when
  it came after the record (Claude Code's PostCompact).
- `{"kind": "mark", "id", "at", "verdict"}`: a verdict given by hand
  (`agitmem recovery mark`); it overrides the heuristic.

Appending whole lines with O_APPEND keeps two sessions from interleaving;
folding the lines gives one row per compaction, numbered in log order.

The verdicts are seed 004's (section 5): recovered, goal drift, location
lost, state confusion, full reset; `unknown` where the first turn shows
nothing to judge by.
"""
from __future__ import annotations

import json
import re
from typing import Any

LOG = 'recovery.jsonl'
VERDICTS = ('recovered', 'drift', 'location', 'state', 'reset', 'unknown')
# what `recovery mark` takes (seed 004's hand labels) -> verdict
MARKS = {
    'ok': 'recovered', 'recovered': 'recovered', 'drift': 'drift',
    'location': 'location', 'state': 'state', 'reset': 'reset',
}
TITLES = {
    'recovered': 'recovered', 'drift': 'goal drift', 'location': 'location lost',
    'state': 'state confusion', 'reset': 'full reset', 'unknown': 'unknown',
}
# first-turn events kept as evidence
EVENTS = 20
TEXT_CHARS = 600

# "all tests pass", "tests are passing now", "the task is done", "all green"
_CLAIM = re.compile(
    r'(?:\b(?:all|the)\s+(?:\w+\s+)?tests?\s+(?:now\s+|still\s+)?pass(?:es|ed)?\b'
    r'|\btests?\s+(?:are\s+|now\s+)+passing\b'
    r'|\btests?\s+pass(?:es)?\b(?!\s+(?:except|but))'
    r'|\ball\s+green\b'
    r'|\b(?:task|work|everything|it)\s+(?:is\s+)?(?:now\s+)?(?:done|complete|completed|finished)\b)',
    re.I,
)
# "n't" has no word boundary before it ("don't"); "no tests pass", "none
# of the tests pass"; "all tests pass except/but ..." says some do not
_NEGATED = re.compile(r"(?:\b(?:not|never|no longer|none|fail\w*)\b|n't\b)", re.I)
_NO = re.compile(r'\bno\s+$', re.I)
_EXCEPT = re.compile(r'\s*,?\s*(?:except|but|apart from|other than)\b', re.I)
# asking the user what to do instead of doing it
_ASK = re.compile(
    r'\b(?:what would you like|what should i|what do you want|how would you like'
    r'|could you (?:clarify|tell me|remind me)|can you (?:clarify|tell me|remind me)'
    r'|let me know what|which (?:task|file|part) (?:should|would|do)'
    r'|what (?:are|were) we (?:working on|doing)|i (?:don\'t|do not) (?:know|have context))',
    re.I,
)
_WORD = re.compile(r'[A-Za-z_][\w.-]{3,}')


def _str(value: object) -> str:
    return value if isinstance(value, str) else ''


def parse(text: str) -> list[dict[str, Any]]:
    """The log's records; a damaged line is skipped (the log is an aid:
    one bad line must not hide the rest)."""
    ret = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: a deep array
            continue
        if isinstance(obj, dict) and isinstance(obj.get('id'), str):
            ret.append(obj)
    return ret


def fold(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per compaction, in log order, numbered from 1, with its
    heuristic verdict, its hand mark and the verdict that counts."""
    rows: dict[str, dict[str, Any]] = {}
    for r in records:
        kind = r.get('kind')
        if kind == 'compaction' and r['id'] not in rows:
            rows[r['id']] = {**r, 'n': len(rows) + 1, 'heuristic': None, 'mark': None}
        elif r['id'] not in rows:
            continue
        elif kind == 'verdict' and r.get('verdict') in VERDICTS:
            row = rows[r['id']]
            row['heuristic'] = r['verdict']
            evidence = r.get('evidence')
            row['evidence'] = [e for e in evidence if isinstance(e, str)] if isinstance(evidence, list) else []
            for key in ('first_action', 'tokens_after', 'events', 'text'):
                row[key] = r.get(key)
        elif kind == 'summary' and isinstance(r.get('summary'), str):
            rows[r['id']]['summary'] = rows[r['id']].get('summary') or r['summary']
        elif kind == 'mark' and r.get('verdict') in VERDICTS:
            rows[r['id']]['mark'] = r['verdict']
    for row in rows.values():
        row['verdict'] = row['mark'] or row['heuristic']
    return list(rows.values())


def expectation(state: dict[str, Any], in_progress: list[str], goal: list[str], todo: list[str]) -> dict[str, Any]:
    """What the state said when the compaction came: the yardstick."""
    lv = state.get('last_verification')
    lv = lv if isinstance(lv, dict) else {}
    return {
        'current_file': _str(state.get('current_file')),
        'current_symbol': _str(state.get('current_symbol')),
        'current_goal': _str(state.get('current_goal')),
        'next_intent': _str(state.get('next_intent')),
        'in_progress': in_progress,
        'goal': goal,
        'todo': todo,
        'verification': _str(lv.get('result')) or None,
        'verification_reason': _str(lv.get('reason')),
    }


def _sound(expect: dict[str, Any]) -> dict[str, Any]:
    """`expect` with text where text belongs: it comes back from the
    session's hook state, which may be damaged."""
    ret = dict(expect)
    for key in ('current_file', 'current_symbol', 'current_goal', 'next_intent', 'verification_reason'):
        ret[key] = _str(expect.get(key))
    for key in ('in_progress', 'goal', 'todo'):
        value = expect.get(key)
        ret[key] = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    ret['verification'] = _str(expect.get('verification')) or None
    return ret


def _mentions(text: str, path: str) -> bool:
    """`path` (or its file name) is named in `text`."""
    if not path or not text:
        return False
    name = path.rsplit('/', 1)[-1]
    return path in text or re.search(rf'(?<![\w.-]){re.escape(name)}(?![\w-])', text) is not None


def _parent(path: str) -> str:
    return path.rsplit('/', 1)[0] if '/' in path else ''


def _stem(path: str) -> str:
    return path.rsplit('/', 1)[-1].split('.', 1)[0]


def restates(text: str, intent: str) -> bool:
    """`text` says most of `intent` again (its words of 4 letters or
    more: 60% of them, at least 3)."""
    want = {w.lower() for w in _WORD.findall(intent)}
    if len(want) < 2:
        return bool(intent.strip()) and intent.strip().lower() in text.lower()
    have = {w.lower() for w in _WORD.findall(text)}
    hit = len(want & have)
    return hit >= min(3, len(want)) and hit >= 0.6 * len(want)


def claims_done(text: str) -> str | None:
    """The sentence of `text` that says the tests pass or the work is done
    (not negated), else None."""
    for sentence in re.split(r'(?<=[.!?\n])\s+', text):
        m = _CLAIM.search(sentence)
        if not m:
            continue
        before, after = sentence[:m.start()], sentence[m.end():]
        if not (_NEGATED.search(before + after[:12]) or _NO.search(before) or _EXCEPT.match(after)):
            return sentence.strip()[:200]
    return None


def asks_user(text: str) -> bool:
    tail = text.strip()[-400:]
    return bool(_ASK.search(tail)) or tail.endswith('?')


def _edit_verdict(expect: dict[str, Any], edit: dict[str, Any]) -> tuple[str, str]:
    f = _str(edit.get('file'))
    symbol = _str(edit.get('symbol'))
    current = expect.get('current_file') or ''
    intent_text = '\n'.join([expect.get('next_intent') or '', *expect.get('in_progress', ())])
    where = f + (f' in {symbol}' if symbol else '')
    if current and f == current:
        want = expect.get('current_symbol') or ''
        if want and symbol and symbol != want and not _mentions(intent_text, symbol):
            return 'location', f'first edit {where}: current_file, but state says current_symbol {want}'
        return 'recovered', f'first edit {where}: the state\'s current_file'
    if _mentions(intent_text, f):
        return 'recovered', f'first edit {where}: named in next_intent / In progress'
    task_text = '\n'.join([expect.get('current_goal') or '', *expect.get('goal', ()), *expect.get('todo', ())])
    related = (
        current and (
            (_parent(f) and _parent(f) == _parent(current)) or _stem(f) == _stem(current)
        )
    ) or _mentions(task_text, f)
    if related:
        return 'location', f'first edit {where}: same task, but state says current_file {current or "(none)"}'
    return 'drift', f'first edit {where}: not current_file ({current or "none"}) nor named in next_intent, In progress or the goal'


def classify(
        expect: dict[str, Any],
        events: list[dict[str, Any]],
        text: str | None,
) -> tuple[str, list[str], str | None]:
    """(verdict, evidence, first action) of the first turn after a
    compaction: its tool events (edits with file and symbol, commands with
    exit status and test result) and the agent's last text of the turn."""
    expect = _sound(expect)
    text = text or ''
    evidence = []
    first = None
    for e in events:
        if e.get('kind') == 'edit':
            first = first or f'edit {e.get("file")}' + (f' in {e["symbol"]}' if e.get('symbol') else '')
        elif e.get('kind') == 'command':
            first = first or f'ran `{e.get("command")}` (exit {e.get("exit_code")})'
    if not first and text.strip():
        first = 'said: ' + ' '.join(text.split())[:200]
    passed = any(e.get('kind') == 'command' and e.get('test') == 'passed' for e in events)
    claim = claims_done(text)
    if claim and expect.get('verification') == 'failed' and not passed:
        why = expect.get('verification_reason') or 'no reason recorded'
        evidence.append(f'said "{claim}" while the last verification failed ({why}), with no passing test run since')
        return 'state', evidence, first
    for e in events:
        if e.get('kind') == 'edit':
            verdict, why = _edit_verdict(expect, e)
            evidence.append(why)
            return verdict, evidence, first
    tests = [e for e in events if e.get('kind') == 'command' and e.get('test')]
    if tests and (expect.get('verification') == 'failed' or 'test' in (expect.get('next_intent') or '').lower()):
        evidence.append(f'first test run `{tests[0].get("command")}`: checking the failing verification the state names')
        return 'recovered', evidence, first
    if not events and text.strip() and asks_user(text) and not restates(text, expect.get('next_intent') or ''):
        evidence.append('no tool use; asked the user: "' + ' '.join(text.split())[-200:] + '"')
        return 'reset', evidence, first
    intent = expect.get('next_intent') or ''
    if intent and restates(text, intent):
        evidence.append('restated next_intent: "' + intent[:200] + '"')
        return 'recovered', evidence, first
    if expect.get('current_file') and _mentions(text, expect['current_file']):
        evidence.append(f'named current_file {expect["current_file"]}')
        return 'recovered', evidence, first
    if events:
        evidence.append(f'{len(events)} tool event(s), none an edit or a test run: nothing to judge by')
    else:
        evidence.append('no tool use, and the text neither restates next_intent nor asks the user')
    return 'unknown', evidence, first


def summarize(rows: list[dict[str, Any]], stale_seconds: float) -> dict[str, Any]:
    """Seed 004's table: verdict shares overall, by state freshness at the
    compaction, and by agent; with the share of hand-marked verdicts."""
    def count(group: list[dict[str, Any]]) -> dict[str, Any]:
        judged = [r for r in group if r.get('verdict')]
        out: dict[str, Any] = {'compactions': len(group), 'judged': len(judged)}
        for v in VERDICTS:
            n = sum(1 for r in judged if r['verdict'] == v)
            out[v] = round(100 * n / len(judged), 1) if judged else None
        return out

    def stale(r: dict[str, Any]) -> bool:
        age = r.get('state_age')
        return not isinstance(age, (int, float)) or age > stale_seconds

    agents = sorted({_str(r.get('agent')) or '?' for r in rows})
    marked = sum(1 for r in rows if r.get('mark'))
    return {
        'all': count(rows),
        'fresh': count([r for r in rows if not stale(r)]),
        'stale': count([r for r in rows if stale(r)]),
        'agents': {a: count([r for r in rows if (_str(r.get('agent')) or '?') == a]) for a in agents},
        'marked': marked,
        'marked_pct': round(100 * marked / len(rows), 1) if rows else None,
    }
