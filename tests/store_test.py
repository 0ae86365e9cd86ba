"""store: memory objects a clone lacks.

A partial clone (`git clone --filter=...`) has the memory commits a fetch
brought but not their trees or blobs: agitmem fetches them from the
promisor remote (bounded), or says in one line why it cannot."""
from __future__ import annotations

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
