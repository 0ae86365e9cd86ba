"""The pre-push scan reads every memory commit a push sends, not only the
tips: a key saved then removed is still in history, and history is pushed."""
from __future__ import annotations

from pathlib import Path

from testing.util import agitmem
from testing.util import git
from testing.util import ok
from testing.util import run

# built at run time: no line of this file holds a key
KEY = 'ghp_' + 'Zx9kQ2mP7vL4wR8tB3nY6cH1jF5dS0gAe4Uo'


def _remote(memrepo: Path, tmp_path: Path) -> Path:
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    return remote


def _commit(repo: Path, notes: str, subject: str) -> None:
    """A memory commit made with plain git, behind agitmem's back (a save
    refuses a key): notes.md replaced by notes."""
    ref = 'refs/agitmem/heads/main'
    tip = git('rev-parse', ref, cwd=repo).strip()
    sha = run('git', 'hash-object', '-w', '--stdin', cwd=repo, input=notes).stdout.strip()
    lines = [ln for ln in git('ls-tree', tip, cwd=repo).splitlines() if not ln.endswith('\tnotes.md')]
    lines.append(f'100644 blob {sha}\tnotes.md')
    tree = run('git', 'mktree', cwd=repo, input='\n'.join(lines) + '\n').stdout.strip()
    commit = run(
        'git', 'commit-tree', tree, '-p', tip, cwd=repo,
        input=f'{subject}\n\nAgitmem-Event: save\n',
    ).stdout.strip()
    git('update-ref', ref, commit, tip, cwd=repo)


def test_push_scans_history_not_only_tips(memrepo: Path, tmp_path: Path) -> None:
    _remote(memrepo, tmp_path)
    _commit(memrepo, f'- token {KEY}\n', 'sneak')
    _commit(memrepo, '- clean now\n', 'clean')
    proc = agitmem('push', 'origin', cwd=memrepo)
    assert proc.returncode == 1
    assert 'GitHub' in proc.stdout and 'this push sends' in proc.stdout
    assert KEY not in proc.stdout + proc.stderr


def test_pushed_history_is_not_scanned_again(memrepo: Path, tmp_path: Path) -> None:
    _remote(memrepo, tmp_path)
    ok('note', 'clean', cwd=memrepo)
    ok('push', 'origin', cwd=memrepo)
    ok('note', 'still clean', cwd=memrepo)
    assert 'pushed memory' in ok('push', 'origin', cwd=memrepo)


def test_push_scans_messages_in_history(memrepo: Path, tmp_path: Path) -> None:
    _remote(memrepo, tmp_path)
    _commit(memrepo, '- fine\n', f'deploy with {KEY}')
    _commit(memrepo, '- fine too\n', 'later')
    proc = agitmem('push', 'origin', cwd=memrepo)
    assert proc.returncode == 1
    assert 'in the message of memory commit' in proc.stdout
