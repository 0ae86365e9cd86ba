"""A teammate raised max_file_kb and pushed memory with a file over ours:
every way it could reach this clone's .agent/memory (pull, `git pull`
through the hooks, merge, rollback to it, a switch to its branch) refuses
it before writing anything, since the next save here would refuse it."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
FETCHED = 'refs/agitmem/remotes/origin/main'
LIMIT = 'is 300 KB, over max_file_kb (256 KB)'


@pytest.fixture
def fetched(memrepo: Path, tmp_path: Path) -> Path:
    """memrepo (with the git hooks) whose remote's memory of main holds a
    300 KB notes.md, pushed from a clone whose config allows 1 MB."""
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    ok('install', 'git', cwd=memrepo)
    git('push', '-q', '-u', 'origin', 'main', cwd=memrepo)
    other = tmp_path / 'other'
    git('clone', '-q', str(remote), str(other), cwd=tmp_path)
    ok('init', cwd=other)
    (other / '.agent' / 'config.yaml').write_text('max_file_kb: 1024\n')
    mem(other, 'notes.md').write_text('- a long note\n' * (300 * 1024 // 14 + 1))
    ok('save', '-m', 'the long notes', cwd=other)
    (other / 'b.txt').write_text('b\n')
    git('add', 'b.txt', cwd=other)
    git('commit', '-q', '-m', 'b', cwd=other)
    ok('push', cwd=other)
    git('push', '-q', 'origin', 'main', cwd=other)
    return memrepo


def _untouched(repo: Path, before: tuple[str | None, str]) -> None:
    assert (tip(repo, MAIN), mem(repo, 'notes.md').read_text()) == before


def _before(repo: Path) -> tuple[str | None, str]:
    return tip(repo, MAIN), mem(repo, 'notes.md').read_text()


def test_pull_refuses_it_before_any_write(fetched: Path) -> None:
    with open(mem(fetched, 'notes.md'), 'a') as f:
        f.write('- unsaved here\n')  # a pre-save would commit it: refused first
    before = _before(fetched)
    line = bad('pull', cwd=fetched)
    assert LIMIT in line and '"notes.md"' in line
    _untouched(fetched, before)
    assert tip(fetched, FETCHED) is not None  # fetched, not merged
    # merge of the fetched copy, and a rollback to it, refuse it the same way
    assert LIMIT in bad('merge', 'origin/main', cwd=fetched)
    assert LIMIT in bad('rollback', git('rev-parse', FETCHED, cwd=fetched).strip(), cwd=fetched)
    _untouched(fetched, before)
    assert 'no unsaved changes' not in ok('status', cwd=fetched)


def test_git_pull_through_the_hooks_warns_and_goes_on(fetched: Path) -> None:
    before = _before(fetched)
    proc = run('git', 'pull', '-q', cwd=fetched)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (fetched / 'b.txt').exists()  # the code came
    assert LIMIT in proc.stdout + proc.stderr and 'Traceback' not in proc.stderr
    _untouched(fetched, before)


def test_rollback_to_an_own_commit_over_a_lowered_limit(memrepo: Path) -> None:
    """The limit is the one in force here: memory saved under a higher one
    is not rolled back into .agent/memory once it was lowered."""
    (memrepo / '.agent' / 'config.yaml').write_text('max_file_kb: 1024\n')
    mem(memrepo, 'notes.md').write_text('- a long note\n' * (300 * 1024 // 14 + 1))
    ok('save', cwd=memrepo)
    mem(memrepo, 'notes.md').write_text('- trimmed\n')
    ok('save', cwd=memrepo)
    (memrepo / '.agent' / 'config.yaml').write_text('max_file_kb: 256\n')
    ok('save', cwd=memrepo)
    before = _before(memrepo)
    assert LIMIT in bad('rollback', '@~2', cwd=memrepo)
    _untouched(memrepo, before)
    # with an edit pending, @~N counts from the pre-save: still refused before it
    mem(memrepo, 'notes.md').write_text('- trimmed\n- pending\n')
    before = _before(memrepo)
    assert LIMIT in bad('rollback', '@~3', cwd=memrepo)
    _untouched(memrepo, before)
    ok('rollback', '@~1', cwd=memrepo)  # past the pending edit: small, taken


def test_switching_to_a_branch_whose_fetched_memory_is_over_it(fetched: Path, tmp_path: Path) -> None:
    """post-checkout onto a branch only the remote has memory for."""
    other = tmp_path / 'other'
    git('checkout', '-q', '-b', 'topic', cwd=other)
    ok('save', '-m', 'topic', cwd=other)
    git('push', '-q', 'origin', 'topic', cwd=other)
    ok('push', cwd=other)
    git('fetch', '-q', 'origin', cwd=fetched)
    before = mem(fetched, 'notes.md').read_text()
    proc = run('git', 'checkout', 'topic', cwd=fetched)
    assert proc.returncode == 0, proc.stderr
    assert LIMIT in proc.stdout + proc.stderr and 'Traceback' not in proc.stderr
    assert mem(fetched, 'notes.md').read_text() == before
    proc = agitmem('load', cwd=fetched)
    assert 'Traceback' not in proc.stderr
