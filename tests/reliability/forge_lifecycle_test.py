"""Branches through the forge (6, or 20 in the full run): each pushed with its memory, merged on
the server (merge commit, squash, rebase in turn), deleted there; half with
the forge's job (`agitmem land`, as the workflow runs it), half with none
(a plain `git pull`).  Afterwards main's memory holds each branch's note
once, the remote and the clones hold memory refs for the live branches
only, and nothing is lost: every branch's memory is in main's or the
attic."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.forge import feature
from testing.forge import forge_merge
from testing.forge import MAIN
from testing.forge import memory_refs
from testing.forge import METHODS
from testing.forge import notes
from testing.forge import setup
from testing.forge import teammate_pushes
from testing.util import git
from testing.util import ok
from testing.util import run
from tests.reliability.conftest import FORGE_LIFECYCLE_FULL
from tests.reliability.conftest import FORGE_LIFECYCLE_SHORT

LIVE = ('live-a', 'live-b')


def _contains(repo: Path, ref: str, sha: str) -> bool:
    return run('git', 'merge-base', '--is-ancestor', sha, ref, cwd=repo).returncode == 0


def test_branches_merged_on_the_server_then_deleted(tmp_path: Path) -> None:
    _lifecycle(tmp_path, FORGE_LIFECYCLE_SHORT)


@pytest.mark.slow
def test_twenty_branches_merged_on_the_server_then_deleted(tmp_path: Path) -> None:
    _lifecycle(tmp_path, FORGE_LIFECYCLE_FULL)


def test_branches_deleted_by_the_developer_while_a_teammate_pushes_memory(tmp_path: Path) -> None:
    """Each branch merged on the server, then deleted by the developer
    (`git push --delete`, with the hooks) after a teammate pushed memory
    to half of them that this clone never fetched.  Nothing is lost: every
    memory commit, the developer's and the teammate's, ends in main's
    memory or the attic, and the remote ends with main's memory only."""
    remote, dev, forge = setup(tmp_path)
    branches = FORGE_LIFECYCLE_SHORT
    tips = {}
    for i in range(branches):
        name = f'd{i:02}'
        feature(dev, name, f'{name}: decision {i}')
        tips[name] = git('rev-parse', f'refs/agitmem/heads/{name}', cwd=dev).strip()
        forge_merge(forge, name, METHODS[i % 3], i + 1, delete=False)
        git('pull', '-q', cwd=dev)
        if i % 2 == 0:
            tips[f'{name} (teammate)'] = teammate_pushes(forge, name, f'{name}: teammate {i}')
        proc = run('git', 'push', 'origin', '--delete', name, cwd=dev)
        assert proc.returncode == 0, proc.stderr
        git('branch', '-q', '-D', name, cwd=dev)
    kept_there = len(memory_refs(remote)) - 1
    ok('prune', cwd=dev)
    attic = memory_refs(dev, 'refs/agitmem/attic/')
    lost = [
        name for name, sha in tips.items()
        if run('git', 'cat-file', '-e', f'{sha}^{{commit}}', cwd=dev).returncode != 0 or (
            not _contains(dev, MAIN, sha) and not any(_contains(dev, a, sha) for a in attic)
        )
    ]
    print(
        f'\nforge deletions: {branches} branches deleted by git push --delete, '
        f'{len(tips) - branches} with a teammate\'s memory this clone had not fetched; '
        f'{kept_there} memory refs kept on the remote by the deletions, '
        f'{len(memory_refs(remote)) - 1} after prune; lost {len(lost)}',
    )
    assert lost == []
    assert memory_refs(remote) == [MAIN]
    assert memory_refs(dev) == [MAIN]


def _lifecycle(tmp_path: Path, branches: int) -> None:
    remote, dev, forge = setup(tmp_path)
    ci = tmp_path / 'runner'
    git('clone', '-q', str(remote), str(ci), cwd=tmp_path)
    tips = {}
    for i in range(branches):
        name = f'f{i:02}'
        feature(dev, name, f'{name}: decision {i}')
        tips[name] = git('rev-parse', f'refs/agitmem/heads/{name}', cwd=dev).strip()
        sha = forge_merge(forge, name, METHODS[i % 3], i + 1)
        if i % 2 == 0:  # the forge's job ran
            git('fetch', '-q', 'origin', cwd=ci)
            ok('land', name, '--into', 'main', '--pr', f'#{i + 1}', '--commit', sha, cwd=ci)
        git('pull', '-q', cwd=dev)
        git('branch', '-q', '-D', name, cwd=dev)
        if i % 5 == 4:
            ok('prune', cwd=dev)
    for name in LIVE:
        feature(dev, name, f'{name}: in progress')
    ok('prune', cwd=dev)
    mate = tmp_path / 'mate'
    git('clone', '-q', str(remote), str(mate), cwd=tmp_path)
    ok('init', cwd=mate)
    git('fetch', '-q', '--prune', cwd=mate)

    held = notes(remote)
    once = sum(held.count(f'f{i:02}: decision {i}') == 1 for i in range(branches))
    live = sorted([MAIN] + [f'refs/agitmem/heads/{n}' for n in LIVE])
    on_remote = memory_refs(remote)
    in_dev = memory_refs(dev)
    tracked = memory_refs(dev, 'refs/agitmem/remotes/')
    in_mate = memory_refs(mate, 'refs/agitmem/remotes/')
    attic = memory_refs(dev, 'refs/agitmem/attic/')
    lost = [
        name for name, sha in tips.items()
        if not _contains(dev, MAIN, sha) and not any(_contains(dev, a, sha) for a in attic)
    ]
    print(
        f'\nforge lifecycle: {branches} branches merged on the server and deleted; '
        f"main's memory holds {once}/{branches} branches' notes once; "
        f'memory refs: remote {len(on_remote)}, clone {len(in_dev)} '
        f'(+{len(tracked)} remote-tracking), a fresh teammate {len(in_mate)} '
        f'remote-tracking, for {len(LIVE) + 1} live branches; attic {len(attic)}; '
        f'lost {len(lost)}',
    )
    assert once == branches
    assert on_remote == live
    assert in_dev == live
    assert tracked == [r.replace('/heads/', '/remotes/origin/') for r in live]
    assert in_mate == tracked
    assert lost == []
