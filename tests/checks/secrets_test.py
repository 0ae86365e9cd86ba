from __future__ import annotations

import subprocess
from pathlib import Path

from agitmem import secrets as scanner
from agitmem.checks import secrets
from agitmem.repo import find
from agitmem.repo import Repo
from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok

ROOT = Path(__file__).resolve().parents[2]
NOTES = '.agent/memory/notes.md'
# built at run time: no key-shaped literal in the repository
AWS_KEY = 'AKIA' + 'QYLPMN4RZT7W2XHB'
GITHUB_TOKEN = 'ghp' + '_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A'


def test_clean_memory_passes() -> None:
    assert secrets.check({NOTES: '- the loader reads config.yaml\n'}) == []


def test_key_in_notes_is_an_error_without_the_key() -> None:
    found, = secrets.check({NOTES: f'- a\n- use {AWS_KEY} for s3\n'})
    assert (found.id, found.severity, found.path, found.line) == ('secrets', 'error', NOTES, 2)
    assert 'AWS access key' in found.message
    assert AWS_KEY not in found.message


def test_blocking_takes_memory_commit_paths() -> None:
    found, hit = secrets.blocking({
        'notes.md': f'- {AWS_KEY}\n'.encode(),
        'config.yaml': f'# {GITHUB_TOKEN}\n'.encode(),
        'archive/2026/11/30-x.md': b'- nothing\n',
    }, scanner.NOTHING)
    assert sorted((f.path, f.line) for f in found) == [
        ('.agent/config.yaml', 1), (NOTES, 1),
    ]
    assert hit == {'notes.md', 'config.yaml'}


def test_in_refs_reads_every_memory_tip(memrepo: Path) -> None:
    assert secrets.in_refs(_repo(memrepo)) == []
    _commit_to_ref(memrepo, 'refs/agitmem/heads/feature', 'notes.md', f'- x\n- {AWS_KEY}\n')
    found, = secrets.in_refs(_repo(memrepo))
    assert (found.path, found.line) == ('refs/agitmem/heads/feature:notes.md', 2)
    assert found.message.startswith('possible AWS access key in saved memory; remove it from .agent/memory/notes.md')


def test_through_the_cli(memrepo: Path) -> None:
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write(f'- deploy with {AWS_KEY}\n')
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1
    line = len(mem(memrepo, 'notes.md').read_text().splitlines())
    assert f'error secrets {NOTES}:{line}: possible AWS access key; remove it' in proc.stdout
    assert AWS_KEY not in proc.stdout + proc.stderr


def test_no_false_positives_on_fresh_memory(memrepo: Path) -> None:
    assert 'secrets' not in ok('check', cwd=memrepo)


def test_no_false_positives_on_the_projects_own_files() -> None:
    """templates/, hooks/, test fixtures (tests/agents/payloads), docs."""
    proc = subprocess.run(
        ('git', 'ls-files', '-co', '--exclude-standard', '-z'),
        cwd=ROOT, capture_output=True, text=True,
    )
    names = [n for n in proc.stdout.split('\0') if n] if proc.returncode == 0 else [
        str(p.relative_to(ROOT)) for d in ('templates', 'hooks', 'tests')
        for p in (ROOT / d).rglob('*') if p.is_file()
    ]
    assert any(n.startswith('templates/') for n in names)
    assert any(n.startswith('tests/agents/payloads/') for n in names)
    hits = []
    for name in names:
        if name.startswith('tests/corpus/secrets/'):
            continue  # the peers' fixtures: keys, by design
        try:
            text = (ROOT / name).read_text(encoding='utf-8')
        except (OSError, UnicodeDecodeError):
            continue
        hits.extend(scanner.scan(text, name))
    assert hits == []


def _repo(path: Path) -> Repo:
    return find(path)


def _commit_to_ref(repo: Path, ref: str, name: str, text: str) -> None:
    blob = subprocess.run(
        ('git', 'hash-object', '-w', '--stdin'), cwd=repo, input=text,
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    tree = subprocess.run(
        ('git', 'mktree'), cwd=repo, input=f'100644 blob {blob}\t{name}\n',
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    commit = git('commit-tree', tree, '-m', 'x', cwd=repo).strip()
    git('update-ref', ref, commit, cwd=repo)


def test_blocking_message_names_the_kind_and_line_not_the_key() -> None:
    msg = f'save: deploy notes\n\nuse {GITHUB_TOKEN} for the release\n'
    found, = secrets.blocking_message(msg)
    assert (found.id, found.severity, found.path, found.line) == ('secrets', 'error', None, 3)
    assert found.message.startswith('commit message:3: possible GitHub token; take it out')
    assert GITHUB_TOKEN not in found.message


def test_blocking_message_finds_a_key_glued_to_non_ascii_text() -> None:
    found, = secrets.blocking_message(f'state: current_goal=用密钥{AWS_KEY}部署')
    assert 'AWS access key' in found.message


def test_blocking_message_passes_ordinary_messages() -> None:
    for msg in (
            'save: notes.md, state.json',
            'note: the token budget is 4000 tokens; never log passwords',
            'state: current_goal=move the token refresh into auth/session.py',
            'fragment: rotate the API key handling (A-042)',
            '',
    ):
        assert secrets.blocking_message(msg) == []


def test_in_blob_decodes_and_scans() -> None:
    found, = secrets.in_blob('notes.md', f'- a\n- {AWS_KEY}\n'.encode() + b'\xff\n')
    assert (found.path, found.line, found.kind) == ('notes.md', 2, 'AWS access key')
    assert secrets.in_blob('notes.md', b'\x00\xff binary') == []


# -- dismissing a false alarm: the one allowlist of check, save and push -----------

def _config(repo: Path, text: str) -> None:
    (repo / '.agent' / 'config.yaml').write_text(text)


def _user_config(text: str) -> Path:
    import os
    path = Path(os.environ['AGITMEM_HOME']) / 'config.yaml'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_check_prints_the_fingerprint_a_config_allows(memrepo: Path) -> None:
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write(f'- deploy with {AWS_KEY}\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    fp = scanner.fingerprint(AWS_KEY)
    assert fp in proc.stdout and AWS_KEY not in proc.stdout
    _config(memrepo, f'secrets:\n  allow:\n    - {fp}\n')
    assert 'secrets' not in ok('check', cwd=memrepo)
    ok('save', cwd=memrepo)
    # taken back: the file is no clean one the pre-commit hook skips
    _config(memrepo, '')
    assert agitmem('check', '--staged', cwd=memrepo).returncode == 1
    assert agitmem('check', cwd=memrepo).returncode == 1


def test_save_and_check_honour_the_marker_on_the_line_only(memrepo: Path) -> None:
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write(f'- the sample key {AWS_KEY} of the docs  agitmem:allow\n')
    ok('save', cwd=memrepo)
    assert 'secrets' not in ok('check', cwd=memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write(f'- {GITHUB_TOKEN}\n- agitmem:allow\n')
    assert 'possible GitHub token' in bad('save', cwd=memrepo)


def test_a_message_marker_allows_the_message(memrepo: Path) -> None:
    ok('save', '-m', f'the docs sample {AWS_KEY} agitmem:allow', cwd=memrepo)
    assert 'possible AWS' in bad('save', '-m', f'deploy {AWS_KEY}', cwd=memrepo)


def test_a_memory_config_cannot_allow_by_pattern(memrepo: Path) -> None:
    _config(memrepo, "secrets:\n  patterns: ['.+']\n")
    err = bad('save', cwd=memrepo)
    assert 'honoured only in your own config' in err


def test_a_fingerprint_must_be_one(memrepo: Path) -> None:
    _config(memrepo, 'secrets:\n  allow: [AKIA]\n')
    assert 'must be a list of fingerprints' in bad('save', cwd=memrepo)


def test_user_patterns_allow_and_are_guarded(memrepo: Path) -> None:
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write(f'- deploy with {AWS_KEY}\n')
    _user_config("secrets:\n  patterns: ['AKIAQYLPMN4RZT7W[A-Z0-9]{4}']\n")
    ok('save', cwd=memrepo)
    assert 'secrets' not in ok('check', cwd=memrepo)
    _user_config("secrets:\n  patterns: ['(a+)+b']\n")
    assert 'exponential time' in bad('check', cwd=memrepo)
    _user_config("secrets:\n  patterns: ['x*']\n")
    assert 'matches an empty value' in bad('check', cwd=memrepo)


def test_pre_push_honours_the_same_allowlist(memrepo: Path, tmp_path: Path) -> None:
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write(f'- the sample key {AWS_KEY} agitmem:allow\n')
    ok('save', cwd=memrepo)
    _commit_to_ref(memrepo, 'refs/agitmem/heads/feature', 'notes.md', f'- {GITHUB_TOKEN}\n')
    found = secrets.in_refs(_repo(memrepo), allow=scanner.NOTHING)
    assert [f.path for f in found] == ['refs/agitmem/heads/feature:notes.md']
    allow = scanner.Allow(frozenset({scanner.fingerprint(GITHUB_TOKEN)}))
    assert secrets.in_refs(_repo(memrepo), allow=allow) == []
    assert secrets.in_push(_repo(memrepo), 'origin', allow) == []
    assert len(secrets.in_push(_repo(memrepo), 'origin', scanner.NOTHING)) == 1
