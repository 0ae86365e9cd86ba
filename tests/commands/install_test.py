from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import bad
from testing.util import ok


@pytest.mark.parametrize(
    ('agent', 'path', 'events'),
    (
        ('claude', '.claude/settings.json', {'SessionStart', 'PreCompact', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'PostToolUseFailure'}),
        ('codex', '.codex/hooks.json', {'SessionStart', 'PreCompact', 'PostToolUse', 'UserPromptSubmit', 'Stop'}),
        ('gemini', '.gemini/settings.json', {'SessionStart', 'PreCompress', 'AfterTool', 'BeforeAgent', 'AfterAgent'}),
    ),
)
def test_install_uninstall_round_trip(memrepo: Path, agent: str, path: str, events: set[str]) -> None:
    settings = memrepo / path
    settings.parent.mkdir()
    original = {
        'model': 'x',
        'hooks': {'Stop' if agent != 'gemini' else 'AfterAgent': [
            {'hooks': [{'type': 'command', 'command': 'echo mine'}]},
        ]},
    }
    settings.write_text(json.dumps(original, indent=2) + '\n')
    out = ok('install', agent, cwd=memrepo)
    assert 'added' in out
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
    assert 'nothing changed' in ok('install', agent, cwd=memrepo)
    assert settings.read_bytes() == once
    ok('uninstall', agent, cwd=memrepo)
    assert json.loads(settings.read_text()) == original


def test_install_refuses_non_json_settings(memrepo: Path) -> None:
    settings = memrepo / '.claude' / 'settings.json'
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}}\n')
    line = bad('install', 'claude', cwd=memrepo)
    assert '.claude/settings.json: not valid JSON' in line and 'line 1' in line
    assert settings.read_text() == '{"hooks": {,}}\n'


def test_install_unknown_target(memrepo: Path) -> None:
    assert 'unknown target "vim"' in bad('install', 'vim', cwd=memrepo)
