"""Find likely credentials in memory files.

A hit is reported by file, line and kind, never by its value: a finding must be
safe to print, log and paste into an issue.

Speed: every pattern starts with a literal (`AKIA`, `ghp_`, `password`, ...),
which lets `re` skip ahead with a fast substring search; the case-insensitive
ones run on a lowercased copy of the text.  A boundary before the literal is
checked in Python, since a look-behind in front of it would defeat that.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from agitmem.checks import Finding


@dataclass(frozen=True)
class Secret:
    path: str
    line: int
    kind: str  # human name, e.g. 'AWS access key'


def entropy(s: str) -> float:
    """Shannon entropy of `s`, in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


# documentation stand-ins: `ghp_xxxx...`, `AKIA0000000000000000`, `sk-...`
_FILLER_RE = re.compile(r'(?i:xxxx)|\*\*\*|\.\.\.|(.)\1{5}')
# ... and what people write instead of a value
_STAND_IN_RE = re.compile(
    r'[<>]|\$\{|\$\(|\{\{|%\(|'
    r'(?i:example|changeme|placeholder|dummy|redacted|replace|your[_-])',
)
# references, not values: `settings.OAUTH2_SECRET`, `GITHUB_TOKEN_2`
_REFERENCE_RE = re.compile(
    r'[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|'
    r'[A-Z0-9]+(?:_[A-Z0-9]+)+',
)
_PATH_RE = re.compile(r'(?:~|\.\.?)?/')
# a CamelCase name such as `PKCS7PrivateKeyTypes`: mostly capitalized words
# (fewer than 2 in 100 random strings of 12 letters and digits are so wordy)
_ALNUM_RE = re.compile(r'[A-Za-z0-9_]+')
_WORD_RE = re.compile(r'[A-Z][a-z]{2,}')
# ids and digests, not credentials: a uuid, a short hex (a git sha is
# 40, an md5 32: long hex in a `token=` is taken for a token)
_ID_RE = re.compile(
    r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
    r'[0-9a-fA-F]{12}|[0-9a-fA-F]{1,31}',
)


def _real(value: str) -> bool:
    return _FILLER_RE.search(value) is None


def _with_digit(value: str) -> bool:
    return _real(value) and any(c.isdigit() for c in value)


def _random_looking(value: str) -> bool:
    """Mixed case and digits, as generated keys are; unlike `sk-learn-api`."""
    return (
        _with_digit(value) and
        any(c.isupper() for c in value) and
        any(c.islower() for c in value)
    )


def _camel_case_name(value: str) -> bool:
    words = sum(len(w) for w in _WORD_RE.findall(value))
    return _ALNUM_RE.fullmatch(value) is not None and words >= .7 * len(value)


def _high_entropy(value: str) -> bool:
    """Whether the value of a `password=` style assignment looks real."""
    return (
        len(value) >= 12 and
        not any(c.isspace() or c in '([' for c in value) and  # prose, code
        _FILLER_RE.search(value) is None and
        _STAND_IN_RE.search(value) is None and
        _REFERENCE_RE.fullmatch(value) is None and
        _PATH_RE.match(value) is None and
        _ID_RE.fullmatch(value) is None and
        not _camel_case_name(value) and
        any(c.isdigit() for c in value) and
        any(c.isalpha() for c in value) and
        entropy(value) >= 3.0
    )


def _any(value: str) -> bool:
    return True


_END = r'(?![A-Za-z0-9_])'
# `:` only as YAML and JSON write it, not as in `arn:aws:...:secret:name`
_ASSIGN = r'''["']?[ \t]*(?:=>|:=|=|:(?=[ \t"']))[ \t]*'''
_VALUE = r'''(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'`,;]+))'''
_PRIVATE_KEY = r'-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----'


@dataclass(frozen=True)
class _Rule:
    kind: str
    regex: re.Pattern[str]
    check: Callable[[str], bool]  # gets the value: the last group that matched
    # gets the text and the value's span: for what the value alone can't tell
    context: Callable[[str, int, int], bool] | None = None
    lower: bool = False  # the regex runs on the lowercased text
    bounded: bool = True  # the match must not continue a word to its left
    generic: bool = False  # loses to a specific kind on the same value


def _rule(
        kind: str,
        pattern: str,
        check: Callable[[str], bool],
        *,
        context: Callable[[str, int, int], bool] | None = None,
        lower: bool = False,
        bounded: bool = True,
        generic: bool = False,
) -> _Rule:
    return _Rule(
        kind, re.compile(pattern), check,
        context=context, lower=lower, bounded=bounded, generic=generic,
    )


_LINE_PREFIX_RE = re.compile(r'[ \t"\'|>]*')
_KEY_BODY_RE = re.compile(r'(?:\\[rn]|\s)+[A-Za-z0-9+/]{32}')


def _key_block(text: str, start: int, end: int) -> bool:
    """A key header at the start of a line (a .pem, a YAML block scalar) or
    followed by a body (a JSON string with `\\n`), not one quoted in prose."""
    line_start = text.rfind('\n', 0, start) + 1
    return (
        _LINE_PREFIX_RE.fullmatch(text, line_start, start) is not None or
        _KEY_BODY_RE.match(text, end) is not None
    )


_RULES = (
    _rule('AWS access key', rf'A[KS]IA[A-Z0-9]{{16}}{_END}', _real),
    *(
        _rule(
            'AWS secret key',
            rf'{keyword}{_ASSIGN}["\']?([a-z0-9/+]{{40}})(?![a-z0-9/+=])',
            _with_digit, lower=True, bounded=False,
        )
        for keyword in (
            r'aws[ _.-]?secret[ _.-]?(?:access[ _.-]?)?key',
            r'secret[ _.-]?access[ _.-]?key',
        )
    ),
    _rule(
        'GitHub token',
        rf'gh[pousr]_[A-Za-z0-9]{{36,251}}{_END}', _real,
    ),
    _rule('GitHub token', rf'github_pat_[A-Za-z0-9_]{{40,}}{_END}', _real),
    _rule('Anthropic key', r'sk-ant-[A-Za-z0-9_-]{32,}', _real),
    _rule(
        'OpenAI key',
        r'sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}',
        _random_looking,
    ),
    _rule(
        'Slack token', r'xox[abeoprs]-[0-9A-Za-z]+-[0-9A-Za-z-]{8,}',
        _with_digit,
    ),
    _rule(
        'Slack webhook',
        r'hooks\.slack\.com/(?:services|workflows|triggers)/'
        r'[A-Za-z0-9_/-]{20,}',
        _real, bounded=False,
    ),
    _rule(
        'private key block', _PRIVATE_KEY, _any,
        context=_key_block, bounded=False,
    ),
    _rule('Google API key', r'AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])', _real),
    _rule('GitLab token', r'glpat-[A-Za-z0-9_-]{20,}', _real),
    _rule('npm token', rf'npm_[A-Za-z0-9]{{36}}{_END}', _random_looking),
    _rule('PyPI token', r'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}', _any),
    *(
        _rule(
            'Stripe key', rf'{prefix}_(?:live|test)_[A-Za-z0-9]{{20,}}{_END}',
            _with_digit,
        )
        for prefix in ('sk', 'rk')
    ),
    _rule(
        'JSON web token',
        r'eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}',
        _any,
    ),
    _rule(
        'password in URL', r'://[^/\s:@"\'`]+:([^/\s:@"\'`]+)@',
        _high_entropy, bounded=False,
    ),
    _rule(
        'bearer token', r'bearer[ \t]+([a-z0-9._~+/-]{20,}=*)',
        _high_entropy, lower=True,
    ),
    # `password = ...`, `"api_key": "..."`, `GITHUB_TOKEN: ...`: reported only
    # when the value is long and random enough to be a real credential; no
    # left boundary, so that `DB_PASSWORD=` counts
    *(
        _rule(
            kind, f'{keyword}{_ASSIGN}{_VALUE}', _high_entropy,
            lower=True, bounded=False, generic=True,
        )
        for kind, keyword in (
            ('password assignment', 'pass(?:word|wd|phrase)'),
            ('secret assignment', 'secret(?:[_-]?key)?'),
            ('token assignment', 'token'),
            ('API key assignment', 'api[_-]?key'),
            ('API key assignment', 'apikey'),
            ('API key assignment', 'access[_-]?key'),
            ('API key assignment', 'private[_-]?key'),
        )
    ),
)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == '_'


def _hits(text: str, lower: str, rule: _Rule) -> list[tuple[int, int]]:
    ret = []
    for m in rule.regex.finditer(lower if rule.lower else text):
        if rule.bounded and m.start() and _word_char(text[m.start() - 1]):
            continue
        groups = range(rule.regex.groups, 0, -1)
        start, end = m.span(next((i for i in groups if m[i] is not None), 0))
        if rule.check(text[start:end]) and (
                rule.context is None or rule.context(text, start, end)
        ):
            ret.append((start, end))
    return ret


def scan(text: str, path: str) -> list[Secret]:
    """Likely credentials in `text` (the content of `path`), in line order."""
    lower = text.lower()
    if len(lower) != len(text):  # a few characters lowercase to two
        lower = ''.join(c if len(c.lower()) != 1 else c.lower() for c in text)

    hits: list[tuple[int, int, str]] = []  # value start, value end, kind
    for rule in _RULES:
        if not rule.generic:
            hits.extend((s, e, rule.kind) for s, e in _hits(text, lower, rule))
    taken = [(s, e) for s, e, _ in hits]
    for rule in _RULES:
        if rule.generic:
            for start, end in _hits(text, lower, rule):
                # skip a value that is (part of) a key of a specific kind
                if not any(s < end and start < e for s, e in taken):
                    hits.append((start, end, rule.kind))

    hits.sort()
    ret: list[Secret] = []
    seen = set()
    line, pos = 1, 0
    for start, _, kind in hits:
        line += text.count('\n', pos, start)
        pos = start
        if (line, kind) not in seen:
            seen.add((line, kind))
            ret.append(Secret(path, line, kind))
    return ret


def findings(secrets: list[Secret]) -> list[Finding]:
    return [
        Finding(
            'secrets', 'error',
            f'{s.path}:{s.line}: possible {s.kind}; remove it from the file '
            f'(and revoke it if it is real) before saving or committing',
            path=s.path, line=s.line,
        )
        for s in secrets
    ]
