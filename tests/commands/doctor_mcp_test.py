"""`doctor` and agitmem's MCP server entries: parsed, never run; an entry
of ours makes doctor start THIS agitmem's `mcp` and do the handshake."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from testing.util import agitmem
from testing.util import ok

CMD = f'{sys.executable} -P -m agitmem'


def _findings(repo: Path) -> tuple[int, list[dict[str, str]]]:
    proc = agitmem('doctor', '--json', cwd=repo)
    assert 'Traceback' not in proc.stderr, proc.stderr
    return proc.returncode, [f for f in json.loads(proc.stdout)['findings'] if f['check'] == 'mcp-server']


def _entry(repo: Path, server: dict[str, object]) -> None:
    (repo / '.mcp.json').write_text(json.dumps({'mcpServers': {'agitmem': server}}))


def test_our_server_starts_and_lists_its_tools(memrepo: Path) -> None:
    ok('install', 'claude', '--scope', 'project', '--mcp', '--command', CMD, cwd=memrepo)
    _, found = _findings(memrepo)
    assert [(f['level'], f['message']) for f in found] == [
        ('ok', 'claude: MCP server agitmem in .mcp.json starts and lists its tools'),
    ]


def test_hooks_without_a_server_is_said_not_blamed(memrepo: Path) -> None:
    ok('install', 'gemini', '--command', CMD, cwd=memrepo)
    _, found = _findings(memrepo)
    assert [(f['level'], f['message']) for f in found] == [
        ('ok', 'gemini: no agitmem MCP server (optional: memory as tools)'),
    ]


def test_a_foreign_entry_is_reported_and_never_run(memrepo: Path, tmp_path: Path) -> None:
    marker = tmp_path / 'PWNED'
    _entry(memrepo, {'command': '/bin/sh', 'args': ['-c', f'touch {marker}', 'mcp']})
    _, found = _findings(memrepo)
    assert found[0]['level'] == 'warning'
    assert 'is not agitmem\'s' in found[0]['message']
    assert not marker.exists()


def test_a_broken_entry_is_an_error(memrepo: Path, tmp_path: Path) -> None:
    marker = tmp_path / 'PWNED'
    python = memrepo / 'python3'
    python.write_text(f'#!/bin/sh\ntouch {marker}\n')
    python.chmod(0o755)
    for command, said in (
        ('./python3', 'is a relative path'),
        ('/nonexistent/python3', 'is not found'),
    ):
        _entry(memrepo, {'command': command, 'args': ['-P', '-m', 'agitmem', 'mcp']})
        code, found = _findings(memrepo)
        assert code == 1
        assert found[0]['level'] == 'error', found
        assert said in found[0]['message'], found
    _entry(memrepo, {'command': sys.executable, 'args': ['-m', 'agitmem', 'mcp']})
    _, found = _findings(memrepo)
    assert 'without -P' in found[0]['message']
    assert not marker.exists()


def test_a_server_that_cannot_start_is_an_error(memrepo: Path) -> None:
    # this agitmem without the SDK: the handshake gets no answer
    ok('install', 'claude', '--scope', 'project', '--mcp', '--command', CMD, cwd=memrepo)
    site = memrepo.parent / 'no-sdk'
    site.mkdir()
    (site / 'mcp.py').write_text('raise ImportError("no SDK here")\n')
    proc = agitmem('doctor', '--json', cwd=memrepo, env={'PYTHONPATH': str(site)})
    # doctor starts its server with PYTHONPATH dropped: the SDK is found
    found = [f for f in json.loads(proc.stdout)['findings'] if f['check'] == 'mcp-server']
    assert found[0]['level'] == 'ok', found
