"""`agitmem prune`: bad input is one line (the retiring itself is in
tests/porcelain/forge_test.py and the lifecycle test)."""
from __future__ import annotations

from pathlib import Path

from testing.forge import memory_refs
from testing.forge import setup
from testing.util import bad
from testing.util import git
from testing.util import ok


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
