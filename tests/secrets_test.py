from __future__ import annotations

import json
import pathlib
import time

import pytest

from agitmem.secrets import entropy
from agitmem.secrets import findings
from agitmem.secrets import scan
from agitmem.secrets import Secret

ROOT = pathlib.Path(__file__).parent.parent

# Fake keys are put together at run time, so that no file of this repository
# holds one: the scanner (and anyone else's) must find nothing in it.
_RANDOM = 'Zx9kQ2mP7vL4wR8tB3nY6cH1jF5dS0gAe4Uo'


def _r(n: int) -> str:
    """n random-looking characters (mixed case and digits)."""
    return (_RANDOM * (n // len(_RANDOM) + 1))[:n]


AWS_KEY = 'AKIA' + 'IOSFODNN7EXAMPLE'
AWS_SK = 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYEXAMPLEKEY'
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
    ('Anthropic key', 'sk-ant-api03-' + _r(80) + '-' + _r(10) + 'AA'),
    ('Slack token', 'xoxb-' + '1234567890-1234567890123-' + _r(24)),
    ('Slack token', 'xoxp-' + '1234567890-1234567890-1234567890-' + _r(32)),
    ('Slack token', 'xoxa-' + '2-' + _r(30)),
    ('Slack token', 'xoxr-' + '1234567890-' + _r(30)),
    ('Slack token', 'xoxs-' + '1234567890-' + _r(30)),
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
    ('token assignment', 'token=' + '0123456789abcdef' * 2),
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
    assert scan('XAKIA' + 'IOSFODNN7EXAMPLE', 'n.md') == []
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


def test_fast_on_256_kb() -> None:
    text = _realistic(256 * 1024)
    best = min(_timed(text) for _ in range(5))
    assert best < 0.1  # a few ms in practice; generous for slow CI machines


def _timed(text: str) -> float:
    t0 = time.perf_counter()
    assert scan(text, 'notes.md') == []
    return time.perf_counter() - t0
