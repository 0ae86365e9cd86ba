"""Our relabels of the peers' cases, each by a stated rule.

    python tests/corpus/secrets/relabel.py   # rewrites peers.jsonl in place

A gitleaks negative whose very text is a positive of gitleaks (another
rule's `tps`, or the same rule's in another file: its `fps` are checked
against that one rule only) is relabelled `secret` (`peer-positive`):
gitleaks as a whole reports it, so the peers' labels contradict each other
and the positive one stands (round 6; e.g. an Anthropic admin key is a
negative of anthropic-api-key and a positive of anthropic-admin-api-key).
Likewise a gitleaks negative that assigns to a credential's name a value
holding one of its rule's positive values whole, with characters added
(`contains-value`, as for trufflehog: `key = adf<ClickHouse key>`).

A trufflehog test case is benign when that one detector would not report
it: the service's name is outside its window ("valid pattern - out of
prefix range"), the value lost or gained a character ("invalid pattern"),
or its checksum fails.  A memory file that holds such a value, named as a
key, still leaks it: issue 20 says a value with a credential's prefix and
shape is blocked whether or not its checksum is valid, and a copy with one
wrong character is still a leak.  So a trufflehog negative is relabelled
`secret` when it assigns to a credential's name (`API_KEY=`, `token :=`)

- `same-value`: one of the values the family's own positives want, or
- `contains-value`: a value that holds one whole (`<token>EXTRA`), or
- `near-copy`: a value of 16 or more key characters within 3 edits of one;

or when trufflehog's own test name calls the pattern valid and the value
needs no name to be known (`self-identifying`): a signed JSON web token
(`eyJ...eyJ...sig`) or a Telegram bot token (`<bot id>:<35 characters>`),
one of the values the family's positives want.

Nothing else is relabelled: a value in another alphabet (`%`, `*`), a
bare value with no name, an id, a placeholder stay as trufflehog marked
them; nor a test value (a run of five in alphabet or digit order, one
character six times in a row: `abcdef1234567890abc...`,
`87654321-4321-...`, `sk-AAAA...`), which is documentation, not a leak
(round 6: such relabels were undone).  The rules read the peers' data only (the cases and trufflehog's
`want`), never what our scanner answers.  Each relabelled case keeps the
peer's label in `peer_label` and the rule in `relabel`; applying the rules
again gives the same file.
"""
from __future__ import annotations

import collections
import json
import pathlib
import re
from collections.abc import Iterable
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent

Case = dict[str, Any]

# a name assigned a value: `API_KEY=v`, `Key=v`, `token := "v"`,
# `"secret": "v"`; the value is what generated keys are made of
_ASSIGNED = re.compile(
    r'''([A-Za-z0-9_.-]+)["']?[ \t]*(?::=|=|:)[ \t]*(?:["'][ \t]*)?'''
    r'''([A-Za-z0-9_.+/=-]{12,})''',
)
# a credential's name has one of these as a word of its own (`API_KEY`,
# `apiSecret`, `salesforce_refresh_token`), not inside another word
# (`monkeylearn`, `shutterstockoauth`)
_CREDENTIAL_WORDS = frozenset({
    'key', 'apikey', 'skey', 'secret', 'token', 'password', 'passwd', 'pwd',
    'credential', 'credentials', 'auth', 'pat',
})


def _credential_name(name: str) -> bool:
    words = re.sub(r'([a-z0-9])([A-Z])', r'\1 \2', name).lower()
    return any(w in _CREDENTIAL_WORDS for w in re.split(r'[^a-z]+', words))


_MAX_EDITS = 3
_SHORTEST = 12  # a want this long is a key (kanbantool's are 12), not a word
_SELF_IDENTIFYING = re.compile(
    r'eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+|[0-9]{8,10}:[A-Za-z0-9_-]{35}',
)
_VALID = re.compile(r'(?i)\] valid pattern')
_RUN = re.compile(r'[A-Za-z0-9_.+/-]{16,}={0,2}')

RULES = {
    'same-value': (
        "assigns to a credential's name a value the family's own positives "
        'want; benign to trufflehog only for its detector window or pairing'
    ),
    'contains-value': (
        "assigns to a credential's name a value that holds one the family's "
        'positives want, whole, with characters added'
    ),
    'self-identifying': (
        'trufflehog calls the pattern valid and the value is a wanted JSON '
        'web token or Telegram bot token, known by its format without a name'
    ),
    'peer-positive': (
        "the very text is a positive of gitleaks' own rules (another rule's, "
        "or the same rule's in another file): gitleaks' ruleset reports it, "
        'so it is no negative of gitleaks'
    ),
    'near-copy': (
        "assigns to a credential's name a value within 3 edits of one the "
        "family's positives want: a copy with a wrong character is still a "
        'leak (issue 20)'
    ),
}


def _edits(a: str, b: str, most: int) -> int:
    """Levenshtein distance, or most + 1 once it exceeds most."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > most:
            return most + 1
        prev = cur
    return prev[-1]


def wanted(cases: Iterable[Case]) -> dict[str, set[str]]:
    """Per trufflehog family, the values its positives want, as written in
    their text: a want that joins a key and its id (`<key><id>`) gives the
    parts the text holds."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for case in cases:
        if case['source'] != 'trufflehog' or case.get('peer_label', case['label']) != 'secret':
            continue
        runs = _RUN.findall(case['text'])
        for w in case.get('want', ()):
            out[case['family']].update(r for r in runs if r in w)
            if len(w) >= _SHORTEST and w in case['text']:
                out[case['family']].add(w)
    return out


# a documentation or test value, not a leak (round 6): a run of five in
# alphabet or digit order (`abcdef1234567890...`, `87654321-4321-...`) or
# one character six times in a row (`sk-AAAAAAAA...`), the placeholders
# issue 20 names and gitleaks' and secretlint's allowlists skip
_RUNS = '|'.join(
    a[i:i + 5]
    for a in ('0123456789', '9876543210', 'abcdefghijklmnopqrstuvwxyz')
    for i in range(len(a) - 4)
)
_TEST_VALUE = re.compile(rf'{_RUNS}|(.)\1{{5}}')


def test_value(value: str) -> bool:
    return _TEST_VALUE.search(value.lower()) is not None


def rule_for(case: Case, want: set[str]) -> str | None:
    values = [
        m[2] for m in _ASSIGNED.finditer(case['text'])
        if _credential_name(m[1]) and not test_value(m[2])
    ]
    want = {w for w in want if not test_value(w)}
    if any(v in want for v in values):
        return 'same-value'
    # a longer value holds a short want by chance: 16 or more here
    long_want = {w for w in want if len(w) >= 16}
    if any(w in v for v in values for w in long_want):
        return 'contains-value'
    if _VALID.search(case['case']) and any(
            w in case['text'] and _SELF_IDENTIFYING.fullmatch(w) for w in want):
        return 'self-identifying'
    if any(_edits(v, w, _MAX_EDITS) <= _MAX_EDITS for v in values for w in long_want):
        return 'near-copy'
    return None


def gitleaks_values(cases: Iterable[Case]) -> dict[str, set[str]]:
    """Per gitleaks rule, the runs of 16 or more key characters its
    positives hold (gitleaks names no wanted value)."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for case in cases:
        if case['source'] == 'gitleaks' and case.get('peer_label', case['label']) == 'secret':
            out[case['family']].update(
                r for r in _RUN.findall(case['text']) if not test_value(r)
            )
    return out


def longer_copy(case: Case, runs: set[str]) -> str | None:
    """`contains-value` for a gitleaks negative: it assigns to a
    credential's name a value that holds one of its rule's positive values
    whole, with characters added (`key = adf<clickhouse key>`)."""
    values = [
        m[2] for m in _ASSIGNED.finditer(case['text'])
        if _credential_name(m[1]) and not test_value(m[2])
    ]
    if any(r in v and r != v for v in values for r in runs):
        return 'contains-value'
    return None


def apply(cases: list[Case]) -> list[Case]:
    want = wanted(cases)
    gitleaks_positives = {
        c['text'] for c in cases
        if c['source'] == 'gitleaks' and c.get('peer_label', c['label']) == 'secret'
    }
    gitleaks_runs = gitleaks_values(cases)
    for case in cases:
        peer = case.pop('peer_label', case['label'])
        case.pop('relabel', None)
        case['label'] = peer
        if peer != 'benign':
            continue
        if case['source'] == 'gitleaks':
            rule = 'peer-positive' if case['text'] in gitleaks_positives else \
                longer_copy(case, gitleaks_runs[case['family']])
        elif case['source'] == 'trufflehog':
            rule = rule_for(case, want[case['family']])
        else:
            continue
        if rule is not None:
            case['label'] = 'secret'
            case['peer_label'] = peer
            case['relabel'] = f'{rule}: {RULES[rule]}'
    return cases


def main() -> int:
    path = HERE / 'peers.jsonl'
    with open(path) as f:
        cases = [json.loads(line) for line in f]
    apply(cases)
    with open(path, 'w') as f:
        f.writelines(json.dumps(case, ensure_ascii=False) + '\n' for case in cases)
    counts = collections.Counter(
        (c['relabel'].split(':')[0], 'held-out' if c['heldout'] else 'tuning')
        for c in cases if 'relabel' in c
    )
    for (rule, part), n in sorted(counts.items()):
        print(f'{rule:12} {part:9} {n}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
