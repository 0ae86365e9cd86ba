"""agitmem/checks/staged.py: the git reads of the checks of what is
staged, begun ahead by the pre-commit hook."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok


def _verified(repo: Path, tree: str) -> None:
    path = mem(repo, 'state.json')
    state = json.loads(path.read_text())
    state['last_verification'] = {
        'command': 'true', 'result': 'passed', 'exit_code': 0, 'reason': 'exit 0',
        'at': '2026-12-01T00:00:00Z', 'tree': tree,
    }
    path.write_text(json.dumps(state, indent=2) + '\n')


@pytest.mark.parametrize('how', (('check', '--staged'), ('hook', 'pre-commit')))
def test_a_tree_that_is_no_object_id_is_never_handed_to_git(memrepo: Path, how: tuple[str, ...]) -> None:
    # state.json is the agent's to edit: `--output=...` would be an option
    _verified(memrepo, '--output=written-by-git')
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 2\n')
    git('add', 'src/app.py', cwd=memrepo)
    proc = agitmem(*how, cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert 'warning verification-stale .agent/memory/state.json' in proc.stdout
    assert 'ran on other code (tree --output=wri)' in proc.stdout
    assert not (memrepo / 'written-by-git').exists()


def test_the_verified_tree_staged_as_it_is_passes(memrepo: Path) -> None:
    ok('verify', '--', 'true', cwd=memrepo)
    git('add', '-A', cwd=memrepo)
    # begun ahead by the hook, or asked by the check: the same answer
    for how in (('check', '--staged'), ('hook', 'pre-commit')):
        proc = agitmem(*how, cwd=memrepo)
        assert proc.returncode == 0, proc.stderr
        assert 'verification-stale' not in proc.stdout
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 3\n')
    git('add', 'src/app.py', cwd=memrepo)
    assert 'warning verification-stale' in agitmem('hook', 'pre-commit', cwd=memrepo).stdout


def _stale(repo: Path) -> bool:
    proc = agitmem('hook', 'pre-commit', cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return 'verification-stale' in proc.stdout


def test_the_index_against_the_verified_tree_by_way_of_head(memrepo: Path) -> None:
    """The index is compared with the verified tree through what each
    changes from HEAD: a deletion, a mode, a path both change otherwise,
    a path only one of them changes."""
    (memrepo / 'src' / 'gone.py').write_text('x = 1\n')
    git('add', '-A', cwd=memrepo)
    git('commit', '-qm', 'gone.py', cwd=memrepo)
    (memrepo / 'src' / 'gone.py').unlink()
    (memrepo / 'src' / 'app.py').chmod(0o755)
    ok('verify', '--', 'true', cwd=memrepo)  # a tree without gone.py, app.py +x
    assert _stale(memrepo)  # nothing staged: the index is HEAD's
    git('add', '-A', 'src', cwd=memrepo)
    assert not _stale(memrepo)
    git('update-index', '--chmod=-x', 'src/app.py', cwd=memrepo)
    assert _stale(memrepo)  # the mode as HEAD has it
    git('update-index', '--chmod=+x', 'src/app.py', cwd=memrepo)
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 9\n')
    git('add', 'src/app.py', cwd=memrepo)
    assert _stale(memrepo)  # both change app.py, not alike
    ok('verify', '--', 'true', cwd=memrepo)
    assert not _stale(memrepo)
    (memrepo / 'src' / 'new.py').write_text('y = 2\n')
    git('add', 'src/new.py', cwd=memrepo)
    assert _stale(memrepo)  # only the index adds it


def test_the_verified_tree_on_an_unborn_head(tmp_path: Path) -> None:
    git('init', '-q', cwd=tmp_path)
    ok('init', cwd=tmp_path)
    (tmp_path / 'a.py').write_text('a = 1\n')
    ok('verify', '--', 'true', cwd=tmp_path)
    git('add', 'a.py', cwd=tmp_path)
    assert not _stale(tmp_path)
    (tmp_path / 'a.py').write_text('a = 2\n')
    git('add', 'a.py', cwd=tmp_path)
    assert _stale(tmp_path)


@pytest.mark.parametrize('occupant', ('file', 'dir'))
def test_something_where_the_tree_reads_absent_index_would_be_changes_no_answer(
        memrepo: Path, occupant: str,
) -> None:
    """diff-tree is pointed at an index that does not exist (it would read
    the whole one for nothing); whatever sits at that path, the verified
    tree is told from another the same way."""
    place = memrepo / '.git' / 'agitmem' / 'no-index'
    place.parent.mkdir(exist_ok=True)
    if occupant == 'file':
        place.write_bytes(b'not an index')
    else:
        place.mkdir()
    ok('verify', '--', 'true', cwd=memrepo)
    git('add', '-A', cwd=memrepo)
    assert not _stale(memrepo)
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 5\n')
    git('add', 'src/app.py', cwd=memrepo)
    assert _stale(memrepo)
