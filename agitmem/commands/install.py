from __future__ import annotations

import os
import shlex
import shutil
import sys

from agitmem import audit
from agitmem import repo as repo_mod
from agitmem.agents.settings import relative
from agitmem.errors import AgitmemError
from agitmem.porcelain import installing


def hook_command() -> str:
    """How the hooks call agitmem: plain `agitmem` when that is this one on
    PATH, else this interpreter, so hooks work outside an activated venv."""
    found = shutil.which('agitmem')
    here = os.path.join(os.path.dirname(sys.executable), 'agitmem')
    if found and (os.path.realpath(found) == os.path.realpath(here) or not os.path.exists(here)):
        return 'agitmem'
    return f'{shlex.quote(sys.executable)} -m agitmem'


def install(target: str, *, remove: bool, command: str | None, scope: str | None) -> int:
    installing.check_target(target)
    repo = repo_mod.find()
    if target == 'git':
        if scope is not None:
            raise AgitmemError(
                '--scope is for agents; git hooks live in the repository\'s '
                'hooks directory',
            )
        lines = installing.uninstall_git(repo) if remove else installing.install_git(repo)
    else:
        scope = scope or installing.DEFAULT_SCOPE
        if remove:
            lines = installing.uninstall_agent(repo, target, scope)
        else:
            lines = installing.install_agent(
                repo, target, scope, command or hook_command(),
            )
    verb = 'uninstall' if remove else 'install'
    audit.log(repo.agent_dir, f'write {verb}', f'{target}: {len(lines)} changes')
    for line in lines:
        print(line)
    if not lines:
        where = f' ({relative(target, scope)})' if target != 'git' and scope else ''
        print(f'agitmem hooks for {target} already {verb}ed{where}: nothing changed')
        if remove and target != 'git' and scope:
            for other in installing.elsewhere(repo, target, scope):
                print(
                    f'  they are installed in {relative(target, other)}: '
                    f'`agitmem uninstall {target} --scope {other}`',
                )
    return 0
