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
nothing to judge by.  Reading and writing the log needs no verdict:
memory/recovery.py, the classifier, is imported where one is made.
"""
from __future__ import annotations

import json
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
# first-turn events kept as evidence: the first EVENTS (the first that
# breaks a condition decides) and the last TAIL (a long turn's last edits
# and the test runs after them back or belie its closing words)
EVENTS = 20
TAIL = 20
TEXT_CHARS = 600


def _str(value: object) -> str:
    return value if isinstance(value, str) else ''


def _no_constant(name: str) -> Any:
    raise ValueError(f'{name} is not JSON')


def parse(text: str) -> list[dict[str, Any]]:
    """The log's records; a damaged line is skipped (the log is an aid:
    one bad line must not hide the rest)."""
    ret = []
    for line in text.splitlines():
        try:
            # NaN and Infinity are no JSON: `recovery --json` would print them
            obj = json.loads(line, parse_constant=_no_constant)
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
            for key in ('first_action', 'tokens_after', 'events', 'text', 'prompt'):
                row[key] = r.get(key)
        elif kind == 'summary' and isinstance(r.get('summary'), str):
            rows[r['id']]['summary'] = rows[r['id']].get('summary') or r['summary']
        elif kind == 'mark' and r.get('verdict') in VERDICTS:
            rows[r['id']]['mark'] = r['verdict']
    for row in rows.values():
        row['verdict'] = row['mark'] or row['heuristic']
    return list(rows.values())


def expectation(
        state: dict[str, Any], in_progress: list[str], goal: list[str], todo: list[str],
        done: list[str] | None = None, notes: list[str] | None = None, decisions: list[str] | None = None,
) -> dict[str, Any]:
    """What the state said when the compaction came: the yardstick."""
    lv = state.get('last_verification')
    lv = lv if isinstance(lv, dict) else {}
    return {
        'last_action': _str(state.get('last_action')),
        'done': done or [],
        'current_file': _str(state.get('current_file')),
        'current_symbol': _str(state.get('current_symbol')),
        'current_goal': _str(state.get('current_goal')),
        'next_intent': _str(state.get('next_intent')),
        'in_progress': in_progress,
        'goal': goal,
        'todo': todo,
        'notes': notes or [],
        'decisions': decisions or [],
        'verification': _str(lv.get('result')) or None,
        'verification_reason': _str(lv.get('reason')),
        'verification_command': _str(lv.get('command')),
    }


def keep(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first turn's events once `new` are added to `old` (what `keep`
    returned before): the first EVENTS and the last TAIL; those between
    neither start the turn nor end it."""
    both = [*old, *new]
    return both[:EVENTS] + both[EVENTS:][-TAIL:]


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
