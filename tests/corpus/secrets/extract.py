"""Rebuild the labelled secrets corpus from snapshots of the peers' repositories.

    python tests/corpus/secrets/extract.py GITLEAKS_GITDIR TRUFFLEHOG_GITDIR \
        SECRETLINT_GITDIR

reads their published test data with `git show HEAD:path` (nothing is
executed) and writes `peers.jsonl` and `ordinary.jsonl` beside this file.
The labels are the peers' own: gitleaks' `tps` / `fps` of each rule,
trufflehog's pattern tests (`want` empty or not), secretlint's `ng.*` /
`ok.*` snapshots.  Values that the peers generate at test time
(`secrets.NewSecret(regex)`) are drawn here from the same regex with a fixed
seed, so the output is reproducible from the same snapshots.

The Go is read by a small expression evaluator (string literals, `+`,
`fmt.Sprintf`, the generators of gitleaks' `utils` and `secrets` packages,
composite literals, `append`); a case it can't evaluate is left out, never
guessed.  About 30% of families (fixed seed) are marked `heldout`: not to be
looked at while tuning the scanner.
"""
from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import random
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import relabel  # this directory: run as a script

HERE = pathlib.Path(__file__).parent
HELDOUT_SHARE = 0.3
SEED = 'agitmem-secrets-corpus'


class Unknown:
    """A value the evaluator can't compute."""


UNKNOWN = Unknown()

_TOKEN = re.compile(
    r'(?P<ws>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|'
    r'(?P<raw>`[^`]*`)|(?P<str>"(?:\\.|[^"\\\n])*")|'
    r"(?P<rune>'(?:\\.|[^'\\\n])+')|"
    r'(?P<num>\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|'
    r'(?P<op>\.\.\.|:=|==|!=|&&|\|\||<-|[-+*/%&|^<>=!:;,.(){}\[\]])',
    re.DOTALL,
)


def tokens(src: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup or ''
        if kind in ('ws', 'comment'):
            continue
        out.append((kind, m.group()))
    return out


def _go_string(kind: str, text: str) -> str:
    if kind == 'raw':
        return text[1:-1].replace('\r', '')
    body = text[1:-1]
    # Go's escapes are C's; \x and \u as Python's
    return body.encode('latin-1', 'backslashreplace').decode('unicode_escape') \
        if '\\' in body and body.isascii() else body


# -- random strings from a regex, as gitleaks' secrets.NewSecret does --------

def _from_regex(pattern: str, rnd: random.Random) -> str:
    import re._constants as c  # type: ignore[import-not-found]
    import re._parser as p  # type: ignore[import-not-found]

    pattern = pattern.replace('(?i)', '')
    tree = p.parse(pattern)

    def gen_class(items: Any) -> str:
        chars: list[str] = []
        negate = False
        for op, av in items:
            if op is c.LITERAL:
                chars.append(chr(av))
            elif op is c.RANGE:
                chars.extend(chr(i) for i in range(av[0], av[1] + 1))
            elif op is c.NEGATE:
                negate = True
            elif op is c.CATEGORY:
                if av is c.CATEGORY_DIGIT:
                    chars.extend('0123456789')
                elif av is c.CATEGORY_WORD:
                    chars.extend(
                        'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_',
                    )
                elif av is c.CATEGORY_SPACE:
                    chars.append(' ')
        if negate or not chars:
            chars = list('abcdefghijklmnopqrstuvwxyz0123456789')
        return rnd.choice(chars)

    def gen(seq: Any) -> str:
        out = []
        for op, av in seq:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.IN:
                out.append(gen_class(av))
            elif op is c.ANY:
                out.append(rnd.choice('abcdefghijklmnopqrstuvwxyz0123456789'))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                lo, hi, sub = av
                hi = lo + 8 if hi is c.MAXREPEAT or hi - lo > 8 else hi
                n = rnd.randint(lo, hi) if hi > lo else lo
                out.extend(gen(sub) for _ in range(n))
            elif op is c.SUBPATTERN:
                out.append(gen(av[-1]))
            elif op is c.BRANCH:
                out.append(gen(rnd.choice(av[1])))
            elif op is c.CATEGORY:
                out.append(gen_class([(op, av)]))
            elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
                continue
            else:
                raise ValueError(op)
        return ''.join(out)

    return gen(tree)


# the contexts of gitleaks' utils.GenerateSampleSecrets (a subset of its map,
# the same for every rule): configuration, JSON, YAML, Go
_SAMPLE_CONTEXTS = (
    ('ini - unquoted2', '{i}Token = {s}'),
    ('json - string', '{\n    "{i}_token": "{s}"\n}'),
    ('yaml - singleline - double quote', '{i}_token: "{s}"'),
    ('go - short', '{i}Token := "{s}"'),
)

_UTIL_CLASSES = {
    'utils.Numeric': '[0-9]{%s}',
    'utils.Hex': '[a-f0-9]{%s}',
    'utils.AlphaNumeric': '[a-z0-9]{%s}',
    'utils.AlphaNumericExtendedShort': '[a-z0-9_-]{%s}',
    'utils.AlphaNumericExtended': '[a-z0-9=_\\-]{%s}',
    'utils.AlphaNumericExtendedLong': '[a-z0-9\\/=_\\+\\-]{%s}',
}


def _sprintf(fmt: str, args: list[Any]) -> Any:
    out = []
    i = 0
    it = iter(args)
    while i < len(fmt):
        ch = fmt[i]
        if ch == '%' and i + 1 < len(fmt):
            verb = fmt[i + 1]
            i += 2
            if verb == '%':
                out.append('%')
                continue
            a = next(it, UNKNOWN)
            if a is UNKNOWN or isinstance(a, list | dict):
                return UNKNOWN
            out.append(str(a))
            continue
        out.append(ch)
        i += 1
    return ''.join(out)


class Evaluator:
    """Evaluates the Go expressions of test files (see the module doc)."""

    def __init__(self, toks: list[tuple[str, str]], rnd: random.Random) -> None:
        self.t = toks
        self.i = 0
        self.env: dict[str, Any] = {}
        self.rnd = rnd

    def peek(self, k: int = 0) -> tuple[str, str]:
        j = self.i + k
        return self.t[j] if j < len(self.t) else ('eof', '')

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def skip_balanced(self, open_: str, close: str) -> None:
        depth = 0
        while self.i < len(self.t):
            _, v = self.take()
            if v == open_:
                depth += 1
            elif v == close:
                depth -= 1
                if depth == 0:
                    return

    def skip_type(self) -> None:
        kind, v = self.peek()
        if v == '[':
            self.take()
            while self.peek()[1] != ']':
                self.take()
            self.take()
            self.skip_type()
        elif v == '*':
            self.take()
            self.skip_type()
        elif v == 'map':
            self.take()
            self.skip_balanced('[', ']')
            self.skip_type()
        elif v in ('struct', 'interface'):
            self.take()
            self.skip_balanced('{', '}')
        elif v == 'func':
            self.take()
            self.skip_balanced('(', ')')
        elif kind == 'ident':
            self.take()

    def expr(self) -> Any:
        left = self.unary()
        while self.peek()[1] == '+':
            self.take()
            right = self.unary()
            if isinstance(left, str) and isinstance(right, str):
                left = left + right
            elif isinstance(left, int) and isinstance(right, int):
                left = left + right
            else:
                left = UNKNOWN
        while self.peek()[1] in ('-', '*', '/', '==', '!=', '&&', '||', '<', '>'):
            self.take()
            self.unary()
            left = UNKNOWN
        return left

    def unary(self) -> Any:
        if self.peek()[1] in ('&', '-', '!', '*'):
            self.take()
            self.unary()
            return UNKNOWN
        value = self.primary()
        while True:
            v = self.peek()[1]
            if v == '(':
                value = self.call(value)
            elif v == '[':
                self.skip_balanced('[', ']')
                value = UNKNOWN
            elif v == '.' and self.peek(1)[0] == 'ident':
                self.take()
                self.take()
                value = UNKNOWN
            else:
                return value

    def composite(self) -> Any:
        """`{...}` after a type: a list, or a dict of keyed elements."""
        self.take()  # {
        items: list[Any] = []
        keyed: dict[str, Any] = {}
        while self.peek()[1] not in ('}', ''):
            if self.peek()[1] == '{':
                value = self.composite()
            else:
                value = self.expr()
            if self.peek()[1] == ':':
                self.take()
                key = value
                if isinstance(key, tuple) and key[0] == 'name':
                    key = key[1]
                value = self.composite() if self.peek()[1] == '{' else self.expr()
                if isinstance(key, str):
                    keyed[key] = value
                else:
                    items.append(value)
            else:
                items.append(value)
            if self.peek()[1] == ',':
                self.take()
        self.take()  # }
        return keyed if keyed else items

    def primary(self) -> Any:
        kind, v = self.peek()
        if kind in ('str', 'raw'):
            self.take()
            return _go_string(kind, v)
        if kind == 'num':
            self.take()
            return int(v)
        if kind == 'rune':
            self.take()
            return UNKNOWN
        if v == '(':
            self.take()
            value = self.expr()
            if self.peek()[1] == ')':
                self.take()
            return value
        if v in ('[', 'map', 'struct'):
            self.skip_type()
            if self.peek()[1] == '{':
                return self.composite()
            return UNKNOWN
        if v == 'func':
            self.take()
            self.skip_balanced('(', ')')
            if self.peek()[1] != '{':
                self.skip_type()
            if self.peek()[1] == '{':
                self.skip_balanced('{', '}')
            return UNKNOWN
        if kind == 'ident':
            self.take()
            if v == 'nil':
                return []
            if v in ('true', 'false'):
                return v == 'true'
            if self.peek()[1] == '{' and v[:1].isupper() or '.' in v and \
                    self.peek()[1] == '{' and v.split('.')[-1][:1].isupper():
                return self.composite()
            if v in self.env:
                return self.env[v]
            return ('name', v)
        self.take()
        return UNKNOWN

    def args(self) -> list[Any]:
        self.take()  # (
        out: list[Any] = []
        while self.peek()[1] not in (')', ''):
            value = self.expr()
            if self.peek()[1] == '...':
                self.take()
                value = ('spread', value)
            out.append(value)
            if self.peek()[1] == ',':
                self.take()
        self.take()  # )
        return out

    def call(self, fn: Any) -> Any:
        args = self.args()
        name = fn[1] if isinstance(fn, tuple) and fn[0] == 'name' else None
        if name is None:
            return UNKNOWN
        plain = [a for a in args if not isinstance(a, tuple)]
        if name == 'append' and args and isinstance(args[0], list):
            out = list(args[0])
            for a in args[1:]:
                if isinstance(a, tuple) and a[0] == 'spread':
                    out.extend(a[1] if isinstance(a[1], list) else [UNKNOWN])
                else:
                    out.append(a)
            return out
        if len(plain) != len(args):
            return UNKNOWN
        if name in _UTIL_CLASSES and args and isinstance(args[0], str):
            return _UTIL_CLASSES[name] % args[0]
        if name == 'utils.Hex8_4_4_4_12':
            return '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
        if name == 'secrets.NewSecret' and args and isinstance(args[0], str):
            try:
                return _from_regex(args[0], self.rnd)
            except (ValueError, TypeError, re.error, RecursionError):
                return UNKNOWN
        if name == 'utils.GenerateSampleSecrets' and len(args) == 2 and \
                all(isinstance(a, str) for a in args):
            ident, secret = args
            return [
                t.replace('{i}', ident).replace('{I}', ident.upper())
                .replace('{s}', secret)
                for _, t in _SAMPLE_CONTEXTS
            ]
        if name == 'utils.GenerateSampleSecret' and len(args) == 2 and \
                all(isinstance(a, str) for a in args):
            return f'{args[0]}_api_token = "{args[1]}"'
        if name == 'fmt.Sprintf' and args and isinstance(args[0], str):
            return _sprintf(args[0], args[1:])
        if name == 'strings.Repeat' and len(args) == 2 and \
                isinstance(args[0], str) and isinstance(args[1], int):
            return args[0] * args[1]
        if name == 'strings.ToUpper' and args and isinstance(args[0], str):
            return args[0].upper()
        if name == 'strings.ToLower' and args and isinstance(args[0], str):
            return args[0].lower()
        if name == 'strings.Join' and len(args) == 2 and \
                isinstance(args[0], list) and isinstance(args[1], str) and \
                all(isinstance(a, str) for a in args[0]):
            return args[1].join(args[0])
        if name == 'base64.StdEncoding.EncodeToString' and args and \
                isinstance(args[0], str):
            return base64.b64encode(args[0].encode()).decode()
        if name == 'string' and args and isinstance(args[0], str):
            return args[0]
        if name in ('[]byte',) and args:
            return args[0]
        return UNKNOWN

    def statements(self) -> Iterator[tuple[str, Any]]:
        """Yield (name, value) for each assignment, in order; function
        boundaries are yielded as ('func', name)."""
        while self.i < len(self.t):
            kind, v = self.peek()
            if v == 'func' and self.peek(1)[0] == 'ident':
                self.take()
                yield 'func', self.take()[1]
                continue
            if v == 'var' and self.peek(1)[1] == '(':
                self.take()
                self.take()
                continue
            if v == 'var' and self.peek(1)[0] == 'ident':
                self.take()
                continue
            if kind == 'ident' and self.peek(1)[1] in (':=', '='):
                self.take()
                self.take()
                start = self.i
                try:
                    value = self.expr()
                except (IndexError, RecursionError):
                    value = UNKNOWN
                if self.i == start:
                    self.take()
                self.env[v] = value
                yield v, value
                continue
            if kind == 'ident' and self.peek(1)[0] == 'ident' and \
                    self.peek(2)[1] == '=':  # var name type = value
                self.take()
                self.take()
                self.take()
                value = self.expr()
                self.env[v] = value
                yield v, value
                continue
            if kind == 'ident' and v.endswith('Validate') or \
                    v.endswith('ValidateWithPaths'):
                yield 'validate', None
            if v == 'RuleID' and self.peek(1)[1] == ':' and \
                    self.peek(2)[0] == 'str':
                yield 'rule', _go_string('str', self.peek(2)[1])
            self.take()


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):  # ValidateWithPaths: path -> text
        return [v for v in value.values() if isinstance(v, str)]
    return []


def _show(gitdir: str, path: str) -> str:
    return subprocess.run(
        ('git', '-C', gitdir, 'show', f'HEAD:{path}'), check=True,
        capture_output=True,
    ).stdout.decode('utf-8', 'replace')


def _ls(gitdir: str, under: str) -> list[str]:
    out = subprocess.run(
        ('git', '-C', gitdir, 'ls-tree', '-r', '-z', '--name-only', 'HEAD', under),
        check=True, capture_output=True,
    ).stdout.decode()
    return sorted(p for p in out.split('\0') if p)


def _head(gitdir: str) -> str:
    return subprocess.run(
        ('git', '-C', gitdir, 'rev-parse', 'HEAD'), check=True,
        capture_output=True, text=True,
    ).stdout.strip()


Case = dict[str, Any]


def gitleaks(gitdir: str) -> Iterator[Case]:
    commit = _head(gitdir)
    for path in _ls(gitdir, 'cmd/generate/config/rules'):
        if not path.endswith('.go') or path.endswith('_test.go'):
            continue
        src = _show(gitdir, path)
        rnd = random.Random(f'{SEED}:{path}')
        ev = Evaluator(tokens(src), rnd)
        rule = ''
        for name, value in ev.statements():
            if name == 'func':
                ev.env = {}
                rule = ''
            elif name == 'validate':
                r = ev.env.get('r')
                rule = r.get('RuleID', '') if isinstance(r, dict) else ''
                if not isinstance(rule, str) or not rule:
                    continue
                for label, key in (('secret', 'tps'), ('benign', 'fps')):
                    for n, text in enumerate(_strings(ev.env.get(key))):
                        yield {
                            'text': text, 'label': label, 'family': rule,
                            'source': 'gitleaks', 'repo': 'gitleaks/gitleaks',
                            'commit': commit, 'path': path,
                            'case': f'{rule} {key}[{n}]',
                        }
                ev.env.pop('tps', None)
                ev.env.pop('fps', None)


def trufflehog(gitdir: str) -> Iterator[Case]:
    commit = _head(gitdir)
    for path in _ls(gitdir, 'pkg/detectors'):
        if not path.endswith('_test.go') or 'integration' in path:
            continue
        family = path.split('/')[2]
        src = _show(gitdir, path)
        if 'want' not in src or 'input' not in src:
            continue
        ev = Evaluator(tokens(src), random.Random(f'{SEED}:{path}'))
        seen = set()
        for name, value in ev.statements():
            if name == 'func':
                continue
            cases = value if isinstance(value, list) else []
            for n, case in enumerate(cases):
                if not isinstance(case, dict):
                    continue
                text, want = case.get('input'), case.get('want')
                if not isinstance(text, str) or not isinstance(want, list) or \
                        any(not isinstance(w, str) for w in want) or \
                        (text, bool(want)) in seen or not text.strip():
                    continue
                seen.add((text, bool(want)))
                yield {
                    'text': text, 'label': 'secret' if want else 'benign',
                    'family': family, 'source': 'trufflehog',
                    'repo': 'trufflesecurity/trufflehog', 'commit': commit,
                    'path': path, 'case': f'{name}[{n}] {case.get("name", "")}',
                    'want': want,
                }


def secretlint(gitdir: str) -> Iterator[Case]:
    commit = _head(gitdir)
    files = _ls(gitdir, 'packages/@secretlint')
    dirs: dict[str, list[str]] = {}
    for path in files:
        m = re.match(
            r'packages/@secretlint/secretlint-rule-([^/]+)/test/snapshots/'
            r'((ng|ok)\.[^/]+)/(.+)$', path,
        )
        if m:
            dirs.setdefault(path.rsplit('/', 1)[0], []).append(m.group(4))
    for d, names in sorted(dirs.items()):
        if '.secretlintrc.json' in names:  # runs with options: not the default
            continue
        inputs = [n for n in names if n.startswith('input')]
        if len(inputs) != 1 or 'output.json' not in names:
            continue
        out = json.loads(_show(gitdir, f'{d}/output.json'))
        messages = [
            m for r in (out if isinstance(out, list) else [out])
            for m in r.get('messages', [])
        ]
        family = d.split('/')[2].removeprefix('secretlint-rule-')
        if family in (
                'no-k8s-kind-secret', 'no-dotenv', 'no-homedir', 'filter-comments',
                'example',  # secretlint's sample rule: flags `THIS IS SECRET`
        ):
            continue  # file kinds or demos, not credentials
        text = _show(gitdir, f'{d}/{inputs[0]}')
        if '\0' in text or '\ufffd' in text:
            continue  # binary (PKCS#12 files): memory files are text
        yield {
            'text': text, 'label': 'secret' if messages else 'benign',
            'family': family, 'source': 'secretlint',
            'repo': 'secretlint/secretlint', 'commit': commit,
            'path': f'{d}/{inputs[0]}', 'case': d.rsplit('/', 1)[1],
        }


def ordinary(root: pathlib.Path) -> Iterator[Case]:
    """Text that holds no credential: this repository's docs, the standard
    library's source lines, ids and digests, base64 of ordinary text."""
    import sysconfig

    rnd = random.Random(SEED)
    docs = [root / 'README.md', *sorted((root / 'docs').rglob('*.md')),
            *sorted((root / 'templates').rglob('*.md'))]
    for p in docs:
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if len(line) > 30:
                yield _plain(line, 'agitmem', str(p.relative_to(root)), n)
    stdlib = pathlib.Path(sysconfig.get_paths()['stdlib'])
    names = sorted(
        str(p.relative_to(stdlib)) for p in stdlib.glob('*.py')
    )
    for name in rnd.sample(names, 40):
        lines = [
            ln for ln in (stdlib / name).read_text(errors='replace').splitlines()
            if len(ln.strip()) > 30
        ]
        for n, line in enumerate(rnd.sample(lines, min(8, len(lines)))):
            yield _plain(line, 'python-stdlib', name, n)
    for n in range(40):
        data = f'ordinary {n}'.encode()
        yield _plain(hashlib.sha1(data).hexdigest(), 'generated', 'sha1', n)
        yield _plain(hashlib.sha256(data).hexdigest(), 'generated', 'sha256', n)
        yield _plain(hashlib.md5(data).hexdigest(), 'generated', 'md5', n)
        yield _plain(str(uuid.UUID(int=rnd.getrandbits(128), version=4)),
                     'generated', 'uuid4', n)
        yield _plain(
            f'commit {hashlib.sha1(data + b"c").hexdigest()} fixed the test',
            'generated', 'commit-line', n,
        )
    for n, p in enumerate(docs[:20]):
        raw = p.read_text().encode()[:60 + 7 * n]
        yield _plain(base64.b64encode(raw).decode(), 'generated', 'base64', n)


def _plain(text: str, repo: str, path: str, case: int) -> Case:
    return {
        'text': text, 'label': 'benign', 'family': 'ordinary',
        'source': 'ordinary', 'repo': repo, 'commit': '', 'path': path,
        'case': str(case),
    }


# held-out families whose cases were read (their false positives studied,
# round 4): no longer held out, they count in the tuning part, marked `read`
READ = frozenset((
    'gitleaks:gcp-api-key', 'gitleaks:slack-user-token',
    'gitleaks:aws-amazon-bedrock-api-key-short-lived',
    'gitleaks:anthropic-admin-api-key', 'gitleaks:infracost-api-token',
    'gitleaks:curl-auth-header', 'secretlint:openai',
))


def heldout(family_key: str) -> bool:
    h = hashlib.sha256(f'{SEED}:{family_key}'.encode()).digest()
    return h[0] / 256 < HELDOUT_SHARE and family_key not in READ


def main(argv: list[str]) -> int:
    gl, th, sl = argv[1:4]
    root = HERE.parent.parent.parent
    peers = [*gitleaks(gl), *trufflehog(th), *secretlint(sl)]
    seen = set()
    kept = []
    for case in peers:
        key = (case['text'], case['label'])
        if key in seen or not case['text'].strip():
            continue
        seen.add(key)
        family = f'{case["source"]}:{case["family"]}'
        case['heldout'] = heldout(family)
        if family in READ:
            case['read'] = 'round 4: held out until its false positives were studied'
        kept.append(case)
    with open(HERE / 'peers.jsonl', 'w') as f:
        for case in relabel.apply(kept):
            f.write(json.dumps(case, ensure_ascii=False) + '\n')
    with open(HERE / 'ordinary.jsonl', 'w') as f:
        for case in ordinary(root):
            case['heldout'] = False
            f.write(json.dumps(case, ensure_ascii=False) + '\n')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv))
