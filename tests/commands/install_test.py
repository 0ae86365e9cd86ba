from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from testing.util import bad
from testing.util import git
from testing.util import ok

_CLAUDE = {'SessionStart', 'PreCompact', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'PostToolUseFailure', 'PostCompact'}
_CODEX = {'SessionStart', 'PreCompact', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'PostCompact'}
_GEMINI = {'SessionStart', 'PreCompress', 'AfterTool', 'BeforeAgent', 'AfterAgent', 'BeforeModel'}


def _home() -> Path:
    return Path(os.environ['HOME'])


@pytest.mark.parametrize(
    ('agent', 'scope', 'path', 'events'),
    (
        ('claude', 'local', '.claude/settings.local.json', _CLAUDE),
        ('claude', 'project', '.claude/settings.json', _CLAUDE),
        ('claude', 'user', '~/.claude/settings.json', _CLAUDE),
        ('codex', 'project', '.codex/hooks.json', _CODEX),
        ('codex', 'user', '~/.codex/hooks.json', _CODEX),
        ('gemini', 'local', '.gemini/settings.json', _GEMINI),
        ('gemini', 'user', '~/.gemini/settings.json', _GEMINI),
    ),
)
def test_install_uninstall_round_trip(
        memrepo: Path, agent: str, scope: str, path: str, events: set[str],
) -> None:
    if path.startswith('~/'):
        settings = _home() / path[2:]
    else:
        settings = memrepo / path
    settings.parent.mkdir(exist_ok=True)
    original = {
        'model': 'x',
        'hooks': {'Stop' if agent != 'gemini' else 'AfterAgent': [
            {'hooks': [{'type': 'command', 'command': 'echo mine'}]},
        ]},
    }
    settings.write_text(json.dumps(original, indent=2) + '\n')
    out = ok('install', agent, '--scope', scope, cwd=memrepo)
    assert f'{path}: added' in out
    data = json.loads(settings.read_text())
    assert data['model'] == 'x'
    assert set(data['hooks']) == events
    commands = [h['command'] for groups in data['hooks'].values() for g in groups for h in g['hooks']]
    assert 'echo mine' in commands
    assert sum('hook ' in c and 'agitmem' in c for c in commands) == len(events)
    if agent == 'claude':
        assert data['hooks']['SessionStart'][0]['matcher'] == 'startup|resume|clear|compact'
    if agent == 'codex':
        assert '/hooks' in out
    once = settings.read_bytes()
    assert 'nothing changed' in ok('install', agent, '--scope', scope, cwd=memrepo)
    assert settings.read_bytes() == once
    ok('uninstall', agent, '--scope', scope, cwd=memrepo)
    assert json.loads(settings.read_text()) == original


def test_install_refuses_non_json_settings(memrepo: Path) -> None:
    settings = memrepo / '.claude' / 'settings.json'
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}}\n')
    line = bad('install', 'claude', '--scope', 'project', cwd=memrepo)
    assert '.claude/settings.json: not valid JSON' in line and 'line 1' in line
    assert settings.read_text() == '{"hooks": {,}}\n'


@pytest.mark.parametrize(
    ('agent', 'path'),
    (
        ('claude', '.claude/settings.local.json'),
        ('codex', '.codex/hooks.json'),
        ('gemini', '.gemini/settings.json'),
    ),
)
def test_default_scope_stays_out_of_git(memrepo: Path, agent: str, path: str) -> None:
    """The default never puts hooks that need agitmem into a teammate's
    checkout: the file is written, and git does not see it."""
    out = ok('install', agent, cwd=memrepo)
    assert f'{path} added to .git/info/exclude' in out
    assert 'agitmem' in (memrepo / path).read_text()
    assert git('status', '--porcelain', '--untracked-files=all', cwd=memrepo) == ''
    git('add', '.', cwd=memrepo)
    assert git('diff', '--cached', '--name-only', cwd=memrepo) == ''
    assert not (memrepo / '.claude' / 'settings.json').exists()

    out = ok('uninstall', agent, cwd=memrepo)
    assert f'{path} taken out of .git/info/exclude' in out
    assert not (memrepo / path).exists()
    exclude = (memrepo / '.git' / 'info' / 'exclude').read_text()
    assert path not in exclude and '/.agent/' in exclude


def test_local_scope_refuses_a_tracked_file(memrepo: Path) -> None:
    hooks = memrepo / '.codex' / 'hooks.json'
    hooks.parent.mkdir()
    hooks.write_text('{"hooks": {}}\n')
    git('add', '.codex/hooks.json', cwd=memrepo)
    git('commit', '-q', '-m', 'team codex hooks', cwd=memrepo)
    line = bad('install', 'codex', cwd=memrepo)
    assert '.codex/hooks.json is tracked' in line and '--scope project' in line
    assert hooks.read_text() == '{"hooks": {}}\n'
    assert '/.codex/hooks.json' not in (memrepo / '.git' / 'info' / 'exclude').read_text()
    # sharing them is a choice the user makes by name
    ok('install', 'codex', '--scope', 'project', cwd=memrepo)
    assert git('status', '--porcelain', cwd=memrepo) == ' M .codex/hooks.json\n'


def test_user_scope_leaves_the_project_alone(memrepo: Path) -> None:
    out = ok('install', 'claude', '--scope', 'user', cwd=memrepo)
    assert '~/.claude/settings.json: added SessionStart hook' in out
    data = json.loads((_home() / '.claude' / 'settings.json').read_text())
    assert set(data['hooks']) == _CLAUDE  # PostToolUseFailure too: a failed Bash
    assert not (memrepo / '.claude').exists()
    assert '.claude' not in (memrepo / '.git' / 'info' / 'exclude').read_text()


def test_uninstall_names_the_scope_the_hooks_are_in(memrepo: Path) -> None:
    ok('install', 'gemini', '--scope', 'user', cwd=memrepo)
    out = ok('uninstall', 'gemini', cwd=memrepo)
    assert 'already uninstalled (.gemini/settings.json): nothing changed' in out
    assert '`agitmem uninstall gemini --scope user`' in out
    assert (_home() / '.gemini' / 'settings.json').exists()
    ok('uninstall', 'gemini', '--scope', 'user', cwd=memrepo)
    assert not (_home() / '.gemini' / 'settings.json').exists()


def test_scope_is_for_agents_only(memrepo: Path) -> None:
    assert '--scope is for agents' in bad('install', 'git', '--scope', 'user', cwd=memrepo)
    assert 'invalid choice' in bad('install', 'claude', '--scope', 'team', cwd=memrepo)


def test_install_unknown_target(memrepo: Path) -> None:
    assert 'unknown target "vim"' in bad('install', 'vim', cwd=memrepo)
