from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
ORIGIN_MAIN = 'refs/agitmem/remotes/origin/main'


@pytest.fixture
def remote(repo: Path, tmp_path: Path) -> Path:
    """A bare repository holding repo's code (no memory yet)."""
    bare = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(bare), cwd=tmp_path)
    git('push', '-q', str(bare), 'main', cwd=repo)
    return bare


def clone(remote: Path, name: str) -> Path:
    path = remote.parent / name
    git('clone', '-q', str(remote), str(path), cwd=remote.parent)
    return path


def _hook(repo: Path, event: str) -> None:
    """A git hook shim calling `agitmem hook <event>`."""
    exe = shutil.which('agitmem', path=os.path.dirname(sys.executable))
    hook = repo / '.git' / 'hooks' / event
    hook.write_text(
        f'#!/bin/sh\nexec {exe or sys.executable + " -m agitmem"} hook {event} "$@"\n',
    )
    hook.chmod(0o755)


def _fragments(text: str) -> list[str]:
    return [json.loads(x)['id'] for x in text.splitlines() if x.strip()]


def _notes(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.startswith('- ')]


@pytest.fixture
def clones(remote: Path) -> tuple[Path, Path]:
    """Clone a initialised and pushed; clone b then cloned and initialised
    from the remote's memory."""
    a = clone(remote, 'a')
    ok('init', cwd=a)
    ok('note', 'shared start', cwd=a)
    ok('push', cwd=a)
    b = clone(remote, 'b')
    out = ok('init', cwd=b)
    assert 'fetched the memory of 1 branch(es) from origin' in out
    return a, b


def test_init_in_a_fresh_clone_checks_out_the_remote_memory(
        clones: tuple[Path, Path], remote: Path,
) -> None:
    a, b = clones
    assert tip(b) == tip(a) == tip(remote)
    assert tip(b, ORIGIN_MAIN) == tip(a)
    assert mem(b, 'notes.md').read_text() == mem(a, 'notes.md').read_text()
    assert 'no unsaved changes' in ok('status', cwd=b)


def test_init_without_remote_memory_uses_templates(remote: Path) -> None:
    a = clone(remote, 'a')
    out = ok('init', cwd=a)
    assert 'fetched' not in out
    assert tip(a, ORIGIN_MAIN) is None
    assert tip(a) is not None


def test_init_offline_still_works(repo: Path, tmp_path: Path) -> None:
    git('remote', 'add', 'origin', str(tmp_path / 'gone.git'), cwd=repo)
    proc = agitmem('init', cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert 'agitmem: no memory fetched from origin' in proc.stderr
    assert tip(repo) is not None


def test_both_agents_push_loser_merges_and_nothing_is_lost(
        clones: tuple[Path, Path], remote: Path,
) -> None:
    a, b = clones
    for who, path in (('A', a), ('B', b)):
        env = {'AGITMEM_AGENT': who}
        for i in range(3):
            ok('fragment', 'add', '--goal', f'{who} goal {i}', '--next', 'n',
               cwd=path, env=env)
            ok('note', f'{who} note {i}', cwd=path, env=env)
    a_tip = tip(a)
    ok('push', cwd=a)
    assert tip(remote) == a_tip

    proc = agitmem('push', cwd=b)
    assert proc.returncode == 0, proc.stderr
    assert 'merged the memory of origin/main' in proc.stdout
    assert 'pushed memory to origin' in proc.stdout
    remote_tip = tip(remote)
    assert remote_tip == tip(b)
    # never forced: A's push is in the remote's history
    git('merge-base', '--is-ancestor', a_tip or '', remote_tip or '', cwd=b)
    parents = git('log', '-1', '--format=%P', MAIN, cwd=b).split()
    assert parents[1] == a_tip

    fragments = _fragments(git('show', f'{remote_tip}:fragments.jsonl', cwd=b))
    assert sorted(fragments) == [
        'A-001', 'A-002', 'A-003', 'B-001', 'B-002', 'B-003',
    ]
    notes = _notes(git('show', f'{remote_tip}:notes.md', cwd=b))
    for who in 'AB':
        for i in range(3):
            assert sum(n.endswith(f' {who} note {i}') for n in notes) == 1
    assert sum(n.endswith(' shared start') for n in notes) == 1
    assert mem(b, 'notes.md').read_text() == git('show', f'{remote_tip}:notes.md', cwd=b)

    out = ok('pull', cwd=a)
    assert 'fast-forward' in out
    assert tip(a) == remote_tip
    assert _fragments(mem(a, 'fragments.jsonl').read_text()) == fragments


def test_pull_merges_tattoo_edits_to_different_lines(clones: tuple[Path, Path]) -> None:
    a, b = clones
    tattoo_a, tattoo_b = mem(a, 'tattoo.md'), mem(b, 'tattoo.md')
    tattoo_a.write_text(tattoo_a.read_text().replace('- Run the tests', '- Always run the tests'))
    ok('save', cwd=a)
    ok('push', cwd=a)
    tattoo_b.write_text(tattoo_b.read_text().replace('- Never commit', '- Never log or commit'))
    ok('save', cwd=b)
    out = ok('pull', cwd=b)
    assert 'merged the memory of origin/main' in out
    text = tattoo_b.read_text()
    assert '- Always run the tests' in text
    assert '- Never log or commit' in text
    assert '<<<<<<<' not in text


def test_pull_same_tattoo_line_conflicts_and_blocks_check(clones: tuple[Path, Path]) -> None:
    a, b = clones
    tattoo_a, tattoo_b = mem(a, 'tattoo.md'), mem(b, 'tattoo.md')
    tattoo_a.write_text(tattoo_a.read_text().replace('- Never commit', '- A: never commit'))
    ok('save', cwd=a)
    ok('push', cwd=a)
    tattoo_b.write_text(tattoo_b.read_text().replace('- Never commit', '- B: never commit'))
    ok('save', cwd=b)
    proc = agitmem('pull', cwd=b)
    assert proc.returncode == 1, proc.stderr
    assert 'CONFLICT tattoo.md' in proc.stdout
    text = tattoo_b.read_text()
    assert '<<<<<<< main\n- B: never commit' in text
    assert '=======\n- A: never commit' in text
    assert '>>>>>>> origin/main\n' in text
    assert (b / '.git' / 'agitmem' / 'conflicts').read_text().startswith('tattoo.md: ')
    check = agitmem('check', cwd=b)
    assert check.returncode == 1
    assert 'merge-conflict' in check.stdout


def test_push_that_loses_with_a_conflict_is_not_pushed(
        clones: tuple[Path, Path], remote: Path,
) -> None:
    a, b = clones
    mem(a, 'snapshot.md').write_text('## Goal\nA goal\n')
    ok('save', cwd=a)
    ok('push', cwd=a)
    mem(b, 'snapshot.md').write_text('## Goal\nB goal\n')
    ok('save', cwd=b)
    before = tip(remote)
    line = bad('push', cwd=b)
    assert 'conflicts with origin/main' in line
    assert tip(remote) == before
    assert '<<<<<<<' in mem(b, 'snapshot.md').read_text()


def test_fetch_into_remote_tracking_refs(clones: tuple[Path, Path]) -> None:
    a, b = clones
    git('checkout', '-q', '-b', 'feature', cwd=a)
    ok('note', 'feature note', cwd=a)
    ok('push', cwd=a)
    out = ok('fetch', cwd=b)
    assert 'refs/agitmem/remotes/origin/feature' in out
    assert tip(b, 'refs/agitmem/remotes/origin/feature') == tip(a, 'refs/agitmem/heads/feature')
    assert tip(b, 'refs/agitmem/heads/feature') is None
    assert ok('fetch', 'origin', cwd=b).startswith('memory refs up to date')


def test_pre_push_hook_pushes_memory_along(clones: tuple[Path, Path], remote: Path) -> None:
    a, _ = clones
    _hook(a, 'pre-push')
    ok('note', 'pushed with the code', cwd=a)
    (a / 'new.txt').write_text('x\n')
    git('add', 'new.txt', cwd=a)
    git('commit', '-q', '-m', 'code', cwd=a)
    proc = subprocess.run(('git', 'push', '-q', 'origin', 'main'), cwd=a,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert tip(remote) == tip(a)
    assert tip(remote, 'refs/heads/main') == tip(a, 'refs/heads/main')


def test_push_uses_the_upstream_remote(clones: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = clones
    other = tmp_path / 'other.git'
    git('init', '-q', '--bare', str(other), cwd=tmp_path)
    git('remote', 'add', 'other', str(other), cwd=a)
    git('push', '-q', '-u', 'other', 'main', cwd=a)
    ok('note', 'to other', cwd=a)
    ok('push', cwd=a)
    assert tip(other) == tip(a)
    assert ok('push', cwd=a).startswith('memory up to date on other')


def test_pull_without_remote_memory(remote: Path) -> None:
    a = clone(remote, 'a')
    ok('init', cwd=a)
    assert 'has no memory for main' in ok('pull', cwd=a)


@pytest.mark.parametrize('cmd', ('push', 'fetch', 'pull'))
def test_unknown_remote_is_refused(clones: tuple[Path, Path], cmd: str) -> None:
    a, _ = clones
    before = tip(a)
    assert 'no remote named "nowhere"' in bad(cmd, 'nowhere', cwd=a)
    assert tip(a) == before


def test_pull_detached_is_refused(clones: tuple[Path, Path]) -> None:
    a, _ = clones
    git('checkout', '-q', '--detach', cwd=a)
    assert 'not one' in bad('pull', cwd=a)


def test_unreachable_remote_is_one_line(clones: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = clones
    git('remote', 'set-url', 'origin', str(tmp_path / 'gone.git'), cwd=a)
    assert 'git fetch origin failed' in bad('fetch', cwd=a)
    assert 'failed' in bad('push', cwd=a, code=1)  # a push that failed: exit 1


def test_push_merges_other_branches_that_lost_the_race(
        clones: tuple[Path, Path], remote: Path,
) -> None:
    a, b = clones
    for path in (a, b):
        git('branch', 'side', cwd=path)
        git('update-ref', 'refs/agitmem/heads/side', tip(path) or '', cwd=path)
    ok('push', cwd=a)
    # a and b both move `side` (not checked out) with different notes,
    # and `b` also changes `other` so that it conflicts
    for path, who in ((a, 'A'), (b, 'B')):
        git('checkout', '-q', 'side', cwd=path)
        ok('note', f'{who} on side', cwd=path)
        git('checkout', '-q', 'main', cwd=path)
        ok('init', cwd=path)
    ok('push', cwd=a)
    proc = agitmem('push', cwd=b)
    assert proc.returncode == 0, proc.stderr
    assert 'agitmem: merged origin/side into refs/agitmem/heads/side (merged)' in proc.stdout
    notes = git('show', 'refs/agitmem/heads/side:notes.md', cwd=remote)
    assert 'A on side' in notes
    assert 'B on side' in notes


def test_push_leaves_a_conflicting_other_branch_alone(
        clones: tuple[Path, Path], remote: Path,
) -> None:
    a, b = clones
    for path in (a, b):
        git('update-ref', 'refs/agitmem/heads/side', tip(path) or '', cwd=path)
    ok('push', cwd=a)
    for path, who in ((a, 'A'), (b, 'B')):
        env = {'GIT_INDEX_FILE': str(path / '.git' / 'tmp-index')}
        git('read-tree', 'refs/agitmem/heads/side', cwd=path, env=env)
        blob = subprocess.run(
            ('git', 'hash-object', '-w', '--stdin'), cwd=path, input=f'## Goal\n{who}\n',
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        git('update-index', '--cacheinfo', f'100644,{blob},snapshot.md', cwd=path, env=env)
        tree = git('write-tree', cwd=path, env=env).strip()
        new = git('commit-tree', tree, '-p', 'refs/agitmem/heads/side', '-m',
                  'save: x\n\nAgitmem-Event: save\n', cwd=path).strip()
        git('update-ref', 'refs/agitmem/heads/side', new, cwd=path)
    ok('push', cwd=a)
    remote_side = tip(remote, 'refs/agitmem/heads/side')
    ok('note', 'main still goes', cwd=b)
    proc = agitmem('push', cwd=b)
    assert proc.returncode == 0, proc.stderr
    assert 'the memory of side conflicts with origin/side; not pushed' in proc.stderr
    assert tip(remote, 'refs/agitmem/heads/side') == remote_side
    assert tip(remote) == tip(b)


def test_git_pull_merges_the_remote_memory(clones: tuple[Path, Path]) -> None:
    a, b = clones
    _hook(b, 'post-merge')
    ok('note', 'from a', cwd=a)
    (a / 'code.txt').write_text('x\n')
    git('add', 'code.txt', cwd=a)
    git('commit', '-q', '-m', 'code', cwd=a)
    git('push', '-q', 'origin', 'main', cwd=a)
    ok('push', cwd=a)
    ok('note', 'from b', cwd=b)
    proc = subprocess.run(('git', 'pull', '-q', '--no-rebase', 'origin', 'main'), cwd=b,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    notes = mem(b, 'notes.md').read_text()
    assert 'from a' in notes
    assert 'from b' in notes
    assert tip(b, ORIGIN_MAIN) == tip(a)


def test_memory_with_unresolved_conflicts_is_not_pushed(
        clones: tuple[Path, Path], remote: Path,
) -> None:
    a, b = clones
    for path, who in ((a, 'A'), (b, 'B')):
        mem(path, 'snapshot.md').write_text(f'## Goal\n{who} goal\n')
        ok('save', cwd=path)
    ok('push', cwd=a)
    assert agitmem('pull', cwd=b).returncode == 1
    git('update-ref', 'refs/agitmem/heads/other', tip(a) or '', cwd=b)
    before = tip(remote)
    proc = agitmem('push', cwd=b)
    assert proc.returncode == 0, proc.stderr
    assert 'refs/agitmem/heads/main not pushed: it has unresolved merge conflicts' in proc.stderr
    assert tip(remote) == before
    assert tip(remote, 'refs/agitmem/heads/other') == tip(a)
    mem(b, 'snapshot.md').write_text('## Goal\nA and B goal\n')
    ok('save', cwd=b)
    ok('push', cwd=b)
    assert tip(remote) == tip(b)


def test_push_refuses_memory_with_credentials(clones: tuple[Path, Path], remote: Path) -> None:
    a, _ = clones
    env = {'GIT_INDEX_FILE': str(a / '.git' / 'tmp-index')}
    git('read-tree', MAIN, cwd=a, env=env)
    blob = subprocess.run(
        ('git', 'hash-object', '-w', '--stdin'), cwd=a,
        input='- key AKIA' + 'Z7QK4RMPX2WN5TLB\n', capture_output=True, text=True, check=True,
    ).stdout.strip()
    git('update-index', '--cacheinfo', f'100644,{blob},notes.md', cwd=a, env=env)
    tree = git('write-tree', cwd=a, env=env).strip()
    new = git('commit-tree', tree, '-p', MAIN, '-m', 'save: x\n\nAgitmem-Event: save\n',
              cwd=a).strip()
    git('update-ref', MAIN, new, cwd=a)
    before = tip(remote)
    proc = agitmem('push', cwd=a)
    assert proc.returncode == 1
    assert 'secrets' in proc.stdout
    assert 'push refused' in proc.stderr
    assert tip(remote) == before
