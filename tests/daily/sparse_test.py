"""A sparse checkout, cone and non-cone (a pattern naming .agent/ too):
the files it leaves out are not changes to memory's eyes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run

MAIN = 'refs/agitmem/heads/main'


def goal_here(repo: Path) -> str:
    return str(json.loads(mem(repo, 'state.json').read_text()).get('current_goal'))


def head(repo: Path) -> str:
    return git('rev-parse', 'HEAD', cwd=repo).strip()


def commit(repo: Path, name: str, note: str | None = None) -> str:
    if note:
        with open(mem(repo, 'notes.md'), 'a') as f:
            f.write(f'- {note}\n')
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{name}\n')
    git('add', name, cwd=repo)
    proc = run('git', 'commit', '-q', '-m', name, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return head(repo)


def settled(repo: Path, goal: str) -> None:
    assert 'no unsaved changes' in ok('status', cwd=repo)
    proc = agitmem('check', cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = ok('load', cwd=repo)
    assert f'current_goal: {goal}' in out.splitlines(), out
    assert 'STALE' not in out, out


# -- sparse checkouts ------------------------------------------------------------------

@pytest.mark.parametrize('mode', ('cone', 'no-cone'))
def test_sparse_checkout_verdicts(memrepo: Path, mode: str) -> None:
    """Files left out of a sparse checkout are not changes: no STALE, no
    finding, memory follows the branch (tests/workflows_test.py checks the
    goal only, in cone mode)."""
    ok('install', 'git', cwd=memrepo)
    for name in ('docs/a.md', 'docs/deep/b.md', 'web/index.html'):
        (memrepo / name).parent.mkdir(parents=True, exist_ok=True)
        (memrepo / name).write_text(f'{name}\n')
    git('add', '.', cwd=memrepo)
    git('commit', '-q', '-m', 'more', cwd=memrepo)
    if mode == 'cone':
        git('sparse-checkout', 'set', 'src', cwd=memrepo)
    else:  # patterns; one names .agent/, which git does not track
        git('sparse-checkout', 'set', '--no-cone', '/src/', '/README', '!/.agent/', cwd=memrepo)
    assert not (memrepo / 'docs').exists() and not (memrepo / 'web').exists()
    assert (memrepo / '.agent' / 'memory' / 'state.json').exists()
    ok('state', 'set', 'current_goal=sparse goal', 'current_file=src/app.py', cwd=memrepo)
    settled(memrepo, 'sparse goal')
    commit(memrepo, 'src/more.py', 'sparse commit')
    assert 'sparse commit' in git('show', f'{MAIN}:notes.md', cwd=memrepo)
    git('checkout', '-q', '-b', 'side', cwd=memrepo)
    ok('state', 'set', 'current_goal=side goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    assert goal_here(memrepo) == 'sparse goal'
    ok('state', 'set', 'current_goal=sparse goal', cwd=memrepo)
    settled(memrepo, 'sparse goal')
    git('sparse-checkout', 'disable', cwd=memrepo)
    assert (memrepo / 'web' / 'index.html').exists()
    settled(memrepo, 'sparse goal')  # the files back on disk are HEAD's
