from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agitmem.checks import Finding
from agitmem.checks.state_vs_worktree import check
from testing.util import agitmem
from testing.util import ok

SNAPSHOT = '.agent/memory/snapshot.md'
STATE = '.agent/memory/state.json'


def _check(root: Path, state: dict[str, Any], in_progress: str = '') -> list[Finding]:
    snapshot = f'# Snapshot\n\n## In progress\n{in_progress}\n## Todo\n- `gone/todo.py`\n'
    return check(
        state, snapshot, root=root, state_path=STATE, snapshot_path=SNAPSHOT,
        state_text=json.dumps(state, indent=2),
    )


def test_existing_file_and_symbol_pass(repo: Path) -> None:
    state = {'current_file': 'src/app.py', 'current_symbol': 'main'}
    assert _check(repo, state) == []


def test_empty_state_passes(repo: Path) -> None:
    assert _check(repo, {}) == []
    assert _check(repo, {'current_file': None, 'current_symbol': 'x'}) == []


def test_missing_current_file_is_an_error(repo: Path) -> None:
    found, = _check(repo, {'step': 2, 'current_file': 'src/loader.ts'})
    assert (found.id, found.severity, found.path, found.line) == (
        'state-vs-worktree', 'error', STATE, 3,
    )
    assert found.message.startswith('current_file "src/loader.ts" does not exist;')


def test_current_file_with_a_line_number(repo: Path) -> None:
    assert _check(repo, {'current_file': 'src/app.py:2'}) == []


def test_current_file_absolute(repo: Path) -> None:
    assert _check(repo, {'current_file': str(repo / 'src' / 'app.py')}) == []


def test_symbol_not_in_file_warns(repo: Path) -> None:
    found, = _check(repo, {'current_file': 'src/app.py', 'current_symbol': 'loadConfig'})
    assert (found.severity, found.line) == ('warning', 3)
    assert found.message.startswith('current_symbol "loadConfig" is not in src/app.py;')


def test_symbol_is_a_whole_word_and_may_be_qualified(repo: Path) -> None:
    assert _check(repo, {'current_file': 'src/app.py', 'current_symbol': 'App.main'}) == []
    assert _check(repo, {'current_file': 'src/app.py', 'current_symbol': 'mai'}) != []


def test_missing_path_in_progress_warns(repo: Path) -> None:
    found = _check(
        repo, {},
        '- moving `src/app.py` to `src/core/app.py`\n'
        '- see `https://example.com/a/b`, run `npm test -- a/b`, `--flag/x`\n'
        '- `tests/app_test.py::test_main` and `src/app.py:2`\n',
    )
    assert [(f.severity, f.line, f.message.split(',')[0]) for f in found] == [
        ('warning', 4, 'In progress names `src/core/app.py`'),
        ('warning', 6, 'In progress names `tests/app_test.py::test_main`'),
    ]


def test_through_the_cli(memrepo: Path) -> None:
    ok('state', 'set', 'current_file=src/loader.ts', cwd=memrepo)
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert f'error state-vs-worktree {STATE}:3: current_file "src/loader.ts" does not exist' in proc.stdout
    (memrepo / 'src' / 'loader.ts').write_text('export function loadConfig() {}\n')
    ok('check', cwd=memrepo)


def test_current_file_spelled_loosely_is_found_as_before(repo: Path) -> None:
    """The check read current_file through pathlib, which drops empty and
    `.` parts: `src/app.py/` named the file.  Without pathlib (the
    pre-commit hook's lean path) `os.path.lexists('src/app.py/')` is False
    for a file: the hook refused the commit (exit 1) where it let it pass."""
    for spelled in ('src/app.py/', 'src/./app.py', 'src//app.py', './src/app.py', 'src/app.py/.'):
        assert _check(repo, {'current_file': spelled, 'current_symbol': 'main'}) == [], spelled
    found, = _check(repo, {'current_file': 'src/gone.py/'})
    assert found.message.startswith('current_file "src/gone.py/" does not exist;')


def test_a_current_file_no_path_can_hold_is_missing_through_the_hook(memrepo: Path) -> None:
    """state.json (it may come with a clone) naming a current_file that
    no argument can carry to git (a lone surrogate, `\\ud800` in JSON; a
    NUL): the file does not exist, which the pre-commit hook says, with
    no traceback."""
    ok('install', 'git', cwd=memrepo)
    state_file = memrepo / STATE
    for name in ('src/\ud800x.py', 'src/a\0b.py'):
        state = json.loads(state_file.read_text())
        state['current_file'] = name
        state_file.write_text(json.dumps(state))
        for args in (('check',), ('hook', 'pre-commit')):
            proc = agitmem(*args, cwd=memrepo)
            assert 'Traceback' not in proc.stderr, proc.stderr
            assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
            assert 'error state-vs-worktree .agent/memory/state.json' in proc.stdout + proc.stderr
            assert 'does not exist' in proc.stdout + proc.stderr
