from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import tip

FEATURE = 'refs/agitmem/heads/feature'
MAIN = 'refs/agitmem/heads/main'


def _exe() -> str:
    found = shutil.which('agitmem', path=os.path.dirname(sys.executable))
    return found or f'{sys.executable} -m agitmem'


def hooks(repo: Path) -> None:
    """post-checkout and post-merge shims calling `agitmem hook <event>`
    (what `agitmem install git` writes, minus the chaining)."""
    hook_dir = Path(git('rev-parse', '--git-common-dir', cwd=repo).strip())
    if not hook_dir.is_absolute():
        hook_dir = repo / hook_dir
    hook_dir = hook_dir / 'hooks'
    hook_dir.mkdir(exist_ok=True)
    for event in ('post-checkout', 'post-merge'):
        path = hook_dir / event
        path.write_text(f'#!/bin/sh\nexec {_exe()} hook {event} "$@"\n')
        path.chmod(0o755)


def show(repo: Path, ref: str, name: str) -> str:
    return git('show', f'{ref}:{name}', cwd=repo)


def switch(repo: Path, *args: str) -> str:
    """git checkout; its output and its hooks' (git sends a hook's stdout
    to stderr)."""
    proc = subprocess.run(
        ('git', 'checkout', *args), cwd=repo, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


@pytest.fixture
def hooked(memrepo: Path) -> Path:
    hooks(memrepo)
    return memrepo


def test_new_branch_forks_memory(hooked: Path) -> None:
    ok('note', 'on main', cwd=hooked)
    main_tip = tip(hooked)
    out = switch(hooked, '-b', 'feature')
    assert 'memory of feature forked from main' in out
    assert tip(hooked, FEATURE) == main_tip
    ok('note', 'on feature', cwd=hooked)
    assert 'on feature' in show(hooked, FEATURE, 'notes.md')
    assert 'on main' in show(hooked, FEATURE, 'notes.md')
    assert tip(hooked) == main_tip


def test_switch_checks_out_each_branchs_memory(hooked: Path) -> None:
    switch(hooked, '-b', 'feature')
    ok('note', 'feature only', cwd=hooked)
    switch(hooked, 'main')
    assert 'feature only' not in mem(hooked, 'notes.md').read_text()
    ok('note', 'main only', cwd=hooked)
    switch(hooked, 'feature')
    notes = mem(hooked, 'notes.md').read_text()
    assert 'feature only' in notes
    assert 'main only' not in notes
    out = ok('status', cwd=hooked)
    assert 'no unsaved changes' in out


def test_switch_saves_unsaved_memory_to_the_old_branch_first(hooked: Path) -> None:
    switch(hooked, '-b', 'feature')
    mem(hooked, 'notes.md').write_text('- unsaved work on feature\n')
    switch(hooked, 'main')
    assert show(hooked, FEATURE, 'notes.md') == '- unsaved work on feature\n'
    assert message(hooked, FEATURE).startswith(
        'hook post-checkout: feature before switching to main\n',
    )
    assert 'Code-Branch: feature\n' in message(hooked, FEATURE)
    assert mem(hooked, 'notes.md').read_text() != '- unsaved work on feature\n'
    switch(hooked, 'feature')
    assert mem(hooked, 'notes.md').read_text() == '- unsaved work on feature\n'


def test_unsavable_memory_is_never_overwritten(hooked: Path) -> None:
    switch(hooked, '-b', 'feature')
    ok('note', 'feature', cwd=hooked)
    switch(hooked, 'main')
    mem(hooked, 'state.json').write_text('{"current_goal": ')
    before = tip(hooked)
    out = switch(hooked, 'feature')
    assert 'memory of main not saved' in out
    assert mem(hooked, 'state.json').read_text() == '{"current_goal": '
    assert tip(hooked) == before


def test_detached_head_has_its_own_memory(hooked: Path) -> None:
    ok('note', 'main', cwd=hooked)
    switch(hooked, '--detach')
    detached = 'refs/agitmem/detached/main-worktree'
    assert tip(hooked, detached) == tip(hooked)
    ok('note', 'detached', cwd=hooked)
    switch(hooked, 'main')
    assert 'detached' not in mem(hooked, 'notes.md').read_text()
    assert 'detached' in show(hooked, detached, 'notes.md')


def test_file_checkout_and_same_branch_do_nothing(hooked: Path) -> None:
    mem(hooked, 'notes.md').write_text('- unsaved\n')
    before = tip(hooked)
    (hooked / 'README').write_text('changed\n')
    switch(hooked, '--', 'README')
    switch(hooked, 'main')
    assert tip(hooked) == before
    assert mem(hooked, 'notes.md').read_text() == '- unsaved\n'


def test_pinned_ref_does_not_follow_branches(hooked: Path) -> None:
    cfg = hooked / '.agent' / 'config.yaml'
    cfg.write_text('ref: shared\n')
    ok('note', 'shared note', cwd=hooked)
    switch(hooked, '-b', 'feature')
    assert tip(hooked, FEATURE) is None
    assert 'shared note' in mem(hooked, 'notes.md').read_text()


def test_checkout_of_a_branch_whose_memory_is_on_the_remote_only(hooked: Path) -> None:
    git('branch', 'feature', cwd=hooked)
    git('remote', 'add', 'origin', str(hooked), cwd=hooked)
    git('update-ref', 'refs/agitmem/remotes/origin/feature', tip(hooked) or '', cwd=hooked)
    ok('note', 'local main', cwd=hooked)
    switch(hooked, 'feature')
    assert tip(hooked, FEATURE) == tip(hooked, 'refs/agitmem/remotes/origin/feature')
    assert 'local main' not in mem(hooked, 'notes.md').read_text()


def test_rebase_does_not_switch_memory(hooked: Path) -> None:
    switch(hooked, '-b', 'feature')
    (hooked / 'f.txt').write_text('f\n')
    git('add', 'f.txt', cwd=hooked)
    git('commit', '-q', '-m', 'f', cwd=hooked)
    ok('note', 'feature work', cwd=hooked)
    switch(hooked, 'main')
    (hooked / 'm.txt').write_text('m\n')
    git('add', 'm.txt', cwd=hooked)
    git('commit', '-q', '-m', 'm', cwd=hooked)
    switch(hooked, 'feature')
    git('rebase', '-q', 'main', cwd=hooked)
    assert 'feature work' in mem(hooked, 'notes.md').read_text()
    assert git('for-each-ref', 'refs/agitmem/detached/', 'refs/worktree/', cwd=hooked) == ''


# -- merging ---------------------------------------------------------------------

def _commit(repo: Path, name: str) -> None:
    (repo / name).write_text(f'{name}\n')
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', f'add {name}', cwd=repo)


def test_merge_back_brings_tattoo_and_archived_snapshots(hooked: Path) -> None:
    ok('note', 'main before fork', cwd=hooked)
    switch(hooked, '-b', 'feature')
    tattoo = mem(hooked, 'tattoo.md')
    tattoo.write_text(tattoo.read_text() + '- errors: raise ConfigError\n')
    ok('save', '-m', 'rule', cwd=hooked)
    ok('state', 'set', 'current_goal=move the loader', cwd=hooked)
    ok('archive', cwd=hooked)
    ok('note', 'feature note', cwd=hooked)
    _commit(hooked, 'feature.txt')
    switch(hooked, 'main')
    ok('note', 'main after fork', cwd=hooked)
    _commit(hooked, 'main.txt')
    proc = subprocess.run(
        ('git', 'merge', '--no-edit', 'feature'), cwd=hooked,
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'agitmem: merged the memory of feature' in proc.stdout + proc.stderr
    assert '- errors: raise ConfigError\n' in mem(hooked, 'tattoo.md').read_text()
    archived = list((hooked / '.agent' / 'memory' / 'archive').rglob('*.md'))
    assert len(archived) == 1
    assert 'move-the-loader' in archived[0].name
    notes = mem(hooked, 'notes.md').read_text()
    for n in ('main before fork', 'feature note', 'main after fork'):
        assert notes.count(n) == 1
    msg = message(hooked)
    assert msg.startswith('merge: feature\n')
    assert 'Agitmem-Event: merge\n' in msg
    parents = git('log', '-1', '--format=%P', MAIN, cwd=hooked).split()
    assert parents[1] == tip(hooked, FEATURE)
    assert 'no unsaved changes' in ok('status', cwd=hooked)


def test_fast_forward_merge_of_memory(hooked: Path) -> None:
    switch(hooked, '-b', 'feature')
    ok('note', 'feature', cwd=hooked)
    _commit(hooked, 'feature.txt')
    switch(hooked, 'main')
    git('merge', '-q', 'feature', cwd=hooked)
    assert tip(hooked) == tip(hooked, FEATURE)
    assert 'feature' in mem(hooked, 'notes.md').read_text()


def test_squash_merge_merges_memory(hooked: Path) -> None:
    switch(hooked, '-b', 'feature')
    ok('note', 'squashed feature note', cwd=hooked)
    _commit(hooked, 'feature.txt')
    switch(hooked, 'main')
    ok('note', 'main', cwd=hooked)
    git('merge', '--squash', 'feature', cwd=hooked)
    assert 'squashed feature note' in mem(hooked, 'notes.md').read_text()
    assert message(hooked).startswith('merge: feature (squash)\n')


def _write_on_ref(repo: Path, ref: str, name: str, text: str) -> None:
    """A memory commit on ref changing one file, made the way another
    clone or worktree would (plain git), so this worktree's memory base
    is untouched."""
    env = {'GIT_INDEX_FILE': str(repo / '.git' / 'agitmem-test-index')}
    git('read-tree', ref, cwd=repo, env=env)
    proc = subprocess.run(
        ('git', 'hash-object', '-w', '--stdin'), cwd=repo, input=text,
        capture_output=True, text=True, check=True,
    )
    git('update-index', '--add', '--cacheinfo', f'100644,{proc.stdout.strip()},{name}',
        cwd=repo, env=env)
    tree = git('write-tree', cwd=repo, env=env).strip()
    new = git(
        'commit-tree', tree, '-p', ref, '-m',
        f'save: {name}\n\nAgitmem-Event: save\nCode-Branch: feature\n'
        f'Code-Head: {git("rev-parse", "HEAD", cwd=repo).strip()}\n',
        cwd=repo,
    ).strip()
    git('update-ref', ref, new, cwd=repo)
    os.unlink(env['GIT_INDEX_FILE'])


def test_merge_command_different_tattoo_lines_merge_cleanly(memrepo: Path) -> None:
    git('update-ref', FEATURE, tip(memrepo) or '', cwd=memrepo)
    tattoo = mem(memrepo, 'tattoo.md')
    original = tattoo.read_text()
    tattoo.write_text(original.replace('- Run the tests', '- Always run the tests'))
    ok('save', cwd=memrepo)
    _write_on_ref(
        memrepo, FEATURE, 'tattoo.md',
        original.replace('- Never commit secrets', '- Never log or commit secrets'),
    )
    out = ok('merge', 'feature', cwd=memrepo)
    assert 'merged the memory of feature' in out
    text = tattoo.read_text()
    assert '- Always run the tests' in text
    assert '- Never log or commit secrets' in text
    assert '<<<<<<<' not in text
    assert not (memrepo / '.git' / 'agitmem' / 'conflicts').exists()
    assert git('log', '-1', '--format=%P', MAIN, cwd=memrepo).split()[1] == tip(memrepo, FEATURE)


def test_merge_command_same_tattoo_line_conflicts_and_blocks_check(memrepo: Path) -> None:
    git('update-ref', FEATURE, tip(memrepo) or '', cwd=memrepo)
    tattoo = mem(memrepo, 'tattoo.md')
    original = tattoo.read_text()
    tattoo.write_text(original.replace('- Never commit secrets', '- Never print secrets'))
    ok('save', cwd=memrepo)
    _write_on_ref(
        memrepo, FEATURE, 'tattoo.md',
        original.replace('- Never commit secrets', '- Never push secrets'),
    )
    proc = agitmem('merge', 'feature', cwd=memrepo)
    assert proc.returncode == 1, proc.stderr
    assert 'CONFLICT tattoo.md: 1 conflict(s) marked in the file' in proc.stdout
    text = tattoo.read_text()
    assert '<<<<<<< main\n- Never print secrets' in text
    assert '=======\n- Never push secrets' in text
    assert '>>>>>>> feature\n' in text
    recorded = memrepo / '.git' / 'agitmem' / 'conflicts'
    assert recorded.read_text() == 'tattoo.md: 1 conflict(s) marked in the file\n'
    msg = message(memrepo)
    assert msg.startswith('merge: feature\n\nConflicts:\n\ttattoo.md: 1 conflict')
    assert len(git('log', '-1', '--format=%P', MAIN, cwd=memrepo).split()) == 2

    check = agitmem('check', cwd=memrepo)
    assert check.returncode == 1
    assert 'merge-conflict' in check.stdout
    line = bad('merge', 'feature', cwd=memrepo)
    assert 'unresolved merge conflicts' in line

    tattoo.write_text(original.replace('- Never commit secrets', '- Never print or push secrets'))
    ok('save', '-m', 'resolved', cwd=memrepo)
    check = agitmem('check', cwd=memrepo)
    assert 'merge-conflict' not in check.stdout
    assert ok('merge', 'feature', cwd=memrepo).startswith('memory already up to date')
    assert not recorded.exists()


def test_merge_command_state_conflict_stays_valid_json(memrepo: Path) -> None:
    git('update-ref', FEATURE, tip(memrepo) or '', cwd=memrepo)
    ok('state', 'set', 'current_goal=ours', cwd=memrepo)
    _write_on_ref(
        memrepo, FEATURE, 'state.json',
        '{\n  "current_goal": "theirs",\n  "step": 1\n}\n',
    )
    proc = agitmem('merge', 'feature', cwd=memrepo)
    assert proc.returncode == 1
    assert 'CONFLICT state.json: key "current_goal"' in proc.stdout
    shown = ok('state', 'show', '--json', cwd=memrepo)
    assert '"merge_conflicts"' in shown
    assert '"theirs": "theirs"' in shown
    recorded = (memrepo / '.git' / 'agitmem' / 'conflicts').read_text()
    assert recorded == 'state.json: key "current_goal"\n'


def test_merge_command_fast_forwards(memrepo: Path) -> None:
    git('update-ref', FEATURE, tip(memrepo) or '', cwd=memrepo)
    _write_on_ref(memrepo, FEATURE, 'notes.md', '- from feature\n')
    out = ok('merge', 'feature', cwd=memrepo)
    assert out.startswith('fast-forward:')
    assert tip(memrepo) == tip(memrepo, FEATURE)
    assert mem(memrepo, 'notes.md').read_text() == '- from feature\n'


def test_merge_command_saves_unsaved_memory_first(memrepo: Path) -> None:
    git('update-ref', FEATURE, tip(memrepo) or '', cwd=memrepo)
    _write_on_ref(memrepo, FEATURE, 'snapshot.md', '## Goal\nfeature goal\n')
    mem(memrepo, 'notes.md').write_text('- unsaved\n')
    out = ok('merge', 'feature', cwd=memrepo)
    assert 'saved unsaved memory as' in out
    assert mem(memrepo, 'notes.md').read_text() == '- unsaved\n'
    assert mem(memrepo, 'snapshot.md').read_text() == '## Goal\nfeature goal\n'
    assert 'save: before merge: feature' in git('log', '--format=%s', MAIN, cwd=memrepo)


@pytest.mark.parametrize(
    ('branch', 'expected'),
    (
        ('nope', 'no memory for "nope"'),
        ('main', 'is the memory in use'),
    ),
)
def test_merge_command_bad_branch(memrepo: Path, branch: str, expected: str) -> None:
    before = tip(memrepo)
    assert expected in bad('merge', branch, cwd=memrepo)
    assert tip(memrepo) == before


# -- worktrees -------------------------------------------------------------------

_SAVER = '''\
import sys
from agitmem.cli import main
name = sys.argv[1]
for i in range(50):
    with open('.agent/memory/notes.md', 'a') as f:
        f.write(f'- {name} {i}\\n')
    assert main(['save', '-m', f'{name} {i}']) == 0
'''


def test_two_worktrees_saving_50_times_each_stay_independent(
        memrepo: Path, tmp_path: Path,
) -> None:
    trees = {}
    for name in ('one', 'two'):
        wt = tmp_path / name
        git('worktree', 'add', '-q', '-b', name, str(wt), cwd=memrepo)
        ok('init', cwd=wt)
        trees[name] = wt
    procs = [
        subprocess.Popen(
            (sys.executable, '-c', _SAVER, name), cwd=wt,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for name, wt in trees.items()
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    for name, wt in trees.items():
        other = 'two' if name == 'one' else 'one'
        ref = f'refs/agitmem/heads/{name}'
        notes = show(memrepo, ref, 'notes.md')
        assert [x for x in notes.splitlines() if x.startswith(f'- {name} ')] == [
            f'- {name} {i}' for i in range(50)
        ]
        assert f'- {other} ' not in notes
        assert mem(wt, 'notes.md').read_text() == notes
        subjects = git('log', '--format=%s', ref, cwd=memrepo).splitlines()
        assert subjects[:50] == [f'save: {name} {i}' for i in reversed(range(50))]
        assert count(memrepo, ref) >= 51
        branches = git('log', '--format=%(trailers:key=Code-Branch,valueonly)', ref, cwd=memrepo)
        assert set(branches.split()) == {name}
        assert git('fsck', '--no-dangling', cwd=memrepo) == ''


def test_new_worktree_gets_its_branch_memory_forked(hooked: Path, tmp_path: Path) -> None:
    ok('note', 'main memory', cwd=hooked)
    wt = tmp_path / 'wt'
    proc = subprocess.run(
        ('git', 'worktree', 'add', '-b', 'side', str(wt)), cwd=hooked,
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'memory of side forked from main' in proc.stdout + proc.stderr
    assert tip(hooked, 'refs/agitmem/heads/side') == tip(hooked)
    assert 'main memory' in mem(wt, 'notes.md').read_text()
    ok('note', 'side memory', cwd=wt)
    assert 'side memory' not in mem(hooked, 'notes.md').read_text()
    assert 'side memory' not in show(hooked, MAIN, 'notes.md')


def test_worktree_of_an_existing_branch_gets_that_branchs_memory(
        hooked: Path, tmp_path: Path,
) -> None:
    switch(hooked, '-b', 'feature')
    ok('note', 'feature memory', cwd=hooked)
    switch(hooked, 'main')
    wt = tmp_path / 'wt'
    git('worktree', 'add', '-q', str(wt), 'feature', cwd=hooked)
    assert 'feature memory' in mem(wt, 'notes.md').read_text()
    assert 'feature memory' not in mem(hooked, 'notes.md').read_text()


def test_without_a_reflog_the_memory_base_names_the_old_branch(hooked: Path) -> None:
    git('config', 'core.logAllRefUpdates', 'false', cwd=hooked)
    (hooked / '.git' / 'logs' / 'HEAD').unlink()
    git('branch', 'feature', cwd=hooked)
    mem(hooked, 'notes.md').write_text('- unsaved on main\n')
    switch(hooked, 'feature')
    assert show(hooked, MAIN, 'notes.md') == '- unsaved on main\n'
    assert tip(hooked, FEATURE) == tip(hooked)


def test_merge_command_renumbers_a_fragment_id_used_on_both_sides(memrepo: Path) -> None:
    git('update-ref', FEATURE, tip(memrepo) or '', cwd=memrepo)
    ok('fragment', 'add', '--goal', 'ours', '--next', 'n', cwd=memrepo)
    _write_on_ref(
        memrepo, FEATURE, 'fragments.jsonl',
        '{"id": "A-001", "at": "2099-01-01T00:00:00Z", "goal": "theirs", '
        '"next": "n", "refs": []}\n',
    )
    out = ok('merge', 'feature', cwd=memrepo)
    assert 'note: fragments.jsonl: two different fragments were both A-001; ' \
        'the later one is now A-002' in out
    lines = mem(memrepo, 'fragments.jsonl').read_text().splitlines()
    assert [x.split('"goal": ')[1].split(',')[0] for x in lines] == ['"ours"', '"theirs"']
    assert 'two different fragments' in message(memrepo)


def test_merge_command_needs_a_branch(memrepo: Path) -> None:
    assert 'merge needs a branch' in bad('merge', ' ', cwd=memrepo)


def test_on_merge_after_a_code_conflict_was_committed(hooked: Path) -> None:
    # git runs no post-merge when the code merge stopped on a conflict; the
    # merge commit's second parent still names the branch
    switch(hooked, '-b', 'feature')
    (hooked / 'README').write_text('feature\n')
    git('commit', '-q', '-am', 'feature readme', cwd=hooked)
    ok('note', 'feature note', cwd=hooked)
    switch(hooked, 'main')
    (hooked / 'README').write_text('main\n')
    git('commit', '-q', '-am', 'main readme', cwd=hooked)
    ok('note', 'main note', cwd=hooked)
    proc = subprocess.run(('git', 'merge', 'feature'), cwd=hooked, capture_output=True, text=True)
    assert proc.returncode == 1
    (hooked / 'README').write_text('both\n')
    git('commit', '-q', '-am', 'merged', cwd=hooked)
    assert 'feature note' not in mem(hooked, 'notes.md').read_text()
    out = ok('hook', 'post-merge', '0', cwd=hooked)
    assert 'agitmem: merged the memory of feature' in out
    assert 'feature note' in mem(hooked, 'notes.md').read_text()
