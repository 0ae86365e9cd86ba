"""Memory refs a remote chooses the names of: names git accepts that read
as options (`--output=FILE`, `-h`) reach no git or agitmem command line as
one, through fetch, pull, prune, merge and doctor; what agitmem prints
about them shows them as names."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import ok

HOSTILE = ('--output=pwned', '-h', '--upload-pack=touch_pwned')


@pytest.fixture
def clone(memrepo: Path, tmp_path: Path) -> Path:
    """A clone of memrepo's remote, which also holds memory refs named
    like options (pushed by someone else)."""
    bare = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(bare), cwd=tmp_path)
    git('remote', 'add', 'origin', str(bare), cwd=memrepo)
    ok('push', cwd=memrepo)
    git('push', '-q', 'origin', 'HEAD:refs/heads/main', cwd=memrepo)
    tip = git('rev-parse', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    for name in HOSTILE:
        git('push', '-q', 'origin', f'{tip}:refs/agitmem/heads/{name}', cwd=memrepo)
    path = tmp_path / 'clone'
    git('clone', '-q', str(bare), str(path), cwd=tmp_path)
    ok('init', cwd=path)
    return path


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
