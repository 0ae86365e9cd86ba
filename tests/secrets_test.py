from __future__ import annotations

import base64
import json
import pathlib
import random
import re
import time
from collections.abc import Callable

import pytest

from agitmem.secrets import entropy
from agitmem.secrets import findings
from agitmem.secrets import RULES
from agitmem.secrets import scan
from agitmem.secrets import Secret
from agitmem.secrets import TOKEN_CHARS

ROOT = pathlib.Path(__file__).parent.parent
CORPUS = ROOT / 'tests' / 'corpus' / 'secrets'

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
    ('Anthropic key', 'sk-ant-api03-' + _r(80) + '-' + _r(10) + 'AA'),
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
_FIELD_RE = re.compile(r'\{(uuid|([A-Za-z]):(\d+))\}')


def _chars(rnd: random.Random, name: str, n: int) -> str:
    alphabet, must = _CLASSES[name]
    while True:
        s = ''.join(rnd.choice(alphabet) for _ in range(n))
        if all(any(c in m for c in s) for m in must) and scan(s, 'x') == []:
            return s


def _fill(template: str, rnd: random.Random) -> str:
    def field(m: re.Match[str]) -> str:
        if m[1] == 'uuid':
            return '-'.join(_chars(rnd, 'h', n) for n in (8, 4, 4, 4, 12))
        return _chars(rnd, m[2], int(m[3]))
    return _FIELD_RE.sub(field, template)


def _placeholder(template: str) -> str:
    """The template as documentation writes it: `ghp_xxxx...`."""
    return _FIELD_RE.sub(
        lambda m: 'x' * (36 if m[1] == 'uuid' else int(m[3])), template,
    )


def _discord_bot_token(rnd: random.Random) -> str:
    bot_id = str(rnd.randrange(10 ** 17, 10 ** 19)).encode()
    first = base64.urlsafe_b64encode(bot_id).decode().rstrip('=')
    return _fill(first + '.{u:6}.{u:38}', rnd)


def _basic(password_template: str) -> Callable[[random.Random], str]:
    def build(rnd: random.Random) -> str:
        pair = f'deploy:{_fill(password_template, rnd)}'.encode()
        return 'Authorization: Basic ' + base64.b64encode(pair).decode()
    return build


Sample = str | Callable[[random.Random], str]
_KEY = '-----BEGIN RSA ' + 'PRIVATE KEY-----'
# rule id: (positives, near misses)
SAMPLES: dict[str, tuple[tuple[Sample, ...], tuple[Sample, ...]]] = {
    'aws-access-key': (('AKIA{U:16}', 'ASIA{U:16}'), ('AKIA{U:15}', 'AKIA{U:17}')),
    'aws-secret-key': (
        ('aws_secret_access_key = {b:40}', 'AWS_SECRET_KEY: "{b:40}"'),
        ('aws_secret_access_key = {b:39}', 'aws_region = {b:40}'),
    ),
    'gcp-api-key': (('AIza{u:35}',), ('AIza{u:34}',)),
    'gcp-oauth-client-secret': (('GOCSPX-{u:28}',), ('GOCSPX-{u:27}',)),
    'azure-storage-key': (
        (
            'DefaultEndpointsProtocol=https;AccountName=acme;'
            'AccountKey={b:86}==;EndpointSuffix=core.windows.net',
            'Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=x;'
            'SharedAccessKey={b:43}=',
        ),
        ('AccountName=acme;AccountKey={b:30}==;', 'AccountKey=<key>;'),
    ),
    'azure-ad-client-secret': (('{A:3}8Q~{A:34}',), ('{L:4}Q~{A:34}',)),
    'digitalocean-token': (
        ('dop_v1_{h:64}', 'doo_v1_{h:64}', 'dor_v1_{h:64}'), ('dop_v1_{h:63}',),
    ),
    'alibaba-access-key': (('LTAI{A:20}',), ('LTAI{A:19}',)),
    'heroku-api-key-v2': (('HRKU-AA{u:58}',), ('HRKU-AA{u:57}',)),
    'databricks-token': (('dapi{h:32}', 'dapi{h:32}-2'), ('dapi{h:31}',)),
    'cloudflare-origin-ca-key': (
        ('v1.0-{h:24}-{h:146}',), ('v1.0-{h:24}-{h:145}',),
    ),
    'flyio-token': (('fo1_{u:43}', 'FlyV1 fm2_{b:120}'), ('fo1_{u:42}',)),
    'scalingo-token': (('tk-us-{u:48}',), ('tk-us-{u:47}',)),
    'openshift-token': (('sha256~{u:43}',), ('sha256~{u:42}',)),
    'github-token': (
        ('ghp_{A:36}', 'gho_{A:36}', 'ghu_{A:36}', 'ghs_{A:36}', 'ghr_{A:36}'),
        ('ghp_{A:35}', 'ghx_{A:36}'),
    ),
    'github-fine-grained-pat': (
        ('github_pat_{A:22}_{A:59}',), ('github_pat_{A:22}_{A:58}',),
    ),
    'gitlab-token': (
        (
            'glpat-{u:20}', 'glptt-{h:40}', 'glrt-{u:20}', 'gldt-{u:20}',
            'glcbt-{u:24}', 'gloas-{u:64}', 'glpat-{u:27}.01{a:7}',
        ),
        ('glpat-{u:19}', 'glpat-token-for-the-ci-runner'),
    ),
    'gitlab-runner-registration-token': (
        ('GR1348941{u:20}',), ('GR1348941{u:19}',),
    ),
    'atlassian-api-token': (('ATATT3{u:180}',), ('ATATT3{u:140}',)),
    'bitbucket-app-password': (('ATBB{A:32}',), ('ATBB{A:31}',)),
    'npm-token': (('//registry.npmjs.org/:_authToken=npm_{A:36}',), ('npm_{A:35}',)),
    'pypi-token': (('pypi-AgEIcHlwaS5vcmc{u:60}',), ('pypi-AgEIcHlwaS5vcmc{u:49}',)),
    'rubygems-token': (('rubygems_{h:48}',), ('rubygems_{h:47}',)),
    'clojars-token': (('CLOJARS_{a:60}',), ('CLOJARS_{a:59}',)),
    'artifactory-api-key': (('AKCp{A:69}',), ('AKCp{A:68}',)),
    'artifactory-reference-token': (('cmVmd{A:59}',), ('cmVmd{A:58}',)),
    'sourcegraph-token': (
        ('sgp_{h:40}', 'sgp_{h:16}_{h:40}', 'sgp_local_{h:40}'), ('sgp_{h:39}',),
    ),
    'harness-token': (
        ('pat.{u:22}.{A:24}.{A:20}',), ('pat.{u:22}.{A:24}.{A:19}',),
    ),
    'slack-token': (
        (
            'xoxb-{d:10}-{d:13}-{A:24}', 'xoxp-{d:10}-{d:10}-{d:10}-{h:32}',
            'xoxa-2-{A:30}', 'xoxr-{d:10}-{A:30}', 'xoxs-{d:10}-{A:30}',
            'xoxe.xoxp-1-{A:163}',
        ),
        ('xoxb-{d:10}-{A:9}', 'xoxb-not-a-real-token-at-all'),
    ),
    'slack-app-token': (
        ('xapp-1-{U:11}-{d:13}-{h:64}',), ('xapp-1-{U:11}-{d:13}-{h:15}',),
    ),
    'slack-webhook': (
        ('https://hooks.slack.com/services/T{U:8}/B{U:8}/{A:24}',),
        ('https://hooks.slack.com/services/T{U:8}',),
    ),
    'discord-webhook': (
        ('https://discord.com/api/webhooks/{d:18}/{u:68}',),
        ('https://discord.com/api/webhooks/{d:18}/{u:59}',),
    ),
    'discord-bot-token': ((_discord_bot_token,), ('M{A:25}.{u:6}.{u:38}',)),
    'telegram-bot-token': (('{d:10}:AA{u:33}',), ('{d:10}:AA{u:32}',)),
    'sendgrid-key': (('SG.{u:22}.{u:43}',), ('SG.{u:22}.{u:42}',)),
    'sendinblue-key': (
        ('xkeysib-{h:64}-{A:16}', 'xsmtpsib-{h:64}-{A:16}'),
        ('xkeysib-{h:64}-{A:15}',),
    ),
    'twilio-api-key': (('SK{h:32}',), ('SK{h:31}',)),
    'twilio-account-credentials': (
        ('curl -u AC{h:32}:{h:32} https://api.twilio.com',), ('sid AC{h:32}',),
    ),
    'mailgun-key': (
        ('MAILGUN=key-{h:32}', 'mailgun: key-{h:32}'),
        ('mailgun: cache-key-{h:32}', 'cache: key-{h:32}'),
    ),
    'mailchimp-key': (('{h:32}-us14',), ('{h:32}-eu14',)),
    'postman-key': (('PMAK-{h:24}-{h:34}',), ('PMAK-{h:24}-{h:33}',)),
    'linear-key': (('lin_api_{A:40}',), ('lin_api_{A:39}',)),
    'typeform-token': (('tfp_{u:59}',), ('tfp_{u:58}',)),
    'stripe-key': (
        ('sk_live_{A:24}', 'rk_live_{A:24}', 'sk_test_{A:24}', 'sk_prod_{A:24}'),
        ('sk_live_{A:19}', 'pk_live_{A:24}'),
    ),
    'stripe-webhook-secret': (('whsec_{A:32}',), ('whsec_{A:31}',)),
    'square-token': (('sq0atp-{u:22}', 'sq0csp-{u:43}'), ('sq0atp-{u:21}',)),
    'square-access-token': (('EAAA{u:60}',), ('EAAA{u:59}',)),
    'shopify-token': (
        ('shpat_{h:32}', 'shpss_{h:32}', 'shpca_{h:32}', 'shppa_{h:32}'),
        ('shpat_{h:31}',),
    ),
    'shippo-token': (('shippo_live_{h:40}',), ('shippo_live_{h:39}',)),
    'flutterwave-secret-key': (('FLWSECK_TEST-{h:32}-X',), ('FLWSECK_TEST-{h:32}',)),
    'duffel-token': (('duffel_live_{u:43}',), ('duffel_live_{u:42}',)),
    'easypost-token': (('EZAK{A:54}', 'EZTK{A:54}'), ('EZAK{A:53}',)),
    'anthropic-key': (
        ('sk-ant-api03-{u:93}AA', 'sk-ant-admin01-{u:93}AA'), ('sk-ant-{u:31}',),
    ),
    'openai-key': (
        ('OPENAI_API_KEY=sk-{A:48}', 'sk-proj-{u:74}T3BlbkFJ{u:74}'),
        ('sk-{a:48}', 'sk-{A:31}'),
    ),
    'huggingface-token': (('hf_{L:34}',), ('hf_{L:33}', 'hf_{a:34}')),
    'huggingface-org-token': (('api_org_{L:34}',), ('api_org_{L:33}',)),
    'groq-key': (('gsk_{A:52}',), ('gsk_{A:51}',)),
    'xai-key': (('xai-{A:80}',), ('xai-{A:79}',)),
    'replicate-token': (('r8_{A:37}',), ('r8_{A:36}',)),
    'perplexity-key': (('pplx-{A:48}',), ('pplx-{A:47}',)),
    'vault-token': (('hvs.{u:95}', 'hvb.{u:140}'), ('hvs.{u:23}',)),
    'doppler-token': (('dp.pt.{A:43}', 'dp.st.{A:40}'), ('dp.pt.{A:39}',)),
    'terraform-cloud-token': (
        ('{A:14}.atlasv1.{u:67}',), ('{A:14}.atlasv1.{u:59}',),
    ),
    'pulumi-token': (('pul-{h:40}',), ('pul-{h:39}',)),
    'onepassword-service-account-token': (
        ('ops_eyJ{b:260}',), ('ops_eyJ{b:249}',),
    ),
    'onepassword-secret-key': (
        ('A3-{U:6}-{U:11}-{U:5}-{U:5}-{U:5}', 'A3-{U:6}-{U:6}-{U:5}-{U:5}-{U:5}-{U:5}'),
        ('A3-{U:6}-{U:11}-{U:5}-{U:5}-{U:4}',),
    ),
    'age-secret-key': (('AGE-SECRET-KEY-1{g:58}',), ('AGE-SECRET-KEY-1{g:57}',)),
    'grafana-cloud-token': (('glc_{b:40}',), ('glc_{b:31}',)),
    'grafana-service-account-token': (
        ('glsa_{A:32}_{h:8}',), ('glsa_{A:32}_{h:7}',),
    ),
    'grafana-api-key': (('eyJrIjoi{A:80}',), ('eyJrIjoi{A:69}',)),
    'new-relic-key': (('NRAK-{U:27}', 'NRII-{u:32}'), ('NRAK-{U:26}',)),
    'sentry-token': (
        ('sntrys_eyJ{b:80}', 'sntryu_{h:64}'), ('sntryu_{h:63}',),
    ),
    'dynatrace-token': (('dt0c01.{A:24}.{A:64}',), ('dt0c01.{A:24}.{A:63}',)),
    'planetscale-token': (
        ('pscale_tkn_{u:43}', 'pscale_pw_{u:43}', 'pscale_oauth_{u:43}'),
        ('pscale_tkn_{u:31}',),
    ),
    'prefect-token': (('pnu_{A:36}',), ('pnu_{A:35}',)),
    'readme-token': (('rdme_{a:70}',), ('rdme_{a:69}',)),
    'infracost-token': (('ico-{A:32}',), ('ico-{A:31}',)),
    'notion-token': (('ntn_{d:11}{A:35}',), ('ntn_{d:11}{A:34}',)),
    'frameio-token': (('fio-u-{u:64}',), ('fio-u-{u:63}',)),
    'adobe-client-secret': (('p8e-{A:32}',), ('p8e-{A:31}',)),
    'maxmind-license-key': (('{A:6}_{A:29}_mmk',), ('{A:6}_{A:28}_mmk',)),
    'facebook-page-token': (('EAAC{A:120}',), ('EAAC{A:99}',)),
    'microsoft-teams-webhook': (
        (
            'https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}'
            '/IncomingWebhook/{h:32}/{uuid}',
        ),
        ('https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}',),
    ),
    'dropbox-token': (('sl.{u:140}',), ('sl.{u:129}',)),
    'jwt': (('eyJ{u:20}.eyJ{u:30}.{u:43}',), ('eyJ{u:20}.eyJ{u:30}',)),
    'private-key': (
        (
            _KEY + '\n{b:64}\n-----END RSA PRIVATE KEY-----\n',
            '{"type": "service_account", "private_key_id": "{h:40}", '
            '"private_key": "-----BEGIN ' + 'PRIVATE KEY-----\\n{b:64}\\n'
            '-----END PRIVATE KEY-----\\n"}',
        ),
        ('never commit `' + _KEY + '` blocks',),
    ),
    'basic-auth': (
        (_basic('{A:16}'),),
        (_basic('pass'), 'Authorization: Basic {b:24}', 'Authorization: Basic $CREDS'),
    ),
    'bearer-token': (
        ('Authorization: Bearer {A:32}',), ('Authorization: Bearer ${TOKEN}',),
    ),
    'url-password': (
        ('postgres://app:{A:16}@db.internal/app',),
        ('postgres://postgres:postgres@localhost/app',),
    ),
    'service-key-assignment': (
        ('HUBSPOT_API_KEY={uuid}', 'discord_client_id: "{d:18}"'),
        ('hubspot_portal: {a:8}', 'rooktable = {uuid}'),
    ),
    'sidekiq-secret': (
        (
            'export BUNDLE_ENTERPRISE__CONTRIBSYS__COM={h:8}:{h:8}',
            'https://{h:8}:{h:8}@gems.contribsys.com/',
        ),
        ('BUNDLE_GEMS__CONTRIBSYS__COM: {h:7}', 'https://{h:8}:{h:8}@gems.example.com/'),
    ),
    'nuget-config-password': (
        ('<add key="ClearTextPassword" value="{A:16}" />',),
        ('<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
         '<add key="ClearTextPassword" value="abc" />'),
    ),
    'kubernetes-secret': (
        (
            'kind: Secret\napiVersion: v1\nmetadata:\n  name: db\n'
            'data:\n  ca.pem: {b:24}\n',
            'kind: "Secret"\nstringData:\n  .dockercfg: {b:32}\n',
        ),
        ('apiVersion: v1\nkind: ConfigMap\ndata:\n  password: {b:24}\n',
         'kind: Secret\nmetadata:\n  name: db\n'),
    ),
    'twitter-bearer-token': (
        ('AAAAAAAAAAAAAAAAAAAAA' + 'A{A:90}',), ('AAAAAAAAAAAAAAAAAAAAA' + 'A{A:70}',),
    ),
    'intra42-client-secret': (
        ('s-s4t2ud-{h:64}', 's-s4t2af-{h:64}'), ('s-s4t2ud-{h:63}', 's-s4t2xx-{h:64}'),
    ),
    'slack-legacy-token': (
        ('xoxa-{A:16}', 'xoxr-{a:20}'), ('xoxa-{A:7}', 'xoxa-{L:16}'),
    ),
    'tailscale-key': (
        ('tskey-api-{A:12}-{A:24}', 'tskey-auth-{A:12}-{A:24}'),
        ('tskey-api-{A:12}', 'tskey-foo'),
    ),
    'vercel-token': (
        ('vcp_{A:40}', 'vci_{A:40}'), ('vcp_{A:23}', 'vcx_{A:40}'),
    ),
    'docker-pat': (
        ('dckr_pat_{u:27}', 'dckr_oat_{u:32}'), ('dckr_pat_{u:20}', 'dckr_xyz_{u:27}'),
    ),
    'figma-token': (
        ('figd_{u:40}', 'figo_{u:50}'), ('figd_{u:39}', 'figd_abc'),
    ),
    'airtable-pat': (
        ('pat{A:14}.{h:64}',), ('pat{A:14}.{h:63}', 'pat{A:13}.{h:64}'),
    ),
    'credential-assignment': (
        ('credentials = "{A:24}"', 'DB_CREDS: {A:20}'),
        ('credentials = "{a:6}"', 'credential_id: {A:24}'),
    ),
    'auth-assignment': (
        ('AUTH = "{A:24}"', '"user_auth": "{b:40}"'),
        ('auth: true', 'auth_url: https://auth.example.org/{a:20}'),
    ),
    'named-value': (
        ('the deploy token is {A:32}', "slack token - '{A:40}'"),
        ('the key fix was in commit {h:40}', 'token budget is 4000 tokens'),
    ),
    'password-assignment': (('password={A:16}',), ('password=changeme',)),
    'secret-assignment': (('client_secret: {A:24}',), ('secret: true',)),
    'token-assignment': (('GITHUB_TOKEN: {A:20}',), ('token: MY_SERVICE_TOKEN_V2',)),
    'api-key-assignment': (('api_key: {A:32}',), ('api_key: your_api_key_1234',)),
}
RULE_IDS = [rule.id for rule in RULES]
_RULE = {rule.id: rule for rule in RULES}


def _samples(rule_id: str, which: int) -> list[str]:
    rnd = random.Random(rule_id)
    return [
        s(rnd) if callable(s) else _fill(s, rnd)
        for s in SAMPLES[rule_id][which]
    ]


def test_every_rule_has_samples() -> None:
    assert sorted(SAMPLES) == sorted(RULE_IDS)
    assert len(RULE_IDS) == len(set(RULE_IDS))


@pytest.mark.parametrize('rule_id', RULE_IDS)
def test_rule(rule_id: str) -> None:
    kind = _RULE[rule_id].kind
    for text in _samples(rule_id, 0):
        assert scan(text, 'notes.md') == [Secret('notes.md', 1, kind)], text
    for text in _samples(rule_id, 1):
        assert kind not in {s.kind for s in scan(text, 'notes.md')}, text
    for template in SAMPLES[rule_id][0]:
        # `ghp_xxxx...`, as documentation writes it (a key block's header is
        # enough: its body is never shown)
        if isinstance(template, str) and rule_id != 'private-key':
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
    """The keyword lookup searches lowercased runs of TOKEN_CHARS."""
    for rule in RULES:
        for k in rule.keywords:
            assert k == k.lower() and set(k) <= set(TOKEN_CHARS), (rule.id, k)
        if not rule.keywords:
            assert rule.long and not rule.lower, rule.id


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
