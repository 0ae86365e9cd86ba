from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agitmem.checks import Finding
from agitmem.checks.verification_stale import check
from testing.util import agitmem
from testing.util import git
from testing.util import ok

STATE = '.agent/memory/state.json'
TREE = 'a' * 40


def _lv(**kw: Any) -> dict[str, Any]:
    lv = {'command': 'pytest -q', 'result': 'passed', 'exit_code': 0, 'tree': TREE}
    lv.update(kw)
    return {'step': 1, 'last_verification': lv}


def _check(state: dict[str, Any], tree: str | None = TREE) -> list[Finding]:
    def same_code(verified: str) -> bool | None:
        return None if tree is None else verified == tree
    return check(
        state, same_code, state_path=STATE,
        state_text=json.dumps(state, indent=2),
    )


def test_no_verification_passes_without_asking_git() -> None:
    def same_code(tree: str) -> bool:
        raise AssertionError('not needed')
    assert check({}, same_code, state_path=STATE) == []
    assert check({'last_verification': None}, same_code, state_path=STATE) == []


def test_passed_on_this_tree_passes() -> None:
    assert _check(_lv()) == []


def test_other_tree_warns() -> None:
    found, = _check(_lv(), 'b' * 40)
    assert (found.id, found.severity, found.path, found.line) == (
        'verification-stale', 'warning', STATE, 3,
    )
    assert found.message == (
        'the last verification (`pytest -q`, passed) ran on other code (tree '
        'aaaaaaaaaaaa) than this commit; run `agitmem verify -- pytest -q` '
        'again'
    )


def test_failed_on_this_tree_warns_with_the_reason() -> None:
    found, = _check(_lv(result='failed', exit_code=1, reason='test_x: assert 1 == 2'))
    assert found.message.startswith(
        'the last verification of this very code failed (test_x: assert 1 == 2);',
    )


def test_unknown_tree_passes() -> None:
    assert _check(_lv(), None) == []


def test_through_the_cli_staged(memrepo: Path) -> None:
    ok('verify', '--', 'true', cwd=memrepo)
    assert 'verification-stale' not in ok('check', '--staged', cwd=memrepo)
    assert 'verification-stale' not in ok('check', cwd=memrepo)
    # a new size: repo.worktree_tree misses same-size edits within a second
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 22\n')
    # not staged yet: the tree being committed is still the verified one
    assert 'verification-stale' not in ok('check', '--staged', cwd=memrepo)
    assert 'warning verification-stale' in ok('check', cwd=memrepo)
    git('add', 'src/app.py', cwd=memrepo)
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 0  # a warning
    assert 'warning verification-stale .agent/memory/state.json:' in proc.stdout
    ok('verify', '--', 'true', cwd=memrepo)
    assert 'verification-stale' not in ok('check', '--staged', cwd=memrepo)


def test_a_tree_git_does_not_have_is_other_code(memrepo: Path) -> None:
    ok('state', 'set', 'last_verification:={"result": "passed", "command": "true", "tree": "%s"}' % ('b' * 40), cwd=memrepo)
    assert 'warning verification-stale' in ok('check', '--staged', cwd=memrepo)
