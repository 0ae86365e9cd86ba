"""store: memory objects a clone lacks.

A partial clone (`git clone --filter=...`) has the memory commits a fetch
brought but not their trees or blobs: agitmem fetches them from the
promisor remote (bounded), or says in one line why it cannot."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing import gitserver
from testing.util import bad
from testing.util import git
from testing.util import ok
from testing.util import run

MAIN = 'refs/agitmem/heads/main'
BOUND = 2
FAST = {'AGITMEM_NETWORK_TIMEOUT': str(BOUND)}


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, Path]:
    """(a bare remote serving filtered clones, the clone that seeded its
    code and memory)"""
    bare, seed = gitserver.seeded(tmp_path)
    git('config', 'uploadpack.allowFilter', 'true', cwd=bare)
    ok('init', cwd=seed)
    ok('note', 'the seed note', cwd=seed)
    ok('state', 'set', 'current_goal=ship it', cwd=seed)
    ok('archive', cwd=seed)  # an archive: a subtree in the memory tree
    ok('note', 'after the archive', cwd=seed)
    ok('push', cwd=seed)
    return bare, seed


def _clone(bare: Path, path: Path, how: str) -> Path:
    flag = '--depth=1' if how == 'shallow' else f'--filter={how}'
    git('clone', '-q', flag, f'file://{bare}', str(path), cwd=path.parent)
    return path


def _missing(path: Path) -> list[str]:
    out = git('rev-list', '--objects', '--missing=print', '--glob=refs/agitmem/*', cwd=path)
    return [x for x in out.splitlines() if x.startswith('?')]


@pytest.mark.parametrize('how', ['blob:none', 'tree:0', 'shallow'])
def test_every_command_works_in_a_partial_or_shallow_clone(
        origin: tuple[Path, Path], tmp_path: Path, how: str,
) -> None:
    bare, _ = origin
    b = _clone(bare, tmp_path / 'b', how)
    assert 'fetched the memory of 1 branch(es) from origin' in ok('init', cwd=b)
    assert 'after the archive' in (b / '.agent' / 'memory' / 'notes.md').read_text()
    assert _missing(b) == []
    assert 'the seed note' in ok('show', '@~1:notes.md', cwd=b)
    for cmd in (['load'], ['status'], ['log'], ['check'], ['save'], ['fetch'], ['pull']):
        ok(*cmd, cwd=b)
    ok('note', 'from the partial clone', cwd=b)
    assert 'pushed memory to origin' in ok('push', cwd=b)
    assert 'from the partial clone' in git('show', f'{MAIN}:notes.md', cwd=bare)


@pytest.fixture
def filtered(origin: tuple[Path, Path], tmp_path: Path) -> Path:
    """A blob:none clone, initialised, whose plain `git fetch` (its memory
    refspec, with the clone's filter) then brought a memory commit
    without its blobs."""
    bare, seed = origin
    b = _clone(bare, tmp_path / 'b', 'blob:none')
    ok('init', cwd=b)
    ok('note', 'pushed after the clone', cwd=seed)
    ok('push', cwd=seed)
    git('fetch', '-q', 'origin', cwd=b)
    assert _missing(b) != []
    return b


def test_objects_a_filtered_git_fetch_left_out_are_fetched_when_read(filtered: Path) -> None:
    assert 'fast-forward' in ok('merge', 'origin/main', cwd=filtered)
    assert 'pushed after the clone' in (filtered / '.agent' / 'memory' / 'notes.md').read_text()


def test_agitmem_fetch_fills_in_what_a_filtered_git_fetch_left_out(filtered: Path) -> None:
    ok('fetch', cwd=filtered)
    assert _missing(filtered) == []


@pytest.fixture
def silent() -> Iterator[str]:
    with gitserver.silent() as url:
        yield url + 'remote.git'


def test_a_promisor_that_never_answers_is_one_line(filtered: Path, silent: str) -> None:
    git('remote', 'set-url', 'origin', silent, cwd=filtered)
    line = bad('merge', 'origin/main', cwd=filtered, env=FAST)
    assert line.startswith('agitmem: ')
    assert line.endswith(
        f'memory object(s) are not in this partial clone and origin did not '
        f'send them (no answer in {BOUND}s): run it again once origin answers',
    )
    # nothing moved
    assert 'pushed after the clone' not in (filtered / '.agent' / 'memory' / 'notes.md').read_text()


def test_a_missing_object_outside_a_partial_clone_is_one_line(tmp_path: Path) -> None:
    repo = tmp_path / 'r'
    repo.mkdir()
    git('init', '-q', '-b', 'main', cwd=repo)
    ok('init', cwd=repo)
    ok('note', 'a note', cwd=repo)
    blob = git('rev-parse', f'{MAIN}:notes.md', cwd=repo).strip()
    (repo / '.git' / 'objects' / blob[:2] / blob[2:]).unlink()
    line = bad('show', ':notes.md', cwd=repo)
    assert line == (
        f'agitmem: memory object {blob} is missing from the repository (not a '
        f'partial clone: `git fsck` says more)'
    )
    assert run('git', 'cat-file', '-e', blob, cwd=repo).returncode != 0


# -- the plumbing save (issue 23) ---------------------------------------------
# `state set`, `note`, `verify` and `save` write a commit with git's
# plumbing when the ref's tip is this worktree's memory base; pygit2 writes
# the rest.  The same change, written each way into two copies of one
# repository, gives the same tree and (with the dates fixed) the same commit.

_WRITE = '''
import json, sys
from agitmem import store
from agitmem.porcelain import context, write
how, force = sys.argv[1], sys.argv[2] == 'force'
ctx = context.get()
with store.locked(ctx.repo):
    args = dict(event='save', files=None, body='', parsed=None, force=force)
    if how == 'plain':
        done = write._save_plainly(ctx, None, **args)
    else:
        done = write._save(ctx, None, parents=None, worktree=True, **args)
print(json.dumps([done is not None and done[0], done is not None and done[1], 'pygit2' in sys.modules]))
'''
_DATES = {
    'GIT_AUTHOR_DATE': '1700000000 +0130', 'GIT_COMMITTER_DATE': '1700000100 -0700',
    'GIT_AUTHOR_NAME': 'A U Thor', 'GIT_AUTHOR_EMAIL': 'author@example.com',
    'GIT_COMMITTER_NAME': 'C O Mitter', 'GIT_COMMITTER_EMAIL': 'committer@example.com',
}


def _edit_notes(memory: Path) -> None:
    with (memory / 'notes.md').open('a') as f:
        f.write('- a note written by hand\n')


def _new_month(memory: Path) -> None:
    # a new file two directories down: archive/ and archive/2031/ change,
    # archive/2031/01/ is new, the month already there is kept as it was
    (memory / 'archive' / '2031' / '01').mkdir(parents=True)
    (memory / 'archive' / '2031' / '01' / '01-000000-later.md').write_text('# later\n')


def _drop_archive(memory: Path) -> None:
    import shutil
    shutil.rmtree(memory / 'archive')


def _nothing(memory: Path) -> None:
    pass


@pytest.mark.parametrize('change,force', [
    (_edit_notes, False), (_new_month, False), (_drop_archive, False),
    (_nothing, False), (_nothing, True),
])
def test_plumbing_save_writes_what_pygit2_writes(
        tmp_path: Path, change: Callable[[Path], None], force: bool,
) -> None:
    import shutil
    first = tmp_path / 'pygit2'
    first.mkdir()
    git('init', '-q', '-b', 'main', cwd=first)
    git('commit', '-q', '--allow-empty', '-m', 'c', cwd=first)
    ok('init', cwd=first)
    ok('state', 'set', 'current_goal=ship it', cwd=first)
    ok('archive', cwd=first)  # archive/YYYY/MM/: subtrees
    ok('note', 'after the archive', cwd=first)
    second = tmp_path / 'plain'
    shutil.copytree(first, second, symlinks=True)
    got = {}
    for repo, how in ((first, 'pygit2'), (second, 'plain')):
        change(repo / '.agent' / 'memory')
        proc = run(sys.executable, '-c', _WRITE, how, 'force' if force else '', cwd=repo, env=_DATES)
        assert proc.returncode == 0, proc.stderr
        oid, subject, imported = json.loads(proc.stdout)
        assert imported == (how == 'pygit2')  # the plain path ran, without pygit2
        listing = git('ls-tree', '-r', '-t', MAIN, cwd=repo)
        reflog = git('reflog', 'show', '-1', '--format=%gn %ge %gs', MAIN, cwd=repo)
        got[how] = (oid, subject, git('rev-parse', MAIN, f'{MAIN}^{{tree}}', cwd=repo), listing, reflog)
        assert run('git', 'fsck', '--strict', cwd=repo).returncode == 0
    assert got['plain'] == got['pygit2']
    oid, subject, tips, _, _ = got['plain']
    if change is _nothing and not force:
        assert oid is None  # nothing to commit, either way
    else:
        assert tips.split()[0] == oid
        assert subject.startswith('save: ' if change is not _nothing else 'save: no change')


_BEGUN_THEN_MOVED = '''
import json, subprocess, sys
from agitmem import store
from agitmem.porcelain import context, state
ctx = context.get()
# begun as state set begins it, while its `git status` runs
store.begin_tip(ctx.repo, ctx.ref)
subprocess.run(json.loads(sys.argv[1]), check=True)  # another writer, meanwhile
state.update(ctx, {'next_intent': 'written after'}, event='state', save=True)
'''


@pytest.mark.parametrize('meanwhile', ('note', 'update-ref'))
def test_a_tip_begun_ahead_that_moved_is_never_the_base(memrepo: Path, meanwhile: str) -> None:
    """state set and verify read the memory ref's tip while `git status`
    runs, before the writers' lock: a commit another writer made in the
    meantime (through agitmem, or by `git update-ref` alone) is kept, an
    ancestor of the save's."""
    from testing.util import agitmem_argv
    before = git('rev-parse', MAIN, cwd=memrepo).strip()
    if meanwhile == 'note':
        other = [*agitmem_argv(), 'note', 'written meanwhile']
    else:
        tree = git('rev-parse', f'{MAIN}^{{tree}}', cwd=memrepo).strip()
        made = git('commit-tree', tree, '-p', before, '-m', 'meanwhile', cwd=memrepo).strip()
        other = ['git', 'update-ref', MAIN, made, before]
    proc = run(sys.executable, '-c', _BEGUN_THEN_MOVED, json.dumps(other), cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    tip = git('rev-parse', MAIN, cwd=memrepo).strip()
    moved = git('rev-parse', f'{tip}^', cwd=memrepo).strip() if meanwhile == 'note' else None
    assert tip != before
    for ancestor in filter(None, (before, moved)):
        assert run('git', 'merge-base', '--is-ancestor', ancestor, tip, cwd=memrepo).returncode == 0
    state = json.loads(git('show', f'{tip}:state.json', cwd=memrepo))
    assert state['next_intent'] == 'written after'
    if meanwhile == 'note':
        assert 'written meanwhile' in git('show', f'{tip}:notes.md', cwd=memrepo)
    else:
        assert run('git', 'merge-base', '--is-ancestor', made, tip, cwd=memrepo).returncode == 0
    assert run('git', 'fsck', '--strict', cwd=memrepo).returncode == 0


def test_a_tip_begun_ahead_then_deleted_is_created_again(memrepo: Path) -> None:
    """The memory ref deleted while state set's `git status` ran (moved
    aside, a branch renamed): git refused the compare-and-swap as a ref it
    cannot resolve, not one that moved, and state set failed (exit 2,
    state.json put back) where it saved before the tip was read ahead."""
    before = git('rev-parse', MAIN, cwd=memrepo).strip()
    proc = run(
        sys.executable, '-c', _BEGUN_THEN_MOVED, json.dumps(['git', 'update-ref', '-d', MAIN]), cwd=memrepo,
    )
    assert proc.returncode == 0, proc.stderr
    tip = git('rev-parse', MAIN, cwd=memrepo).strip()
    assert git('rev-parse', f'{tip}^', cwd=memrepo).strip() == before
    assert json.loads(git('show', f'{tip}:state.json', cwd=memrepo))['next_intent'] == 'written after'


def test_a_tip_begun_ahead_and_not_taken_is_dropped(memrepo: Path) -> None:
    """A write that begins its reads ahead and fails (a long-running MCP
    server's state set whose tree cannot be computed) leaves no entry and
    no git process behind for a later save to pick up."""
    code = '''
import json, os
from agitmem import store
from agitmem.porcelain import context, write
ctx = context.get()
write.begin_save(ctx)
pid = store._BEGUN[(ctx.repo.top, ctx.ref)][1].pid
write.end_save(ctx)
try:
    os.waitpid(pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps([(ctx.repo.top, ctx.ref) in store._BEGUN, reaped]))
'''
    proc = run(sys.executable, '-c', code, cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [False, True]


# -- checkout -------------------------------------------------------------------

def _checkout(repo: Path, files: dict[str, bytes], prelude: str = '') -> object:
    """store.checkout of `files` (each named in `only`) in a process of its
    own, after `prelude`: the paths it changed, or the one line it
    refused with."""
    code = f'''
import json, os
from agitmem import store
from agitmem.porcelain import context
ctx = context.get()
{prelude}
files = {{k: bytes.fromhex(v) for k, v in json.loads({json.dumps({k: v.hex() for k, v in files.items()})!r}).items()}}
try:
    print(json.dumps(store.checkout(ctx.repo, files, only=set(files))))
except (OSError, store.AgitmemError) as e:
    print(json.dumps(str(e)))
'''
    proc = run(sys.executable, '-c', code, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(sys.platform == 'win32', reason='symlinks need a privilege there')
@pytest.mark.parametrize('link', ['state.json', 'OUTSIDE', '/dev/zero'])
def test_checkout_replaces_a_link_in_a_files_place(memrepo: Path, link: str) -> None:
    """A link where checkout writes a memory file (put there between the
    read that refuses it and the write: another agent, a user's editor) is
    replaced, never written through or read: one to state.json took the
    notes, one outside refused the whole rollback, one to /dev/zero was
    read without end."""
    outside = memrepo.parent / 'outside.txt'
    outside.write_text('not memory\n')
    memory = memrepo / '.agent' / 'memory'
    state = (memory / 'state.json').read_bytes()
    (memory / 'notes.md').unlink()
    (memory / 'notes.md').symlink_to(str(outside) if link == 'OUTSIDE' else link)
    files = {'notes.md': b'- from the snapshot\n', 'state.json': state}
    assert _checkout(memrepo, files) == ['notes.md']
    assert not (memory / 'notes.md').is_symlink()
    assert (memory / 'notes.md').read_bytes() == b'- from the snapshot\n'
    assert (memory / 'state.json').read_bytes() == state
    assert outside.read_text() == 'not memory\n'


@pytest.mark.skipif(sys.platform == 'win32', reason='symlinks need a privilege there')
@pytest.mark.parametrize('where', ['OUTSIDE', 'MEMORY'])
def test_checkout_never_writes_through_a_directory_swapped_for_a_link(memrepo: Path, where: str) -> None:
    """A directory a memory file is written into, swapped for a link after
    checkout looked at it (a race: another agent, a user's `mv`, here done
    where checkout asks whether the file already holds its bytes): the
    write follows no link; one outside got the memory file, one to
    .agent/memory itself wrote archive/2026/state.json over state.json.
    It is refused, and nothing outside changes."""
    outside = memrepo.parent / f'outside-{memrepo.name}'
    outside.mkdir()
    memory = memrepo / '.agent' / 'memory'
    state = (memory / 'state.json').read_bytes()
    (memory / 'archive' / '2026').mkdir(parents=True)
    prelude = f'''
holds = store._holds
def racing(target, data):
    at = {str(memory / 'archive' / '2026')!r}
    if os.path.isdir(at) and not os.path.islink(at):
        os.rmdir(at)
        os.symlink({str(outside) if where == 'OUTSIDE' else '..'!r}, at)
    return holds(target, data)
store._holds = racing
'''
    said = _checkout(memrepo, {'archive/2026/state.json': b'{"swapped": true}\n'}, prelude)
    assert list(outside.iterdir()) == []
    assert (memory / 'state.json').read_bytes() == state
    assert isinstance(said, str) and 'link' in said, said


@pytest.mark.skipif(sys.platform == 'win32', reason='symlinks need a privilege there')
def test_checkout_never_writes_through_a_link_in_a_directorys_place(memrepo: Path) -> None:
    """A dot-named directory (which no save reads, so no save refuses a link
    there) that is a link to .agent/memory itself: a memory commit's
    `.d/state.json` (a remote's commit may hold one) was written over
    state.json.  A link in a directory's place is refused, as one in
    .agent/memory's own place is."""
    memory = memrepo / '.agent' / 'memory'
    state = (memory / 'state.json').read_bytes()
    (memory / '.d').symlink_to('.')
    said = _checkout(memrepo, {'.d/state.json': b'{"through": "a link"}\n'})
    assert (memory / 'state.json').read_bytes() == state
    assert isinstance(said, str) and 'link' in said, said
