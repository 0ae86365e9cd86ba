"""Memory refs a remote chooses the names of: names git accepts that read
as options (`--output=FILE`, `-h`) reach no git or agitmem command line as
one, through fetch, pull, prune, merge and doctor; what agitmem prints
about them shows them as names."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import ok

HOSTILE = ('--output=pwned', '-h', '--upload-pack=touch_pwned')


def _cloned(memrepo: Path, tmp_path: Path, *, unmerged: bool) -> Path:
    """A clone of memrepo's remote, which also holds memory refs named
    like options (pushed by someone else): main's memory, or memory main's
    does not hold (a note more)."""
    bare = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(bare), cwd=tmp_path)
    git('remote', 'add', 'origin', str(bare), cwd=memrepo)
    ok('push', cwd=memrepo)
    git('push', '-q', 'origin', 'HEAD:refs/heads/main', cwd=memrepo)
    git('symbolic-ref', 'HEAD', 'refs/heads/main', cwd=bare)
    if unmerged:
        ok('note', 'the cache key is the tip', cwd=memrepo)
    tip = git('rev-parse', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    for name in HOSTILE:
        git('push', '-q', 'origin', f'{tip}:refs/agitmem/heads/{name}', cwd=memrepo)
    path = tmp_path / 'clone'
    git('clone', '-q', str(bare), str(path), cwd=tmp_path)
    ok('init', cwd=path)
    return path


@pytest.fixture
def clone(memrepo: Path, tmp_path: Path) -> Path:
    return _cloned(memrepo, tmp_path, unmerged=False)


@pytest.mark.parametrize('args', [
    ('fetch',), ('pull',), ('prune',), ('status',), ('doctor',),
    ('merge', 'origin/--output=pwned'), ('recall', '--all-branches', 'x'),
])
def test_option_like_memory_ref_names(clone: Path, args: tuple[str, ...]) -> None:
    ok('fetch', cwd=clone)
    for name in HOSTILE:
        assert git('rev-parse', '-q', '--verify', f'refs/agitmem/remotes/origin/{name}', cwd=clone)
    proc = agitmem(*args, cwd=clone)
    assert 'Traceback' not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), (proc.stdout, proc.stderr)
    for where in (clone, clone.parent, clone / '.git'):
        assert not (where / 'pwned').exists(), args


@pytest.fixture
def kept(memrepo: Path, tmp_path: Path) -> Path:
    return _cloned(memrepo, tmp_path, unmerged=True)


def test_prune_advises_a_merge_that_works(kept: Path) -> None:
    """prune keeps memory nobody merged and says how to merge it: for a
    branch named like an option the advised command put the name where
    argparse took it as one (`agitmem merge -h` printed merge's help,
    `agitmem merge --output=x` failed); the advice now runs as written."""
    said = ok('prune', cwd=kept)
    advised = re.findall(r'\(`(agitmem merge [^`]*)` on main merges it\)', said)
    assert len(advised) == len(HOSTILE), said
    for command in advised:
        argv = shlex.split(command)
        assert argv[:2] == ['agitmem', 'merge']
        proc = agitmem(*argv[1:], cwd=kept)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
        assert 'usage' not in proc.stdout + proc.stderr
    notes = git('show', 'refs/agitmem/heads/main:notes.md', cwd=kept)
    assert 'the cache key is the tip' in notes
    for where in (kept, kept.parent, kept / '.git'):
        assert not (where / 'pwned').exists()
