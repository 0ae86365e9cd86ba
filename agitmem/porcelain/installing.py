"""`install` / `uninstall`: agitmem's hooks in an agent's settings at a
scope, or in git (hook shims and the memory fetch refspec)."""
from __future__ import annotations

import os
from pathlib import Path

from agitmem import config
from agitmem import githooks
from agitmem import repo as repo_mod
from agitmem.agents import mcp_settings
from agitmem.agents import settings
from agitmem.errors import AgitmemError
from agitmem.porcelain import sharing
from agitmem.repo import Repo

AGENTS = ('claude', 'codex', 'gemini')
TARGETS = (*AGENTS, 'git')
DEFAULT_SCOPE = settings.DEFAULT_SCOPE


def check_target(target: str) -> None:
    if target not in TARGETS:
        raise AgitmemError(
            f'unknown target "{target}": expected one of {", ".join(TARGETS)}',
        )


def _local_rel(agent: str) -> str:
    return settings.relative(agent, 'local')


def _exclude_line(agent: str) -> str:
    return f'/{_local_rel(agent)}'


def install_agent(
        repo: Repo,
        agent: str,
        scope: str,
        command: str,
        *,
        home: Path | None = None,
) -> list[str]:
    """Merge agitmem's hooks into `agent`'s settings at `scope`.  The local
    scope keeps its file out of git (.git/info/exclude), and refuses a
    file git already tracks: hooks there would reach every teammate."""
    check_target(agent)
    settings.check_scope(scope)
    rel = _local_rel(agent)
    if scope == 'local':
        _own_path(repo, agent, home)
    if scope == 'local' and repo_mod.tracked(repo, rel):
        raise AgitmemError(
            f'{rel} is tracked in this repository: hooks installed there '
            f'reach every teammate; use --scope project to share them on '
            f'purpose, or --scope user for yourself only',
        )
    # the settings first: a file it refuses leaves everything as it was
    changes = settings.install(agent, repo.root, command=command, scope=scope, home=home)
    if scope == 'local' and repo_mod.exclude(repo, _exclude_line(agent)):
        changes.append(f'{rel} added to .git/info/exclude (it stays out of git)')
    return changes


def _own_path(repo: Repo, agent: str, home: Path | None) -> None:
    """The local scope's file is kept out of git by its path: one reached
    through a symlink lives elsewhere, where git sees it."""
    path = settings.settings_file(agent, 'local', repo.root, home)
    real = settings.target(agent, 'local', repo.root, home)
    if Path(os.path.realpath(repo.root)) / path.relative_to(repo.root) != real:
        raise AgitmemError(
            f'{_local_rel(agent)} leads to {real} through a symlink: the local '
            f'scope writes only a file git ignores by its own path; use '
            f'--scope project, or remove the symlink',
        )


def uninstall_agent(
        repo: Repo,
        agent: str,
        scope: str,
        *,
        home: Path | None = None,
) -> list[str]:
    check_target(agent)
    settings.check_scope(scope)
    lines = settings.uninstall(agent, repo.root, scope=scope, home=home)
    path = settings.settings_file(agent, scope, repo.root, home)
    if scope == 'local' and not path.exists():
        if repo_mod.unexclude(repo, _exclude_line(agent)):
            lines.append(f'{_local_rel(agent)} taken out of .git/info/exclude')
    return lines


def elsewhere(repo: Repo, agent: str, scope: str, *, home: Path | None = None) -> list[str]:
    """The other scopes where agitmem's hooks for `agent` are installed."""
    return [
        other for other in settings.SCOPES
        if other != scope and
        settings.settings_file(agent, other, repo.root, home) !=
        settings.settings_file(agent, scope, repo.root, home) and
        settings.installed(agent, settings.settings_file(agent, other, repo.root, home))
    ]


def _mcp_local_rel(agent: str, repo: Repo, home: Path | None) -> str | None:
    """The local scope's MCP file as a path in the repository (None when
    it lives in the home directory: Claude Code's ~/.claude.json)."""
    where = mcp_settings.place(agent, 'local', repo.root, home)
    return where.shown if where.base == repo.root else None


def check_mcp(repo: Repo, agent: str, scope: str, command: str, *, home: Path | None = None) -> None:
    """What install_mcp would refuse, refused before the hooks are written."""
    check_target(agent)
    rel = _mcp_local_rel(agent, repo, home) if scope == 'local' else None
    if rel is not None and repo_mod.tracked(repo, rel):
        raise AgitmemError(
            f'{rel} is tracked in this repository: a server registered there '
            f'reaches every teammate; use --scope project to share it on '
            f'purpose, or --scope user for yourself only',
        )
    mcp_settings.install(agent, scope, repo.root, command, home=home, write=False)


def install_mcp(
        repo: Repo, agent: str, scope: str, command: str, *, home: Path | None = None,
) -> list[str]:
    """Register agitmem's MCP server in `agent`'s MCP configuration at
    `scope`; a local file in the repository is kept out of git as the
    hooks' is, and refused when git tracks it."""
    check_mcp(repo, agent, scope, command, home=home)
    rel = _mcp_local_rel(agent, repo, home) if scope == 'local' else None
    changes = mcp_settings.install(agent, scope, repo.root, command, home=home)
    if rel is not None and repo_mod.exclude(repo, f'/{rel}'):
        changes.append(f'{rel} added to .git/info/exclude (it stays out of git)')
    return changes


def uninstall_mcp(repo: Repo, agent: str, scope: str, *, home: Path | None = None) -> list[str]:
    check_target(agent)
    lines = mcp_settings.uninstall(agent, scope, repo.root, home=home)
    rel = _mcp_local_rel(agent, repo, home) if scope == 'local' else None
    if rel is not None and not (repo.root / rel).exists() and repo_mod.unexclude(repo, f'/{rel}'):
        lines.append(f'{rel} taken out of .git/info/exclude')
    return lines


def install_git(repo: Repo) -> list[str]:
    """The six git hook shims, and the memory fetch refspec on every remote
    (unless `fetch_refspec: false`)."""
    lines = githooks.install(repo)
    if config.load(repo)['fetch_refspec']:
        lines += sharing.add_fetch_specs(repo)
    return lines


def uninstall_git(repo: Repo) -> list[str]:
    """Everything agitmem put into git: the hook shims (the hooks they
    chained put back) and the memory fetch refspecs."""
    return githooks.uninstall(repo) + sharing.remove_fetch_specs(repo)
