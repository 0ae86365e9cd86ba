"""`install AGENT --mcp` / `uninstall AGENT [--mcp]`: agitmem's MCP server
in each client's own MCP configuration, at the hooks' scope."""
from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from testing.util import bad
from testing.util import git
from testing.util import ok

CMD = f'{sys.executable} -P -m agitmem'
ARGS = ['-P', '-m', 'agitmem', 'mcp']


def _home() -> Path:
    return Path(os.environ['HOME'])


def _servers(agent: str, scope: str, repo: Path) -> dict[str, object]:
    if agent == 'claude':
        if scope == 'project':
            return json.loads((repo / '.mcp.json').read_text())['mcpServers']  # type: ignore[no-any-return]
        data = json.loads((_home() / '.claude.json').read_text())
        if scope == 'local':
            data = data['projects'][str(repo)]
        return data['mcpServers']  # type: ignore[no-any-return]
    if agent == 'codex':
        base = _home() if scope == 'user' else repo
        return tomllib.loads((base / '.codex' / 'config.toml').read_text())['mcp_servers']  # type: ignore[no-any-return]
    base = _home() if scope == 'user' else repo
    return json.loads((base / '.gemini' / 'settings.json').read_text())['mcpServers']  # type: ignore[no-any-return]


@pytest.mark.parametrize('agent', ['claude', 'codex', 'gemini'])
@pytest.mark.parametrize('scope', ['local', 'project', 'user'])
def test_install_registers_and_uninstall_removes(memrepo: Path, agent: str, scope: str) -> None:
    out = ok('install', agent, '--scope', scope, '--mcp', '--command', CMD, cwd=memrepo)
    assert f'MCP server agitmem: {shlex.join([sys.executable, *ARGS])} (added)' in out
    entry = _servers(agent, scope, memrepo)['agitmem']
    assert isinstance(entry, dict)
    assert entry['command'] == sys.executable
    assert entry['args'] == ARGS
    # idempotent
    again = ok('install', agent, '--scope', scope, '--mcp', '--command', CMD, cwd=memrepo)
    assert 'already installed' in again
    out = ok('uninstall', agent, '--scope', scope, cwd=memrepo)
    assert 'removed MCP server agitmem' in out


@pytest.mark.parametrize('agent', ['claude', 'codex', 'gemini'])
@pytest.mark.parametrize('command', ['uvx agitmem', 'uvx agitmem@latest', 'pipx run agitmem==0.4.1'])
def test_a_launchers_server_entry_is_agitmems(memrepo: Path, agent: str, command: str) -> None:
    """`install --mcp --command` with a launcher before agitmem (`uvx
    agitmem`): the server entry it wrote is agitmem's.  It was taken for
    another's: the next install refused (exit 2, "is not agitmem's") and
    uninstall left it, hooks gone and the server still registered."""
    ok('install', agent, '--scope', 'project', '--mcp', '--command', command, cwd=memrepo)
    assert _servers(agent, 'project', memrepo)['agitmem'] == {
        **({'type': 'stdio'} if agent == 'claude' else {}),
        'command': command.split()[0], 'args': [*command.split()[1:], 'mcp'],
    }
    assert 'already installed' in ok('install', agent, '--scope', 'project', '--mcp', '--command', command, cwd=memrepo)
    assert 'removed MCP server agitmem' in ok('uninstall', agent, '--scope', 'project', cwd=memrepo)


def test_claude_project_keeps_other_servers(memrepo: Path) -> None:
    mine = {'mcpServers': {'other': {'command': 'other-server', 'args': ['x']}}, 'x': 1}
    (memrepo / '.mcp.json').write_text(json.dumps(mine))
    ok('install', 'claude', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    data = json.loads((memrepo / '.mcp.json').read_text())
    assert data['mcpServers']['other'] == mine['mcpServers']['other']
    assert data['mcpServers']['agitmem'] == {'type': 'stdio', 'command': 'agitmem', 'args': ['mcp']}
    ok('uninstall', 'claude', '--scope', 'project', '--mcp', cwd=memrepo)
    assert json.loads((memrepo / '.mcp.json').read_text()) == mine
    # --mcp took the entry only: the hooks stay
    assert (memrepo / '.claude' / 'settings.json').exists()


def test_claude_project_file_of_ours_only_goes(memrepo: Path) -> None:
    ok('install', 'claude', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    ok('uninstall', 'claude', '--scope', 'project', cwd=memrepo)
    assert not (memrepo / '.mcp.json').exists()


def test_codex_toml_keeps_formatting_comments_and_servers(memrepo: Path) -> None:
    config = memrepo / '.codex' / 'config.toml'
    config.parent.mkdir()
    original = (
        '# my codex settings\n'
        'model = "gpt-5.5"  # the one\n\n'
        '[mcp_servers.docs]\n'
        'command = "docs-server"\n'
        'args = ["--port", "0"]\n\n'
        '[mcp_servers.docs.env]\n'
        'TOKEN_VAR = "X"\n'
    )
    config.write_text(original)
    ok('install', 'codex', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    text = config.read_text()
    assert text.startswith(original)
    assert tomllib.loads(text)['mcp_servers']['agitmem'] == {'command': 'agitmem', 'args': ['mcp']}
    # a changed command replaces our table, once
    ok('install', 'codex', '--scope', 'project', '--mcp', '--command', CMD, cwd=memrepo)
    text = config.read_text()
    assert text.count('[mcp_servers.agitmem]') == 1
    assert tomllib.loads(text)['mcp_servers']['agitmem']['args'] == ARGS
    ok('uninstall', 'codex', '--scope', 'project', '--mcp', cwd=memrepo)
    assert config.read_text() == original


def test_codex_user_scope_follows_codex_home(memrepo: Path, tmp_path: Path) -> None:
    codex_home = tmp_path / 'codex-home'
    env = {'CODEX_HOME': str(codex_home)}
    out = ok('install', 'codex', '--scope', 'user', '--mcp', '--command', 'agitmem', cwd=memrepo, env=env)
    assert '$CODEX_HOME/config.toml: MCP server agitmem' in out
    assert 'agitmem' in tomllib.loads((codex_home / 'config.toml').read_text())['mcp_servers']


def test_local_scope_in_the_repository_stays_out_of_git(memrepo: Path) -> None:
    ok('install', 'codex', '--scope', 'local', '--mcp', '--command', 'agitmem', cwd=memrepo)
    assert '/.codex/config.toml' in (memrepo / '.git' / 'info' / 'exclude').read_text()
    assert git('status', '--porcelain', '--', '.codex', cwd=memrepo) == ''
    ok('uninstall', 'codex', '--scope', 'local', cwd=memrepo)
    assert '/.codex/config.toml' not in (memrepo / '.git' / 'info' / 'exclude').read_text()


def test_a_tracked_local_file_is_refused(memrepo: Path) -> None:
    config = memrepo / '.codex' / 'config.toml'
    config.parent.mkdir()
    config.write_text('model = "x"\n')
    git('add', '-f', '.codex/config.toml', cwd=memrepo)
    said = bad('install', 'codex', '--scope', 'local', '--mcp', '--command', 'agitmem', cwd=memrepo)
    assert 'is tracked in this repository' in said


def test_a_foreign_server_named_agitmem_is_kept(memrepo: Path) -> None:
    theirs = {'mcpServers': {'agitmem': {'command': 'curl', 'args': ['http://x']}}}
    (memrepo / '.mcp.json').write_text(json.dumps(theirs))
    said = bad('install', 'claude', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    assert 'is not agitmem\'s' in said
    ok('uninstall', 'claude', '--scope', 'project', '--mcp', cwd=memrepo)
    assert json.loads((memrepo / '.mcp.json').read_text()) == theirs


def test_a_symlink_out_of_the_repository_is_refused(memrepo: Path, tmp_path: Path) -> None:
    outside = tmp_path / 'elsewhere.json'
    outside.write_text('{}')
    (memrepo / '.mcp.json').symlink_to(outside)
    said = bad('install', 'claude', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    assert 'outside the repository' in said
    assert outside.read_text() == '{}'


def test_codex_inline_table_is_not_edited_by_guesswork(memrepo: Path) -> None:
    config = memrepo / '.codex' / 'config.toml'
    config.parent.mkdir()
    original = 'mcp_servers = { agitmem = { command = "agitmem", args = ["x"] } }\n'
    config.write_text(original)
    said = bad('install', 'codex', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    assert 'is not agitmem\'s' in said or 'does not edit' in said
    assert config.read_text() == original


def test_broken_files_change_nothing(memrepo: Path) -> None:
    (memrepo / '.mcp.json').write_text('{"mcpServers": [')
    assert 'not valid JSON' in bad('install', 'claude', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    config = memrepo / '.codex' / 'config.toml'
    config.parent.mkdir()
    config.write_text('[mcp_servers\n')
    assert 'not valid TOML' in bad('install', 'codex', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo)
    (memrepo / '.gemini').mkdir()
    (memrepo / '.gemini' / 'settings.json').write_text('{"mcpServers": 3}')
    assert '"mcpServers" is a JSON number' in bad(
        'install', 'gemini', '--scope', 'project', '--mcp', '--command', 'agitmem', cwd=memrepo,
    )


def test_git_has_no_mcp(memrepo: Path) -> None:
    assert '--mcp is for agents' in bad('install', 'git', '--mcp', cwd=memrepo)
