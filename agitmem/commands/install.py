from __future__ import annotations

import os
import shlex
import shutil
import sys

from agitmem import agents
from agitmem import audit
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError

TARGETS = ('claude', 'codex', 'gemini', 'git')


def hook_command() -> str:
    """How the hooks call agitmem: plain `agitmem` when that is this one on
    PATH, else this interpreter, so hooks work outside an activated venv."""
    found = shutil.which('agitmem')
    here = os.path.join(os.path.dirname(sys.executable), 'agitmem')
    if found and (os.path.realpath(found) == os.path.realpath(here) or not os.path.exists(here)):
        return 'agitmem'
    return f'{shlex.quote(sys.executable)} -m agitmem'


def install(target: str, *, remove: bool, command: str | None) -> int:
    if target not in TARGETS:
        raise AgitmemError(
            f'unknown target "{target}": expected one of {", ".join(TARGETS)}',
        )
    repo = repo_mod.find()
    if target == 'git':
        from agitmem import githooks
        lines = githooks.uninstall(repo) if remove else githooks.install(repo)
    elif remove:
        lines = agents.uninstall(target, repo.root)
    else:
        lines = agents.install(target, repo.root, command=command or hook_command())
    verb = 'uninstall' if remove else 'install'
    audit.log(repo.agent_dir, f'write {verb}', f'{target}: {len(lines)} changes')
    for line in lines:
        print(line)
    if not lines:
        print(f'agitmem hooks for {target} already {verb}ed: nothing changed')
    return 0
