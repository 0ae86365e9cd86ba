from __future__ import annotations

import os

from agitmem import audit
from agitmem import repo as repo_mod
from agitmem.agents import launcher
from agitmem.agents.settings import relative
from agitmem.errors import AgitmemError
from agitmem.porcelain import installing


def install(
        target: str, *, remove: bool, command: str | None, scope: str | None, mcp: bool = False,
) -> int:
    installing.check_target(target)
    repo = repo_mod.find()
    if target == 'git' and mcp:
        raise AgitmemError('--mcp is for agents: git has no MCP client')
    # (once taken and dropped without a word)
    if command is not None and remove:
        raise AgitmemError('--command is for install: uninstall takes out agitmem\'s entries however they call it')
    if command is not None and target == 'git':
        raise AgitmemError(
            '--command is for agents: git\'s hooks call agitmem found on PATH, '
            'else the python agitmem was installed with',
        )
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
            # the MCP entry goes with the hooks; --mcp: the entry only
            lines = [] if mcp else installing.uninstall_agent(repo, target, scope)
            lines += installing.uninstall_mcp(repo, target, scope)
        else:
            why = None
            if command is None:
                path = launcher.client_path(os.environ)
                command, why = launcher.hook_command(path)
                # the hooks' own program when the client finds this agitmem's:
                # no console-script wrapper on every prompt, edit and model call
                hooks = (launcher.hook_program(path) if command == 'agitmem' else None) or command
            elif launcher.names_hook_program(command):
                raise AgitmemError(
                    f'--command is how to run agitmem itself (its MCP server too); '
                    f'{launcher.HOOK_PROGRAM} is the hooks\' own program, which install '
                    f'chooses when the login shell finds it',
                )
            else:
                hooks = command
            if mcp:  # a refusal leaves the hooks as they were too
                installing.check_mcp(repo, target, scope, command)
            lines = installing.install_agent(repo, target, scope, hooks)
            if mcp:
                lines += installing.install_mcp(repo, target, scope, command)
            if lines and why:
                lines.append(
                    f'the hooks call {command}, by absolute path: {why}; '
                    f'install agitmem as a tool (see the README) for plain `agitmem`',
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
