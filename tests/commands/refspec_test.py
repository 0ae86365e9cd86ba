"""Memory comes with `git fetch`: init adds the memory fetch refspec to
each remote, `uninstall git` takes it out."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.util import git
from testing.util import ok
from testing.util import run
from testing.util import tip

SPEC = '+refs/agitmem/heads/*:refs/agitmem/remotes/{}/*'


@pytest.fixture
def remote(repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(bare), cwd=tmp_path)
    git('push', '-q', str(bare), 'main', cwd=repo)
    return bare


def _clone(remote: Path, name: str) -> Path:
    path = remote.parent / name
    git('clone', '-q', str(remote), str(path), cwd=remote.parent)
    return path


def _fetch_specs(repo: Path, remote: str = 'origin') -> list[str]:
    proc = run('git', 'config', '--get-all', f'remote.{remote}.fetch', cwd=repo)
    return proc.stdout.splitlines()


def test_init_adds_the_refspec_once_per_remote(remote: Path, tmp_path: Path) -> None:
    a = _clone(remote, 'a')
    git('remote', 'add', 'backup', str(remote), cwd=a)
    out = ok('init', cwd=a)
    assert 'git fetch origin now brings memory too' in out
    assert 'git fetch backup now brings memory too' in out
    assert _fetch_specs(a) == ['+refs/heads/*:refs/remotes/origin/*', SPEC.format('origin')]
    assert _fetch_specs(a, 'backup') == ['+refs/heads/*:refs/remotes/backup/*', SPEC.format('backup')]
    ok('init', cwd=a)
    assert _fetch_specs(a).count(SPEC.format('origin')) == 1


def test_plain_git_fetch_brings_memory_and_review_works(remote: Path) -> None:
    a = _clone(remote, 'a')
    ok('init', cwd=a)
    b = _clone(remote, 'b')
    ok('init', cwd=b)
    git('checkout', '-q', '-b', 'feature', cwd=a)
    ok('state', 'set', 'current_goal=ship the parser', cwd=a)
    (a / 'parser.py').write_text('x = 1\n')
    git('add', 'parser.py', cwd=a)
    git('commit', '-q', '-m', 'parser', cwd=a)
    ok('save', cwd=a)  # Code-Head is the parser commit
    git('push', '-q', 'origin', 'feature', cwd=a)
    ok('push', cwd=a)

    assert tip(b, 'refs/agitmem/remotes/origin/feature') is None
    git('fetch', '-q', cwd=b)  # plain git fetch, nothing agitmem
    assert tip(b, 'refs/agitmem/remotes/origin/feature') == tip(a, 'refs/agitmem/heads/feature')
    out = ok('review', 'origin/main..origin/feature', cwd=b)
    assert 'ship the parser' in out


def test_config_opts_out(remote: Path) -> None:
    a = _clone(remote, 'a')
    (a / '.agent').mkdir()
    (a / '.agent' / 'config.yaml').write_text('fetch_refspec: false\n')
    out = ok('init', cwd=a)
    assert 'brings memory' not in out
    assert SPEC.format('origin') not in _fetch_specs(a)
    ok('install', 'git', cwd=a)
    assert SPEC.format('origin') not in _fetch_specs(a)


def test_uninstall_git_removes_it_and_install_git_puts_it_back(remote: Path) -> None:
    a = _clone(remote, 'a')
    ok('init', cwd=a)
    ok('install', 'git', cwd=a)
    out = ok('uninstall', 'git', cwd=a)
    assert 'removed the memory fetch refspec from remote.origin.fetch' in out
    assert _fetch_specs(a) == ['+refs/heads/*:refs/remotes/origin/*']
    assert not (a / '.git' / 'hooks' / 'post-commit').exists()
    git('fetch', '-q', cwd=a)  # the remote's code refspec still works
    out = ok('install', 'git', cwd=a)
    assert 'git fetch origin now brings memory too' in out
    assert _fetch_specs(a) == ['+refs/heads/*:refs/remotes/origin/*', SPEC.format('origin')]
