"""`agitmem prune`: bad input is one line (the retiring itself is in
tests/porcelain/forge_test.py and the lifecycle test)."""
from __future__ import annotations

from pathlib import Path

from testing.forge import feature
from testing.forge import forge_merge
from testing.forge import MAIN
from testing.forge import memory_refs
from testing.forge import notes
from testing.forge import setup
from testing.forge import teammate_pushes
from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import ok
from testing.util import tip


def test_prune_names_an_unknown_remote(tmp_path: Path) -> None:
    _, dev, _ = setup(tmp_path)
    assert bad('prune', 'nowhere', cwd=dev) == 'agitmem: no remote named "nowhere" (see `git remote -v`)'


def test_prune_with_a_remote_that_is_gone_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    _, dev, _ = setup(tmp_path)
    git('remote', 'add', 'dead', str(tmp_path / 'missing.git'), cwd=dev)
    before = memory_refs(dev, 'refs/agitmem/')
    line = bad('prune', 'dead', cwd=dev)
    assert line.startswith('agitmem: git fetch dead failed:')
    assert memory_refs(dev, 'refs/agitmem/') == before


def test_prune_with_nothing_gone(tmp_path: Path) -> None:
    remote, dev, _ = setup(tmp_path)
    before = git('for-each-ref', 'refs/agitmem/', cwd=remote)
    assert 'nothing to prune' in ok('prune', cwd=dev)
    assert git('for-each-ref', 'refs/agitmem/', cwd=remote) == before


def test_prune_never_deletes_memory_a_teammate_pushed_after_it_was_judged(tmp_path: Path) -> None:
    """The remote's memory of f1 moves while prune pushes main's memory
    (the remote's post-receive hook plays the teammate): the deletion,
    leased on the commit judged, leaves it there, and prune fetches it
    here to safety and says so; the next prune retires it once merged."""
    remote, dev, forge = setup(tmp_path)
    feature(dev, 'f1', 'f1 note')
    forge_merge(forge, 'f1', 'squash', 1)
    git('pull', '-q', cwd=dev)
    theirs = teammate_pushes(forge, 'f1', 'f1 teammate: one more thing', to='refs/mate/f1')
    hook = remote / 'hooks' / 'post-receive'
    hook.write_text(
        '#!/bin/sh\n'
        'grep -q " refs/agitmem/heads/main$" && '
        f'git update-ref refs/agitmem/heads/f1 {theirs}\n'
        'exit 0\n',
    )
    hook.chmod(0o755)
    proc = agitmem('prune', cwd=dev)
    assert proc.returncode == 0, proc.stderr
    assert 'kept refs/agitmem/heads/f1 on origin: it holds memory this clone does not have' in proc.stderr
    assert tip(remote, 'refs/agitmem/heads/f1') == theirs
    assert tip(dev, 'refs/agitmem/remotes/origin/f1') == theirs
    hook.unlink()
    out = ok('prune', cwd=dev)
    assert 'deleted refs/agitmem/heads/f1 on origin' in out
    assert 'f1 teammate: one more thing' in notes(dev)
    assert memory_refs(remote) == [MAIN]
