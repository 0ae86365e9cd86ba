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
