"""The rest of a busy user's day, one everyday git command a test, with the
git hooks installed: after each, memory survives (load gives the goal and
the newest note, the memory ref holds it, no traceback anywhere) and
doctor finds nothing wrong.  (Rewrites are in rewrite_test.py and
history_test.py, gc with worktrees in storage_test.py, sparse checkouts in
sparse_test.py.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.daily import commit
from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
GOAL = 'a day of git'


@pytest.fixture
def day(memrepo: Path) -> Path:
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', f'current_goal={GOAL}', 'current_file=src/app.py', cwd=memrepo)
    commit(memrepo, 'x.py', 'morning note')
    return memrepo


def _git(repo: Path, *args: str) -> str:
    proc = run('git', *args, cwd=repo)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    assert 'Traceback' not in proc.stdout + proc.stderr, proc.stderr
    return proc.stdout + proc.stderr


def survives(repo: Path, note: str, ref: str = MAIN) -> str:
    """load gives the goal and the note, the ref holds the note, doctor is
    clean (exit 0), nothing prints a traceback; returns the block."""
    proc = agitmem('load', cwd=repo)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    assert f'current_goal: {GOAL}' in proc.stdout.splitlines(), proc.stdout
    assert note in proc.stdout, proc.stdout
    assert note in git('show', f'{ref}:notes.md', cwd=repo)
    doctor = agitmem('doctor', cwd=repo)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert 'Traceback' not in doctor.stderr
    return proc.stdout


def test_stash_and_pop(day: Path) -> None:
    ok('note', 'before the stash', cwd=day)
    (day / 'x.py').write_text('changed\n')
    _git(day, 'stash')
    assert (day / 'x.py').read_text() == 'x.py\n'
    survives(day, 'before the stash')
    _git(day, 'stash', 'pop')
    survives(day, 'before the stash')


def test_stash_all_takes_agent_and_pop_brings_it_back(day: Path) -> None:
    with open(mem(day, 'notes.md'), 'a') as f:
        f.write('- unsaved when stashed\n')
    _git(day, 'stash', '--all')
    assert not (day / '.agent').exists()
    proc = agitmem('load', cwd=day)  # one line: pop it back, nothing made over it
    assert 'git stash pop' in proc.stderr and 'Traceback' not in proc.stderr
    assert not (day / '.agent').exists()
    _git(day, 'stash', 'pop')
    assert '- unsaved when stashed' in mem(day, 'notes.md').read_text()
    ok('save', cwd=day)
    survives(day, 'unsaved when stashed')


def test_worktree_add_gets_its_own_memory(day: Path, tmp_path: Path) -> None:
    second = tmp_path / 'second'
    _git(day, 'worktree', 'add', '-q', str(second), '-b', 'side')
    survives(second, 'morning note', 'refs/agitmem/heads/side')
    ok('note', 'from the second worktree', cwd=second)
    survives(second, 'from the second worktree', 'refs/agitmem/heads/side')
    assert 'from the second worktree' not in mem(day, 'notes.md').read_text()
    survives(day, 'morning note')


def test_switch_create_forks_the_memory(day: Path) -> None:
    _git(day, 'switch', '-q', '-c', 'topic')
    ok('note', 'on topic', cwd=day)
    commit(day, 't.py')
    survives(day, 'on topic', 'refs/agitmem/heads/topic')
    _git(day, 'switch', '-q', 'main')
    assert 'on topic' not in survives(day, 'morning note')


def test_branch_rename_then_doctor_before_any_save(day: Path) -> None:
    _git(day, 'switch', '-q', '-c', 'topic')
    ok('note', 'before the rename', cwd=day)
    _git(day, 'branch', '-m', 'topic', 'renamed')
    out = agitmem('doctor', cwd=day)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'renamed' in out.stdout
    ok('note', 'after the rename', cwd=day)
    survives(day, 'before the rename', 'refs/agitmem/heads/renamed')


def test_cherry_pick(day: Path) -> None:
    _git(day, 'switch', '-q', '-c', 'topic')
    picked = commit(day, 'p.py', 'picked work')
    _git(day, 'switch', '-q', 'main')
    _git(day, 'cherry-pick', picked)
    survives(day, 'morning note')


def test_bisect_keeps_the_branchs_memory_through_detached_heads(day: Path) -> None:
    for i in range(4):
        commit(day, f'b{i}.py')
    ok('note', 'before bisect', cwd=day)
    _git(day, 'bisect', 'start', 'HEAD', 'HEAD~4')
    assert run('git', 'symbolic-ref', '-q', 'HEAD', cwd=day).returncode != 0  # detached
    ok('note', 'while bisecting', cwd=day)
    assert 'before bisect' in ok('load', cwd=day)
    _git(day, 'bisect', 'good')
    _git(day, 'bisect', 'reset')
    # bisect detaches HEAD on the branch's own commits: its memory stays
    survives(day, 'while bisecting')
    assert 'before bisect' in ok('load', cwd=day)


def test_clean_fdx_then_init_brings_memory_back(day: Path) -> None:
    ok('note', 'saved before the clean', cwd=day)
    _git(day, 'clean', '-fdxq')
    assert not (day / '.agent').exists()
    proc = agitmem('load', cwd=day)
    assert proc.returncode == 2 and 'agitmem init' in proc.stderr and 'Traceback' not in proc.stderr
    assert tip(day, MAIN) is not None
    ok('init', cwd=day)
    survives(day, 'saved before the clean')


def test_gc_prune_now_and_maintenance(day: Path) -> None:
    ok('note', 'before gc', cwd=day)
    _git(day, 'gc', '-q', '--prune=now')
    _git(day, 'maintenance', 'run', '--task=gc', '--task=loose-objects', '--task=pack-refs')
    assert git('count-objects', cwd=day).startswith('0 objects')
    survives(day, 'before gc')


@pytest.mark.parametrize('how', (['--depth', '1'], ['--filter=blob:none'], ['--sparse']))
def test_clones(day: Path, tmp_path: Path, how: list[str]) -> None:
    ok('note', 'shared note', cwd=day)
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('config', 'uploadpack.allowFilter', 'true', cwd=remote)
    git('remote', 'add', 'origin', remote.as_uri(), cwd=day)
    _git(day, 'push', '-q', 'origin', 'main')
    ok('push', cwd=day)
    clone = tmp_path / 'clone'
    _git(tmp_path, 'clone', '-q', *how, remote.as_uri(), str(clone))
    ok('init', cwd=clone)
    ok('install', 'git', cwd=clone)
    survives(clone, 'shared note')
    ok('note', 'in the clone', cwd=clone)
    commit(clone, 'c.py')
    survives(clone, 'in the clone')
    assert 'shared note' in ok('log', cwd=clone) or ok('log', cwd=clone)


def test_git_mv_of_the_current_file(day: Path) -> None:
    _git(day, 'mv', 'src/app.py', 'src/main.py')
    proc = run('git', 'commit', '-q', '-m', 'rename', cwd=day)
    assert proc.returncode != 0  # current_file would name a file the commit removes
    assert 'current_file "src/app.py" was moved to src/main.py: `agitmem state set current_file=src/main.py`' in proc.stderr
    ok('state', 'set', 'current_file=src/main.py', cwd=day)
    _git(day, 'commit', '-q', '-m', 'rename')
    survives(day, 'morning note')


def test_detached_head_and_back(day: Path) -> None:
    _git(day, 'checkout', '-q', '--detach', 'HEAD~1')
    ok('note', 'detached work', cwd=day)
    assert 'detached work' in ok('load', cwd=day)
    assert agitmem('doctor', cwd=day).returncode == 0
    _git(day, 'checkout', '-q', 'main')
    assert 'detached work' not in survives(day, 'morning note')


def test_git_mv_of_the_current_file_named_with_its_line(day: Path) -> None:
    """current_file may carry a `:line` suffix (the check finds the file
    without it): the rename is still followed, the suffix kept."""
    ok('state', 'set', 'current_file=src/app.py:12', cwd=day)
    _git(day, 'mv', 'src/app.py', 'src/main.py')
    proc = run('git', 'commit', '-q', '-m', 'rename', cwd=day)
    assert proc.returncode != 0
    assert 'was moved to src/main.py:12: `agitmem state set current_file=src/main.py:12`' in proc.stderr
    ok('state', 'set', 'current_file=src/main.py:12', cwd=day)
    _git(day, 'commit', '-q', '-m', 'rename')
    survives(day, 'morning note')
