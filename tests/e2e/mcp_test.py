"""End to end: the real clients (pinned Claude Code, Codex, Gemini CLI),
offline against the loopback model stand-ins, call agitmem's MCP tools
(registered by `agitmem install AGENT --mcp`): the scripted model calls
`state_set`, then `recall`; the test asserts on the memory ref and on the
tool results the model got back in its next request."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import ClaudeHarness

pytestmark = pytest.mark.e2e

GOAL = 'move loadConfig into index.ts'
NOTE = 'the config cache is keyed by the memory tip'


def _agitmem(cwd: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, '-m', 'agitmem', *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def _memory(repo: Path, env: dict[str, str], spec: str) -> str:
    return subprocess.run(
        ['git', 'show', spec], cwd=repo, env=env, capture_output=True, text=True, check=True,
    ).stdout


def _tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every Messages-API tool_result the client sent."""
    ret = []
    for message in body.get('messages') or []:
        content = message.get('content') if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get('type') == 'tool_result':
                inner = block.get('content')
                if isinstance(inner, list):
                    ret.append('\n'.join(str(b.get('text', '')) for b in inner if isinstance(b, dict)))
                else:
                    ret.append(str(inner))
    return ret


def test_claude_calls_the_memory_tools(claude: ClaudeHarness) -> None:
    claude.init_repo()
    env = claude.env
    _agitmem(claude.repo, env, 'init')
    _agitmem(claude.repo, env, 'note', NOTE)
    _agitmem(
        claude.repo, env, 'install', 'claude', '--mcp', '--scope', 'local',
        '--command', f'{sys.executable} -P -m agitmem',
    )
    before = _memory(claude.repo, env, 'refs/agitmem/heads/main')
    api = claude.server
    # Claude Code 2.1.332 defers MCP tools behind ToolSearch (the first
    # request lists the server as still connecting): a model loads them first
    api.queue_tool_use('ToolSearch', {'query': 'select:mcp__agitmem__state_set,mcp__agitmem__recall'})
    api.queue_tool_use('mcp__agitmem__state_set', {'current_goal': GOAL, 'next_intent': 'update the imports'})
    api.queue_tool_use('mcp__agitmem__recall', {'query': 'config cache'})
    api.queue_text('Memory updated.')
    run = claude.run('Record the goal in memory, then recall the config cache.')

    tools = run.model_requests[1].tool_names
    assert 'mcp__agitmem__state_set' in tools and 'mcp__agitmem__recall' in tools, tools
    # the memory ref: the state changed, committed
    assert _memory(claude.repo, env, 'refs/agitmem/heads/main') != before
    state = json.loads(_memory(claude.repo, env, 'refs/agitmem/heads/main:state.json'))
    assert state['current_goal'] == GOAL
    assert state['step'] == 1
    # what the model was given back
    results = _tool_results(run.model_requests[-1].body)
    # Claude Code gives the model a tool's structuredContent (as JSON) when
    # there is one, rather than its text
    assert any('"step":1' in r for r in results), results
    assert any(NOTE in r for r in results), results
