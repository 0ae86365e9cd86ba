"""Which memory a branch gets (issue 10, items 8, 9 and 10): memory left
by a deleted branch blocks no new branch and is not resurrected under its
name (it moves to refs/agitmem/attic/, where it stays in history); a
fresh clone's branches keep the memory fetched for them; a cleaned or
removed .agent/ comes back from the memory ref."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
DETACHED = 'refs/agitmem/detached/main-worktree'
# what happened an hour ago: git's reflogs (which say when a branch began
# and when its memory was written) take the committer date
EARLIER = {'GIT_COMMITTER_DATE': f'@{int(time.time()) - 3600} +0000'}


def goal_on(repo: Path, ref: str) -> str:
    return str(json.loads(git('show', f'{ref}:state.json', cwd=repo)).get('current_goal'))


def goal_here(repo: Path) -> str:
    return str(json.loads(mem(repo, 'state.json').read_text()).get('current_goal'))


def attic(repo: Path) -> dict[str, str]:
    """refs/agitmem/attic/...: name -> the goal of the memory there."""
    out = git('for-each-ref', '--format=%(refname)', 'refs/agitmem/attic/', cwd=repo)
    return {ref: goal_on(repo, ref) for ref in out.split()}


def commit(repo: Path, name: str, env: dict[str, str] | None = None) -> None:
    (repo / name).write_text(f'{name}\n')
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', name, cwd=repo, env=env)


@pytest.fixture(params=['git-hooks', 'agent-hooks-only'])
def hooks(memrepo: Path, request: pytest.FixtureRequest) -> Path:
    if request.param == 'git-hooks':
        ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    return memrepo


# -- item 8: a deleted branch's memory blocks nothing ----------------------------

@pytest.mark.parametrize(('old', 'new'), [('fix', 'fix/login'), ('fix/login', 'fix')])
def test_a_deleted_branchs_memory_does_not_block_a_new_one(hooks: Path, old: str, new: str) -> None:
    repo = hooks
    git('checkout', '-q', '-b', old, cwd=repo)
    ok('state', 'set', f'current_goal={old} goal', cwd=repo)
    git('checkout', '-q', 'main', cwd=repo)
    git('branch', '-q', '-D', old, cwd=repo)
    proc = run('git', 'checkout', '-q', '-b', new, cwd=repo)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    ok('state', 'set', f'current_goal={new} goal', cwd=repo)
    ok('save', cwd=repo)
    assert goal_on(repo, f'refs/agitmem/heads/{new}') == f'{new} goal'
    assert tip(repo, f'refs/agitmem/heads/{old}') is None
    # the old memory is in the attic, named after its ref
    moved = attic(repo)
    assert list(moved.values()) == [f'{old} goal'], moved
    assert next(iter(moved)).startswith(f'refs/agitmem/attic/heads/{old}@')
    # and main's memory never got the new branch's goal
    git('checkout', '-q', 'main', cwd=repo)
    ok('note', 'back on main', cwd=repo)
    assert goal_on(repo, MAIN) == 'main goal'
    assert goal_here(repo) == 'main goal'


def test_a_failed_save_on_a_new_branch_never_writes_onto_another(hooks: Path) -> None:
    """The new branch's ref cannot be written (a stale lock): the write on
    it fails with one line, and after switching back main's memory stays
    main's."""
    repo = hooks
    lock = repo / '.git' / 'refs' / 'agitmem' / 'heads' / 'fix.lock'
    git('checkout', '-q', '-b', 'fix', cwd=repo)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text('')
    proc = agitmem('state', 'set', 'current_goal=fix goal', cwd=repo)
    if proc.returncode == 0:  # the git hooks forked fix's memory before the lock
        assert goal_on(repo, 'refs/agitmem/heads/fix') != 'fix goal'
    else:
        assert proc.returncode == 2, proc.stderr
        assert 'Traceback' not in proc.stderr
        assert 'refs/agitmem/heads/fix' in proc.stderr.strip().splitlines()[-1]
    lock.unlink()
    git('checkout', '-q', 'main', cwd=repo)
    ok('note', 'on main', cwd=repo)
    for rev in git('rev-list', MAIN, cwd=repo).split():
        assert run('git', 'grep', '-q', 'fix goal', rev, cwd=repo).returncode == 1, rev
    assert goal_here(repo) == 'main goal'


# -- item 9: a re-created branch forks; the old memory is not resurrected ---------

def _old_branch(repo: Path, name: str, *, merge: bool = False) -> None:
    """An hour ago: branch `name` with its own goal and a code commit,
    (merged into main,) then deleted."""
    git('checkout', '-q', '-b', name, cwd=repo, env=EARLIER)
    ok('state', 'set', f'current_goal=old {name} goal', cwd=repo, env=EARLIER)
    commit(repo, f'{name}.txt', EARLIER)
    git('checkout', '-q', 'main', cwd=repo, env=EARLIER)
    ok('save', cwd=repo, env=EARLIER)
    if merge:
        git('merge', '-q', '--no-ff', '--no-edit', name, cwd=repo, env=EARLIER)
        ok('merge', name, cwd=repo, env=EARLIER)
        ok('state', 'set', 'current_goal=main goal', cwd=repo, env=EARLIER)
    git('branch', '-q', '-D', name, cwd=repo, env=EARLIER)
    assert goal_on(repo, f'refs/agitmem/heads/{name}') == f'old {name} goal'


@pytest.mark.parametrize('merged', [False, True], ids=['unmerged', 'merged'])
def test_a_recreated_branch_forks_from_its_source(hooks: Path, merged: bool) -> None:
    repo = hooks
    _old_branch(repo, 'fix', merge=merged)
    git('checkout', '-q', '-b', 'fix', cwd=repo)
    out = ok('load', cwd=repo)
    ok('save', cwd=repo)
    assert goal_on(repo, 'refs/agitmem/heads/fix') == 'main goal'
    assert goal_here(repo) == 'main goal'
    assert 'old fix goal' not in out or 'NOTE' in out
    assert list(attic(repo).values()) == ['old fix goal']


def test_a_branch_m_leftover_is_not_resurrected(hooks: Path) -> None:
    """`git branch -m fix renamed` leaves refs/agitmem/heads/fix behind;
    a new `fix` does not get it."""
    repo = hooks
    git('checkout', '-q', '-b', 'fix', cwd=repo, env=EARLIER)
    ok('state', 'set', 'current_goal=old fix goal', cwd=repo, env=EARLIER)
    commit(repo, 'fix.txt', EARLIER)
    git('checkout', '-q', 'main', cwd=repo, env=EARLIER)
    ok('save', cwd=repo, env=EARLIER)
    git('branch', '-m', 'fix', 'renamed', cwd=repo, env=EARLIER)
    git('checkout', '-q', '-b', 'fix', cwd=repo)
    ok('save', cwd=repo)
    assert goal_on(repo, 'refs/agitmem/heads/fix') == 'main goal'
    assert goal_here(repo) == 'main goal'
    assert 'old fix goal' in attic(repo).values()


def test_a_new_detached_session_does_not_reuse_an_old_ones_memory(hooks: Path) -> None:
    repo = hooks
    git('checkout', '-q', '--detach', cwd=repo, env=EARLIER)
    ok('state', 'set', 'current_goal=old detached goal', cwd=repo, env=EARLIER)
    git('checkout', '-q', 'main', cwd=repo, env=EARLIER)
    ok('save', cwd=repo, env=EARLIER)
    assert goal_on(repo, DETACHED) == 'old detached goal'
    commit(repo, 'later.txt')
    git('checkout', '-q', '--detach', cwd=repo)
    ok('save', cwd=repo)
    assert goal_here(repo) == 'main goal'
    assert goal_on(repo, DETACHED) == 'main goal'
    assert 'old detached goal' in attic(repo).values()


def test_a_detached_session_keeps_its_own_memory(hooks: Path) -> None:
    """Not abandoned: memory written in this detached session, and the
    branch's own memory when it is switched back to."""
    repo = hooks
    git('checkout', '-q', '--detach', cwd=repo)
    ok('state', 'set', 'current_goal=detached goal', cwd=repo)
    git('checkout', '-q', 'HEAD~0', cwd=repo)
    ok('save', cwd=repo)
    assert goal_here(repo) == 'detached goal'
    git('checkout', '-q', 'main', cwd=repo)
    ok('save', cwd=repo)
    assert goal_here(repo) == 'main goal'
    assert attic(repo) == {}


def test_a_fresh_clones_branches_keep_their_memory(memrepo: Path, tmp_path: Path) -> None:
    """Memory fetched by init an hour ago; the branch created later from
    origin/x: x's memory is the remote's, not abandoned."""
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'x', cwd=memrepo)
    ok('state', 'set', 'current_goal=x goal', cwd=memrepo)
    commit(memrepo, 'x.txt')
    ok('save', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    ok('save', cwd=memrepo)
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    git('push', '-q', 'origin', 'main', 'x', cwd=memrepo)
    ok('push', 'origin', cwd=memrepo)
    clone = tmp_path / 'clone'
    git('clone', '-q', str(remote), str(clone), cwd=tmp_path, env=EARLIER)
    ok('init', cwd=clone, env=EARLIER)
    for install in ((), ('install', 'git')):
        if install:
            ok(*install, cwd=clone)
        git('checkout', '-q', 'x', cwd=clone)  # a local x from origin/x, now
        ok('save', cwd=clone)
        assert goal_here(clone) == 'x goal'
        assert goal_on(clone, 'refs/agitmem/heads/x') == 'x goal'
        assert attic(clone) == {}
        git('checkout', '-q', 'main', cwd=clone)
        ok('save', cwd=clone)
        assert goal_here(clone) == 'main goal'
        git('branch', '-q', '-D', 'x', cwd=clone)


# -- item 10: .agent/ cleaned or its worktree removed -----------------------------

def _session_start(repo: Path) -> dict[str, str]:
    proc = agitmem('hook', 'session-start', '--agent', 'claude', cwd=repo, input=json.dumps({
        'hook_event_name': 'SessionStart', 'source': 'startup', 'session_id': 's',
        'cwd': str(repo),
    }))
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    data: dict[str, str] = json.loads(proc.stdout)
    return data


def _restored(repo: Path, goal: str) -> None:
    first = _session_start(repo)
    assert 'restored it from the memory ref' in first.get('systemMessage', ''), first
    assert goal in json.dumps(first)  # the agent is given the memory again
    assert goal_here(repo) == goal
    second = _session_start(repo)  # said once
    assert 'restored' not in second.get('systemMessage', ''), second


def test_git_clean_x_then_session_start_restores(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=saved goal', cwd=memrepo)
    mem(memrepo, 'notes.md').write_text('# Notes\n- unsaved\n')
    git('clean', '-q', '-fdx', cwd=memrepo)
    assert not (memrepo / '.agent').exists()
    _restored(memrepo, 'saved goal')
    assert 'unsaved' not in mem(memrepo, 'notes.md').read_text()


def test_worktree_remove_then_add_again_restores(memrepo: Path, tmp_path: Path) -> None:
    """A worktree removed (its .agent/ with it) and added again on the same
    branch, without the git hooks: the next session start restores it."""
    wt = tmp_path / 'wt'
    git('worktree', 'add', '-q', '-b', 'side', str(wt), cwd=memrepo)
    ok('init', cwd=wt)
    ok('state', 'set', 'current_goal=side goal', cwd=wt)
    git('worktree', 'remove', str(wt), cwd=memrepo)  # .agent/ is ignored: no --force needed
    assert not wt.exists()
    git('worktree', 'add', '-q', str(wt), 'side', cwd=memrepo)
    assert not (wt / '.agent').exists()
    _restored(wt, 'side goal')


def test_session_start_without_memory_refs_does_not_create_agent(repo: Path) -> None:
    """Never set up here: nothing restored, nothing created."""
    proc = agitmem('hook', 'session-start', '--agent', 'claude', cwd=repo, input=json.dumps({
        'hook_event_name': 'SessionStart', 'source': 'startup', 'session_id': 's',
        'cwd': str(repo),
    }))
    assert 'Traceback' not in proc.stderr
    assert not (repo / '.agent').exists()
