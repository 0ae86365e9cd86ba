"""git's housekeeping never takes memory: `git gc --prune=now`, `git repack
-ad` and `git prune` after every reflog has expired keep each memory ref
(branches, a remote's copies, the attic) and every object of their history;
a mirror clone hands memory on as it is.  (gc with one worktree is in
tests/workflows_test.py.)"""
from __future__ import annotations

import os
import time
from pathlib import Path


from testing.daily import goal_here
from testing.util import git
from testing.util import ok
from testing.util import run
from testing.util import tip



def housekeeping(repo: Path) -> None:
    """Everything git may do to drop objects, as hard as it goes."""
    git('reflog', 'expire', '--expire=now', '--all', cwd=repo)
    git('repack', '-q', '-a', '-d', cwd=repo)
    git('gc', '-q', '--prune=now', cwd=repo)
    git('prune', '--expire=now', cwd=repo)


def test_repack_and_prune_keep_every_memory_ref(memrepo: Path, tmp_path: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    ok('install', 'git', cwd=memrepo)  # the memory refspec for origin
    git('push', '-q', 'origin', 'main', cwd=memrepo)
    # a branch deleted, then made again: its old memory goes to the attic
    git('checkout', '-q', '-b', 'fix', cwd=memrepo)
    ok('state', 'set', 'current_goal=first fix', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    git('branch', '-q', '-D', 'fix', cwd=memrepo)
    # reflogs count seconds: the new branch must be younger than the old
    # memory for it to be judged another branch's
    time.sleep(1.1)
    git('checkout', '-q', '-b', 'fix', cwd=memrepo)
    ok('state', 'set', 'current_goal=second fix', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    git('fetch', '-q', 'origin', cwd=memrepo)
    refs = git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/agitmem/', cwd=memrepo)
    names = [line.split()[0] for line in refs.splitlines()]
    assert 'refs/agitmem/remotes/origin/main' in names
    assert any(n.startswith('refs/agitmem/attic/') and 'fix@' in n for n in names), names
    history = {
        n: git('rev-list', '--objects', n, cwd=memrepo) for n in names
    }
    housekeeping(memrepo)
    assert git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/agitmem/', cwd=memrepo) == refs
    for n in names:  # every commit, tree and blob of every memory history
        assert git('rev-list', '--objects', n, cwd=memrepo) == history[n]
    assert run('git', 'fsck', '--no-dangling', cwd=memrepo).returncode == 0
    [attic] = [n for n in names if n.startswith('refs/agitmem/attic/')]
    assert 'first fix' in git('show', f'{attic}:state.json', cwd=memrepo)
    assert goal_here(memrepo) == 'main goal'
    git('checkout', '-q', 'fix', cwd=memrepo)
    assert goal_here(memrepo) == 'second fix'
    assert len(ok('log', cwd=memrepo).splitlines()) >= 2


def test_gc_in_one_worktree_keeps_a_detached_worktrees_memory(memrepo: Path, tmp_path: Path) -> None:
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    side = tmp_path / 'side'
    git('worktree', 'add', '-q', '--detach', str(side), 'HEAD', cwd=memrepo)
    ok('init', cwd=side)
    ok('state', 'set', 'current_goal=detached goal', cwd=side)
    ok('note', 'a detached note', cwd=side)
    # a shared ref, named for the worktree: gc in any worktree sees it
    detached = git('for-each-ref', '--format=%(refname)', 'refs/agitmem/detached/', cwd=memrepo).split()
    assert detached == ['refs/agitmem/detached/worktrees/side']
    saved = tip(side, detached[0])
    assert saved is not None
    housekeeping(memrepo)  # run where the user is: the main worktree
    assert run('git', 'cat-file', '-e', f'{saved}^{{commit}}', cwd=side).returncode == 0
    assert 'a detached note' in git('show', f'{saved}:notes.md', cwd=side)
    assert len(ok('log', cwd=side).splitlines()) >= 2
    assert run('git', 'fsck', '--no-dangling', cwd=side).returncode == 0


def test_an_older_agitmems_detached_memory_moves_to_the_shared_ref(memrepo: Path, tmp_path: Path) -> None:
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    side = tmp_path / 'side'
    git('worktree', 'add', '-q', '--detach', str(side), 'HEAD', cwd=memrepo)
    ok('init', cwd=side)
    ok('note', 'a detached note', cwd=side)
    ref = 'refs/agitmem/detached/worktrees/side'
    saved = tip(side, ref)
    assert saved is not None
    # as an older agitmem left it: on the per-worktree ref only
    git('update-ref', 'refs/worktree/agitmem/detached', saved, cwd=side)
    git('update-ref', '-d', ref, cwd=side)
    assert 'a detached note' in ok('show', '@:notes.md', cwd=side)
    assert tip(side, ref) == saved
    assert tip(side, 'refs/worktree/agitmem/detached') is None
    housekeeping(memrepo)
    assert 'a detached note' in git('show', f'{ref}:notes.md', cwd=side)
    ok('note', 'after the move', cwd=side)
    assert git('rev-parse', f'{ref}^', cwd=side).strip() == saved


def test_a_removed_worktrees_detached_memory_is_not_the_next_ones(memrepo: Path, tmp_path: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    side = tmp_path / 'side'
    # a worktree made two hours ago, its memory written one hour ago
    git('worktree', 'add', '-q', '--detach', str(side), 'HEAD', cwd=memrepo)
    made = time.time() - 7200
    os.utime(memrepo / '.git' / 'worktrees' / 'side' / 'commondir', (made, made))
    earlier = {'GIT_COMMITTER_DATE': f'@{int(time.time()) - 3600} +0000'}
    ok('init', cwd=side, env=earlier)
    ok('state', 'set', 'current_goal=old side goal', cwd=side, env=earlier)
    ok('note', 'an old side note', cwd=side, env=earlier)
    ref = 'refs/agitmem/detached/worktrees/side'
    old = tip(side, ref)
    assert old is not None and 'an old side note' in git('show', f'{ref}:notes.md', cwd=side)
    git('worktree', 'remove', '--force', str(side), cwd=memrepo)
    # git names the next worktree at that path `side` again
    git('worktree', 'add', '-q', '--detach', str(side), 'HEAD', cwd=memrepo)
    ok('init', cwd=side)
    assert goal_here(side) != 'old side goal'
    ok('note', 'the new side', cwd=side)
    assert 'an old side note' not in git('show', f'{ref}:notes.md', cwd=side)
    assert 'the new side' in git('show', f'{ref}:notes.md', cwd=side)
    # kept, in the attic
    attic = git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/agitmem/attic/', cwd=memrepo)
    assert 'refs/agitmem/attic/detached/worktrees/side@' in attic and old in attic


def test_a_mirror_clone_and_its_worktree(memrepo: Path, tmp_path: Path) -> None:
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    mirror = tmp_path / 'mirror.git'
    git('clone', '-q', '--mirror', str(memrepo), str(mirror), cwd=tmp_path)
    # --mirror copies every ref: memory arrives as this repository's own
    assert (
        git('for-each-ref', 'refs/agitmem/', cwd=mirror)
        == git('for-each-ref', 'refs/agitmem/', cwd=memrepo)
    )
    work = tmp_path / 'work'
    git('worktree', 'add', '-q', str(work), 'feat', cwd=mirror)
    ok('init', cwd=work)
    assert goal_here(work) == 'feat goal'
    ok('install', 'git', cwd=work)
    ok('note', 'in the mirror', cwd=work)
    assert 'in the mirror' in git('show', 'refs/agitmem/heads/feat:notes.md', cwd=mirror)
    git('checkout', '-q', 'main', cwd=work)
    assert goal_here(work) == 'main goal'
    out = ok('load', cwd=work)
    assert 'current_goal: main goal' in out.splitlines()
    assert 'no unsaved changes' in ok('status', cwd=work)
