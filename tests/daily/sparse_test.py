"""A sparse checkout, cone and non-cone (a pattern naming .agent/ too):
the files it leaves out are not changes to memory's eyes."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.daily import commit
from testing.daily import goal_here
from testing.daily import settled
from testing.util import git
from testing.util import ok

MAIN = 'refs/agitmem/heads/main'






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


def test_a_current_file_with_a_line_outside_the_sparse_checkout(memrepo: Path) -> None:
    """`docs/a.md:3` names a file of the branch that the sparse checkout
    leaves out: no finding, as without the suffix."""
    ok('install', 'git', cwd=memrepo)
    (memrepo / 'docs').mkdir()
    (memrepo / 'docs' / 'a.md').write_text('a\n')
    git('add', '.', cwd=memrepo)
    git('commit', '-q', '-m', 'docs', cwd=memrepo)
    ok('state', 'set', 'current_goal=sparse goal', 'current_file=docs/a.md:3', cwd=memrepo)
    git('sparse-checkout', 'set', 'src', cwd=memrepo)
    assert not (memrepo / 'docs').exists()
    assert 'current_file' not in ok('check', cwd=memrepo)
    commit(memrepo, 'src/more.py', 'sparse commit')
