"""The one write path (porcelain.write.save): no writer commits over a
change another worktree saved to the same memory ref, and no save
commits one branch's memory onto another branch's ref."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
SHARED = {'AGITMEM_REF': MAIN}


def show(repo: Path, ref: str, name: str) -> str:
    return git('show', f'{ref}:{name}', cwd=repo)


@pytest.fixture
def two(memrepo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two worktrees writing the same memory ref (main's, pinned in the
    second with $AGITMEM_REF), both up to date with it."""
    other = tmp_path / 'other'
    git('worktree', 'add', '-q', '-b', 'other', str(other), cwd=memrepo)
    ok('init', cwd=other, env=SHARED)
    ok('state', 'set', 'current_goal=ship the parser', cwd=memrepo)
    ok('save', cwd=other, env=SHARED)  # nothing new, but reads the tip
    git('update-ref', '-d', 'refs/agitmem/heads/other', cwd=memrepo)
    # the second worktree's memory base is main's tip
    ok('status', cwd=other, env=SHARED)
    return memrepo, other


def _feature_memory(repo: Path) -> None:
    """A branch 'feat' whose memory has a fragment main's has not."""
    base = tip(repo)
    assert base is not None
    git('update-ref', 'refs/agitmem/heads/feat', base, cwd=repo)
    # a second worktree on feat writes its fragment there
    wt = repo.parent / 'featwt'
    git('worktree', 'add', '-q', '-b', 'feat', str(wt), cwd=repo)
    ok('init', cwd=wt)
    ok('fragment', 'add', '--goal', 'feat work', '--next', 'merge it', cwd=wt)


WRITERS: dict[str, Callable[[Path], None]] = {
    'save': lambda r: (mem(r, 'snapshot.md').write_text('# Goal\nedited here\n'), ok('save', cwd=r)),  # type: ignore[dict-item]
    'state set': lambda r: ok('state', 'set', 'next_intent=write tests', cwd=r),  # type: ignore[dict-item]
    'note': lambda r: ok('note', 'a note from the first worktree', cwd=r),  # type: ignore[dict-item]
    'fragment add': lambda r: ok('fragment', 'add', '--goal', 'g', '--next', 'n', cwd=r),  # type: ignore[dict-item]
    'verify': lambda r: agitmem('verify', '--', 'true', cwd=r),  # type: ignore[dict-item]
    'archive': lambda r: ok('archive', cwd=r),  # type: ignore[dict-item]
}


@pytest.mark.parametrize('writer', sorted(WRITERS))
def test_no_writer_drops_what_another_worktree_saved(two: tuple[Path, Path], writer: str) -> None:
    first, other = two
    ok('note', 'saved by the other worktree', cwd=other, env=SHARED)
    WRITERS[writer](first)
    notes = show(first, MAIN, 'notes.md')
    assert 'saved by the other worktree' in notes
    # and the first worktree's own files have it too
    assert 'saved by the other worktree' in mem(first, 'notes.md').read_text()


def test_merge_keeps_what_another_worktree_saved(two: tuple[Path, Path]) -> None:
    first, other = two
    _feature_memory(first)
    ok('note', 'saved by the other worktree', cwd=other, env=SHARED)
    ok('merge', 'feat', cwd=first)
    assert 'saved by the other worktree' in show(first, MAIN, 'notes.md')
    assert 'feat work' in show(first, MAIN, 'fragments.jsonl')


def test_pull_keeps_what_another_worktree_saved(two: tuple[Path, Path], tmp_path: Path) -> None:
    first, other = two
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=first)
    ok('push', 'origin', cwd=first)
    clone = tmp_path / 'clone'
    git('clone', '-q', str(remote), str(clone), cwd=tmp_path)
    ok('init', cwd=clone)
    ok('note', 'from the clone', cwd=clone)
    ok('push', cwd=clone)
    ok('note', 'saved by the other worktree', cwd=other, env=SHARED)
    ok('pull', 'origin', cwd=first)
    notes = show(first, MAIN, 'notes.md')
    assert 'saved by the other worktree' in notes
    assert 'from the clone' in notes


def test_a_save_after_a_hookless_switch_does_not_cross_branches(memrepo: Path) -> None:
    """Only agent hooks installed (no git hooks): checkout -b feat, state
    set, checkout main, save.  main's memory keeps main's goal."""
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    proc = agitmem('save', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert '"current_goal": "main goal"' in show(memrepo, MAIN, 'state.json')
    assert '"current_goal": "feat goal"' in show(memrepo, 'refs/agitmem/heads/feat', 'state.json')
    # the working tree now holds main's memory, and says it switched
    assert '"current_goal": "main goal"' in mem(memrepo, 'state.json').read_text()
    assert 'feat' in proc.stderr


@pytest.mark.parametrize('command', [
    ('note', 'on main now'),
    ('state', 'set', 'next_intent=on main now'),
    ('fragment', 'add', '--goal', 'on main now', '--next', 'x'),
])
def test_every_writer_switches_first(memrepo: Path, command: tuple[str, ...]) -> None:
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    ok(*command, cwd=memrepo)
    state = show(memrepo, MAIN, 'state.json')
    assert '"current_goal": "main goal"' in state
    assert '"current_goal": "feat goal"' in show(memrepo, 'refs/agitmem/heads/feat', 'state.json')
    assert 'on main now' in show(memrepo, MAIN, 'notes.md') + state + show(memrepo, MAIN, 'fragments.jsonl')


def test_load_says_whose_memory_it_shows(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    out = ok('load', cwd=memrepo)
    assert 'memory of feat' in out and 'main' in out
