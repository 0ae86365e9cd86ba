"""Two clones of one remote, each with an agent and the git hooks, through
a day's pulls and pushes: the memory each saved reaches the other's
.agent/memory/, whichever way `git pull` integrates the code."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run

MAIN = 'refs/agitmem/heads/main'


def commit(repo: Path, name: str) -> None:
    (repo / name).write_text(f'{name}\n')
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', name, cwd=repo)


@pytest.fixture
def pair(memrepo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """memrepo (a) and a clone of its remote (b), both with the git hooks
    and the memory refspec; main and its memory on the remote."""
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=shared goal', cwd=memrepo)
    git('push', '-q', '-u', 'origin', 'main', cwd=memrepo)
    b = tmp_path / 'b'
    git('clone', '-q', str(remote), str(b), cwd=tmp_path)
    ok('init', cwd=b)
    ok('install', 'git', cwd=b)
    for repo in (memrepo, b):
        assert 'refs/agitmem/' in git('config', '--get-all', 'remote.origin.fetch', cwd=repo)
    return memrepo, b


def _both_notes(repo: Path) -> None:
    for where in (mem(repo, 'notes.md').read_text(), git('show', f'{MAIN}:notes.md', cwd=repo)):
        assert 'from a' in where and 'from b' in where, where


def _a_day(pair: tuple[Path, Path], *pull: str) -> Path:
    """b pushes code and memory; a, with its own of both, pulls."""
    a, b = pair
    ok('note', 'from b', cwd=b)
    commit(b, 'b.txt')
    proc = run('git', 'push', '-q', cwd=b)
    assert proc.returncode == 0, proc.stderr
    ok('note', 'from a', cwd=a)
    commit(a, 'a.txt')
    proc = run('git', 'pull', '-q', *pull, cwd=a)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (a / 'b.txt').exists()
    assert 'from b' in git('show', 'refs/agitmem/remotes/origin/main:notes.md', cwd=a)
    return a


def test_git_pull_merge_brings_the_other_clones_memory(pair: tuple[Path, Path]) -> None:
    a = _a_day(pair, '--no-rebase')
    _both_notes(a)
    assert 'no unsaved changes' in ok('status', cwd=a)


def test_git_pull_rebase_brings_the_other_clones_memory(pair: tuple[Path, Path]) -> None:
    a = _a_day(pair, '--rebase')
    _both_notes(a)


def test_after_pull_rebase_the_next_push_carries_both(pair: tuple[Path, Path]) -> None:
    """What holds today after `git pull --rebase`: nothing is lost, the
    pre-push hook merges the memories and both clones end with both."""
    a = _a_day(pair, '--rebase')
    proc = run('git', 'push', '-q', cwd=a)
    assert proc.returncode == 0, proc.stderr
    _both_notes(a)
    b = pair[1]
    proc = run('git', 'pull', '-q', '--no-rebase', cwd=b)
    assert proc.returncode == 0, proc.stderr
    _both_notes(b)
    assert 'no unsaved changes' in ok('status', cwd=b)


def test_git_fetch_then_rebase_onto_the_upstream(pair: tuple[Path, Path]) -> None:
    """`git fetch` then a plain `git rebase` (onto the upstream, which the
    reflog names refs/remotes/origin/main): as `git pull --rebase`."""
    a, b = pair
    ok('note', 'from b', cwd=b)
    commit(b, 'b.txt')
    assert run('git', 'push', '-q', cwd=b).returncode == 0
    ok('note', 'from a', cwd=a)
    commit(a, 'a.txt')
    git('fetch', '-q', cwd=a)
    proc = run('git', 'rebase', cwd=a)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'merged the memory of origin/main' in proc.stdout + proc.stderr
    _both_notes(a)
    assert 'no unsaved changes' in ok('status', cwd=a)
