"""A day of history-rewriting git commands with the git hooks installed:
commit --amend, reset --soft/--hard, revert, rebase -i --autosquash with
--exec, a rebase stopped on a conflict and aborted, branch -m, an orphan
branch, the first commit of a repository.  After each, the memory ref,
.agent/memory/ and what check, status and load say are right.  (Plain,
interactive, autostash and pull rebases, cherry-pick and bisect routes are
in tests/porcelain/branches_test.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
FEAT = 'refs/agitmem/heads/feat'


def goal_on(repo: Path, ref: str) -> str:
    return str(json.loads(git('show', f'{ref}:state.json', cwd=repo)).get('current_goal'))


def goal_here(repo: Path) -> str:
    return str(json.loads(mem(repo, 'state.json').read_text()).get('current_goal'))


def head(repo: Path) -> str:
    return git('rev-parse', 'HEAD', cwd=repo).strip()


def commit(repo: Path, name: str, text: str | None = None, msg: str | None = None) -> str:
    (repo / name).write_text(text if text is not None else f'{name}\n')
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', msg or name, cwd=repo)
    return head(repo)


def code_head(repo: Path, ref: str = MAIN) -> str:
    msg = git('log', '-1', '--format=%B', ref, cwd=repo)
    [line] = [x for x in msg.splitlines() if x.startswith('Code-Head: ')]
    return line.removeprefix('Code-Head: ')


def settled(repo: Path, goal: str) -> str:
    """Nothing unsaved, the checks pass, `load` gives the agent this goal
    and says nothing is STALE; returns the block."""
    status = ok('status', cwd=repo)
    assert 'no unsaved changes' in status, status
    proc = agitmem('check', cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = ok('load', cwd=repo)
    assert f'current_goal: {goal}' in out.splitlines(), out
    assert 'STALE' not in out, out
    assert 'NOTE: this is the memory of' not in out, out
    return out


def fresh_state(repo: Path, goal: str) -> None:
    """The state recorded against the working tree as it is now."""
    ok('state', 'set', f'current_goal={goal}', cwd=repo)


@pytest.fixture
def hooked(memrepo: Path) -> Path:
    ok('install', 'git', cwd=memrepo)
    fresh_state(memrepo, 'main goal')
    return memrepo


def test_commit_amend_records_the_amended_commit(hooked: Path) -> None:
    first = commit(hooked, 'a.txt')
    ok('note', 'before the amend', cwd=hooked)
    with open(mem(hooked, 'notes.md'), 'a') as f:
        f.write('- unsaved while amending\n')
    (hooked / 'a.txt').write_text('a, amended\n')
    git('add', 'a.txt', cwd=hooked)
    git('commit', '-q', '--amend', '-m', 'a, amended', cwd=hooked)
    amended = head(hooked)
    assert amended != first
    assert code_head(hooked) == amended  # post-commit ran for the amend
    notes = git('show', f'{MAIN}:notes.md', cwd=hooked)
    assert 'before the amend' in notes and 'unsaved while amending' in notes
    fresh_state(hooked, 'main goal')
    settled(hooked, 'main goal')


def test_reset_soft_and_hard_leave_memory_alone(hooked: Path) -> None:
    base = head(hooked)
    commit(hooked, 'a.txt')
    ok('note', 'made a', cwd=hooked)
    commit(hooked, 'b.txt')
    fresh_state(hooked, 'main goal')  # written against a.txt and b.txt
    refs = git('for-each-ref', 'refs/agitmem/', cwd=hooked)
    files = {p.name: p.read_bytes() for p in (hooked / '.agent' / 'memory').iterdir()}

    git('reset', '-q', '--soft', base, cwd=hooked)
    assert git('for-each-ref', 'refs/agitmem/', cwd=hooked) == refs
    git('commit', '-q', '-m', 'a and b squashed', cwd=hooked)
    squashed = head(hooked)
    git('reset', '-q', '--hard', base, cwd=hooked)
    assert not (hooked / 'a.txt').exists()
    # reset runs no hook and touches no ignored file: memory is as it was
    assert {p.name: p.read_bytes() for p in (hooked / '.agent' / 'memory').iterdir()} == files
    assert goal_on(hooked, MAIN) == 'main goal'
    assert 'made a' in git('show', f'{MAIN}:notes.md', cwd=hooked)
    # the code the state was written against is gone: STALE says so, naming it
    out = ok('load', cwd=hooked)
    assert 'STALE' in out and 'a.txt' in out and 'b.txt' in out, out
    git('reset', '-q', '--hard', squashed, cwd=hooked)
    fresh_state(hooked, 'main goal')
    settled(hooked, 'main goal')


def test_revert_is_recorded(hooked: Path) -> None:
    bad_commit = commit(hooked, 'bad.txt')
    ok('note', 'bad.txt was a mistake', cwd=hooked)
    ok('state', 'set', 'last_action=reverting bad.txt', cwd=hooked)
    with open(mem(hooked, 'notes.md'), 'a') as f:
        f.write('- reverted it\n')
    git('revert', '--no-edit', bad_commit, cwd=hooked)
    assert not (hooked / 'bad.txt').exists()
    assert code_head(hooked) == head(hooked)
    assert 'reverted it' in git('show', f'{MAIN}:notes.md', cwd=hooked)
    fresh_state(hooked, 'main goal')
    settled(hooked, 'main goal')


@pytest.fixture
def feat(hooked: Path) -> Path:
    """feat (its own goal, a commit and a fixup! commit) off main, main one
    commit on; on feat."""
    git('checkout', '-q', '-b', 'feat', cwd=hooked)
    fresh_state(hooked, 'feat goal')
    commit(hooked, 'f.txt', 'one\n', 'f')
    commit(hooked, 'f.txt', 'one\ntwo\n', 'fixup! f')
    git('checkout', '-q', 'main', cwd=hooked)
    commit(hooked, 'm.txt')
    assert goal_here(hooked) == 'main goal'
    git('checkout', '-q', 'feat', cwd=hooked)
    assert goal_here(hooked) == 'feat goal'
    return hooked


def test_rebase_interactive_autosquash_with_exec(feat: Path) -> None:
    main_before = tip(feat, MAIN)
    proc = run(
        'git', 'rebase', '-q', '-i', '--autosquash', '--exec', 'agitmem note exec ran',
        'main', cwd=feat, env={'GIT_SEQUENCE_EDITOR': 'true'},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git('log', '--format=%s', 'main..feat', cwd=feat).split('\n')[:-1] == ['f']
    assert git('symbolic-ref', '--short', 'HEAD', cwd=feat).strip() == 'feat'
    # the --exec command ran on detached HEAD: it wrote to feat's memory
    assert 'exec ran' in git('show', f'{FEAT}:notes.md', cwd=feat)
    assert tip(feat, MAIN) == main_before
    assert git('for-each-ref', 'refs/worktree/', 'refs/agitmem/detached/', cwd=feat) == ''
    assert goal_on(feat, FEAT) == 'feat goal' and goal_on(feat, MAIN) == 'main goal'
    fresh_state(feat, 'feat goal')
    settled(feat, 'feat goal')


def test_rebase_stopped_on_a_conflict_then_aborted(feat: Path) -> None:
    commit(feat, 'm.txt', 'feat side\n', 'conflicts with main')
    feat_head = head(feat)
    proc = run('git', 'rebase', 'main', cwd=feat)
    assert proc.returncode != 0 and 'CONFLICT' in proc.stdout + proc.stderr
    ok('note', 'while the rebase stopped', cwd=feat)
    ok('state', 'set', 'next_intent=resolve m.txt', cwd=feat)
    git('rebase', '--abort', cwd=feat)
    assert head(feat) == feat_head
    assert git('symbolic-ref', '--short', 'HEAD', cwd=feat).strip() == 'feat'
    assert 'while the rebase stopped' in git('show', f'{FEAT}:notes.md', cwd=feat)
    assert 'while the rebase stopped' not in git('show', f'{MAIN}:notes.md', cwd=feat)
    assert goal_here(feat) == 'feat goal'
    assert json.loads(mem(feat, 'state.json').read_text())['next_intent'] == 'resolve m.txt'
    fresh_state(feat, 'feat goal')
    settled(feat, 'feat goal')


def test_branch_rename_carries_the_memory(feat: Path) -> None:
    ok('note', 'before the rename', cwd=feat)
    git('branch', '-m', 'feat', 'feature', cwd=feat)
    ok('note', 'after the rename', cwd=feat)
    renamed = 'refs/agitmem/heads/feature'
    notes = git('show', f'{renamed}:notes.md', cwd=feat)
    assert 'before the rename' in notes and 'after the rename' in notes
    assert goal_on(feat, renamed) == 'feat goal'
    git('checkout', '-q', 'main', cwd=feat)
    assert goal_here(feat) == 'main goal'
    git('checkout', '-q', 'feature', cwd=feat)
    assert goal_here(feat) == 'feat goal'
    assert 'after the rename' in mem(feat, 'notes.md').read_text()
    fresh_state(feat, 'feat goal')
    settled(feat, 'feat goal')
    # deleting the renamed branch keeps its memory in history
    git('checkout', '-q', 'main', cwd=feat)
    kept = tip(feat, renamed)
    git('branch', '-q', '-D', 'feature', cwd=feat)
    assert kept is not None
    assert git('cat-file', '-t', kept, cwd=feat).strip() == 'commit'
    fresh_state(feat, 'main goal')
    settled(feat, 'main goal')


def test_orphan_branch(hooked: Path) -> None:
    ok('note', 'main note', cwd=hooked)
    git('checkout', '-q', '--orphan', 'pages', cwd=hooked)
    git('rm', '-q', '-rf', '--cached', '.', cwd=hooked)
    git('clean', '-q', '-fd', cwd=hooked)  # -d without -x: .agent/ stays
    assert (hooked / '.agent' / 'memory' / 'state.json').exists()
    fresh_state(hooked, 'pages goal')
    with open(mem(hooked, 'notes.md'), 'a') as f:
        f.write('- the first page\n')
    commit(hooked, 'index.html')
    pages = 'refs/agitmem/heads/pages'
    assert goal_on(hooked, pages) == 'pages goal'
    assert goal_on(hooked, MAIN) == 'main goal'
    assert code_head(hooked, pages) == head(hooked)
    assert 'the first page' in git('show', f'{pages}:notes.md', cwd=hooked)
    assert 'the first page' not in git('show', f'{MAIN}:notes.md', cwd=hooked)
    fresh_state(hooked, 'pages goal')
    settled(hooked, 'pages goal')
    git('checkout', '-q', 'main', cwd=hooked)
    assert goal_here(hooked) == 'main goal'
    settled(hooked, 'main goal')


def test_a_repository_without_commits_yet(tmp_path: Path) -> None:
    repo = tmp_path / 'new'
    git('init', '-q', str(repo), cwd=tmp_path)
    ok('init', cwd=repo)
    ok('install', 'git', cwd=repo)
    fresh_state(repo, 'first goal')
    assert tip(repo) is not None
    ok('load', cwd=repo)
    n = count(repo)
    with open(mem(repo, 'notes.md'), 'a') as f:
        f.write('- the first commit\n')
    commit(repo, 'README')
    assert count(repo) == n + 1
    assert code_head(repo) == head(repo)
    fresh_state(repo, 'first goal')
    settled(repo, 'first goal')


def test_a_branch_deleted_and_made_again_in_the_same_second(hooked: Path) -> None:
    """Reflogs count whole seconds: `git branch -D fix && git checkout -b
    fix` in the second the old fix's memory was last written (a script, an
    agent) must not hand the new fix that memory.  The clock is pinned so
    that the second is the same every run."""
    env = {'GIT_COMMITTER_DATE': '2026-12-01T10:00:00Z', 'GIT_AUTHOR_DATE': '2026-12-01T10:00:00Z'}
    git('checkout', '-q', '-b', 'fix', cwd=hooked, env=env)
    ok('state', 'set', 'current_goal=first fix', cwd=hooked, env=env)
    ok('note', 'a note of the first fix', cwd=hooked, env=env)
    git('checkout', '-q', 'main', cwd=hooked, env=env)
    git('branch', '-q', '-D', 'fix', cwd=hooked, env=env)
    git('checkout', '-q', '-b', 'fix', cwd=hooked, env=env)
    assert goal_here(hooked) == 'main goal'
    assert 'a note of the first fix' not in mem(hooked, 'notes.md').read_text()
    attic = git('for-each-ref', '--format=%(refname)', 'refs/agitmem/attic/', cwd=hooked).split()
    assert len(attic) == 1 and 'fix@' in attic[0], attic
    assert goal_on(hooked, attic[0]) == 'first fix'
    # memory the new fix writes in that same second is its own
    ok('state', 'set', 'current_goal=second fix', cwd=hooked, env=env)
    ok('note', 'a note of the second fix', cwd=hooked, env=env)
    git('checkout', '-q', 'main', cwd=hooked, env=env)
    git('checkout', '-q', 'fix', cwd=hooked, env=env)
    assert goal_here(hooked) == 'second fix'
    assert 'a note of the second fix' in mem(hooked, 'notes.md').read_text()
    assert git('for-each-ref', '--format=%(refname)', 'refs/agitmem/attic/', cwd=hooked).split() == attic
    assert 'first fix' not in git('log', '-p', 'refs/agitmem/heads/fix', '--', 'state.json', cwd=hooked)
