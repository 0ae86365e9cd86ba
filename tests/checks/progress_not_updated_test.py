from __future__ import annotations

from pathlib import Path

from agitmem.checks import progress_not_updated as progress
from agitmem.repo import blob_id
from agitmem.repo import find
from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip

REQUIRE = 'require_progress_update: true\n'


def _stage_code(repo: Path, text: str = 'def main():\n    return 2\n') -> None:
    (repo / 'src' / 'app.py').write_text(text)
    git('add', 'src/app.py', cwd=repo)


def _commit_with_hook(repo: Path, msg: str) -> None:
    git('commit', '-q', '-m', msg, cwd=repo)
    ok('hook', 'post-commit', cwd=repo)


def test_check_without_code_change_or_baseline() -> None:
    assert progress.check(code_paths=[], progress_changed=False, recorded='a' * 40, required=True) == []
    assert progress.check(code_paths=['a.py'], progress_changed=False, recorded=None, required=True) == []
    assert progress.check(code_paths=['a.py'], progress_changed=True, recorded='a' * 40, required=True) == []


def test_check_severity_follows_the_setting() -> None:
    found, = progress.check(code_paths=['a.py', 'b.py'], progress_changed=False, recorded='abc' * 14, required=False)
    assert (found.id, found.severity) == ('progress-not-updated', 'warning')
    assert found.message.startswith(
        'the change touches 2 files (a.py, ...) but snapshot.md and state.json '
        'are unchanged since the memory recorded at HEAD (abcabcabcabc);',
    )
    found, = progress.check(code_paths=['a.py'], progress_changed=False, recorded='a' * 40, required=True)
    assert found.severity == 'error'


def test_blob_id_is_gits(tmp_path: Path) -> None:
    data = b'- a note\n'
    (tmp_path / 'x').write_bytes(data)
    expected = git('hash-object', str(tmp_path / 'x'), cwd=tmp_path).strip()
    assert blob_id(data, 'a' * 40) == expected
    # a SHA-256 repository's ids are 64 digits long
    git('init', '-q', '--object-format=sha256', str(tmp_path / 'r256'), cwd=tmp_path)
    expected = git('hash-object', str(tmp_path / 'x'), cwd=tmp_path / 'r256').strip()
    assert len(expected) == 64
    assert blob_id(data, 'a' * 64) == expected


def test_code_change_without_progress_blocks_when_required(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    _stage_code(memrepo)
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1
    assert 'error progress-not-updated .agent/memory/snapshot.md: the change touches src/app.py' in proc.stdout


def test_only_warns_by_default(memrepo: Path) -> None:
    _stage_code(memrepo)
    out = ok('check', '--staged', cwd=memrepo)
    assert 'warning progress-not-updated' in out


def test_state_saved_since_head_is_progress(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    _stage_code(memrepo)
    ok('state', 'set', 'last_action=made main return 2', cwd=memrepo)
    assert 'progress-not-updated' not in ok('check', '--staged', cwd=memrepo)


def test_unsaved_snapshot_edit_is_progress(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    _stage_code(memrepo)
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- main returns 2 now\n')
    assert 'progress-not-updated' not in ok('check', '--staged', cwd=memrepo)


def test_progress_recorded_by_the_last_commit_does_not_count_again(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    _stage_code(memrepo)
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- main returns 2 now\n')
    _commit_with_hook(memrepo, 'main returns 2')
    assert 'Agitmem-Event: post-commit' in git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=memrepo)
    _stage_code(memrepo, 'def main():\n    return 3\n')
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1
    assert 'progress-not-updated' in proc.stdout
    ok('state', 'set', 'last_action=made main return 3', cwd=memrepo)
    assert 'progress-not-updated' not in ok('check', '--staged', cwd=memrepo)


def test_commit_without_memory_change_keeps_the_older_baseline(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    ok('state', 'set', 'last_action=planned', cwd=memrepo)
    _stage_code(memrepo)
    before = tip(memrepo)
    _commit_with_hook(memrepo, 'no memory change')  # nothing to save
    assert tip(memrepo) == before
    _stage_code(memrepo, 'def main():\n    return 3\n')
    assert 'progress-not-updated' in agitmem('check', '--staged', cwd=memrepo).stdout


def test_recorded_at_prefers_the_post_commit_save(memrepo: Path) -> None:
    repo = find(memrepo)
    head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    init = tip(memrepo)
    # init ran at HEAD: nothing older, so the oldest commit at HEAD
    assert progress.recorded_at(repo, 'refs/agitmem/heads/main', head) == init
    assert progress.recorded_at(repo, 'refs/agitmem/heads/nope', head) is None
    ok('note', 'after head', cwd=memrepo)
    assert progress.recorded_at(repo, 'refs/agitmem/heads/main', head) == init
    _stage_code(memrepo)
    git('commit', '-q', '-m', 'two', cwd=memrepo)
    head2 = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    # no save for the new HEAD yet: the newest memory from before it
    assert progress.recorded_at(repo, 'refs/agitmem/heads/main', head2) == tip(memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- x\n')
    ok('hook', 'post-commit', cwd=memrepo)
    recorded = tip(memrepo)
    ok('note', 'later', cwd=memrepo)
    assert progress.recorded_at(repo, 'refs/agitmem/heads/main', head2) == recorded


def test_nothing_staged_nothing_to_say(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    assert 'progress-not-updated' not in ok('check', '--staged', cwd=memrepo)


def test_worktree_mode_compares_the_working_tree(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(REQUIRE)
    (memrepo / 'new.py').write_text('x = 1\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert 'the change touches new.py' in proc.stdout
    assert 'progress-not-updated' not in ok('check', '--staged', cwd=memrepo)


def test_unborn_head_has_no_baseline(tmp_path: Path) -> None:
    git('init', '-q', str(tmp_path / 'r'), cwd=tmp_path)
    r = tmp_path / 'r'
    ok('init', cwd=r)
    (r / '.agent' / 'config.yaml').write_text(REQUIRE)
    (r / 'a.py').write_text('x = 1\n')
    git('add', 'a.py', cwd=r)
    assert 'progress-not-updated' not in ok('check', '--staged', cwd=r)


def test_recorded_at_looks_past_the_first_reads_reach(memrepo: Path) -> None:
    """More saves made at HEAD than the first read takes: the rest of the
    history is read, and the memory recorded at HEAD is still found."""
    repo = find(memrepo)
    ref = 'refs/agitmem/heads/main'
    _stage_code(memrepo)
    git('commit', '-q', '-m', 'two', cwd=memrepo)
    head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    recorded = tip(memrepo)  # the newest memory from before HEAD
    assert recorded is not None
    tree = git('rev-parse', f'{ref}^{{tree}}', cwd=memrepo).strip()
    parent = recorded
    for n in range(progress._FIRST + 3):  # saves at HEAD, as `note` makes them
        msg = f'note {n}\n\nAgitmem-Event: note\nCode-Branch: main\nCode-Head: {head}\n'
        parent = git('commit-tree', tree, '-p', parent, '-m', msg, cwd=memrepo).strip()
    git('update-ref', ref, parent, cwd=memrepo)
    assert progress.recorded_at(repo, ref, head) == recorded
