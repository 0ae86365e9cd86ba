"""Memory through the forge: branches merged on the server (merge commit,
squash, rebase) and deleted there, on real repositories: a bare remote, a
developer's clone with agitmem's git hooks, and a third clone that merges
as a forge does."""
from __future__ import annotations

from pathlib import Path

import pytest

from agitmem import repo as repo_mod
from agitmem.porcelain import forge as forge_mod
from testing.forge import feature
from testing.forge import forge_merge
from testing.forge import MAIN
from testing.forge import memory_refs
from testing.forge import METHODS
from testing.forge import notes
from testing.forge import setup
from testing.forge import teammate_pushes
from testing.util import agitmem
from testing.util import git
from testing.util import ok
from testing.util import run
from testing.util import tip


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path, Path]:
    return setup(tmp_path)


def _merges(repo: Path, ref: str = MAIN) -> list[str]:
    return git('log', '--merges', '--format=%s', ref, cwd=repo).splitlines()


def _attic(repo: Path) -> list[str]:
    return memory_refs(repo, 'refs/agitmem/attic/')


# -- pure parts ---------------------------------------------------------------------

def test_deleted_reads_the_branches_a_push_deletes() -> None:
    zero = '0' * 40
    stdin = (
        f'(delete) {zero} refs/heads/f2 {"a" * 40}\n'
        f'refs/heads/main {"b" * 40} refs/heads/main {"c" * 40}\n'
        f'(delete) {zero} refs/tags/v1 {"d" * 40}\n'
        'garbage line\n'
    )
    assert forge_mod.deleted(stdin) == ['f2']


def test_parse_ls_remote() -> None:
    out = (
        'ref: refs/heads/trunk\tHEAD\n'
        f'{"a" * 40}\tHEAD\n'
        f'{"a" * 40}\trefs/heads/trunk\n'
        f'{"b" * 40}\trefs/heads/f1\n'
        f'{"c" * 40}\trefs/agitmem/heads/f1\n'
        f'{"d" * 40}\trefs/tags/v1\n'
    )
    state = forge_mod.parse_ls_remote(out)
    assert state.base == 'trunk'
    assert state.heads == {'trunk', 'f1'}
    assert state.memory == {'f1': 'c' * 40}


# -- 1. deleting a branch on the remote retires its memory there -------------------------

def test_push_delete_of_a_merged_branch_deletes_its_memory_on_the_remote(
        team: tuple[Path, Path, Path],
) -> None:
    remote, dev, forge = team
    feature(dev, 'f2', 'f2 keeps sessions in redis')
    forge_merge(forge, 'f2', 'squash', 2, delete=False)
    git('pull', '-q', cwd=dev)
    assert 'refs/agitmem/heads/f2' in memory_refs(remote)
    proc = run('git', 'push', 'origin', '--delete', 'f2', cwd=dev)
    assert proc.returncode == 0, proc.stderr
    assert 'deleted refs/agitmem/heads/f2 on origin with its branch' in proc.stdout
    assert memory_refs(remote) == [MAIN]
    # the base's memory holds it, on the remote too; the clone keeps a copy
    assert notes(remote).count('f2 keeps sessions in redis') == 1
    assert [a.split('@')[0] for a in _attic(dev)] == ['refs/agitmem/attic/heads/f2']
    assert 'refs/agitmem/remotes/origin/f2' not in memory_refs(dev, 'refs/agitmem/')


def test_fetch_prune_in_another_clone_drops_the_deleted_memory(
        team: tuple[Path, Path, Path], tmp_path: Path,
) -> None:
    remote, dev, forge = team
    feature(dev, 'f2', 'f2 note')
    other = tmp_path / 'other'
    git('clone', '-q', str(remote), str(other), cwd=tmp_path)
    ok('init', cwd=other)  # adds the memory fetch refspec
    git('fetch', '-q', cwd=other)
    assert tip(other, 'refs/agitmem/remotes/origin/f2')
    forge_merge(forge, 'f2', 'merge', 2, delete=False)
    git('pull', '-q', cwd=dev)
    git('push', '-q', 'origin', '--delete', 'f2', cwd=dev)
    git('fetch', '-q', '--prune', cwd=other)
    assert tip(other, 'refs/agitmem/remotes/origin/f2') is None


def test_push_delete_of_an_unmerged_branch_still_here_retires_its_memory_there(
        team: tuple[Path, Path, Path],
) -> None:
    """Unmerged, but its branch is still here: its memory stays here as it
    is, so the remote's copy (which that memory holds) goes."""
    remote, dev, _ = team
    feature(dev, 'wip', 'wip idea')
    before = tip(dev, 'refs/agitmem/heads/wip')
    proc = run('git', 'push', 'origin', '--delete', 'wip', cwd=dev)
    assert proc.returncode == 0, proc.stderr
    assert 'kept the memory of wip here' in proc.stderr
    assert 'deleted refs/agitmem/heads/wip on origin with its branch' in proc.stdout
    assert memory_refs(remote) == [MAIN]
    assert tip(dev, 'refs/agitmem/heads/wip') == before
    assert 'wip idea' in notes(dev, 'refs/agitmem/heads/wip')
    assert _attic(dev) == []


def test_push_delete_never_deletes_a_teammates_memory_this_clone_never_fetched(
        team: tuple[Path, Path, Path],
) -> None:
    """The deletion is leased on the memory this clone judged and keeps
    (the attic), not on whatever the remote has now: a teammate's newer
    memory stays there, and is fetched here to safety."""
    remote, dev, forge = team
    feature(dev, 'f2', 'f2 keeps sessions in redis')
    forge_merge(forge, 'f2', 'squash', 2, delete=False)
    git('pull', '-q', cwd=dev)
    theirs = teammate_pushes(forge, 'f2', 'f2 teammate: redis needs a password')
    proc = run('git', 'push', 'origin', '--delete', 'f2', cwd=dev)
    assert proc.returncode == 0, proc.stderr
    assert tip(remote, 'refs/agitmem/heads/f2') == theirs
    assert tip(dev, 'refs/agitmem/remotes/origin/f2') == theirs
    assert 'kept refs/agitmem/heads/f2 on origin: it holds memory this clone does not have' in proc.stderr
    assert 'deleted refs/agitmem/heads/f2' not in proc.stdout
    # the memory judged is in the attic; prune retires the rest once merged
    assert [a.split('@')[0] for a in _attic(dev)] == ['refs/agitmem/attic/heads/f2']
    out = ok('prune', cwd=dev)
    assert 'deleted refs/agitmem/heads/f2 on origin' in out
    assert 'f2 teammate: redis needs a password' in notes(dev)
    assert memory_refs(remote) == [MAIN]


def test_push_delete_of_a_branch_whose_memory_was_never_fetched_keeps_it(
        team: tuple[Path, Path, Path],
) -> None:
    """Nothing of it here: nothing is deleted there."""
    remote, dev, forge = team
    git('switch', '-q', '-c', 'theirs', cwd=forge)
    git('commit', '-q', '--allow-empty', '-m', 'theirs', cwd=forge)
    git('push', '-q', 'origin', 'theirs', cwd=forge)
    git('fetch', '-q', 'origin', 'refs/agitmem/heads/main:refs/agitmem/heads/main', cwd=forge)
    git('push', '-q', 'origin', 'refs/agitmem/heads/main:refs/agitmem/heads/theirs', cwd=forge)
    assert tip(dev, 'refs/agitmem/remotes/origin/theirs') is None
    theirs = tip(remote, 'refs/agitmem/heads/theirs')
    proc = run('git', 'push', 'origin', '--delete', 'theirs', cwd=dev)
    assert proc.returncode == 0, proc.stderr
    assert tip(remote, 'refs/agitmem/heads/theirs') == theirs
    assert tip(dev, 'refs/agitmem/remotes/origin/theirs') == theirs


def test_push_delete_of_an_unmerged_branch_merges_a_teammates_memory_before_deleting(
        team: tuple[Path, Path, Path],
) -> None:
    """Still here and unmerged: the memory push merges the teammate's
    newer memory into ours, and the remote's copy goes only once ours
    holds it."""
    remote, dev, forge = team
    feature(dev, 'wip', 'wip idea')
    teammate_pushes(forge, 'wip', 'wip teammate: tried it')
    proc = run('git', 'push', 'origin', '--delete', 'wip', cwd=dev)
    assert proc.returncode == 0, proc.stderr
    assert memory_refs(remote) == [MAIN]
    assert notes(dev, 'refs/agitmem/heads/wip')[-2:] == ['wip idea', 'wip teammate: tried it'] or (
        'wip teammate: tried it' in notes(dev, 'refs/agitmem/heads/wip')
    )


def test_push_delete_of_a_branch_gone_here_keeps_a_copy_in_the_attic(
        team: tuple[Path, Path, Path],
) -> None:
    remote, dev, _ = team
    feature(dev, 'idea', 'an idea we dropped')
    before = tip(dev, 'refs/agitmem/heads/idea')
    git('branch', '-q', '-D', 'idea', cwd=dev)
    git('push', '-q', 'origin', '--delete', 'idea', cwd=dev)
    assert memory_refs(remote) == [MAIN]
    [attic] = _attic(dev)
    assert tip(dev, attic) == before
    assert 'an idea we dropped' in notes(dev, attic)


# -- 2. without CI: a fetch that shows the code landed merges the memory ------------------

@pytest.mark.parametrize('method', METHODS)
def test_git_pull_merges_the_memory_of_a_branch_merged_and_deleted_on_the_server(
        team: tuple[Path, Path, Path], method: str,
) -> None:
    _, dev, forge = team
    feature(dev, 'f1', 'f1 decided: sqlite')
    forge_merge(forge, 'f1', method, 1)
    git('pull', '-q', cwd=dev)  # post-merge
    assert notes(dev) == ['main starts', 'f1 decided: sqlite']
    merges = _merges(dev)
    # and once: another pull merges nothing again
    out = ok('pull', cwd=dev)
    assert 'merged the memory of f1' not in out
    assert _merges(dev) == merges
    assert notes(dev).count('f1 decided: sqlite') == 1


@pytest.mark.parametrize('method', METHODS)
def test_agitmem_pull_merges_it_without_hooks(
        team: tuple[Path, Path, Path], method: str,
) -> None:
    _, dev, forge = team
    ok('uninstall', 'git', cwd=dev)
    feature(dev, 'f1', 'f1 decided: sqlite')
    git('push', '-q', 'origin', 'f1', cwd=dev)  # no hook: memory by hand
    ok('push', cwd=dev)
    forge_merge(forge, 'f1', method, 1)
    git('pull', '-q', cwd=dev)
    assert notes(dev) == ['main starts']  # no hook ran
    out = ok('pull', cwd=dev)
    assert 'merged the memory of f1 into main\'s (its code is in main)' in out
    assert notes(dev) == ['main starts', 'f1 decided: sqlite']
    assert 'f1' in git('log', '-1', '--format=%s', MAIN, cwd=dev)


def test_a_branch_deleted_unmerged_is_kept(team: tuple[Path, Path, Path]) -> None:
    remote, dev, forge = team
    feature(dev, 'dead', 'a dead end')
    git('push', '-q', 'origin', '--delete', 'dead', cwd=forge)  # no hooks there
    git('branch', '-q', '-D', 'dead', cwd=dev)
    out = ok('prune', cwd=dev)
    assert 'kept the memory of dead: gone from origin but not merged' in out
    assert 'refs/agitmem/heads/dead' in memory_refs(remote)
    assert tip(dev, 'refs/agitmem/heads/dead')
    assert notes(dev) == ['main starts']
    # doctor names it (offline: as of the last fetch)
    git('fetch', '-q', '--prune', cwd=dev)
    out = agitmem('doctor', cwd=dev).stdout
    assert 'the memory of dead is kept: its branch is gone but its memory is in no base' in out
    ok('merge', 'dead', cwd=dev)
    assert 'the memory of dead is kept' not in agitmem('doctor', cwd=dev).stdout


# -- 3. prune ------------------------------------------------------------------------

@pytest.mark.parametrize('method', METHODS)
def test_prune_retires_merged_memory_here_and_on_the_remote(
        team: tuple[Path, Path, Path], method: str,
) -> None:
    remote, dev, forge = team
    feature(dev, 'f1', 'f1 note')
    forge_merge(forge, 'f1', method, 1)
    git('pull', '-q', cwd=dev)
    out = ok('prune', cwd=dev)
    assert 'deleted refs/agitmem/heads/f1 on origin' in out
    assert memory_refs(remote) == [MAIN]
    assert memory_refs(dev) == [MAIN]
    assert 'refs/agitmem/remotes/origin/f1' not in memory_refs(dev, 'refs/agitmem/')
    assert notes(remote) == ['main starts', 'f1 note']
    assert 'nothing to prune' in ok('prune', cwd=dev)


def test_a_remote_delete_is_refused_when_the_ref_moved_since_it_was_judged(
        team: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str],
) -> None:
    """The remote deletion is a compare-and-swap on the sha judged merged:
    memory pushed meanwhile is never deleted, and is fetched to safety."""
    remote, dev, _ = team
    feature(dev, 'f1', 'f1 note')
    judged = tip(remote, 'refs/agitmem/heads/f1')
    assert judged is not None
    git('update-ref', 'refs/agitmem/heads/f1', str(tip(remote)), cwd=remote)  # moved
    repo = repo_mod.find(dev)
    assert forge_mod.delete_remote(repo, 'origin', {'f1': judged}) == []
    assert tip(remote, 'refs/agitmem/heads/f1') == tip(remote)
    assert tip(dev, 'refs/agitmem/remotes/origin/f1') == tip(remote)
    assert 'kept refs/agitmem/heads/f1 on origin' in capsys.readouterr().err
    # at the sha judged, it goes, and our copy of the remote's with it
    assert forge_mod.delete_remote(repo, 'origin', {'f1': str(tip(remote))}) == ['f1']
    assert memory_refs(remote) == [MAIN]
    assert tip(dev, 'refs/agitmem/remotes/origin/f1') is None


def test_a_branch_only_here_is_not_gone(team: tuple[Path, Path, Path]) -> None:
    """Never pushed (no upstream): its memory stays, whatever prune sees."""
    _, dev, _ = team
    git('switch', '-q', '-c', 'local-only', cwd=dev)
    ok('note', 'local work', cwd=dev)
    git('switch', '-q', 'main', cwd=dev)
    before = tip(dev, 'refs/agitmem/heads/local-only')
    assert before
    ok('pull', cwd=dev)
    ok('prune', cwd=dev)
    assert tip(dev, 'refs/agitmem/heads/local-only') == before
    assert _attic(dev) == []
