from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.util import bad
from testing.util import count
from testing.util import git
from testing.util import git_state
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import tip


def _loose_objects(repo: Path) -> set[str]:
    objects = repo / '.git' / 'objects'
    return {
        f'{d.name}{f.name}' for d in objects.iterdir()
        if len(d.name) == 2 for f in d.iterdir()
    }


def test_save_commits_a_change(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- found the bug in loader.ts\n')
    out = ok('save', '-m', 'found it', cwd=memrepo)
    assert out.startswith('saved ')
    assert count(memrepo) == 2
    msg = message(memrepo)
    assert msg.startswith('save: found it\n\n')
    assert 'Agitmem-Event: save\nCode-Branch: main\nCode-Head: ' in msg
    shown = git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo)
    assert shown == '- found the bug in loader.ts\n'


def test_save_default_subject_names_the_files(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- a\n')
    ok('save', cwd=memrepo)
    assert message(memrepo).startswith('save: notes.md\n')


def test_save_without_change_makes_no_commit(memrepo: Path) -> None:
    before = tip(memrepo)
    out = ok('save', cwd=memrepo)
    assert 'nothing to save' in out
    assert tip(memrepo) == before


def test_one_file_change_writes_at_most_three_objects(memrepo: Path) -> None:
    ok('note', 'first', cwd=memrepo)
    # an archive subtree must be reused, not rewritten
    ok('state', 'set', 'current_goal=ship it', cwd=memrepo)
    ok('archive', cwd=memrepo)
    before = _loose_objects(memrepo)
    mem(memrepo, 'notes.md').write_text('- changed\n')
    ok('save', cwd=memrepo)
    new = _loose_objects(memrepo) - before
    assert len(new) <= 3, new


def test_save_writes_reflog(memrepo: Path) -> None:
    ok('note', 'x', cwd=memrepo)
    reflog = git('reflog', 'show', '--format=%gs', 'refs/agitmem/heads/main', cwd=memrepo)
    lines = reflog.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith('agitmem note: x')
    assert lines[1].startswith('agitmem init:')


def test_save_leaves_user_repo_untouched(memrepo: Path) -> None:
    (memrepo / 'src' / 'app.py').write_text('changed\n')
    git('add', 'src/app.py', cwd=memrepo)
    (memrepo / 'untracked.txt').write_text('u\n')
    before = git_state(memrepo)
    for args in (
        ('note', 'n'), ('state', 'set', 'current_goal=g'), ('save',),
        ('status',), ('log',), ('show', '@:state.json'), ('diff',),
        ('archive',), ('rollback',), ('verify', '--', 'true'),
        ('fragment', 'add', '--goal', 'g', '--next', 'n'), ('init',),
    ):
        ok(*args, cwd=memrepo)
        assert git_state(memrepo) == before, args


def test_save_from_subdirectory(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- from src\n')
    ok('save', cwd=memrepo / 'src')
    assert git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo) == '- from src\n'


def test_save_from_linked_worktree(memrepo: Path, tmp_path: Path) -> None:
    wt = tmp_path / 'wt'
    git('worktree', 'add', '-q', '-b', 'feature', str(wt), cwd=memrepo)
    ok('init', cwd=wt)
    mem(wt, 'notes.md').write_text('- feature work\n')
    ok('save', cwd=wt / 'src')
    assert git('show', 'refs/agitmem/heads/feature:notes.md', cwd=memrepo) == '- feature work\n'
    # the new branch's memory forked from the base it was initialised from
    assert count(memrepo, 'refs/agitmem/heads/feature') >= 2
    assert git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo) != '- feature work\n'
    # each worktree keeps its own memory base
    assert (memrepo / '.git' / 'worktrees' / 'wt' / 'agitmem' / 'base').exists()


def test_save_records_deletion(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').unlink()
    ok('save', cwd=memrepo)
    names = git('ls-tree', '--name-only', 'refs/agitmem/heads/main', cwd=memrepo).split()
    assert 'notes.md' not in names


def test_save_ignores_atomic_write_temp_files(memrepo: Path) -> None:
    mem(memrepo, '.notes.md.tmp123').write_text('half')
    out = ok('save', cwd=memrepo)
    assert 'nothing to save' in out


@pytest.mark.parametrize(
    ('name', 'data', 'expected'),
    (
        ('state.json', b'{"current_goal": ', 'state.json:1: not valid JSON'),
        ('state.json', b'[]', 'must be a JSON object'),
        ('state.json', b'{"step": "three"}', '"step" must be a whole number'),
        ('notes.md', b'- a\n\x00\x01\x02', 'notes.md:2: binary content'),
        ('notes.md', b'- caf\xe9\n', 'notes.md:1: not UTF-8'),
        ('notes.md', b'- a\r\n- b\r\n', 'notes.md:1: CRLF line ending'),
        ('tattoo.md', b'\xef\xbb\xbf- rule\n', 'tattoo.md:1: starts with a UTF-8 byte order mark'),
        ('fragments.jsonl', b'{"id": "A-001"}\nnope\n', 'fragments.jsonl:2: not valid JSON'),
        ('fragments.jsonl', b'{"id": "x"}\n', 'fragments.jsonl:1: "id" must look like'),
    ),
)
def test_bad_memory_file_is_refused(memrepo: Path, name: str, data: bytes, expected: str) -> None:
    before = tip(memrepo)
    mem(memrepo, name).write_bytes(data)
    line = bad('save', cwd=memrepo)
    assert expected in line
    assert tip(memrepo) == before
    assert mem(memrepo, name).read_bytes() == data


@pytest.mark.parametrize(
    ('text', 'expected'),
    (
        ('budget_tokens: a: b\n', 'config.yaml:1: not valid YAML'),
        ('budget: 800\n', 'config.yaml:1: unknown setting "budget"'),
        ('stale_minutes: soon\n', '"stale_minutes" must be'),
        ('- a list\n', 'must be a mapping'),
        ('compaction_drop: 1.5\n', 'out of range'),
    ),
)
def test_bad_config_is_refused(memrepo: Path, text: str, expected: str) -> None:
    before = tip(memrepo)
    (memrepo / '.agent' / 'config.yaml').write_text(text)
    line = bad('save', cwd=memrepo)
    assert expected in line
    assert tip(memrepo) == before


def test_huge_notes_file_is_refused(memrepo: Path) -> None:
    before = tip(memrepo)
    with open(mem(memrepo, 'notes.md'), 'w') as f:
        f.write(('- ' + 'x' * 98 + '\n') * (50 * 1024 * 1024 // 100))
    size = os.path.getsize(mem(memrepo, 'notes.md'))
    line = bad('save', cwd=memrepo)
    assert 'over max_file_kb' in line
    assert tip(memrepo) == before
    assert os.path.getsize(mem(memrepo, 'notes.md')) == size


def test_symlink_outside_repo_is_refused(memrepo: Path, tmp_path: Path) -> None:
    secret = tmp_path / 'outside.txt'
    secret.write_text('not memory\n')
    mem(memrepo, 'notes.md').unlink()
    mem(memrepo, 'notes.md').symlink_to(secret)
    line = bad('save', cwd=memrepo)
    assert 'symlink' in line


def test_memory_dir_symlink_is_refused(memrepo: Path, tmp_path: Path) -> None:
    import shutil
    outside = tmp_path / 'elsewhere'
    shutil.move(str(memrepo / '.agent' / 'memory'), outside)
    (memrepo / '.agent' / 'memory').symlink_to(outside)
    line = bad('save', cwd=memrepo)
    assert 'symlink' in line


def test_save_merges_when_the_ref_moved_elsewhere(memrepo: Path, tmp_path: Path) -> None:
    # two worktrees pinned to one memory ref: each save must keep the other's
    wt = tmp_path / 'wt'
    git('worktree', 'add', '-q', '-b', 'other', str(wt), cwd=memrepo)
    ok('init', '--ref', 'main', cwd=wt)
    ok('note', 'from main', cwd=memrepo)
    ok('note', 'from the worktree', '--ref', 'main', cwd=wt)
    saved = git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo)
    assert 'from main' in saved and 'from the worktree' in saved
    assert 'from main' in mem(wt, 'notes.md').read_text()


def test_a_rewritten_memory_file_keeps_its_permissions_but_setuid(memrepo: Path) -> None:
    """agitmem replaces a memory file whole, by a file of its own: the
    permissions carry over, never set-user-id, set-group-id or sticky
    (a teammate's file in a shared clone must not become a program that
    runs as whoever wrote it last)."""
    import stat
    notes = mem(memrepo, 'notes.md')
    notes.chmod(0o6755)
    ok('note', 'a note', cwd=memrepo)
    assert 'a note' in notes.read_text()
    assert stat.S_IMODE(notes.stat().st_mode) == 0o755


@pytest.mark.parametrize('left', ['empty', 'zeros', 'older'])
def test_a_memory_base_a_crash_left_behind_loses_nothing(memrepo: Path, left: str) -> None:
    """The memory base is not fsynced (store.set_base): after a power loss
    it may be empty, zeros, or the one before.  The next saves catch up
    with the ref and lose none of its memory."""
    mem(memrepo, 'notes.md').write_text('- one\n')
    ok('save', '-m', 'one', cwd=memrepo)
    older = tip(memrepo)
    mem(memrepo, 'notes.md').write_text('- one\n- two\n')
    ok('save', '-m', 'two', cwd=memrepo)
    base = memrepo / '.git' / 'agitmem' / 'base'
    base.write_bytes({
        'empty': b'', 'zeros': b'\0' * 40, 'older': f'{older} refs/agitmem/heads/main\n'.encode(),
    }[left])
    ok('state', 'set', 'next_intent=three', cwd=memrepo)
    ok('note', 'four', cwd=memrepo)
    notes = git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo)
    assert notes.startswith('- one\n- two\n') and 'four' in notes
    assert 'three' in git('show', 'refs/agitmem/heads/main:state.json', cwd=memrepo)
    assert base.read_text().split() == [tip(memrepo), 'refs/agitmem/heads/main']
