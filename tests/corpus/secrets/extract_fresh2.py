"""Build a second fresh, held-out part of the secrets corpus (fresh2.jsonl).

    python tests/corpus/secrets/extract_fresh2.py \
        SEMGREP_RULES_GITDIR TRIVY_GITDIR RIPSECRETS_GITDIR WHISPERS_GITDIR

was run on bare snapshots (the `fetch` tool's git dirs) of
semgrep/semgrep-rules 157ae4706d7f, aquasecurity/trivy dc3c56eed58a,
sirwart/ripsecrets 416e9d04d6ba and Skyscanner/whispers 5832bf74dcb1.  It
reads their HEAD with `git show` (nothing is executed), writes
`fresh2.jsonl` beside this file and prints the counts and drops (FRESH2.md
has them).  The labels are the authors' own:

- semgrep-rules (`generic/secrets/**`): a test file's comment line
  `ruleid: <id>` marks the next code line a true positive (`secret`),
  `ok: <id>` a negative (`benign`); family `semgrep:<id>`.
- trivy (`pkg/fanal/secret/scanner_test.go`, `TestSecretScanner`): only the
  cases run with the built-in rules unchanged (config `skip-test.yaml`, or
  `config.yaml`, which only adds the custom `rule1`).  The lines
  `StartLine..EndLine` of each expected finding of a built-in rule are
  `secret` (family `trivy:<rule-id>`); every other non-blank line of the
  input is `benign` (family `trivy:none`), since the test compares the
  whole list of findings.  Lines of a custom-rule finding are left out;
  cases whose input passes only by a path allow rule (`.md`, example
  files) are left out, their lines counted as drops.
- ripsecrets, whispers: see `ripsecrets()` and `whispers()`.

All: the line is kept as written except its newline (trivy's test drops
`\r`, so does this); left out are texts over 400 characters, texts already
in peers.jsonl, fresh.jsonl or ordinary.jsonl (not fresh), positives of
identifier rules (IDENTIFIER_FAMILIES), negatives that plainly are live
secrets (LIVE_SHAPED), benign lines without a letter or digit, and texts
both labels claim; (text, label) is deduplicated.  The scanner
(agitmem/secrets.py, secret_rules*) was neither read nor run to build this.
"""
from __future__ import annotations

import base64
import collections
import json
import pathlib
import re
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

HERE = pathlib.Path(__file__).parent
MAX_LEN = 400

SEMGREP_DIR = 'generic/secrets/'
SEMGREP_ANNOT = re.compile(
    r'^\s*(?:#|//|/|<!--|/\*|;|--)\s*(ruleid|ok):\s*([\w.,\s-]+?)\s*(?:-->|\*/)?\s*$',
)

TRIVY_TEST = 'pkg/fanal/secret/scanner_test.go'
TRIVY_RULES = 'pkg/fanal/secret/builtin-rules.go'
TRIVY_DIR = 'pkg/fanal/secret/'
# configs that leave the built-in rules and allow rules as shipped, except
# the `tests` path allow rule (the inputs live under testdata/)
TRIVY_BUILTIN_CONFIGS = frozenset(('skip-test.yaml', 'config.yaml'))


def _git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(
        ('git', '-C', gitdir, *args), check=True, capture_output=True,
    ).stdout


def _show(gitdir: str, path: str) -> str:
    return _git(gitdir, 'show', f'HEAD:{path}').decode('utf-8', 'replace')


def _record(
        text: str, label: str, family: str, source: str, repo: str,
        commit: str, path: str, case: str,
) -> dict[str, Any]:
    return {
        'text': text, 'label': label, 'family': family, 'source': source,
        'repo': repo, 'commit': commit, 'path': path, 'case': case,
        'claimed': False, 'heldout': True,
    }


# --- semgrep-rules ---------------------------------------------------------

def semgrep(gitdir: str) -> Iterator[dict[str, Any]]:
    commit = _git(gitdir, 'rev-parse', 'HEAD').decode().strip()
    names = _git(gitdir, 'ls-tree', '-r', '-z', '--name-only', 'HEAD', SEMGREP_DIR)
    for path in sorted(names.decode().split('\0')):
        if not path or path.endswith(('.yaml', '.yml')):
            continue
        lines = _show(gitdir, path).split('\n')
        pending: list[tuple[str, str, int]] = []
        for n, line in enumerate(lines, 1):
            m = SEMGREP_ANNOT.match(line)
            if m:
                for rule in m[2].replace(',', ' ').split():
                    pending.append((m[1], rule, n))
                continue
            if not pending or not line.strip():
                continue
            for kind, rule, at in pending:
                yield _record(
                    line, 'secret' if kind == 'ruleid' else 'benign',
                    f'semgrep:{rule}', 'semgrep-rules', 'semgrep/semgrep-rules',
                    commit, path, f'line {n} ({kind}: {rule} at line {at})',
                )
            pending = []


# --- trivy -----------------------------------------------------------------

_GO_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|`[^`]*`|//[^\n]*|[{}]')


def _close(src: str, open_at: int) -> int:
    """Index of the `}` closing the `{` at open_at (Go strings skipped)."""
    depth = 0
    for m in _GO_TOKEN.finditer(src, open_at):
        if m[0] == '{':
            depth += 1
        elif m[0] == '}':
            depth -= 1
            if depth == 0:
                return m.start()
    raise ValueError(f'unbalanced brace at {open_at}')


def _elements(body: str) -> Iterator[str]:
    """The top-level `{...}` literals and bare identifiers of a list body."""
    i = 0
    while i < len(body):
        c = body[i]
        if c == '{':
            end = _close(body, i)
            yield body[i:end + 1]
            i = end + 1
        elif c.isalpha() or c == '_':
            m = re.compile(r'\w+').match(body, i)
            assert m is not None
            yield m[0]
            i = m.end()
        elif c in '"`':
            m = _GO_TOKEN.match(body, i)
            assert m is not None
            i = m.end()
        else:
            i += 1


def _finding(lit: str) -> tuple[str, int, int]:
    rule = re.search(r'RuleID:\s*"([^"]*)"', lit)
    start = re.search(r'StartLine:\s*(\d+)', lit)
    end = re.search(r'EndLine:\s*(\d+)', lit)
    assert rule and start and end, lit[:200]
    return rule[1], int(start[1]), int(end[1])


def _go_path(expr: str) -> str:
    """The file name of `filepath.Join("testdata", "x")` or `"testdata/x"`."""
    parts = re.findall(r'"([^"]*)"', expr)
    return '/'.join(parts)


def trivy_cases(src: str) -> Iterator[tuple[str, str, str, list[tuple[str, int, int]]]]:
    """(name, config, input, findings) of TestSecretScanner's table."""
    fn = src.index('func TestSecretScanner(t *testing.T)')
    fn_end = _close(src, src.index('{', fn))
    body = src[fn:fn_end]
    wants: dict[str, tuple[str, int, int]] = {}
    for m in re.finditer(r'(\w+)\s*:=\s*types\.SecretFinding\{', body):
        open_at = m.end() - 1
        wants[m[1]] = _finding(body[open_at:_close(body, open_at) + 1])
    # `openAIFinding(ruleID, ...)` builds a finding on line 1 of the input
    helper = re.search(r'openAIFinding\s*:=\s*func\([^)]*\)\s*types\.SecretFinding\s*\{', body)
    if helper:
        h = body[helper.end() - 1:_close(body, helper.end() - 1)]
        assert re.search(r'StartLine:\s*1,', h) and re.search(r'EndLine:\s*1,', h)
        for m in re.finditer(r'(\w+)\s*:=\s*openAIFinding\("([^"]+)"', body):
            wants[m[1]] = (m[2], 1, 1)
    table = re.search(r'tests\s*:=\s*\[\]struct\s*\{', body)
    assert table is not None
    struct_end = _close(body, table.end() - 1)
    open_at = body.index('{', struct_end + 1)
    for case in _elements(body[open_at + 1:_close(body, open_at)]):
        name = re.search(r'name:\s*"([^"]*)"', case)
        config = re.search(r'configPath:\s*([^\n]*),\n', case)
        input_ = re.search(r'inputFilePath:\s*([^\n]*),\n', case)
        assert name and config and input_, case[:200]
        findings: list[tuple[str, int, int]] = []
        fl = re.search(r'Findings:\s*\[\]types\.SecretFinding\{', case)
        if fl:
            lopen = fl.end() - 1
            for el in _elements(case[lopen + 1:_close(case, lopen)]):
                findings.append(_finding(el) if el.startswith('{') else wants[el])
        yield name[1], _go_path(config[1]), _go_path(input_[1]), findings


def trivy(gitdir: str, drops: collections.Counter[str]) -> Iterator[dict[str, Any]]:
    commit = _git(gitdir, 'rev-parse', 'HEAD').decode().strip()
    builtin = set(re.findall(r'\bID:\s*"([^"]+)"', _show(gitdir, TRIVY_RULES)))
    src = _show(gitdir, TRIVY_TEST)
    for name, config, input_, findings in trivy_cases(src):
        if pathlib.PurePosixPath(config).name not in TRIVY_BUILTIN_CONFIGS:
            continue
        path = TRIVY_DIR + input_
        raw = _git(gitdir, 'show', f'HEAD:{path}').replace(b'\r', b'')
        lines = raw.decode('utf-8', 'replace').split('\n')
        if not findings and pathlib.PurePosixPath(input_).name in {
                'secret.md', 'example-secret.txt'}:
            # passed by a path allow rule (.md docs, example files), not
            # because the text is not a credential
            drops['trivy: negative only by a path allow rule'] += sum(
                1 for line in lines if line.strip())
            continue
        covered: set[int] = set()
        for rule, start, end in findings:
            covered.update(range(start, end + 1))
            if rule not in builtin:
                drops['trivy: custom (not built-in) rule finding'] += 1
                continue
            yield _record(
                '\n'.join(lines[start - 1:end]), 'secret', f'trivy:{rule}',
                'trivy', 'aquasecurity/trivy', commit, path,
                f'{name}: lines {start}-{end}' if end != start
                else f'{name}: line {start}',
            )
        for n, line in enumerate(lines, 1):
            if n not in covered and line.strip():
                yield _record(
                    line, 'benign', 'trivy:none', 'trivy',
                    'aquasecurity/trivy', commit, path, f'{name}: line {n}',
                )


# --- ripsecrets -----------------------------------------------------------

RIPSECRETS_ALLOWED = 'ReTllpYQYfIZu2Jnf2lAPFjD'  # in .secretsignore [secrets]


def ripsecrets(gitdir: str, drops: collections.Counter[str]) -> Iterator[dict[str, Any]]:
    """`no_false_negatives`: each line of test/one_per_line/* is one
    secret, each test/one_per_file/* file one; `no_false_positives`:
    test/none holds none."""
    commit = _git(gitdir, 'rev-parse', 'HEAD').decode().strip()
    names = _git(gitdir, 'ls-tree', '-r', '-z', '--name-only', 'HEAD', 'test/')
    for path in sorted(p for p in names.decode().split('\0') if p):
        text = _show(gitdir, path)
        kind = path.split('/')[1]
        stem = path.rsplit('/', 1)[-1]
        if kind == 'one_per_file':
            yield _record(
                text.rstrip('\n'), 'secret', f'ripsecrets:{stem}',
                'ripsecrets', 'sirwart/ripsecrets', commit, path,
                'no_false_negatives: whole file',
            )
            continue
        for n, line in enumerate(text.split('\n'), 1):
            if not line.strip():
                continue
            if kind == 'one_per_line':
                yield _record(
                    line, 'secret', f'ripsecrets:{stem}', 'ripsecrets',
                    'sirwart/ripsecrets', commit, path,
                    f'no_false_negatives: line {n}',
                )
            elif RIPSECRETS_ALLOWED in line:
                # the value is a secret elsewhere (one_per_line/stripe); it
                # passes here only by a pragma or .secretsignore
                drops['ripsecrets: negative only by an allowlist (pragma, .secretsignore)'] += 1
            else:
                yield _record(
                    line, 'benign', 'ripsecrets:none', 'ripsecrets',
                    'sirwart/ripsecrets', commit, path,
                    f'no_false_positives: line {n}',
                )


# --- whispers --------------------------------------------------------------

WHISPERS_TEST = 'tests/unit/test_secrets.py'
WHISPERS_FIXTURES = 'tests/fixtures/'


def _whispers_hard(line: str) -> bool:
    """The test's own criterion: the value holds "hardcoded", as written
    or base64-encoded."""
    if 'hardcoded' in line.lower():
        return True
    for token in re.findall(r'[A-Za-z0-9+/]{8,}={0,2}', line):
        try:
            if b'hardcoded' in base64.b64decode(token + '=' * (-len(token) % 4)):
                return True
        except ValueError:
            pass
    return False


def whispers(gitdir: str, drops: collections.Counter[str]) -> Iterator[dict[str, Any]]:
    """`test_detection_by_value`: a fixture yields `count` findings, each of
    whose value holds "hardcoded".  Only the fixtures where exactly `count`
    lines hold "hardcoded" are taken (so each finding is one such line):
    those lines are secrets, the file's other lines benign."""
    commit = _git(gitdir, 'rev-parse', 'HEAD').decode().strip()
    src = _show(gitdir, WHISPERS_TEST)
    assert 'assert "hardcoded" in value.lower() or b"hardcoded" in b64decode(value)' in src
    start = src.index('def test_detection_by_value')
    table = src[src.rindex('@pytest.mark.parametrize', 0, start):start]
    for name, count in re.findall(r'\("([^"]+)",\s*(\d+)\)', table):
        path = WHISPERS_FIXTURES + name
        lines = _show(gitdir, path).split('\n')
        hard = [n for n, line in enumerate(lines, 1) if _whispers_hard(line)]
        if len(hard) != int(count):
            drops[f'whispers: fixture lines not one per finding ({name})'] += sum(
                1 for line in lines if line.strip())
            continue
        for n, line in enumerate(lines, 1):
            if line.strip():
                yield _record(
                    line, 'secret' if n in hard else 'benign',
                    f'whispers:{name}' if n in hard else 'whispers:none',
                    'whispers', 'Skyscanner/whispers', commit, path,
                    f'test_detection_by_value[{name}-{count}]: line {n}',
                )


# Peers' negatives that are live-shaped credentials, left out (the brief:
# keep the peers' labels, but drop a negative that plainly is a secret).
# text -> reason
LIVE_SHAPED = {
    # semgrep detected-github-token: ghp_ + 36 of the alphabet; ok only
    # because the name says fake
    'gitfake_token:ghp_abababababababababababababababababab':
        'prefix, alphabet and length of a live token',
    # semgrep detected-sendgrid-api-key: SG.<22>.<43> in the key's alphabet
    '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':
        'prefix, alphabet and length of a live token',
    'SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5crt':
        "holds a positive's whole value",
    # semgrep detected-google-api-key: AIza + 35, then more characters
    'AIzaSyBGJlWlxZEnJ2yUape3AjqmNyo5xxh6xtI==':
        'holds a whole live-shaped value',
    'AIzaSyBGJlWlxZEnJ2yUape3AjqmNyo5xxh6xtIs=':
        'holds a whole live-shaped value',
    # trivy alibaba-access-key-id: the positive's LTAI value inside a word
    'key : LTAI1234567890ABCDEFG123asd': "holds a positive's whole value",
    'key : LTAI1234567890ABCDEFG123Asd': "holds a positive's whole value",
    'asdLTAI1234567890ABCDEFG123': "holds a positive's whole value",
    'asDLTAI1234567890ABCDEFG123': "holds a positive's whole value",
    'as1LTAI1234567890ABCDEFG123': "holds a positive's whole value",
}


# Positives of a rule for an identifier or a public value, not a credential:
# left out, as fresh.jsonl leaves out Nosey Parker's rules outside its
# `secret` category (neither label is the peers').  Key ids that pair with
# a secret (AWS, Alibaba) stay.
IDENTIFIER_FAMILIES = frozenset((
    'semgrep:adobe-client-id', 'semgrep:asana-client-id',
    'semgrep:bitbucket-client-id', 'semgrep:discord-client-id',
    'semgrep:linkedin-client-id', 'semgrep:plaid-client-id',
    'semgrep:new-relic-user-api-id', 'semgrep:sendbird-access-id',
    'semgrep:sumologic-access-id', 'semgrep:detected-aws-account-id',
    'semgrep:detected-google-oauth-url', 'semgrep:flutterwave-public-key',
    'semgrep:lob-pub-api-key', 'semgrep:mailgun-pub-key',
))


def _left_out(case: dict[str, Any]) -> str | None:
    if case['label'] == 'secret' and case['family'] in IDENTIFIER_FAMILIES:
        return 'positive of an identifier or public-value rule'
    if case['label'] == 'benign' and case['text'] in LIVE_SHAPED:
        return f"live-shaped negative, {LIVE_SHAPED[case['text']]}"
    return None


def write_part(
        name: str, cases: list[dict[str, Any]], before: tuple[str, ...], drops: collections.Counter[str],
        unit: str, left_out: Callable[[dict[str, Any]], str | None] = lambda case: None,
) -> None:
    """Write the part `name` beside this file and print its counts and
    drops: each (text, label) once, leaving out texts over MAX_LEN, texts
    the parts `before` hold, what `left_out` names a reason for, benign
    texts without a letter or digit, and texts both labels claim."""
    seen_before: set[str] = set()
    for part in before:
        with open(HERE / part) as f:
            seen_before.update(json.loads(line)['text'] for line in f)
    labels: dict[str, set[str]] = collections.defaultdict(set)
    for case in cases:
        labels[case['text']].add(case['label'])
    kept: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for case in cases:
        src = case['source']
        if len(case['text']) > MAX_LEN:
            drops[f'{src}: longer than {MAX_LEN} characters'] += 1
        elif case['text'] in seen_before:
            drops[f'{src}: text already in the corpus'] += 1
        elif why := left_out(case):
            drops[f'{src}: {why}'] += 1
        elif case['label'] == 'benign' and not re.search(r'[^\W_]', case['text']):
            drops[f'{src}: benign {unit} without a letter or digit'] += 1
        elif len(labels[case['text']]) > 1:
            drops[f'{src}: both labels for the same text'] += 1
        elif (case['text'], case['label']) in seen:
            drops[f'{src}: duplicate'] += 1
        else:
            seen.add((case['text'], case['label']))
            kept.append(case)
    with open(HERE / name, 'w') as f:
        for case in kept:
            f.write(json.dumps(case, ensure_ascii=False) + '\n')
    counts = collections.Counter((c['source'], c['label']) for c in kept)
    for (src, label), n in sorted(counts.items()):
        fams = {c['family'] for c in kept if c['source'] == src and c['label'] == label}
        print(f'{src}\t{label}\t{n}\tfamilies {len(fams)}')
    for reason, n in sorted(drops.items()):
        print(f'drop\t{reason}\t{n}')


def main(argv: list[str]) -> int:
    drops: collections.Counter[str] = collections.Counter()
    cases = [*semgrep(argv[1]), *trivy(argv[2], drops)]
    if len(argv) > 3:
        cases += ripsecrets(argv[3], drops)
    if len(argv) > 4:
        cases += whispers(argv[4], drops)
    write_part('fresh2.jsonl', cases, ('peers.jsonl', 'fresh.jsonl', 'ordinary.jsonl'), drops, 'line', _left_out)
    return 0

if __name__ == '__main__':
    raise SystemExit(main(sys.argv))
