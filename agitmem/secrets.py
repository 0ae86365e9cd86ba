"""Find likely credentials in memory files and in commit messages.

A hit is reported by place, line and kind, never by its value: a finding must
be safe to print, log and paste into an issue.

The rules follow the families of gitleaks' default rule set that have a
distinctive prefix or structure, plus a few context rules (`password=`,
`Authorization: Basic`, `user:pass@` in URLs).  Each rule is written here.

Speed (it runs on every save and on every commit a push sends):
- nothing is compiled at import; a rule's regex is compiled the first time a
  text could hold it;
- a rule runs only if one of its keywords is in the text, as gitleaks does.
  Keywords of token rules (`ghp_`, `akia`, ...) are looked up in the distinct
  long runs of token characters only, which is a small string even for a big
  file, since a token is such a run;
- every pattern starts with its literal prefix where it has one, which lets
  `re` skip ahead with a fast substring search.  The left boundary is a
  look-behind placed after that prefix, so that a prefix repeated inside one
  long word costs one attempt, not one each (no quadratic time on hostile
  input).

The boundary is ASCII: a token is not the tail of an ASCII word (`myghp_...`),
but may follow any other character (`密钥ghp_...`, `clé=sk-...`).
"""
from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from typing import NamedTuple

from agitmem.checks import Finding


class Secret(NamedTuple):
    path: str  # where it was found: a file, or e.g. 'commit message'
    line: int
    kind: str  # human name, e.g. 'AWS access key'


def entropy(s: str) -> float:
    """Shannon entropy of `s`, in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


@functools.cache
def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# documentation stand-ins: `ghp_xxxx...`, `AKIA0000000000000000`, `sk-...`
_FILLER = r'(?i:xxxx)|\*\*\*|\.\.\.|(.)\1{5}'
# ... and what people write instead of a value
_STAND_IN = (
    r'[<>]|\$\{|\$\(|\{\{|%\(|'
    r'(?i:example|changeme|placeholder|dummy|redacted|replace|your[_-])'
)
# references, not values: `settings.OAUTH2_SECRET`, `GITHUB_TOKEN_2`
_REFERENCE = (
    r'[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|'
    r'[A-Z0-9]+(?:_[A-Z0-9]+)+'
)


def _reference(value: str) -> bool:
    """A name, not a value: dotted or in capitals, few digits (not
    `s.ZC9Ecf4M5g9o34Q6RkzGsj0z`)."""
    return (
        _re(_REFERENCE).fullmatch(value) is not None and
        sum(c.isdigit() for c in value) <= 2
    )
_PATH = r'(?:~|\.\.?)?/'
# `cert.p12`, `sm02915.int.contoso.com`, `host:5215`: ends in a short suffix
_FILE_OR_HOST = r'[A-Za-z0-9_./-]*\.[A-Za-z][A-Za-z0-9]{0,4}(?::[0-9]+)?'
# a CamelCase name such as `PKCS7PrivateKeyTypes`: mostly capitalized words
# (fewer than 2 in 100 random strings of 12 letters and digits are so wordy)
_ALNUM = r'[A-Za-z0-9_]+'
_WORD = r'[A-Z][a-z]{2,}'
# ids and digests, not credentials: a uuid, a short hex (a git sha is
# 40, an md5 32: long hex in a `token=` is taken for a token)
_ID = (
    r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
    r'[0-9a-fA-F]{12}|[0-9a-fA-F]{1,19}'
)


# test values: a run of five in alphabet or digit order (`abcdefgh...`,
# `1234567890`), which a random key of 40 characters holds about once in
# 10^5 (and a key with one wrong character is still caught: the run is what
# documentation writes, not what a generator draws)
_RUNS = '|'.join(
    a[i:i + 5]
    for a in ('0123456789', '9876543210', 'abcdefghijklmnopqrstuvwxyz')
    for i in range(len(a) - 4)
)
_PLACEHOLDER = (
    rf'{_FILLER}|example|{_RUNS}|qwerty|asdfgh|(.{{2,4}})\2{{3}}|'
    r'(?:token|key|string|secret|value|password)[_-]?here'
)


def _placeholder(value: str) -> bool:
    """A documentation stand-in or test value, not a credential: every
    finding's value is checked (gitleaks' and secretlint's allowlists)."""
    return _re(_PLACEHOLDER).search(value.lower()) is not None


def _real(value: str) -> bool:
    return _re(_FILLER).search(value) is None


def _with_digit(value: str) -> bool:
    return _real(value) and any(c.isdigit() for c in value)


def _mixed(value: str) -> bool:
    """Two of lower case, upper case and digits, as generated keys have
    (hex too); unlike `glpat-token-for-the-runner`."""
    classes = (
        any(c.islower() for c in value) +
        any(c.isupper() for c in value) +
        any(c.isdigit() for c in value)
    )
    return classes >= 2 and _real(value)


def _random_looking(value: str) -> bool:
    """Mixed case and digits, as generated keys are; unlike `sk-learn-api`."""
    return (
        _with_digit(value) and
        any(c.isupper() for c in value) and
        any(c.islower() for c in value)
    )


def _camel_case_name(value: str) -> bool:
    words = sum(len(w) for w in _re(_WORD).findall(value))
    return _re(_ALNUM).fullmatch(value) is not None and words >= .7 * len(value)


def _classes(value: str) -> tuple[bool, bool, bool]:
    return (
        any(c.isdigit() for c in value),
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
    )


def _high_entropy(value: str) -> bool:
    """Whether the value of a `password=` style assignment looks real:
    letters and digits (entropy >= 3), or a long number (a numeric id or
    secret), or a long mixed-case run of letters; never a name, a path,
    a reference, a short hex id or a test value."""
    if not (
        len(value) >= 12 and
        not any(c.isspace() or c in '([' for c in value) and  # prose, code
        _re(_FILLER).search(value) is None and
        _re(_STAND_IN).search(value) is None and
        not _reference(value) and
        _re(_PATH).match(value) is None and
        _re(_FILE_OR_HOST).fullmatch(value) is None and
        _re(_ID).fullmatch(value) is None and
        not _camel_case_name(value) and
        # `1a2b3c4d-5e6f-7a8b-...`: digits in order under the letters
        _re(_RUNS).search(''.join(c for c in value if c.isdigit())) is None
    ):
        return False
    digit, lower, upper = _classes(value)
    if digit and (lower or upper):
        return entropy(value) >= 3.0
    if digit:
        return len(value) >= 16 and entropy(value) >= 2.8
    return lower and upper and len(value) >= 20 and entropy(value) >= 3.8


def _any(value: str) -> bool:
    return True


def _b64decode(value: str, altchars: bytes = b'+/') -> bytes | None:
    import base64  # only for the few values that need it
    import binascii
    try:
        return base64.b64decode(
            value.rstrip('=') + '=' * (-len(value.rstrip('=')) % 4),
            altchars=altchars, validate=True,
        )
    except (binascii.Error, ValueError):
        return None


def _basic_credentials(value: str) -> bool:
    """`Authorization: Basic <b64>`: reported when it decodes to a real-looking
    `user:password`, not to `user:pass` or noise."""
    raw = _b64decode(value)
    if raw is None:
        return False
    try:
        user, sep, password = raw.decode('utf-8').partition(':')
    except UnicodeDecodeError:
        return False
    return (
        bool(sep) and bool(user) and len(password) >= 6 and
        password.isprintable() and
        _re(_FILLER).search(password) is None and
        _re(_STAND_IN).search(password) is None and
        password.lower() not in {'password', 'passwd', 'secret', 'changeit'}
    )


def _discord_bot_token(value: str) -> bool:
    """The first part of a Discord bot token is the bot's numeric id in
    base64: the structure tells it from any dotted name."""
    raw = _b64decode(value.partition('.')[0], altchars=b'-_')
    return raw is not None and raw.isdigit() and 17 <= len(raw) <= 20


_END = r'(?![A-Za-z0-9_])'
_WORD_CHAR = '[A-Za-z0-9_]'
# `:` only as YAML and JSON write it, not as in `arn:aws:...:secret:name`
# and as JSON escapes it in a string (`\\"key\\": \\"value\\"`); Make's
# `::=`, `?=`
_ASSIGN = (
    r'''\\?["']?[ \t]*(?:=>|:{1,3}=|\?=|\|\|=?|=|:(?=[ \t"'\\]))[ \t]*'''
)
_VALUE = r'''(?:\\?"([^"\n]*?)\\?"|'([^'\n]*)'|`([^`\n]*)`|([^\s"'`,;\\]+))'''
# what may follow the keyword in a name: `token2`, `_key_id`, `Token_v2`
_NAME_TAIL = r'[a-z0-9_.-]{0,20}?'
_PRIVATE_KEY = r'-----begin (?:[a-z0-9]+ )*private key(?: block)?-----'
_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'


class _Rule:
    """A rule (a plain class: a dataclass or NamedTuple costs import time).

    id: a stable name, as gitleaks names its rules; kind: what a finding
    calls it; keywords: lower case, the rule runs only if one of them is in
    the text; check: gets the value (the last group that matched, or the
    match); context: gets the text and the value's span, for what the value
    alone can't tell; lower: the regex runs on the lowercased text; generic:
    loses to a specific kind on the same value; long: the keywords lie in a
    run of _RUN DENSE_CHARS of any match, so they are looked up among the
    long runs only; bounded: a match is never the tail of an ASCII word.
    """
    __slots__ = (
        'id', 'kind', 'pattern', 'keywords', 'check', 'context', 'lower',
        'generic', 'long', 'bounded', 'any_value', 'locate', 'anchored',
    )

    def __init__(
            self,
            id: str,
            kind: str,
            pattern: str,
            keywords: tuple[str, ...],
            check: Callable[[str], bool],
            *,
            context: Callable[[str, int, int], bool] | None = None,
            lower: bool = False,
            generic: bool = False,
            long: bool = True,
            bounded: bool = False,
            any_value: bool = False,
            locate: Callable[[str, int], tuple[int, int] | None] | None = None,
            anchored: bool = False,
    ) -> None:
        self.id = id
        self.kind = kind
        self.pattern = pattern
        self.keywords = keywords
        self.check = check
        self.context = context
        self.lower = lower
        self.generic = generic
        self.long = long
        self.bounded = bounded
        self.any_value = any_value
        self.locate = locate
        self.anchored = anchored


def _token(
        id: str,
        kind: str,
        prefix: str,
        rest: str,
        keywords: tuple[str, ...],
        check: Callable[[str], bool] = _mixed,
        *,
        boundary: str = _WORD_CHAR,
        end: str = _END,
        lower: bool = False,
        long: bool = True,
) -> _Rule:
    """A token that starts with `prefix` (a regex of fixed width): not the
    tail of a word.  The boundary is a look-behind placed after the prefix,
    so that `re` still searches for the prefix literally."""
    return _Rule(
        id, kind,
        f'{prefix}(?:(?<!{boundary}{prefix})|(?<=\\\\[nrt]{prefix})){rest}{end}',
        keywords, check, lower=lower, long=long, bounded=True,
    )


def _context(
        id: str,
        kind: str,
        pattern: str,
        keywords: tuple[str, ...],
        check: Callable[[str], bool],
        *,
        context: Callable[[str, int, int], bool] | None = None,
        generic: bool = False,
        any_value: bool = False,
        anchored: bool = False,
) -> _Rule:
    """A value known by what precedes it (`password=`), on lowercased text."""
    return _Rule(
        id, kind, pattern, keywords, check, context=context, lower=True,
        generic=generic, long=False, any_value=any_value, anchored=anchored,
    )


_LINE_PREFIX = r'[ \t"\'|>]*'
_KEY_BODY = r'(?:\\[rn]|\s)+[A-Za-z0-9+/]{32}'


_KEY_END = r'-----end [a-z0-9 ]*private key(?: block)?-----'


def _key_block(text: str, start: int, end: int) -> bool:
    """A key header at the start of a line (a .pem, a YAML block scalar) or
    followed by a body (a JSON string with `\\n`), not one quoted in prose;
    and where its end marker follows, a body of key material between them,
    not `anything` (gitleaks' own false positive)."""
    line_start = text.rfind('\n', 0, start) + 1
    stop = _re(_KEY_END).search(_ascii_lower(text[end:end + 100_000]))
    if stop is not None:
        body = text[end:end + stop.start()]
        return sum(len(r) for r in _re(r'[A-Za-z0-9+/=]+').findall(body)) >= 64
    return (
        _re(_LINE_PREFIX).fullmatch(text, line_start, start) is not None or
        _re(_KEY_BODY).match(text, end) is not None
    )


_B62 = 'A-Za-z0-9'
# from gitleaks' rules that know a key by its service's name, for the
# services whose keys are a uuid, a number or plain hex (a value with
# letters and digits is caught by the generic rules already); each name costs
# a pass over the text, so the list holds only these
_SERVICES = (
    'heroku', 'hubspot', 'squarespace', 'message[_-]?bird', 'discord',
    'sumo(?:logic|[_.-])', 'plaid', 'sendbird', 'kucoin', 'snyk',
    'launchdarkly', 'bittrex',
)
_SERVICES_KEYWORDS = sorted({
    s.partition('[')[0].partition('(')[0] for s in _SERVICES
})


def _xml_value(value: str) -> bool:
    return _high_entropy(value) or _random_value(value)


def _service_value(value: str) -> bool:
    """A value assigned to a name of a service's key: a uuid, a long
    number or hex is enough (no prefix to know it by), not a name."""
    digit, lower, upper = _classes(value)
    return (
        len(value) >= 12 and digit and
        not any(c.isspace() or c in '([' for c in value) and
        _re(_STAND_IN).search(value) is None and
        not _reference(value) and
        _re(_PATH).match(value) is None and
        _re(_FILE_OR_HOST).fullmatch(value) is None and
        entropy(value) >= 2.5
    )


_URL_WORDS = frozenset({
    'password', 'passwd', 'pass', 'secret', 'changeme', 'postgres', 'root',
    'admin', 'guest', 'test', 'user', 'example', 'mysql', 'redis', 'mongo',
})


def _url_password(value: str) -> bool:
    """`scheme://user:PASSWORD@host`: a real-looking password (a digit or
    both cases, 6 or more characters), not `password`, `${PASS}` or `%s`."""
    digit, lower, upper = _classes(value)
    return (
        len(value) >= 6 and (digit or (lower and upper)) and
        value.lower() not in _URL_WORDS and
        _re(_STAND_IN).search(value) is None and
        not any(c in '%$*([{\\' for c in value)
    )


def _k8s_data(text: str, start: int, end: int) -> bool:
    """A Kubernetes `kind: Secret` manifest with values under `data:` or
    `stringData:` (base64, or plain text), not only names."""
    lower = _ascii_lower(text)
    for m in _re(r'(?m)^[ \t]*(?:data|stringdata):[ \t]*$').finditer(lower):
        block = _re(
            r'(?:\n[ \t]+[^\n]*)+',
        ).match(text, m.end())
        if block is None:
            continue
        for value in _re(
            r'\n[ \t]+[A-Za-z0-9_.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]+)?'
            r'["\']?([A-Za-z0-9+/=_.-]{8,})',
        ).findall(block[0]):
            if not _placeholder(value):
                return True
    return False


# the name a value is assigned to, read back from the value's start
_NAME_BEFORE = (
    r'([a-z0-9_.-]+)\\?["\']?[ \t]*'
    r'(?:=>|:{1,3}=|\?=|\|\|=?|=|:|,)[ \t]*\\?["\'`]?$'
)
_TEST_NAME = (
    r'fake|dummy|mock|sample|example|nonmatching|non_matching|placeholder|'
    # public keys, anti-forgery tokens; and names of what is not a secret
    r'public|pubkey|pub_key|csrf|xsrf|authenticity|'
    r'(?:id|ids|name|url|uri|file|path|size|length|len|type|source|results|'
    r'count|index|version|format|field|header)$'
)


def _not_a_test_name(text: str, start: int, end: int) -> bool:
    """`fakeToken = "..."`, `publicKey: ...`: test values and public keys
    are named so (gitleaks' generic rule has the same stop words)."""
    line_start = max(text.rfind('\n', 0, start) + 1, start - 120)
    m = _re(_NAME_BEFORE).search(_ascii_lower(text[line_start:start]))
    return m is None or _re(_TEST_NAME).search(m[1].rstrip('.-_')) is None


_NAMED_WINDOW = 40  # characters between the name and its value
_CANDIDATE = r'[A-Za-z0-9+/_=~.-]{20,}'


def _named_value(text: str, end: int) -> tuple[int, int] | None:
    """The first long run of token characters within a few words after a
    name (`token`, `key`...): its span, if it is a whole run of at most 200
    characters.  Each name costs a bounded look, so the text is read in
    linear time."""
    # the whole name the word is part of: `csrf_token`, `secret_length`
    before = _re(r'[A-Za-z0-9_.-]*$').search(text, max(0, end - 60), end)
    after = _re(r'[A-Za-z0-9_-]*').match(text, end, end + 60)
    name = (before[0] if before else '') + (after[0] if after else '')
    if _re(_TEST_NAME).search(_ascii_lower(name).rstrip('.-_')):
        return None
    window = text[end:end + _NAMED_WINDOW]
    m = _re(_CANDIDATE).search(window)
    # on the same line, not the body of a key block (`KEY-----\\n...`),
    # not a part of an expression (`'ghp_' + '...'`, `{text: ...}`)
    if m is None or _re(r'[\n+{}()\[\];]|--').search(window, 0, m.start()):
        return None
    start = end + m.start()
    run = _re(r'[A-Za-z0-9+/_=~.-]{0,201}').match(text, start)
    assert run is not None
    stop = run.end()
    if stop - start > 200 or (start > 0 and text[start - 1] in '@:%$') or \
            _re(r'["\']?[ \t]*\+').match(text, stop):
        return None
    return start, stop


def _random_value(value: str) -> bool:
    """A value named only by a nearby word must look generated: letters of
    both cases and digits (entropy >= 3.5), or one case and digits but not
    hex (entropy >= 3.7, 24 characters); never a hex digest (commit ids
    are named `key` in prose), a path, a dotted name or a test value."""
    value = value.rstrip('.=')
    digit, lower, upper = _classes(value)
    if not (
        len(value) >= 20 and digit and (lower or upper) and
        value.count('/') <= 1 and value.count('.') <= 2 and
        not _reference(value) and
        _re(_STAND_IN).search(value) is None and
        not _camel_case_name(value)
    ):
        return False
    if lower and upper:
        return entropy(value) >= 3.5
    return (
        len(value) >= 24 and _re(r'[0-9a-fA-F_.=-]+').fullmatch(value) is None and
        entropy(value) >= 3.7
    )


_URLSAFE = 'A-Za-z0-9_-'

RULES: tuple[_Rule, ...] = (
    # -- cloud ------------------------------------------------------------
    _token(
        'aws-access-key', 'AWS access key',
        '(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)', '[A-Z0-9]{16}',
        ('akia', 'asia', 'abia', 'acca', 'a3t'), _real,
    ),
    _context(
        'aws-secret-key', 'AWS secret key',
        # `aws_secret_key`, `aws_secret_access_key`, `secret_access_key`,
        # starting with the literal `secret` for speed
        r'secret(?:(?:(?<=aws[ _.-]secret)|(?<=awssecret))[ _.-]?'
        r'(?:access[ _.-]?)?key|[ _.-]?access[ _.-]?key)'
        rf'{_ASSIGN}["\']?([a-z0-9/+]{{40}})(?![a-z0-9/+=])',
        ('secret',), _with_digit,
    ),
    _token(
        'gcp-api-key', 'Google API key', 'AIza', f'[{_URLSAFE}]{{35}}',
        ('aiza',), _real, end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'gcp-oauth-client-secret', 'Google OAuth client secret', 'GOCSPX-',
        f'[{_URLSAFE}]{{28}}', ('gocspx-',), _real, end=f'(?![{_URLSAFE}])',
    ),
    _Rule(
        'azure-storage-key', 'Azure storage key',
        r'(?:account|sharedaccess)key=([a-z0-9+/]{40,}={0,2})(?![a-z0-9+/=])',
        ('accountkey=', 'sharedaccesskey='), _with_digit, lower=True,
    ),
    _token(
        'azure-ad-client-secret', 'Azure AD client secret',
        '', r'[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}', ('q~',),
        end=r'(?![A-Za-z0-9_~.-])', long=False,  # `.` in the random part
    ),
    _token(
        'digitalocean-token', 'DigitalOcean token', 'do[opr]_v1_',
        '[a-f0-9]{64}', ('dop_v1_', 'doo_v1_', 'dor_v1_'),
    ),
    _token(
        'alibaba-access-key', 'Alibaba Cloud access key', 'LTAI',
        f'[{_B62}]{{20}}', ('ltai',),
    ),
    _token(
        'heroku-api-key-v2', 'Heroku key', 'HRKU-AA', f'[{_URLSAFE}]{{58}}',
        ('hrku-aa',), end=f'(?![{_URLSAFE}])',
    ),
    # services whose keys have no prefix (a uuid, a number, plain hex):
    # known by the service's name in the name they are assigned to
    _context(
        'service-key-assignment', 'service key assignment',
        rf'(?<![a-z])(?:{"|".join(_SERVICES)}){_NAME_TAIL}{_ASSIGN}{_VALUE}',
        tuple(_SERVICES_KEYWORDS), _service_value, anchored=True,
    ),
    _context(
        'sidekiq-secret', 'Sidekiq credentials',
        r'(?:bundle_(?:enterprise|gems)__contribsys__com[ \t]*[:=][ \t]*["\']?|'
        r'://[a-z0-9]{8}:(?=[a-z0-9]{8}@(?:gems|enterprise)\.contribsys\.com))'
        r'([a-f0-9]{8}(?::[a-f0-9]{8})?)(?![a-f0-9])',
        ('contribsys',), _any,
    ),
    _context(
        'nuget-config-password', 'password assignment',
        r'<add key=["\']cleartextpassword["\'][ \t]+value=["\']([^"\'\n%]{8,})["\']',
        ('cleartextpassword',), _any,
    ),
    _context(
        'kubernetes-secret', 'Kubernetes secret',
        r'(?m)(?<![a-z0-9_])kind:[ \t]*["\']?secret["\']?[ \t]*$', ('secret',),
        _any,
        context=_k8s_data, any_value=True,
    ),
    _token(
        'databricks-token', 'Databricks token', 'dapi',
        '[a-f0-9]{32}(?:-[0-9])?', ('dapi',),
    ),
    _token(
        'cloudflare-origin-ca-key', 'Cloudflare key', r'v1\.0-',
        '[a-f0-9]{24}-[a-f0-9]{146}', ('v1.0-',),
    ),
    _token(
        'flyio-token', 'Fly.io token', 'f',
        f'(?:o1_[{_URLSAFE}]{{43}}|m(?:1[ar]|2)_[A-Za-z0-9+/]{{100,}}={{0,3}})',
        ('fo1_', 'fm1a_', 'fm1r_', 'fm2_'), end=r'(?![A-Za-z0-9_+/=-])',
    ),
    _token(
        'scalingo-token', 'Scalingo token', 'tk-us-', f'[{_URLSAFE}]{{48}}',
        ('tk-us-',), end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'openshift-token', 'OpenShift token', 'sha256~', f'[{_URLSAFE}]{{43}}',
        ('sha256~',), end=f'(?![{_URLSAFE}])',
    ),
    # -- source hosting and CI ----------------------------------------------
    _token(
        'github-token', 'GitHub token', 'gh[pousr]_', f'[{_B62}]{{36,251}}',
        ('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'), _real,
    ),
    _token(
        'github-fine-grained-pat', 'GitHub token', 'github_pat_',
        f'[{_B62}]{{22}}_[{_B62}]{{59}}', ('github_pat_',), _real,
    ),
    _token(
        'gitlab-token', 'GitLab token', 'gl',
        '(?:pat|ptt|rt|dt|cbt|ft|imt|agent|oas|soat|ffct)-'
        rf'[{_URLSAFE}]{{20,}}(?:\.[a-z0-9]{{9}})?',
        (
            'glpat-', 'glptt-', 'glrt-', 'gldt-', 'glcbt-', 'glft-', 'glimt-',
            'glagent-', 'gloas-', 'glsoat-', 'glffct-',
        ),
        end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'gitlab-runner-registration-token', 'GitLab token', 'GR1348941',
        f'[{_URLSAFE}]{{20,}}', ('gr1348941',), end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'atlassian-api-token', 'Atlassian token', 'AT[AC]TT3',
        '[A-Za-z0-9_=-]{150,}', ('atatt3', 'atctt3'),
        end=r'(?![A-Za-z0-9_=-])',
    ),
    _token(
        'bitbucket-app-password', 'Atlassian token', 'ATBB',
        f'[{_B62}]{{32,}}', ('atbb',),
    ),
    _token(
        'npm-token', 'npm token', 'npm_', f'[{_B62}]{{36}}', ('npm_',),
        _random_looking,
    ),
    _Rule(
        'pypi-token', 'PyPI token',
        f'pypi-AgEIcHlwaS5vcmc[{_URLSAFE}]{{50,}}', ('pypi-ageichlwas5vcmc',),
        _real,
    ),
    _token(
        'rubygems-token', 'RubyGems token', 'rubygems_', '[a-f0-9]{48}',
        ('rubygems_',),
    ),
    _token(
        'clojars-token', 'Clojars token', 'clojars_', '[a-z0-9]{60}',
        ('clojars_',), lower=True,
    ),
    _token(
        'artifactory-api-key', 'Artifactory token', 'AKCp', f'[{_B62}]{{69}}',
        ('akcp',),
    ),
    _token(
        'artifactory-reference-token', 'Artifactory token', 'cmVmd',
        f'[{_B62}]{{59}}', ('cmvmd',),
    ),
    _token(
        'sourcegraph-token', 'Sourcegraph token', 'sgp_',
        '(?:(?:[a-f0-9]{16}|local)_)?[a-f0-9]{40}', ('sgp_',),
    ),
    _token(
        'harness-token', 'Harness token', '[ps]at\\.',
        f'[{_URLSAFE}]{{22}}\\.[{_B62}]{{24}}\\.[{_B62}]{{20}}', ('pat.', 'sat.'),
    ),
    # -- chat and mail ------------------------------------------------------
    _token(
        'slack-token', 'Slack token', 'xox',
        '(?:e\\.xox)?[abeoprs]-[0-9A-Za-z]+-[0-9A-Za-z-]{10,}', ('xox',),
        _with_digit, end=r'(?![0-9A-Za-z_-])',
    ),
    _token(
        'slack-app-token', 'Slack token', 'xapp-',
        f'[0-9]+-[{_B62}]+-[0-9]+-[{_B62}]{{16,}}', ('xapp-',), _with_digit,
    ),
    _Rule(
        'slack-webhook', 'Slack webhook',
        r'hooks\.slack\.com/(?:services|workflows|triggers)/'
        r'[A-Za-z0-9_/-]{20,}',
        ('hooks.slack.com',), _real,
    ),
    _Rule(
        'discord-webhook', 'Discord webhook',
        r'discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/'
        f'[{_URLSAFE}]{{60,68}}(?![{_URLSAFE}])',
        ('discord',), _real,
    ),
    _token(
        'dropbox-token', 'Dropbox token', r'sl\.', '[A-Za-z0-9_.=-]{130,}',
        ('sl.',), end=r'(?![A-Za-z0-9_.=-])', long=False,
    ),
    _token(
        'discord-bot-token', 'Discord token', '',
        f'[MNO][{_URLSAFE}]{{23,27}}\\.[{_URLSAFE}]{{6}}\\.[{_URLSAFE}]{{27,38}}',
        (), _discord_bot_token, end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'telegram-bot-token', 'Telegram bot token', '',
        f'[0-9]{{5,16}}:A[{_URLSAFE}]{{34}}', (':a',), _mixed,
        end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'sendgrid-key', 'SendGrid key', r'SG\.',
        f'[{_URLSAFE}]{{22}}\\.[{_URLSAFE}]{{43}}', ('sg.',), _real,
        end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'sendinblue-key', 'Brevo key', 'x',
        f'(?:keysib|smtpsib)-[a-f0-9]{{64}}-[{_B62}]{{16}}',
        ('xkeysib-', 'xsmtpsib-'),
    ),
    _token(
        'twilio-api-key', 'Twilio key', 'SK', '[0-9a-fA-F]{32}', ('sk',),
    ),
    _token(
        'twilio-account-credentials', 'Twilio key', 'AC',
        '[0-9a-f]{32}:([0-9a-f]{32})', ('ac',),
    ),
    _token(
        # `key-<md5>` is also what a cache key looks like: only where the
        # text names Mailgun (as gitleaks does), and never `cache-key-<md5>`
        'mailgun-key', 'Mailgun key', 'key-', '[0-9a-f]{32}', ('mailgun',),
        boundary='[A-Za-z0-9_./-]', long=False,
    ),
    _token(
        'mailchimp-key', 'Mailchimp key', '', '[0-9a-f]{32}-us[0-9]{1,2}',
        ('-us',),
    ),
    _token(
        'postman-key', 'Postman key', 'PMAK-',
        '[a-f0-9]{24}-[a-f0-9]{34}', ('pmak-',),
    ),
    _token(
        'linear-key', 'Linear key', 'lin_api_', f'[{_B62}]{{40}}',
        ('lin_api_',),
    ),
    _token(
        'typeform-token', 'Typeform token', 'tfp_', '[A-Za-z0-9_.=-]{59}',
        ('tfp_',), end=r'(?![A-Za-z0-9_.=-])', long=False,
    ),
    # -- payments -----------------------------------------------------------
    _token(
        'stripe-key', 'Stripe key', '[rs]k_(?:live|test|prod)_',
        f'[{_B62}]{{20,}}',
        ('sk_live_', 'sk_test_', 'sk_prod_', 'rk_live_', 'rk_test_', 'rk_prod_'),
        _with_digit,
    ),
    _token(
        'stripe-webhook-secret', 'Stripe key', 'whsec_', '[A-Za-z0-9+/]{32,}',
        ('whsec_',), end=r'(?![A-Za-z0-9_+/])',
    ),
    _token(
        'square-token', 'Square token', 'sq0(?:atp|csp)-',
        f'[{_URLSAFE}]{{22,}}', ('sq0atp-', 'sq0csp-'), end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'square-access-token', 'Square token', 'EAAA', f'[{_URLSAFE}]{{60}}',
        ('eaaa',), _random_looking, end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'shopify-token', 'Shopify token', 'shp(?:at|ss|ca|pa)_',
        '[a-fA-F0-9]{32}', ('shpat_', 'shpss_', 'shpca_', 'shppa_'),
    ),
    _token(
        'shippo-token', 'Shippo token', 'shippo_(?:live|test)_',
        '[a-fA-F0-9]{40}', ('shippo_',),
    ),
    _token(
        'flutterwave-secret-key', 'Flutterwave key', 'FLW(?:SECK|PUBK)_TEST-',
        '(?:[a-h0-9]{32}-X|[a-h0-9]{12}(?![a-h0-9]))',
        ('flwseck_test-', 'flwpubk_test-'), end='',
    ),
    _token(
        'duffel-token', 'Duffel token', 'duffel_(?:live|test)_',
        '[A-Za-z0-9_=-]{43}', ('duffel_',), end=r'(?![A-Za-z0-9_=-])',
    ),
    _token(
        'easypost-token', 'EasyPost token', 'EZ[AT]K', f'[{_B62}]{{54}}',
        ('ezak', 'eztk'),
    ),
    # -- AI -----------------------------------------------------------------
    _token(
        'anthropic-key', 'Anthropic key', 'sk-ant-', f'[{_URLSAFE}]{{32,}}',
        ('sk-ant-',), _real, end='',
    ),
    _token(
        'openai-key', 'OpenAI key', 'sk-',
        f'(?!ant-)(?:proj-|svcacct-|admin-)?[{_URLSAFE}]{{32,}}', ('sk-',),
        _random_looking, end='',
    ),
    _token(
        'huggingface-token', 'Hugging Face token', 'hf_', '[A-Za-z]{34}',
        ('hf_',),
    ),
    _token(
        'huggingface-org-token', 'Hugging Face token', 'api_org_',
        '[A-Za-z]{34}', ('api_org_',),
    ),
    _token(
        'groq-key', 'Groq key', 'gsk_', f'[{_B62}]{{52}}', ('gsk_',),
        _random_looking,
    ),
    _token(
        'xai-key', 'xAI key', 'xai-', f'[{_B62}]{{80}}', ('xai-',),
        _random_looking,
    ),
    _token(
        'replicate-token', 'Replicate token', 'r8_', f'[{_B62}]{{37}}',
        ('r8_',), _random_looking,
    ),
    _token(
        'perplexity-key', 'Perplexity key', 'pplx-', f'[{_B62}]{{48}}',
        ('pplx-',), _random_looking,
    ),
    # -- secrets managers, infrastructure, observability --------------------
    _token(
        'vault-token', 'Vault token', r'hv[sbr]\.', f'[{_URLSAFE}]{{24,}}',
        ('hvs.', 'hvb.', 'hvr.'), end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'doppler-token', 'Doppler token', r'dp\.',
        f'(?:pt|st|ct|sa|scim|audit)\\.[{_B62}]{{40,44}}', ('dp.',),
    ),
    _token(
        'terraform-cloud-token', 'Terraform Cloud token', '',
        rf'[{_B62}]{{14}}\.atlasv1\.[A-Za-z0-9_=-]{{60,70}}', ('atlasv1',),
        end=r'(?![A-Za-z0-9_=-])',
    ),
    _token(
        'pulumi-token', 'Pulumi token', 'pul-', '[a-f0-9]{40}', ('pul-',),
    ),
    _token(
        'onepassword-service-account-token', '1Password token', 'ops_eyJ',
        '[A-Za-z0-9+/]{250,}={0,3}', ('ops_eyj',), end=r'(?![A-Za-z0-9+/=])',
    ),
    _token(
        'onepassword-secret-key', '1Password token', 'A3-',
        '[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})'
        '-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}',
        ('a3-',), _with_digit,
    ),
    _token(
        'age-secret-key', 'age secret key', 'AGE-SECRET-KEY-1',
        '[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}', ('age-secret-key-1',), _real,
    ),
    _token(
        'grafana-cloud-token', 'Grafana token', 'glc_',
        '[A-Za-z0-9+/]{32,}={0,3}', ('glc_',), end=r'(?![A-Za-z0-9+/=])',
    ),
    _token(
        'grafana-service-account-token', 'Grafana token', 'glsa_',
        f'[{_B62}]{{32}}_[A-Fa-f0-9]{{8}}', ('glsa_',),
    ),
    _token(
        'grafana-api-key', 'Grafana token', 'eyJrIjoi',
        f'[{_B62}]{{70,400}}={{0,3}}', ('eyjrijoi',), end=r'(?![A-Za-z0-9=])',
    ),
    _token(
        'new-relic-key', 'New Relic key', 'NR',
        f'(?:AK-[A-Z0-9]{{27}}|II-[{_URLSAFE}]{{32}})', ('nrak-', 'nrii-'),
        end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'sentry-token', 'Sentry token', 'sntry',
        '(?:s_eyJ[A-Za-z0-9+/=_]{40,}|u_[a-f0-9]{64})', ('sntrys_', 'sntryu_'),
        end=r'(?![A-Za-z0-9+/=_])',
    ),
    _token(
        'dynatrace-token', 'Dynatrace token', r'dt0c01\.',
        f'[{_B62}]{{24}}\\.[{_B62}]{{64}}', ('dt0c01.',),
    ),
    _token(
        'planetscale-token', 'PlanetScale token', 'pscale_',
        '(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}', ('pscale_',),
        end=r'(?![A-Za-z0-9_=.-])', long=False,
    ),
    _token(
        'prefect-token', 'Prefect token', 'pnu_', f'[{_B62}]{{36}}', ('pnu_',),
    ),
    _token(
        'readme-token', 'ReadMe token', 'rdme_', '[a-z0-9]{70}', ('rdme_',),
    ),
    _token(
        'infracost-token', 'Infracost token', 'ico-', f'[{_B62}]{{32}}',
        ('ico-',),
    ),
    _token(
        'notion-token', 'Notion token', 'ntn_', f'[0-9]{{11}}[{_B62}]{{35}}',
        ('ntn_',),
    ),
    _token(
        'frameio-token', 'Frame.io token', 'fio-u-', '[A-Za-z0-9_=-]{64}',
        ('fio-u-',), end=r'(?![A-Za-z0-9_=-])',
    ),
    _token(
        'adobe-client-secret', 'Adobe client secret', 'p8e-', f'[{_B62}]{{32}}',
        ('p8e-',),
    ),
    _token(
        'maxmind-license-key', 'MaxMind license key', '',
        f'[{_B62}]{{6}}_[{_B62}]{{29}}_mmk', ('_mmk',),
    ),
    _token(
        'facebook-page-token', 'Facebook token', 'EAA[MC]', f'[{_B62}]{{100,}}',
        ('eaam', 'eaac'), _random_looking,
    ),
    _Rule(
        'microsoft-teams-webhook', 'Microsoft Teams webhook',
        r'\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}/'
        r'IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}',
        ('webhookb2',), _any,
    ),
    _token(
        'twitter-bearer-token', 'Twitter bearer token', 'A{22}',
        '([A-Za-z0-9%]{80,100})', ('a' * 22,), end='(?![A-Za-z0-9%])',
    ),
    _token(
        'intra42-client-secret', '42 Intra client secret', 's-s4t2(?:ud|af)-',
        '[a-f0-9]{64}', ('s-s4t2ud-', 's-s4t2af-'),
    ),
    _token(
        'slack-legacy-token', 'Slack token', 'xox[ar]-', f'[{_B62}]{{8,48}}',
        ('xoxa-', 'xoxr-'), _with_digit,
    ),
    _token(
        'tailscale-key', 'Tailscale key', 'tskey-',
        f'[a-z]+-[{_B62}]{{6,}}-[{_B62}]{{16,}}', ('tskey-',), _any,
    ),
    _token(
        'vercel-token', 'Vercel token', 'vc[pikar]_', f'[{_B62}]{{24,}}',
        ('vcp_', 'vci_', 'vck_', 'vca_', 'vcr_'), _random_looking,
    ),
    _token(
        'docker-pat', 'Docker token', 'dckr_(?:pat|oat)_', f'[{_URLSAFE}]{{27,}}',
        ('dckr_pat_', 'dckr_oat_'), end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'figma-token', 'Figma token', 'fig[dou]_', f'[{_URLSAFE}]{{40,}}',
        ('figd_', 'figo_', 'figu_'), end=f'(?![{_URLSAFE}])',
    ),
    _token(
        'airtable-pat', 'Airtable token', 'pat', f'[{_B62}]{{14}}\\.[a-f0-9]{{64}}',
        ('pat',),
    ),
    # -- structures ---------------------------------------------------------
    _token(
        'jwt', 'JSON web token', 'eyJ',
        f'[{_URLSAFE}]{{10,}}\\.eyJ[{_URLSAFE}]{{10,}}\\.[{_URLSAFE}]{{10,}}',
        ('eyj',), _real, end='', long=False,  # its parts may be short
        # not after `-` either: in `-eyJ-eyJ...` each try would read to the
        # end of the run (quadratic time)
        boundary=f'[{_URLSAFE}]',
    ),
    _context(
        'private-key', 'private key block', _PRIVATE_KEY, ('-----begin',), _any,
        context=_key_block, any_value=True,
    ),
    _context(
        'basic-auth', 'basic auth credentials',
        r'authorization["\']?[ \t]*[:=][ \t]*["\']?basic[ \t]+'
        r'([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])',
        ('basic',), _basic_credentials, any_value=True,
    ),
    _context(
        'bearer-token', 'bearer token', r'bearer[ \t]+([a-z0-9._~+/-]{20,}=*)',
        ('bearer',), _high_entropy,
    ),
    _context(
        'url-password', 'password in URL', r'://[^/\s:@"\'`]+:([^/\s:@"\'`]+)@',
        ('://',), _url_password, generic=True,
    ),
    # `password = ...`, `"api_key": "..."`, `GITHUB_TOKEN: ...`: reported only
    # when the value is long and random enough to be a real credential; no
    # left boundary, so that `DB_PASSWORD=` counts
    *(
        _context(
            id, kind,
            f'{keyword}{"" if literal == "key" else _NAME_TAIL}{_ASSIGN}{_VALUE}',
            (literal,),
            _high_entropy, context=_not_a_test_name, generic=True,
            anchored=True,
        )
        for id, kind, keyword, literal in (
            ('password-assignment', 'password assignment',
             'pass(?:word|wd|phrase)', 'pass'),
            ('secret-assignment', 'secret assignment', 'secret', 'secret'),
            ('token-assignment', 'token assignment', 'token', 'token'),
            # `key` ends the name (`apiKey`, `key_2`), not `KeyFile`, `key_name`
            ('api-key-assignment', 'API key assignment',
             'key(?:[_.-]?(?:secret|value|[0-9]))?(?![a-z])', 'key'),
            ('credential-assignment', 'credential assignment',
             'cred(?:ential)?s?', 'cred'),
            ('auth-assignment', 'credential assignment', 'auth', 'auth'),
        )
    ),
    # `<secret>...</secret>`, `<password>...</password>` (XML settings, a
    # Jenkins credentials file): the element's last word
    _context(
        'xml-secret', 'credential in XML',
        r'<(?:secret|password|passwd|token|api_?key|apikey)>[ \t]*\{?'
        r'(?:[^<>\n]{0,60}[ \t])?([a-z0-9+/=_.~-]{8,200})\}?[ \t]*</',
        ('<secret>', '<password>', '<passwd>', '<token>', '<apikey>', '<api_key>'),
        _xml_value, generic=True,
    ),
    # `the slack token - 'xoxb...'`, `Using Key=...`, `api key is ...`: a
    # value a few words after the word that names it
    _Rule(
        'named-value', 'credential after its name',
        # a run of 20 within the next 40 characters, or the name is skipped
        # without a look from Python
        r'(?:token|key|secret|passw(?:or)?d|credential)s?(?![a-z])'
        r'(?=[^\n]{0,40}?[a-z0-9+/_=~.-]{20})',
        ('token', 'key', 'secret', 'passw', 'credential'), _random_value,
        lower=True, generic=True, long=False, locate=_named_value,
        anchored=True,
    ),
)

# what tokens, URLs and keywords are made of: ASCII letters and digits and
# some punctuation; anything else (spaces, quotes, non-ASCII) separates runs
TOKEN_CHARS = (
    'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.=/+:~@%'
)
# what the random part of a token is made of: not `.` or `:`, which paths,
# file:line references and dotted names are full of
DENSE_CHARS = (
    'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=/+~'
)
_RUN = 16  # every match of a `long` rule holds this many DENSE_CHARS in a row
_TOKEN_TABLE = bytes(b if chr(b) in TOKEN_CHARS else 0x20 for b in range(256))
_DENSE_TABLE = bytes(0x61 if chr(b) in DENSE_CHARS else 0x20 for b in range(256))
_DENSE_RUN = b'a' * _RUN


def _long_runs(text: str) -> str:
    """The distinct runs of TOKEN_CHARS in `text` that hold _RUN DENSE_CHARS
    in a row, joined by spaces: where the keywords of `long` rules must be,
    and a much smaller string to search than the text.  Found with substring
    searches, each skipping up to _RUN characters, not a loop per word."""
    raw = text.encode('ascii', 'replace')  # non-ASCII separates
    dense = raw.translate(_DENSE_TABLE)
    i = dense.find(_DENSE_RUN)
    if i < 0:
        return ''
    tokens = raw.translate(_TOKEN_TABLE)
    runs = set()
    while i >= 0:
        start = tokens.rfind(b' ', 0, i) + 1
        end = tokens.find(b' ', i)
        end = len(tokens) if end < 0 else end
        runs.add(tokens[start:end])
        i = dense.find(_DENSE_RUN, end)
    return b' '.join(runs).decode('ascii')


def _ascii_lower(text: str) -> str:
    """`text` with ASCII letters lowercased, every character in its place.
    (str.lower() also turns the Kelvin sign into `k` and `İ` into two
    characters: both would move or make word characters.)"""
    if text.isascii():
        return text.lower()
    return text.replace('\u0130', '\x80').replace('\u212a', '\x80').lower()


def _active(text: str, lower: str) -> list[_Rule]:
    """The rules that may match: a keyword of theirs is in the text; for a
    rule without keywords, it matches one of the long runs."""
    runs = _long_runs(text)
    runs_lower = runs.lower()
    found: dict[tuple[str, bool], bool] = {}  # each keyword searched once
    ret = []
    for rule in RULES:
        if not rule.keywords:
            if _re(rule.pattern).search(runs):
                ret.append(rule)
            continue
        for k in rule.keywords:
            key = (k, rule.long)
            if key not in found:
                found[key] = k in (runs_lower if rule.long else lower)
            if found[key]:
                ret.append(rule)
                break
    return ret


def _matches(rule: _Rule, text: str, lower: str) -> Iterator[re.Match[str]]:
    """The rule's matches; for a rule anchored at its keywords, tried only
    where a keyword stands (found by str.find, much faster than letting an
    alternation of many names try every position)."""
    regex = _re(rule.pattern)
    subject = lower if rule.lower else text
    if not rule.anchored:
        yield from regex.finditer(subject)
        return
    starts = set()
    for k in rule.keywords:
        i = subject.find(k)
        while i >= 0:
            starts.add(i)
            i = subject.find(k, i + 1)
    done = 0
    for i in sorted(starts):
        if i >= done:
            m = regex.match(subject, i)
            if m is not None:
                done = m.end()
                yield m


def _hits(text: str, lower: str, rule: _Rule) -> list[tuple[int, int]]:
    ret = []
    regex = _re(rule.pattern)
    for m in _matches(rule, text, lower):
        if rule.locate is not None:
            span = rule.locate(text, m.end())
            if span is None:
                continue
            start, end = span
        else:
            groups = range(regex.groups, 0, -1)
            start, end = m.span(next((i for i in groups if m[i] is not None), 0))
        value = text[start:end]
        if rule.check(value) and (rule.any_value or not _placeholder(value)) and (
                rule.context is None or rule.context(text, start, end)
        ):
            ret.append((start, end))
    return ret


def spans(text: str) -> list[tuple[int, int, str]]:
    """Where the likely credentials in `text` are: (start, end, kind) of
    each value, in order (to redact them)."""
    lower = _ascii_lower(text)
    rules = _active(text, lower)

    hits: list[tuple[int, int, str]] = []  # value start, value end, kind
    for rule in rules:
        if not rule.generic:
            hits.extend((s, e, rule.kind) for s, e in _hits(text, lower, rule))
    taken = [(s, e) for s, e, _ in hits]
    for rule in rules:
        if rule.generic:
            for start, end in _hits(text, lower, rule):
                # skip a value that is (part of) a key of a specific kind,
                # or one a generic rule before this one found
                if not any(s < end and start < e for s, e in taken):
                    hits.append((start, end, rule.kind))
                    taken.append((start, end))

    hits.sort()
    return hits


def scan(text: str, where: str) -> list[Secret]:
    """Likely credentials in `text`, in line order.  `where` names the text
    in the findings: a file's path, or e.g. 'commit message'."""
    hits = spans(text)
    ret: list[Secret] = []
    seen = set()
    line, pos = 1, 0
    for start, _, kind in hits:
        line += text.count('\n', pos, start)
        pos = start
        if (line, kind) not in seen:
            seen.add((line, kind))
            ret.append(Secret(where, line, kind))
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


def redact(text: str) -> str:
    """`text` with each likely credential replaced by `[redacted KIND]`."""
    out = []
    pos = 0
    for start, end, kind in spans(text):
        if start < pos:  # overlaps the one just redacted
            continue
        out.append(text[pos:start])
        out.append(f'[redacted {kind}]')
        pos = end
    out.append(text[pos:])
    return ''.join(out)
