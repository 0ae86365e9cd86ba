"""Hostile shapes for the credential scanner: texts built to make each rule,
and the keyword and value machinery around the rules, work hardest.

`shapes(size)` yields (name, text) pairs of about `size` characters, built
systematically from the rule table (agitmem.secrets.RULES), so that a new
rule is covered as soon as it is added:

- each keyword of each rule repeated: bare, and joined by each separator,
  quote and assignment character (`token_token_...`, `api_key=api_key=...`);
- each keyword before a long run of each character class (`key aaaa...`);
- the proper prefixes of each keyword repeated (`gh`, `ghp` for `ghp_`), in
  the text's case and upper case;
- each rule's positives (a real-looking finding) repeated, many on a line
  and one a line, and its negatives likewise;
- quotes, escapes and brackets nested or repeated.

No text is timed here: tests/secrets_test.py and bench/secrets.py measure.
"""
from __future__ import annotations

import random
import re
from collections.abc import Iterator

from agitmem.secrets import RULES

# what stands between a name and its value, or between two names
SEPARATORS = (
    '', ' ', '_', '-', '.', '=', ':', '"', "'", '`', ',', ';', '&', '/',
    '\\', '(', '[', '{', '<', '>', '@', '$', '%', '#', '\n', '\t',
    ' = ', ': ', '="', "='", '": "', "' => '", ':=', '=\\"', '\\n',
)
# what a value is made of (or not)
RUNS = ('a', '0', 'a1B2', 'aB3-_', 'aB3/+', '-', '=', '.', ' ', '"', '\\n', ':@$')
NESTED = (
    '"\'', '\\"', '\\\\"', '"""', "'''", '``', '${', '{{', '[[', '((', '<<',
    '"key": "', "'value': '", '\\u0022', '%(', '-----BEGIN ', '\\\n',
)


def _fill(template: str, rnd: random.Random) -> str:
    """A rule's documentation template with its fields drawn (as
    tests/secrets_test.py draws them, more roughly: these need only look
    so to the rules' regexes)."""
    alphabets = {
        'A': 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
        'a': 'abcdefghijklmnopqrstuvwxyz0123456789',
        'U': 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
        'L': 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
        'h': '0123456789abcdef', 'd': '0123456789',
        'u': 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
        'b': 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
        'g': 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L',
    }

    def field(m: re.Match[str]) -> str:
        if m[1] == 'uuid':
            return '-'.join(
                ''.join(rnd.choice(alphabets['h']) for _ in range(n)) for n in (8, 4, 4, 4, 12)
            )
        if m[2]:
            return ''.join(rnd.choice(alphabets[m[2]]) for _ in range(int(m[3])))
        return ''.join(rnd.choice(alphabets['A']) for _ in range(24))
    return re.sub(r'\{(uuid|discord_id|basic:(?:\{[^}]*\}|[a-z]+)|([A-Za-z]):(\d+))\}', field, template)


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // max(1, len(unit)))


def keywords() -> list[str]:
    return sorted({k for rule in RULES for k in rule.keywords})


def shapes(size: int) -> Iterator[tuple[str, str]]:
    """Each shape once (a prefix of one keyword is often another's)."""
    seen = set()
    for name, text in _shapes(size):
        if name not in seen:
            seen.add(name)
            yield name, text


def _shapes(size: int) -> Iterator[tuple[str, str]]:
    rnd = random.Random(0)
    for k in keywords():
        for sep in SEPARATORS:
            yield f'{k!r} + {sep!r}, repeated', _repeat(k + sep, size)
        yield f'{k.upper()!r} repeated', _repeat(k.upper(), size)
        for run in RUNS:
            yield f'{k!r} = then {run!r} run', k + '=' + _repeat(run, size)
            yield f'{k!r} then {run!r} run', k + ' ' + _repeat(run, size)
        for i in range(1, len(k)):
            yield f'{k[:i]!r} repeated', _repeat(k[:i], size)
            yield f'{k[:i].upper()!r} repeated', _repeat(k[:i].upper(), size)
    for rule in RULES:
        for which, samples in (('positive', rule.positives), ('negative', rule.negatives)):
            for n, template in enumerate(samples):
                sample = _fill(template, rnd)
                yield f'{rule.id} {which} {n} repeated', _repeat(sample + ' ', size)
                yield f'{rule.id} {which} {n} one a line', _repeat(sample + '\n', size)
    for unit in NESTED:
        yield f'{unit!r} repeated', _repeat(unit, size)
        yield f'{unit!r} then a run', unit + _repeat('aB3x', size)
