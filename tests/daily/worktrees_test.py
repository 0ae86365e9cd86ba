"""Two agents, one per worktree of one repository, saving at once: each
branch's memory gets every write of its own agent and nothing of the
other's."""
from __future__ import annotations

import json
import threading
from pathlib import Path


from testing.daily import commit
from testing.daily import goal_here
from testing.daily import settled
from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run

MAIN = 'refs/agitmem/heads/main'
SIDE = 'refs/agitmem/heads/side'






# -- two agents at once ------------------------------------------------------------

N = 5


def test_two_agents_in_two_worktrees_at_once(memrepo: Path, tmp_path: Path) -> None:
    """Two agent processes, one per worktree, each noting, setting state and
    committing code (post-commit saving) at the same time: every note on its
    own branch's memory, none on the other's, both histories sound."""
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    side = tmp_path / 'side'
    git('worktree', 'add', '-q', '-b', 'side', str(side), cwd=memrepo)
    ok('init', cwd=side)
    ok('state', 'set', 'current_goal=side goal', cwd=side)
    steps = {
        ref: json.loads(git('show', f'{ref}:state.json', cwd=memrepo))['step'] for ref in (MAIN, SIDE)
    }
    errors: list[str] = []

    def agent(where: Path, name: str) -> None:
        for i in range(N):
            for proc in (
                    agitmem('note', f'{name} note {i}', cwd=where),
                    agitmem('state', 'set', f'last_action={name} step {i}', cwd=where),
            ):
                if proc.returncode != 0 or 'Traceback' in proc.stderr:
                    errors.append(proc.stderr)
            if i % 2 == 0:
                try:
                    commit(where, f'{name}{i}.txt', f'{name} commit {i}')
                except AssertionError as e:
                    errors.append(str(e))

    threads = [threading.Thread(target=agent, args=a) for a in ((memrepo, 'main'), (side, 'side'))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for where, ref, name, other in ((memrepo, MAIN, 'main', 'side'), (side, SIDE, 'side', 'main')):
        saved = git('show', f'{ref}:notes.md', cwd=where)
        here = mem(where, 'notes.md').read_text()
        for i in range(N):
            assert f'{name} note {i}' in saved and f'{name} note {i}' in here
            if i % 2 == 0:
                assert f'{name} commit {i}' in saved
        assert f'{other} note' not in saved and f'{other} commit' not in saved
        state = json.loads(git('show', f'{ref}:state.json', cwd=where))
        assert state['current_goal'] == f'{name} goal'
        assert state['last_action'] == f'{name} step {N - 1}'
        assert state['step'] == steps[ref] + N  # no update lost
        assert goal_here(where) == f'{name} goal'
        ok('state', 'set', f'current_goal={name} goal', cwd=where)
        settled(where, f'{name} goal')
    assert run('git', 'fsck', '--no-dangling', cwd=memrepo).returncode == 0
