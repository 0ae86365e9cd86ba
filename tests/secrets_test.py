from __future__ import annotations

import base64
import json
import pathlib
import random
import re
import time
from typing import Any

import pytest

from agitmem.secrets import entropy
from agitmem.secrets import findings
from agitmem.secrets import RULES
from agitmem import secrets as scanner
from agitmem.secrets import Secret
from agitmem.secrets import TOKEN_CHARS

ROOT = pathlib.Path(__file__).parent.parent
CORPUS = ROOT / 'tests' / 'corpus' / 'secrets'


def scan(text: str, where: str) -> list[Secret]:
    """The findings by place and kind (their fingerprints are tested apart)."""
    return [Secret(s.path, s.line, s.kind) for s in scanner.scan(text, where)]

# Fake keys are put together at run time, so that no file of this repository
# holds one: the scanner (and anyone else's) must find nothing in it.
_RANDOM = 'Zx9kQ2mP7vL4wR8tB3nY6cH1jF5dS0gAe4Uo'


def _r(n: int) -> str:
    """n random-looking characters (mixed case and digits)."""
    return (_RANDOM * (n // len(_RANDOM) + 1))[:n]


AWS_KEY = 'AKIA' + 'IOSFODNN7QZ3WTRV'
AWS_SK = 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYq7Zw2KeyMn'
KEY_BODY = 'MIIEowIBAAKCAQEA' + _r(48)
GOOGLE_KEY = 'AIza' + 'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY'
# what the values of CASES are made of: no 6 characters of it in a message
SECRET_PARTS = [
    _RANDOM + _RANDOM, AWS_KEY, AWS_SK, KEY_BODY, GOOGLE_KEY,
    'Q3EGTRLKR4ZYXW2J', '1234567890', 'hbGciOiJIUzI1NiJ9', 'Tr0ub4dor&3xyz',
]

CASES = [
    ('AWS access key', f'aws key {AWS_KEY} in the env'),
    ('AWS access key', 'session ' + 'ASIA' + 'Q3EGTRLKR4ZYXW2J'),
    ('AWS secret key', f'aws_secret_access_key = {AWS_SK}'),
    ('AWS secret key', f'AWS_SECRET_KEY: "{AWS_SK}"'),
    ('GitHub token', 'ghp_' + _r(36)),
    ('GitHub token', 'push with gho_' + _r(36) + ' then'),
    ('GitHub token', 'ghu_' + _r(36)),
    ('GitHub token', 'ghs_' + _r(36)),
    ('GitHub token', 'ghr_' + _r(36)),
    ('GitHub token', 'github_pat_' + _r(22) + '_' + _r(59)),
    ('OpenAI key', 'OPENAI_API_KEY=sk-' + _r(48)),
    ('OpenAI key', 'key sk-proj-' + _r(40) + '-' + _r(40)),
    ('Anthropic key', 'sk-ant-api03-' + _r(82) + '-' + _r(10) + 'AA'),
    ('Slack token', 'xoxb-' + '7305194682-4028613957071-' + _r(24)),
    ('Slack token', 'xoxp-' + '7305194682-4028613957-8316402957-' + _r(32)),
    ('Slack token', 'xoxa-' + '2-' + _r(30)),
    ('Slack token', 'xoxr-' + '7305194682-' + _r(30)),
    ('Slack token', 'xoxs-' + '7305194682-' + _r(30)),
    (
        'Slack webhook',
        'https://hooks.' + 'slack.com/services/T0A1B2C3D/B4E5F6G7H/' + _r(24),
    ),
    ('private key block', '-----BEGIN RSA ' + 'PRIVATE KEY-----'),
    ('private key block', '  -----BEGIN OPENSSH ' + 'PRIVATE KEY-----'),
    ('private key block', '-----BEGIN ' + 'PRIVATE KEY-----'),
    ('private key block', '-----BEGIN PGP ' + 'PRIVATE KEY BLOCK-----'),
    (
        'private key block',
        '{"private_key": "-----BEGIN ' + 'PRIVATE KEY-----\\n' + KEY_BODY +
        '\\n-----END PRIVATE KEY-----\\n"}',
    ),
    ('Google API key', 'maps ' + GOOGLE_KEY),
    ('GitLab token', 'glpat-' + _r(20)),
    ('npm token', '//registry.npmjs.org/:_authToken=npm_' + _r(36)),
    ('PyPI token', 'pypi-AgEIcHlwaS5vcmc' + _r(60)),
    ('Stripe key', 'sk_' + 'live_' + _r(24)),
    ('Stripe key', 'rk_' + 'test_' + _r(24)),
    (
        'JSON web token',
        'eyJ' + 'hbGciOiJIUzI1NiJ9.eyJ' + 'zdWIiOiIxMjM0NTY3ODkwIn0.' + _r(43),
    ),
    ('password in URL', 'postgres://app:' + _r(16) + '@db.internal/app'),
    ('bearer token', 'Authorization: Bearer ' + _r(32)),
    ('password assignment', 'password=' + _r(16)),
    ('password assignment', 'passwd: ' + _r(16)),
    ('password assignment', 'DB_PASSWORD="' + _r(16) + '"'),
    ('password assignment', "db.password = '" + _r(16) + "'"),
    ('password assignment', '{"password": "' + _r(14) + '"}'),
    ('password assignment', 'admin password: ' + 'Tr0ub4dor&3xyz'),
    ('token assignment', 'token=' + '3f7a9c1e5b8d0246' * 2),
    ('secret assignment', 'secret=' + _r(20)),
    ('secret assignment', 'client_secret: ' + _r(24)),
    ('secret assignment', 'SECRET_KEY = "' + _r(40) + '"'),
    ('token assignment', 'token=' + _r(20)),
    ('token assignment', 'GITHUB_TOKEN: ' + _r(20)),
    ('token assignment', 'curl "https://x.io/api?token=' + _r(20) + '&a=1"'),
    ('API key assignment', 'api_key: ' + _r(32)),
    ('API key assignment', '"apiKey": "' + _r(32) + '"'),
    ('API key assignment', 'x-api-key: ' + _r(32)),
]


@pytest.mark.parametrize(('kind', 'line'), CASES)
def test_scan_finds_kind(kind: str, line: str) -> None:
    assert scan(line, 'notes.md') == [Secret('notes.md', 1, kind)]


@pytest.mark.parametrize(('kind', 'line'), CASES)
def test_message_names_file_line_and_kind_but_not_the_secret(
        kind: str,
        line: str,
) -> None:
    text = 'first line\n\n' + line + '\n'
    finding, = findings(scan(text, '.agent/memory/notes.md'))
    assert finding.id == 'secrets'
    assert finding.severity == 'error'
    assert (finding.path, finding.line) == ('.agent/memory/notes.md', 3)
    assert finding.message.startswith('.agent/memory/notes.md:3: ')
    assert kind in finding.message
    for part in SECRET_PARTS:
        for i in range(len(part) - 5):
            assert part[i:i + 6] not in finding.message


def test_line_numbers_and_order() -> None:
    text = '\n'.join([
        '- notes',
        'password=' + _r(16),
        'nothing here',
        AWS_KEY + ' and ' + 'ghp_' + _r(36),
    ])
    assert scan(text, 'n.md') == [
        Secret('n.md', 2, 'password assignment'),
        Secret('n.md', 4, 'AWS access key'),
        Secret('n.md', 4, 'GitHub token'),
    ]


def test_one_hit_per_kind_and_line() -> None:
    assert scan(f'{AWS_KEY} {AWS_KEY}', 'n.md') == [
        Secret('n.md', 1, 'AWS access key'),
    ]


def test_specific_kind_wins_over_assignment() -> None:
    assert scan('GITHUB_TOKEN=ghp_' + _r(36), 'n.md') == [
        Secret('n.md', 1, 'GitHub token'),
    ]
    assert scan('api_key: "AIza' + _r(35) + '"', 'n.md') == [
        Secret('n.md', 1, 'Google API key'),
    ]


def test_crlf_and_key_file() -> None:
    pem = (
        '-----BEGIN RSA PRIVATE ' + 'KEY-----\r\n' + KEY_BODY + '\r\n' +
        '-----END RSA PRIVATE KEY-----\r\n'
    )
    assert scan('x\r\n' + pem, 'k.pem') == [
        Secret('k.pem', 2, 'private key block'),
    ]


def test_key_not_inside_a_longer_word() -> None:
    assert scan('XAKIA' + 'IOSFODNN7QZ3WTRV', 'n.md') == []
    assert scan(AWS_KEY + 'X', 'n.md') == []
    assert scan('myghp_' + _r(36), 'n.md') == []


BENIGN = [
    '- never commit secrets',
    '- never log tokens, passwords or API keys',
    '- token budget: 2000 tokens per injection',
    '- max_tokens=4096 for the summarizer',
    'token_budget = 12000',
    'the password field in src/auth/form.py is validated on the server',
    'password reset emails go through `send_reset(user)`',
    'commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the flaky test',
    'tree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904',
    '"tree": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"',
    'fragment 123e4567-e89b-12d3-a456-426614174000 refers to A-038',
    'ran `pytest -q tests/` : 214 passed, 2 skipped in 3.41s',
    'notes: tests for the loader live in tests/loader_test.py',
    '- indent: 4 spaces',
    'password=changeme',
    'password: hunter2',
    'password=correcthorsebatterystaple',
    'token=<your-token>',
    'token = "<your-github-token-here>"',
    'api_key: xxxxxxxxxxxxxxxxxxxxxxxx',
    'API_KEY=XXXXXXXXXXXXXXXXXXXX',
    'TOKEN=${GITHUB_TOKEN}',
    'token: {{ secrets.GITHUB_TOKEN }}',
    "password: '********'",
    'password: ****************',
    'secret = os.environ["SECRET"]',
    'secret_key = os.urandom(32)',
    'token = get_token_from_env()',
    'password = settings.DATABASE_PASSWORD2',
    'token: MY_SERVICE_TOKEN_V2',
    'api_key: your_api_key_1234',
    'password = "example-password-123"',
    'password_file: ~/.config/app/pass1.txt',
    'token: /run/secrets/token2_file',
    'secret: true',
    'token: null',
    'passwords must be at least 12 characters (see PASSWORD_MIN_LEN)',
    'scikit-learn pipelines: sk-learn-compatible-estimators-and-transformers',
    'sk-' + 'a' * 40,
    'ghp_' + 'x' * 36,
    'AKIA' + 'X' * 16,
    'AKIA' + '0' * 16,
    # a name joined to the rest of it by hyphens (gitleaks' bedrock fps)
    'bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29x',
    # documentation's Slack user token, in a token assignment (gitleaks' fps)
    '"token3": "xoxp-1234-1234-1234-4ddbc191d40ee098cbaae6f3523ada2d"',
    '"token4": "xoxp-572370529330-573807301142-572331691188-####################"',
    # a favicon's build hash, not an Infracost token
    'http://assets.example.com/tv/video_box.ico-7a388b69018576d24b59331fd60aab0c.png',
    # firebase-android-sdk's published example key (gitleaks allows it)
    'apiKey: AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY',
    'AKIA prefix identifies AWS access keys; never paste one',
    'hooks.slack.com/services/' + 'T00000000/B00000000/' + 'X' * 24,
    '- never commit `-----BEGIN RSA ' + 'PRIVATE KEY-----` blocks',
    'the bearer token comes from `auth.login()`',
    'redis://localhost:6379/0',
    'postgres://postgres:postgres@localhost/app',
    'https://user:<password>@example.com/repo.git',
    'd41d8cd98f00b204e9800998ecf8427e is the md5 of nothing',
    'sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '"Resource": "arn:aws:secretsmanager:*:*:secret:A4BNetworkProfile1*"',
    'publicKeyToken="1fc8b3b9a1e18e3b"',
    '    private_key: PKCS7PrivateKeyTypes,',
    'token: OAuth2AccessToken',
    'self.update_token = "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"',
    json.dumps({
        'current_goal': 'move the token refresh into auth/session.py',
        'last_verification': {
            'command': 'npm test -- auth', 'result': 'passed', 'exit_code': 0,
            'tree': '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
        },
        'step': 14, 'updated_at': '2026-11-30T12:01:00Z',
    }),
    json.dumps({
        'id': 'A-042', 'at': '2026-11-30T12:00:00Z',
        'goal': 'rotate the API key handling', 'basis': 'password checks',
        'refs': ['A-038'],
    }),
]


@pytest.mark.parametrize('line', BENIGN)
def test_no_false_positive(line: str) -> None:
    assert scan(line, 'notes.md') == []


def test_no_false_positive_in_templates() -> None:
    paths = [
        p for p in sorted((ROOT / 'templates').rglob('*'))
        if p.is_file()
    ]
    for path in paths:
        text = path.read_text(encoding='utf-8', errors='replace')
        assert scan(text, str(path)) == [], path


def test_own_source_and_tests_hold_no_key() -> None:
    for path in (
            ROOT / 'agitmem' / 'secrets.py',
            pathlib.Path(__file__),
            ROOT / 'tests' / 'checks' / 'enforce_test.py',
            ROOT / 'tests' / 'diffs_test.py',
    ):
        if path.exists():
            assert scan(path.read_text(), str(path)) == [], path


def test_entropy() -> None:
    assert entropy('aaaa') == 0
    assert entropy('abab') == 1
    assert entropy('abcd') == 2


def test_non_ascii_text() -> None:
    # 'İ' lowercases to two characters: positions must still line up
    text = 'İİİ ünïcødé\npassword=' + _r(16) + '\n禁止 提交密钥\n'
    assert scan(text, 'n.md') == [Secret('n.md', 2, 'password assignment')]


def test_empty() -> None:
    assert scan('', 'n.md') == []
    assert findings([]) == []


def _realistic(size: int) -> str:
    lines = [
        '- never commit secrets; the token budget is 4000 tokens',
        '- the password field in src/auth/form.py is validated server side',
        'commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the flaky test',
        '    token = os.environ.get("GITHUB_TOKEN")',
        'In progress: move `loadConfig` from src/config/loader.ts to index.ts',
        json.dumps({
            'id': 'A-042', 'at': '2026-11-30T12:00:00Z', 'goal': 'refactor',
            'basis': 'index.ts:12 ConfigError is not imported',
            'result': 'failed', 'refs': ['A-038'],
        }),
    ]
    out: list[str] = []
    n = 0
    while n < size:
        out.append(lines[len(out) % len(lines)])
        n += len(out[-1]) + 1
    return '\n'.join(out)[:size]


def test_fast_on_256_kb(monkeypatch: pytest.MonkeyPatch) -> None:
    """256 KB of ordinary memory is read a few times over, counted (what
    the regexes are given to read), not timed: a timed bound failed on a
    loaded machine and says nothing on a quiet one (bench/ times it)."""
    text = _realistic(256 * 1024)
    work = _counted(monkeypatch)
    assert scan(text, 'notes.md') == []
    assert work[0] / len(text) < 12  # 7.5 now


# -- one test per rule: a positive generated from the rule's structure, and
# a near miss -------------------------------------------------------------
#
# A sample is a template: `{A:36}` is 36 random characters of class A (see
# _CLASSES), `{uuid}` a random uuid; a callable builds the text itself.  The
# random characters are drawn at test time (seeded by the rule's id, so a
# failure repeats), so no file here holds a key.

_LOWER = 'abcdefghijklmnopqrstuvwxyz'
_UPPER = _LOWER.upper()
_DIGITS = '0123456789'
_CLASSES = {  # name: (alphabet, classes each value holds at least one of)
    'A': (_UPPER + _LOWER + _DIGITS, (_UPPER, _LOWER, _DIGITS)),
    'a': (_LOWER + _DIGITS, (_LOWER, _DIGITS)),
    'U': (_UPPER + _DIGITS, (_UPPER, _DIGITS)),
    'L': (_UPPER + _LOWER, (_UPPER, _LOWER)),
    'h': ('0123456789abcdef', (_DIGITS, 'abcdef')),
    'd': (_DIGITS, (_DIGITS,)),
    'u': (_UPPER + _LOWER + _DIGITS + '-_', (_UPPER, _LOWER, _DIGITS)),
    'b': (_UPPER + _LOWER + _DIGITS + '+/', (_UPPER, _LOWER, _DIGITS)),
    'g': ('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', (_UPPER, _DIGITS)),
}
_FIELD_RE = re.compile(
    r'\{(uuid|discord_id|basic:(\{[^}]*\}|[a-z]+)|([A-Za-z]):(\d+))\}',
)


def _chars(rnd: random.Random, name: str, n: int) -> str:
    alphabet, must = _CLASSES[name]
    while True:
        s = ''.join(rnd.choice(alphabet) for _ in range(n))
        if all(any(c in m for c in s) for m in must) and scan(s, 'x') == []:
            return s


def _fill(template: str, rnd: random.Random) -> str:
    """A template of the table with its fields drawn: `{A:36}`, `{uuid}`;
    `{discord_id}` a bot id in base64; `{basic:T}` `deploy:T` in base64."""
    def field(m: re.Match[str]) -> str:
        if m[1] == 'uuid':
            return '-'.join(_chars(rnd, 'h', n) for n in (8, 4, 4, 4, 12))
        if m[1] == 'discord_id':
            bot_id = str(rnd.randrange(10 ** 17, 10 ** 19)).encode()
            return base64.urlsafe_b64encode(bot_id).decode().rstrip('=')
        if m[2] is not None:
            pair = f'deploy:{_fill(m[2], rnd)}'.encode()
            return base64.b64encode(pair).decode()
        return _chars(rnd, m[3], int(m[4]))
    return _FIELD_RE.sub(field, template)


def _placeholder(template: str) -> str:
    """The template as documentation writes it: `ghp_xxxx...`."""
    return _FIELD_RE.sub(
        lambda m: 'x' * (int(m[4]) if m[3] else 36), template,
    )


RULE_IDS = [rule.id for rule in RULES]
_RULE = {rule.id: rule for rule in RULES}


def _samples(rule_id: str, which: int) -> list[str]:
    rnd = random.Random(rule_id)
    rule = _RULE[rule_id]
    return [_fill(s, rnd) for s in (rule.positives, rule.negatives)[which]]


def test_every_rule_is_documented() -> None:
    """The table: each rule has its entropy floor, two positives, two near
    misses and the source of its format's facts."""
    assert len(RULE_IDS) == len(set(RULE_IDS))
    for rule in RULES:
        assert len(rule.positives) >= 2 and len(rule.negatives) >= 2, rule.id
        assert rule.source and rule.entropy >= 0, rule.id
        assert rule.kind and rule.pattern, rule.id


@pytest.mark.parametrize('rule_id', RULE_IDS)
def test_rule(rule_id: str) -> None:
    kind = _RULE[rule_id].kind
    for text in _samples(rule_id, 0):
        assert scan(text, 'notes.md') == [Secret('notes.md', 1, kind)], text
    for text in _samples(rule_id, 1):
        assert kind not in {s.kind for s in scan(text, 'notes.md')}, text
    for template in _RULE[rule_id].positives:
        # `ghp_xxxx...`, as documentation writes it (a key block's header is
        # enough: its body is never shown)
        if rule_id != 'private-key' and '{basic:' not in template:
            assert scan(_placeholder(template), 'notes.md') == [], template


@pytest.mark.parametrize('rule_id', RULE_IDS)
def test_rule_boundaries(rule_id: str) -> None:
    """After non-ASCII text (Chinese, Japanese without spaces, accents) a
    token is found; as the tail of an ASCII word it is not."""
    kind = _RULE[rule_id].kind
    for text in _samples(rule_id, 0):
        for before in ('密钥', 'キー：', 'clé=', 'é', 'Ω '):
            for after in ('', '的', 'é'):
                found = scan(f'{before}{text}{after}\n', 'notes.md')
                assert [s.kind for s in found] == [kind], (before, text, after)
        regex = re.compile(_RULE[rule_id].pattern)
        if _RULE[rule_id].bounded and regex.match(text):
            for before in 'x_7':  # the token would start at 1
                assert regex.match(before + text, 1) is None, (before, text)
            assert regex.match('é' + text, 1)


@pytest.mark.parametrize(
    'line', [
        '密钥ghp_' + _r(36), 'トークンはghp_' + _r(36) + 'です',
        'clé=sk-' + _r(48), 'éAKIA' + 'Q3EGTRLKR4ZYXW2J', 'ñAKIA' + 'Q3EGTRLKR4ZYXW2J',
        '令牌：glpat-' + _r(20), 'パスワードpassword=' + _r(16),
    ],
)
def test_token_after_non_ascii_letter(line: str) -> None:
    found, = scan(line, 'notes.md')
    assert found.line == 1


def test_kelvin_sign_and_dotted_capital_i_keep_positions() -> None:
    # 'K' (Kelvin) lowercases to an ASCII `k`, 'İ' to two characters
    text = '\u212a\u0130password=' + _r(16) + '\nx\n\u0130AKIA' + 'Q3EGTRLKR4ZYXW2J\n'
    assert scan(text, 'n.md') == [
        Secret('n.md', 1, 'password assignment'), Secret('n.md', 3, 'AWS access key'),
    ]


def test_keywords_are_lowercase_token_characters() -> None:
    """The keyword lookup searches lowercased runs of TOKEN_CHARS (a
    `long` rule's) or the lowercased text (a context rule's: `$apr1$`)."""
    for rule in RULES:
        for k in rule.keywords:
            assert k == k.lower(), (rule.id, k)
            assert set(k) <= set(TOKEN_CHARS) or not rule.long, (rule.id, k)
        if not rule.keywords:
            assert rule.long and not rule.lower, rule.id


@pytest.mark.usefixtures('untraced')
def test_no_quadratic_time_on_repeated_prefixes() -> None:
    """Hostile memory (a fetched ref) must not stall a save or a push."""
    for prefix in ('eyJ', 'ghp_', 'glpat-', 'sk-', 'sk-ant-', 'xoxb-1-', 'AKIA'):
        for sep in ('', '-', '.', '='):
            text = (sep + prefix) * (64 * 1024 // len(sep + prefix))
            t0 = time.perf_counter()
            scan(text, 'n.md')
            assert time.perf_counter() - t0 < 2, sep + prefix


def test_commit_message_is_a_place() -> None:
    msg = 'save: deploy with ghp_' + _r(36) + '\n\nevent: save\n'
    assert scan(msg, 'commit message') == [
        Secret('commit message', 1, 'GitHub token'),
    ]


def test_no_false_positive_in_the_repository() -> None:
    """templates/, README.md and the project's own source, tests and docs."""
    names = [
        p for d in ('templates', 'agitmem', 'tests', 'testing', 'bench', 'docs', 'hooks')
        for p in sorted((ROOT / d).rglob('*'))
        # the corpus of the peers' fixtures is made of keys
        if p.is_file() and '__pycache__' not in p.parts and
        CORPUS not in p.parents
    ] + [ROOT / 'README.md']
    assert ROOT / 'agitmem' / 'secrets.py' in names
    hits = []
    for path in names:
        try:
            text = path.read_text(encoding='utf-8')
        except (UnicodeDecodeError, OSError):
            continue
        hits.extend(scan(text, str(path.relative_to(ROOT))))
    assert hits == []


@pytest.mark.parametrize('rule_id', RULE_IDS)
def test_pattern_has_no_backtracking_shape(rule_id: str) -> None:
    from agitmem import redos
    assert redos.problem(_RULE[rule_id].pattern) is None


_MB = 1024 * 1024


def _hostile_lines() -> list[str]:
    """1 MB lines built to make each kind of rule work hardest: a keyword
    repeated, a keyword before a long run, a long run of every alphabet."""
    lines = []
    for rule in RULES:
        for k in rule.keywords[:1]:
            lines.append((k + ' ') * (_MB // (len(k) + 1)))
            lines.append(k + '=' + 'a1B2' * (_MB // 4))
    lines += [
        'a' * _MB, 'A1b2' * (_MB // 4), '0' * _MB, '-' * _MB, '=' * _MB,
        'token = ' * (_MB // 8), 'key ' + 'x9' * (_MB // 2),
        '-----BEGIN PRIVATE ' + 'KEY-----' + 'A' * _MB,
        'kind: secret\ndata:\n' + ' k: v\n' * (_MB // 6),
        '<secret>' * (_MB // 8), 'https://u:' * (_MB // 10),
        '"api_key": "' * (_MB // 12), '\\n' * (_MB // 2),
        # name and value fields, element names, crypt hashes, subscripts,
        # string prefixes: each repeated, or before a run without its end
        '{"key": "password", "value": "' * (_MB // 30),
        '"key": "' + 'pass' * (_MB // 4), 'name="api_key">' * (_MB // 15),
        'name="api' + '_x' * (_MB // 2), '$apr1$' * (_MB // 6),
        '$6$salt$' + 'a1B2' * (_MB // 4), '$2y$12$' + '.' * _MB,
        "$c['db_password']" * (_MB // 18), 'password = @"' * (_MB // 14),
        'password = f' * (_MB // 12), 'https://u:' + 'a*' * (_MB // 2) + '@',
        'https://u:%' * (_MB // 11), 'userpass=' * (_MB // 9),
        # control characters between a name and its value
        'password=\x00\x01\x1b[31m' * (_MB // 16),
    ]
    return lines


# about a minute: the full suite's, not the everyday tier's (the counted
# test below is the everyday guard, and this one's twin on a small scale)
@pytest.mark.system
@pytest.mark.usefixtures('untraced')
def test_linear_time_on_1_mb_lines() -> None:
    """No rule backtracks on a hostile 1 MB line: each is scanned within a
    hundred times what 1 MB of ordinary memory takes (eight times 128 KB's
    time), timed beside it in the same run (quadratic time would be a
    million times; a fixed bound in seconds failed on a loaded machine:
    11 s against 10)."""
    eighth = _realistic(_MB // 8)

    def took(text: str) -> float:
        t0 = time.perf_counter()
        scan(text, 'n.md')
        return time.perf_counter() - t0

    slow = []
    for line in _hostile_lines():
        floor = 8 * took(eighth)  # each line against a floor of its moment
        hostile = took(line)
        if hostile > 100 * floor:
            slow.append((line[:40], hostile, floor))
    assert slow == []


def _script(name: str) -> Any:
    """tests/corpus/secrets/<name>.py, a script there, not a package
    module, imported."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, CORPUS / f'{name}.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Counting:
    """A compiled pattern that adds to `work` what each call may read: the
    characters of its window for a search (`search`, `finditer`, `sub`...),
    the characters matched for a match at a position."""

    def __init__(self, pattern: re.Pattern[str], work: list[int]) -> None:
        self.pattern = pattern
        self.groups = pattern.groups
        self.work = work

    def _window(self, string: str, pos: int = 0, endpos: int = 1 << 62) -> None:
        self.work[0] += max(0, min(endpos, len(string)) - pos) + 1

    def search(self, string: str, *span: int) -> re.Match[str] | None:
        self._window(string, *span)
        return self.pattern.search(string, *span)

    def fullmatch(self, string: str, *span: int) -> re.Match[str] | None:
        self._window(string, *span)
        return self.pattern.fullmatch(string, *span)

    def finditer(self, string: str, *span: int) -> Any:
        self._window(string, *span)
        return self.pattern.finditer(string, *span)

    def findall(self, string: str, *span: int) -> Any:
        self._window(string, *span)
        return self.pattern.findall(string, *span)

    def split(self, string: str) -> list[str]:
        self._window(string)
        return self.pattern.split(string)

    def sub(self, repl: Any, string: str) -> str:
        self._window(string)
        return self.pattern.sub(repl, string)

    def match(self, string: str, *span: int) -> re.Match[str] | None:
        m = self.pattern.match(string, *span)
        self.work[0] += (m.end() - m.start() if m else 0) + 1
        return m


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The scanner's regexes, counting into the list's one item."""
    from agitmem import secrets
    work = [0]
    compiled = secrets._re
    monkeypatch.setattr(secrets, '_re', lambda p: _Counting(compiled(p), work))
    return work


# 16,564 shapes scanned twice: 30 s, a sixth of the everyday tier, whose
# guards against backtracking are the patterns' shapes (read, not run:
# test_pattern_has_no_backtracking_shape) and the repeated prefixes; at
# smaller sizes the scan's fixed cost hides what grows.  In the full suite.
@pytest.mark.system
@pytest.mark.usefixtures('untraced')
def test_work_is_linear_on_every_hostile_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hostile shape (tests/corpus/secrets/hostile.py: each rule's
    keywords repeated with each separator, before long runs, its prefixes,
    its samples repeated...) costs work linear in its size: what the regexes
    are given to read, counted, not timed.  Four times the text costs at
    most about four times the work (quadratic work would cost 16 times),
    and no shape costs more than a bounded amount per character."""
    hostile = _script('hostile')
    work = _counted(monkeypatch)
    per_char: dict[str, list[float]] = {}
    for size in (1024, 4096):
        for name, text in hostile.shapes(size):
            work[0] = 0
            scan(text, 'n.md')
            per_char.setdefault(name, []).append(work[0] / len(text))
    superlinear = [
        (name, small, big) for name, (small, big) in per_char.items()
        if big > 1.25 * small + 2
    ]
    assert superlinear == []
    assert max(big for _, big in per_char.values()) < 400


@pytest.mark.parametrize('line', [
    # a character no key holds cuts the value: a mangled copy, not a key
    "ramp token - 'ramp_sec_" + _r(19) + '?' + _r(28) + "'",
    "slack token - 'xoxb-65677559833?9613778673399u'",
    "ngc token - '" + _r(26) + ':UlaF?o0J-KaDQ-3kXd-PmzI-' + _r(12) + "'",
    "twilio token - 'k6JXtY3WBtU$" + _r(20) + "'",
    # a `?` before base64's closing `=` cuts: no query parameter ends so
    "stytch token - '" + _r(24) + '?' + _r(22) + "='",
])
def test_value_cut_by_an_odd_character_is_no_key(line: str) -> None:
    assert scan(line, 'notes.md') == []


@pytest.mark.parametrize('line', [
    # a URL's query and fragment, a password's own punctuation are no cut
    'http://cafeb4b3:' + 'd3adb33f@enterprise.contribsys.com#heading1',
    'https://api.example.com/v1/x?key=' + _r(39),
    'GET /callback#access_token=' + _r(40),
    'password = "' + _r(8) + '$' + _r(8) + '!Q"',
    'token = ' + _r(40) + '? yes, rotate it',
])
def test_query_fragment_and_password_punctuation_are_no_cut(line: str) -> None:
    assert scan(line, 'notes.md') != []


def test_corpus_labels_are_the_peers_and_the_stated_relabels() -> None:
    """peers.jsonl is what relabel.py's rules make of the peers' labels:
    each relabel is of a trufflehog negative, names its rule, and keeps
    the peer's label; applying the rules again changes nothing."""
    with open(CORPUS / 'peers.jsonl') as f:
        cases = [json.loads(line) for line in f]
    relabel = _script('relabel')
    before = json.dumps(cases)
    assert json.dumps(relabel.apply(cases)) == before
    moved = [c for c in cases if 'relabel' in c]
    assert moved
    assert all(
        c['source'] in ('trufflehog', 'gitleaks') and c['peer_label'] == 'benign' and
        c['label'] == 'secret' and c['relabel'].split(':')[0] in relabel.RULES
        for c in moved
    )
    # gitleaks' negatives move only when the very text is one of its positives
    positives = {c['text'] for c in cases if c['source'] == 'gitleaks' and c['label'] == 'secret'}
    assert all(c['text'] in positives for c in moved if c['source'] == 'gitleaks')


def test_relabel_rules() -> None:
    key = _r(32)
    positive = {
        'text': f'Using Key={key}', 'label': 'secret', 'family': 'x',
        'source': 'trufflehog', 'want': [key], 'case': 'tests[0] valid pattern',
    }

    def negative(text: str, source: str = 'trufflehog') -> dict[str, Any]:
        return {'text': text, 'label': 'benign', 'family': 'x',
                'source': source, 'want': [], 'case': 'tests[1] invalid pattern'}
    cases = [
        positive,
        negative(f'[DEBUG] Used API_KEY={key}'),  # same-value
        negative(f'token := "{key}EXTRA"'),  # contains-value
        negative(f'Using Key={key[:-1]}'),  # near-copy
        negative(f'Using Key={key[:-8]}'),  # too short: stays
        negative(f'Using {key}'),  # no name: stays
        negative(f'Using Key={key}', source='gitleaks'),  # not trufflehog
        # a test value is documentation, not a leak: stays
        negative('Using Key=abcdef1234567890abcdef12'),
        negative('token := "sk-AAAAAAAAAAAAAAAAAAAAAAAA"'),
        # a key in quotes after a space (`secret = ' KEY '`)
        negative(f"secret = ' {key} '"),
    ]
    cases[0]['want'] += ['abcdef1234567890abcdef12', 'sk-AAAAAAAAAAAAAAAAAAAAAAAA']
    gitleaks_positive = {**positive, 'source': 'gitleaks', 'text': 'pw = "Cleartext1"'}
    cases += [gitleaks_positive, negative('pw = "Cleartext1"', source='gitleaks')]
    # a gitleaks negative holding its rule's positive value with characters added
    cases += [
        {**positive, 'source': 'gitleaks', 'family': 'y', 'text': f'ClickToken = {key}'},
        {**negative(f'key = adf{key}', source='gitleaks'), 'family': 'y'},
        {**negative(f'key = {key[:20]}', source='gitleaks'), 'family': 'y'},
    ]
    got = [c.get('relabel', '').split(':')[0] for c in _script('relabel').apply(cases)]
    assert got == [
        '', 'same-value', 'contains-value', 'near-copy', '', '', '', '', '',
        'same-value', '', 'peer-positive', '', 'contains-value', '',
    ]
    assert [c['label'] for c in cases] == \
        ['secret'] * 4 + ['benign'] * 5 + ['secret'] * 5 + ['benign']


def test_corpus_read_families_are_not_held_out() -> None:
    """The held-out families whose cases were read (README, round 4) count
    in the tuning part, marked so; every other held-out family is unread."""
    with open(CORPUS / 'peers.jsonl') as f:
        cases = [json.loads(line) for line in f]
    read = [c for c in cases if 'read' in c]
    assert {c['family'] for c in read} >= {'gcp-api-key', 'openai'}
    assert not any(c['heldout'] for c in read)
    assert any(c['heldout'] for c in cases)


def test_fresh_corpus_is_new_text_with_its_source() -> None:
    """fresh.jsonl (Nosey Parker's examples): held out, each case named by
    repository, commit, path and rule, none a text of peers.jsonl."""
    with open(CORPUS / 'peers.jsonl') as f:
        seen = {json.loads(line)['text'] for line in f}
    with open(CORPUS / 'fresh.jsonl') as f:
        fresh = [json.loads(line) for line in f]
    assert len(fresh) > 400
    for case in fresh:
        assert case['repo'] == 'praetorian-inc/noseyparker'
        assert len(case['commit']) == 40 and case['path'].endswith('.yml')
        assert case['case'].startswith(case['family'] + ' ')
        assert case['label'] in ('secret', 'benign') and case['heldout']
        assert case['text'] not in seen
    assert {c['label'] for c in fresh if c['claimed']} == {'secret', 'benign'}


def _example_name(service: str) -> str:
    """A name that the service regex of _SERVICE_SHAPES matches."""
    first = service.split('|')[0]  # `jira|confluence`: the first name
    return re.sub(r'\(\?![^)]*\)', '', first.replace('[_-]?', '_'))


def test_service_named_before_a_value_of_another_shape() -> None:
    """A value the text gives a named service's key, in none of that
    service's published shapes, is a near miss, not a key; the same value
    without the service's name is a generic secret."""
    from agitmem.secrets import _SERVICE_SHAPES
    # a `.` inside: no service's key shape holds one
    value = _r(12) + '.' + _r(14)[2:]
    # asana judges only a value of its token's structure, `<n>/<id>:<secret>`
    structured = '1/53719264:' + _r(32)
    for generic in (value, structured):
        assert scan(f'api_key = "{generic}"', 'n.md')
    for service, shape in _SERVICE_SHAPES:
        name = _example_name(service)
        assert re.match(f'(?<![a-z]){service}', name), service
        if re.fullmatch(shape, value):
            value = structured
        assert not re.fullmatch(shape, value), service
        assert scan(f'{name} api_key = "{value}"', 'n.md') == [], service
        # on the line above a bare `Key=`, as in a log
        assert scan(f'[INFO] request to the {name} API\n[DEBUG] Using Key={value}', 'n.md') == []
    # the line above counts only for a bare name, or as the YAML block
    # the value is a field of
    assert scan(f'airvisual\nDEPLOY_API_KEY={value}', 'n.md')
    assert scan(f'auth0_credentials:\n  apiToken: {value}', 'n.md') == []
    assert scan(f'credentials:\n  apiToken: {value}', 'n.md')
    # a value of the service's shape is its key
    assert scan(f'[INFO] airvisual API\nUsing Key={_r(36).lower()}', 'n.md')
    assert scan(f'twilio token - \'SK{_r(32)}\'', 'n.md')


def test_service_prefix_of_a_value_not_of_its_format() -> None:
    """A value opening with a service's token prefix is judged by its
    format: truncated or in another alphabet it is a mangled copy; whole,
    with characters added or up to 3 missing, a key."""
    from agitmem.secrets import _NEAR_COPY
    from agitmem.secrets import _PREFIX_SHAPES
    heads = {'[0-9]{12}&': '202503251200&'}
    for prefix, head, alphabet, n in _PREFIX_SHAPES:
        pool = ''.join(c for c in _RANDOM + _RANDOM.lower() if re.fullmatch(alphabet, c))
        body = (pool * n)[:n]
        # `&` is in no key's or token's alphabet: the repository key is a password
        name = 'password' if '&' in head else 'token'
        start = f'{name} = "{prefix}{heads.get(head, "")}'
        assert scan(f'{start}{body[:n // 2]}"', 'n.md') == [], prefix
        assert scan(f'{start}{body[:n - _NEAR_COPY]}"', 'n.md'), prefix
        assert scan(f'{start}{body}EXTRA"', 'n.md'), prefix


@pytest.mark.parametrize('line', (
    # a scheme cut from a mangled word is no URL
    "postgres token - '?ostgres://app:{A}@10.0.0.1:5432'",
    # a name assigned a bare word: that word is its value
    "key = bind '{A}'",
    # a host cut from a mangled word is no host
    "rabbitmq = 'amqps://app:{A}@?abbitmq-host.example.com:5672/vhost'",
    # a query string with no signature or secret among its parameters (an
    # Azure SAS token's secret is its `sig=`)
    'AZURE_BLOB_SAS_TOKEN=st=2025-03-04T07:24:52Z&se=2025-04-04T15:24:52Z&spr=https&sv=2022-11-02&sr=c',
    # an OpenAI admin key copy the OpenAI rule turned down (no signature, or
    # too short before it) is no generic key either
    'BAD_KEY=sk-admin-short' + 'T3BlbkFJ{A}{A}',
    'BAD_KEY=sk-admin-{A}{A}ABCDEFGH{A}{A}',
))
def test_no_false_positive_in_mangled_or_assigned_contexts(line: str) -> None:
    assert scan(line.replace('{A}', _r(36)), 'n.md') == []


def test_assigned_word_and_url_scheme_near_misses_still_found() -> None:
    assert scan(f"rabbitmq = 'amqps://app:{_r(16)}@rabbitmq-host.example.com:5672/v'", 'n.md')
    # a query string with its signature is a SAS token
    assert scan(
        f'AZURE_BLOB_SAS_TOKEN=sv=2022-11-02&sr=c&sig={_r(43)}%3D', 'n.md',
    )
    assert scan(f"stytch token - '{_r(47)}='", 'n.md')
    admin = f'sk-admin-{_r(58)}T3BlbkFJ{_r(58)}'
    # random letters that read as capitalised words, but with digits among
    # them, are a token; a name with a version is not
    assert scan("manifest token = '0Nubbkxtphh1c3YHbmB8" + "MipsgpbmczRT'", 'n.md')
    assert not scan("token = 'MyServiceAccountTokenValueV2'", 'n.md')
    assert scan(f'KEY={admin}', 'n.md') and scan(admin, 'n.md')
    assert scan(f"postgres token - 'postgres://app:{_r(16)}@10.0.0.1:5432'", 'n.md')
    assert scan(f"the key is {_r(36)}", 'n.md')


@pytest.mark.parametrize('line', [
    # a subscript's assignment, string prefixes (C#'s `@"`, Python's `f"`)
    "$config['db_password'] = '{P}';",
    'env["API_TOKEN"] = "{A}"',
    'const string ApiSecret = @"{A}";',
    'if password == f"{P}":',
    # a user's or a database's `pass` (JDBC, .env)
    'jdbc:mysql://db/app?user=app&userpass={P}',
    'DBPASS={A}',
    # URL passwords with `*`, a `%` that is no format, a plain long word
    'https://deploy:{P}*@example.com',
    'mysql://app:Tr4ck%{P}@db.internal/app',
    'https://admin:{W}@localhost:8000/admin',
    # name and value fields; an Android string named for a key
    '{"key": "smtp_password", "value": "{P}"}',
    '<add key="StripeApiKey" value="{A}" />',
    '<string name="maps_api_key">{A}</string>',
    # Maven's settings: the element's text is the password
    '<password>  {W}  </password>',
    # password hashes (htpasswd, shadow, bcrypt in a SQL dump)
    'deploy:$apr1$l0cpzs5a${C}',
    "(1, 'admin', '$2y$12${C}{C}.Zb', 1),",
])
def test_config_formats_found(line: str) -> None:
    """Credentials assigned in config and code formats (round 8, the
    classes of fresh2's misses)."""
    # made at run time, so that this file holds no credential
    values = {
        '{A}': _r(32), '{P}': 'Pz7v' + 'L4wq3', '{W}': 'quokka' + 'berry',
        '{C}': _r(25).replace('k', '.'),
    }
    for field, value in values.items():
        line = line.replace(field, value)
    assert scan(line, 'n.md'), line


@pytest.mark.parametrize('line', [
    # an f-string's format field is a template, not a value
    'format_password = f"prefix_{dynamic_value3}"',
    "password = f'{user}{suffix}'",
    # `bypass`, `compass`, `surpass` hold no `pass`
    'bypass = "Pz7vL4wq3"', 'compass: "Pz7vL4wq3"',
    # a stock URL password, a format, a mask
    'mysql://USERNAME:PASSWORD@example.com', 'https://u:%s@example.com',
    'https://u:%-8s@example.com', 'https://deploy:**masked**@example.com',
    'https://admin:changeme@localhost', 'https://admin:password@localhost',
    # a field pair whose value is a stand-in or a chosen word for a token
    '{"key": "password", "value": "changeme"}',
    '{"key": "token", "value": "quokkaberry"}',
    '{"key": "key_name", "value": "' + _r(32) + '"}',
    '<string name="api_key_hint">Enter your API key here</string>',
    '<string name="api_key">${API_KEY}</string>',
    # a hash format named, and a hash of one repeated character
    'htpasswd -m writes $apr1$ hashes, shadow $6$ ones',
    'root:$6$saltsalt$' + 'a' * 86 + ':19000:0:99999:7:::',
])
def test_config_format_near_misses(line: str) -> None:
    assert scan(line, 'n.md') == [], line


@pytest.mark.parametrize(('found', 'near_miss'), (
    # mailgun: `key-` and 32 of [a-z0-9]; a `=` for the last is no key
    ('mailgun {q}key-{l:32}{q}', 'mailgun {q}key-{l:31}={q}'),
    # asana: a personal access token's ids have 16 digits or more
    ('asana Key=1/{d:16}:{A:32}', 'asana Key={d:13}/{d:15}:{A:32}'),
    ('asana Key=1/{d:16}/{d:16}:{h:32}', 'asana Key=7/{d:8}/{d:13}:{h:32}'),
    # a Data Center PAT is 44 characters; 3 missing is a near copy, 4 no key
    ('jira_token: N{b:40}', 'jira_token: N{b:39}'),
    ('jira_token: N{b:43}AAAA', 'confluence token: N{b:39}'),
    # a Jira cloud token is 24 letters and digits
    ('jira Key={A:24}', 'jira Key={A:25}.x'),
    # bannerbear: 30 hex after `bb_ma_`; a non-hex character within them
    ('token := "Bearer bb_ma_{h:30}"', 'token := "Bearer bb_ma_{h:28}cq"'),
    # an Azure API Management repository key: a 12-digit expiry, not 8
    ('PASSWORD=git&202503251200&{b:86}==', 'PASSWORD=git&20250325&{b:86}=='),
))
def test_service_format_near_misses(found: str, near_miss: str) -> None:
    """A value of a named service, or opening with its prefix, in that
    service's published format is found; the peers' near misses of the same
    format are not."""
    def fill(template: str) -> str:
        classes = {
            'l': 'abcdefghijklmnopqrstuvwxyz0123456789', 'd': '0123456789',
            'h': '0123456789abcdef', 'A': _RANDOM,
            'b': _RANDOM + '+/',
        }
        out = template.replace('{q}', "'")
        for cls, n in re.findall(r'\{([a-zA-Z]):([0-9]+)\}', template):
            pool = classes[cls]
            value = ''.join(pool[(i * 7 + 3) % len(pool)] for i in range(int(n)))
            out = out.replace(f'{{{cls}:{n}}}', value, 1)
        return out
    assert scan(fill(found), 'n.md'), found
    assert scan(fill(near_miss), 'n.md') == [], near_miss


def _corpus(name: str) -> list[dict[str, Any]]:
    with open(CORPUS / f'{name}.jsonl') as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize(('part', 'floor'), (
    # bare texts, measured in round 8: 0.936, 0.684, 0.759; fresh3 read
    # and tuned on in round 9: 0.350 (0.322 before)
    ('peers', 0.93), ('fresh', 0.68), ('fresh2', 0.75), ('fresh3', 0.345),
))
def test_recall_floor_on_the_parts_read(part: str, floor: float) -> None:
    """Recall on the parts read while tuning does not fall below what was
    measured (the held-out families are measured by bench/secrets.py
    only, so that no test is tuned against them; fresh3 was read in
    round 9)."""
    secrets = [
        c for c in _corpus(part) if c['label'] == 'secret' and
        not (part == 'peers' and c['heldout'])
    ]
    found = sum(bool(scan(c['text'], 'n.md')) for c in secrets)
    assert found / len(secrets) >= floor


def test_ordinary_text_has_no_false_positive() -> None:
    flagged = [c['text'][:60] for c in _corpus('ordinary') if scan(c['text'], 'n.md')]
    assert flagged == []


# -- URL userinfo (RFC 3986: sub-delims `!$&'()*+,;=` and %-encoded) ----------

# `|` stands for the `:` before the password (put back at run time): no
# line of this file holds a URL with a password
@pytest.mark.parametrize('url', [
    'postgres://admin|pa$$w0rd@db.internal/x',
    'https://u|abc$def9@host',
    'mysql://root|p;ss,w0rd@h',
    'mysql://root|p!ss(w0rd)@db.internal',
    "mysql://root|p'ss,w0rd1@db.internal",
    'amqp://user|p&ss=w0rd1@mq.internal',
    'postgres://u|pa;ss9word@db.internal',
    'postgres://$USER|S3cretPassw0rd1@db.internal',
    'redis://|a*b+c=1x@cache.internal',
])
def test_url_password_holding_sub_delims_is_found(url: str) -> None:
    url = url.replace('|', ':')
    for text in (url, f'- note: {url}', f'DATABASE_URL={url}', json.dumps({'url': url})):
        assert scan(text, 'n.md') == [Secret('n.md', 1, 'password in URL')], text


@pytest.mark.parametrize('url', [
    'postgres://admin:${DB_PASS}@db.internal/x',
    'postgres://admin:$DB_PASS@db.internal/x',
    'postgres://admin:$1@db.internal/x',
    'postgres://admin:$(cat /run/pw)@db.internal/x',
    'postgres://admin:%(password)s@db.internal/x',
    'postgres://admin:{{ pass }}@db.internal/x',
    'postgres://admin:{password}@db.internal/x',
    'postgres://admin:[PASSWORD]@db.internal/x',
    'postgres://admin:<password>@db.internal/x',
    'postgres://admin:****@db.internal/x',
    'postgres://admin:xxxxxxxx@db.internal/x',
    # the `'` closes the string the URL is in: no password
    "url = 'mysql://root:pss,w0rd' + '@db.internal'",
])
def test_url_password_stand_ins_are_not_found(url: str) -> None:
    assert scan(url, 'n.md') == []


# -- dismissing a false alarm ------------------------------------------------------

TOKEN = 'ghp' + '_' + _RANDOM
AWS = 'AKIA' + 'QYLPMN4RZT7W2XHB'


def _allowed(text: str, allow: scanner.Allow = scanner.NOTHING) -> list[tuple[int, str, str]]:
    return [(s.line, s.kind, s.allowed) for s in scanner.scan(text, 'n.md', allow)]


def test_fingerprint_is_of_the_value_alone() -> None:
    fp = scanner.fingerprint(TOKEN)
    assert re.fullmatch('sha256:[0-9a-f]{64}', fp)
    found, = scanner.scan(f'- a\n- deploy with {TOKEN} today\n', 'n.md')
    assert found.fingerprint == fp
    # the same value anywhere, in any line, has the same fingerprint
    assert scanner.scan(f'x {TOKEN}', 'm.md')[0].fingerprint == fp
    assert fp != scanner.fingerprint(TOKEN[:-1])


def test_a_fingerprint_allows_exactly_its_value() -> None:
    allow = scanner.Allow(frozenset({scanner.fingerprint(TOKEN)}))
    assert _allowed(f'- {TOKEN}\n', allow) == [(1, 'GitHub token', 'fingerprint')]
    other = 'ghp' + '_' + _RANDOM[::-1]
    assert _allowed(f'- {other}\n', allow) == [(1, 'GitHub token', '')]
    # the fingerprint of a short or empty value, of a part of the key, of
    # the line: none allows the key
    for part in ('', 'ghp_', TOKEN[:-1], TOKEN[4:], f'- {TOKEN}'):
        allow = scanner.Allow(frozenset({scanner.fingerprint(part)}))
        assert _allowed(f'- {TOKEN}', allow) == [(1, 'GitHub token', '')], part


def test_an_allowed_value_inside_a_longer_value_lets_the_longer_one_by_not() -> None:
    allow = scanner.Allow(frozenset({scanner.fingerprint(AWS)}))
    found = _allowed(f'pass' f'word: {AWS}/Q7vL4wR8tB3nY6c', allow)
    assert (1, 'AWS access key', 'fingerprint') in found
    assert (1, 'password assignment', '') in found


@pytest.mark.parametrize('marker', ['agitmem:allow', 'gitleaks:allow', 'pragma: allowlist secret'])
def test_a_marker_allows_its_own_line(marker: str) -> None:
    assert _allowed(f'- a\n- {TOKEN}  # {marker}\n') == [(2, 'GitHub token', 'marker')]
    assert _allowed(f'- a # {marker}\n- {TOKEN}\n- b # {marker}\n') == [(2, 'GitHub token', '')]


def test_a_marker_cannot_allow_what_is_not_wholly_on_its_line() -> None:
    # inside the secret itself: its characters cannot allow it
    assert _allowed(f'- pass' f'word={TOKEN}agitmem:allow{_RANDOM}\n')[0][2] == ''
    # inside another value on the line
    for line in (
            f'- {TOKEN} password={_RANDOM[:10]}agitmem:allow{_RANDOM[10:20]}\n',
            f'- {TOKEN} url=postgres://u:{_RANDOM[:10]}agitmem:allow@db.internal\n',
    ):
        assert [a for _, _, a in _allowed(line)] == ['', ''], line
    # a key block starting on the marked line
    block = (
        '-----BEGIN RSA PRIVATE ' + 'KEY----- agitmem:allow\n' +
        '\n'.join([base64.b64encode(bytes(range(i, i + 48))).decode() for i in range(0, 240, 48)]) +
        '\n-----END RSA PRIVATE ' + 'KEY-----\n'
    )
    assert [a for _, _, a in _allowed(block)] == [''] * len(_allowed(block)) != []
    # a JSON string's escaped line breaks: the marker on another line of it
    assert _allowed(json.dumps({'note': f'deploy\n{TOKEN}\nagitmem:allow'}))[0][2] == ''
    assert _allowed(json.dumps({'note': f'deploy\n{TOKEN} agitmem:allow'}))[0][2] == 'marker'


def test_a_marker_in_a_string_allows_only_that_string() -> None:
    """A fragments.jsonl line holds a whole fragment, each field a JSON
    string: a marker in one field allowed every finding on the line (the
    result's token by a marker in the goal).  In a string, a marker
    allows what is in that string (on its own line of it)."""
    line = json.dumps({'id': 'A-1', 'goal': 'agitmem:allow', 'result': f'deployed with {TOKEN}'})
    assert [a for _, _, a in _allowed(line + '\n')] == ['']
    line = json.dumps({'id': 'A-1', 'goal': f'the docs sample {TOKEN} agitmem:allow', 'result': f'then {AWS}'})
    assert [(k, a) for _, k, a in _allowed(line + '\n')] == [('GitHub token', 'marker'), ('AWS access key', '')]
    # the string's quote escaped inside it does not end it
    line = json.dumps({'goal': f'say "hi" {TOKEN} agitmem:allow', 'result': f'{AWS}'})
    assert [a for _, _, a in _allowed(line + '\n')] == ['marker', '']
    # YAML's double-quoted strings alike; a marker outside every string
    # still allows its whole line
    assert [a for _, _, a in _allowed(f'a: "agitmem:allow"\nb: "{TOKEN}" "x"\n')] == ['']
    assert {a for _, _, a in _allowed(f'token = "{TOKEN}"  # gitleaks:allow\n')} == {'marker'}
    assert {a for _, _, a in _allowed(f'- "{TOKEN}" and "{AWS}"  # agitmem:allow\n')} == {'marker'}



def test_a_marker_in_a_yaml_string_over_lines_allows_only_that_string() -> None:
    """A YAML double-quoted string may go on over lines (folded with `\\`
    or not): the rows after its first begin inside it, where the quotes of
    the row alone said the marker was outside every string and allowed
    the next string's token."""
    assert [a for _, _, a in _allowed(f'{{goal: "x\n  agitmem:allow", token: "{TOKEN}"}}\n')] == ['']
    assert [a for _, _, a in _allowed(f'{{goal: "x \\\n  agitmem:allow", token: "{TOKEN}"}}\n')] == ['']
    # inside the string that goes on, the marker still allows that string
    assert [a for _, _, a in _allowed(f'{{goal: "x\n  {TOKEN} agitmem:allow", b: 1}}\n')] == ['marker']

def test_a_marker_in_a_single_quoted_string_allows_only_that_string() -> None:
    """A YAML single-quoted string (`''` a quote in it, over lines or
    not) or a TOML literal string: a marker in one allowed the whole line,
    the next string's token too.  In it, the marker allows that string."""
    assert [a for _, _, a in _allowed(f"{{goal: 'agitmem:allow', token: '{TOKEN}'}}\n")] == ['']
    assert [a for _, _, a in _allowed(f"goal: 'it''s agitmem:allow' ; x: '{TOKEN}'\n")] == ['']
    assert [a for _, _, a in _allowed(f"t = {{a = 'agitmem:allow', b = '{TOKEN}'}}\n")] == ['']
    assert [a for _, _, a in _allowed(f"{{goal: 'x\n  agitmem:allow', token: '{TOKEN}'}}\n")] == ['']
    # the string's own token is allowed; a quote in a double-quoted string
    # opens nothing; an apostrophe in prose neither; outside: the line
    assert [a for _, _, a in _allowed(f"- 'sample {TOKEN} agitmem:allow'\n")] == ['marker']
    assert [a for _, _, a in _allowed(f'goal: "a \'agitmem:allow" token: "{TOKEN}"\n')] == ['']
    assert [a for _, _, a in _allowed(f"- don't worry, {TOKEN} is a sample agitmem:allow\n")] == ['marker']
    assert {a for _, _, a in _allowed(f"token = '{TOKEN}'  # gitleaks:allow\n")} == {'marker'}


def test_a_marker_as_a_plain_value_of_a_flow_collection_allows_only_its_item() -> None:
    """`{goal: agitmem:allow, token: <token>}` (YAML or TOML flow, plain
    values): the marker, outside every quoted string, allowed its whole
    line.  Inside a `[` or `{` of its row, before any comment there, it
    allows its item (to the next `,`, `]` or `}`); after a comment, the
    line as ever."""
    assert [a for _, _, a in _allowed(f'{{a: agitmem:allow, b: {TOKEN}}}\n')] == ['']
    assert [a for _, _, a in _allowed(f'[agitmem:allow, {TOKEN}]\n')] == ['']
    assert [a for _, _, a in _allowed(f'{{a: [x], b: agitmem:allow, c: {TOKEN}}}\n')] == ['']
    # a `#` inside a string is no comment
    assert [a for _, _, a in _allowed(f'{{a: "x #", b: agitmem:allow, c: {TOKEN}}}\n')] == ['']
    assert [a for _, _, a in _allowed(f'[x, {TOKEN} agitmem:allow]\n')] == ['marker']
    assert {a for _, _, a in _allowed(f'[{TOKEN}, 2]  # agitmem:allow\n')} == {'marker'}
    assert {a for _, _, a in _allowed(f'[{TOKEN}, 2]  // agitmem:allow\n')} == {'marker'}
    assert [a for _, _, a in _allowed(f'- see [docs]: agitmem:allow, sample {TOKEN}\n')] == ['marker']


def test_a_pattern_allows_the_values_it_matches_whole() -> None:
    allow = scanner.Allow(patterns=(re.compile('ghp_Zx9k[A-Za-z0-9]+'),))
    assert _allowed(f'- {TOKEN}', allow) == [(1, 'GitHub token', 'pattern')]
    # a part of the value matching is not enough
    allow = scanner.Allow(patterns=(re.compile('ghp_Zx9k'),))
    assert _allowed(f'- {TOKEN}', allow) == [(1, 'GitHub token', '')]


def test_findings_print_the_fingerprint_and_the_marker() -> None:
    found, = findings(scanner.scan(f'- {TOKEN}', 'n.md'))
    assert scanner.fingerprint(TOKEN) in found.message
    assert 'agitmem:allow' in found.message
    assert TOKEN not in found.message


def test_a_key_block_or_kubernetes_secret_is_judged_whole() -> None:
    """Their value as found (the header, `kind: Secret`) is the same in
    every one: its fingerprint allows none of them, the whole block's
    allows that block only."""
    body = '\n'.join(base64.b64encode(bytes(range(i, i + 48))).decode() for i in range(0, 240, 48))
    block = '-----BEGIN RSA PRIVATE ' + 'KEY-----\n' + body + '\n-----END RSA PRIVATE ' + 'KEY-----'
    header = scanner.Allow(frozenset({scanner.fingerprint(block.partition('\n')[0])}))
    assert _allowed(block + '\n', header) == [(1, 'private key block', '')]
    whole = scanner.Allow(frozenset({scanner.fingerprint(block)}))
    assert _allowed(block + '\n', whole) == [(1, 'private key block', 'fingerprint')]
    assert _allowed(block.replace(body[:8], body[8:16]) + '\n', whole) == [(1, 'private key block', '')]
    k8s = 'kind: Secret\napiVersion: v1\ndata:\n  ca.pem: ' + base64.b64encode(bytes(range(24))).decode() + '\n'
    line = scanner.Allow(frozenset({scanner.fingerprint('kind: Secret')}))
    assert _allowed(k8s, line) == [(1, 'Kubernetes secret', '')]


@pytest.mark.parametrize('text', [
    'DB_PASS' + 'WORD=p;ss,w0rd1',
    'pass' + 'word: p;ss,w0rd1Xy',
    'jdbc:mysql://db.internal/x?user=root&pass' + 'word=p;ss,w0rd1',
])
def test_an_unquoted_password_holding_semicolons_and_commas_is_found(text: str) -> None:
    assert scan(text, 'n.md') == [Secret('n.md', 1, 'password assignment')]


def test_a_semicolon_or_comma_still_ends_a_value_before_a_name_or_space() -> None:
    pw = 'S3cretPw' + '1234'
    for text, value in (
            (f'connect(pass' f'word={pw}, host=x)', pw),
            (f'$pass' f'word={pw};', pw),
            (f'Server=x;pass' f'word={pw};Database=d', pw),
    ):
        (start, end, _), = scanner.spans(text)
        assert text[start:end] == value, text


def _classes(pattern: str) -> list[list[tuple[Any, Any]]]:
    """The character classes of `pattern`, as re's parser reads them."""
    found = []
    stack: list[Any] = [re._parser.parse(pattern)]  # type: ignore[attr-defined]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)) or type(item).__name__ == 'SubPattern':
            if isinstance(item, tuple) and len(item) == 2 and str(item[0]) == 'IN':
                found.append(item[1])
            stack.extend(x for x in item if isinstance(x, (list, tuple)) or type(x).__name__ == 'SubPattern')
    return found


def test_no_rule_makes_re_map_the_whole_of_unicode() -> None:
    """A class with a range past U+FFFF (a negation of the rest, written as
    `[^...\\x7f-\\U0010ffff]`) costs `re` a walk of 65,536 code points to
    compile, ~7 ms for each rule that has one: the assignment rules, run in
    every save and commit hook whose text says `key`, `token` or
    `password`.  The unquoted value's characters are written out instead,
    the same set."""
    for rule in RULES:
        for cls in _classes(rule.pattern):
            wide = [av for op, av in cls if str(op) == 'RANGE' and av[1] - av[0] >= 0x10000]
            assert not wide, (rule.id, wide)
    everything = ''.join(map(chr, range(0x110000)))
    was = r'''[^\x00-\x20"'`,;\\&\x7f-\U0010ffff]'''
    assert re.findall(scanner._BARE, everything) == re.findall(was, everything)
