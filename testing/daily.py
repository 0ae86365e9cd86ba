"""What the tests of a user's day (tests/daily/) share: commit through the
git hooks, and the memory settled afterwards."""
from __future__ import annotations

import json
from pathlib import Path

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run


def goal_here(repo: Path) -> str:
    return str(json.loads(mem(repo, 'state.json').read_text()).get('current_goal'))


def head(repo: Path) -> str:
    return git('rev-parse', 'HEAD', cwd=repo).strip()


def commit(repo: Path, name: str, note: str | None = None) -> str:
    """Commit a new file `name` (through whatever hooks are installed),
    with a note added to the memory first when one is given."""
    if note:
        with open(mem(repo, 'notes.md'), 'a') as f:
            f.write(f'- {note}\n')
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{name}\n')
    git('add', name, cwd=repo)
    proc = run('git', 'commit', '-q', '-m', name, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return head(repo)


def settled(repo: Path, goal: str) -> None:
    """Nothing unsaved, check clean, and load gives the goal without STALE."""
    assert 'no unsaved changes' in ok('status', cwd=repo)
    proc = agitmem('check', cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = ok('load', cwd=repo)
    assert f'current_goal: {goal}' in out.splitlines(), out
    assert 'STALE' not in out, out
