"""End to end: the real clients (pinned Claude Code, Codex, Gemini CLI),
offline against the loopback model stand-ins, call agitmem's MCP tools
(registered by `agitmem install AGENT --mcp`): the scripted model calls
`state_set`, then `recall`; the test asserts on the memory ref and on the
tool results the model got back in its next request."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import ClaudeHarness

pytestmark = pytest.mark.e2e

GOAL = 'move loadConfig into index.ts'
NOTE = 'the config cache is keyed by the memory tip'
# Gemini CLI 0.61.0's names for an MCP server's tools
STATE_SET = 'mcp_agitmem_state_set'
RECALL = 'mcp_agitmem_recall'


def _installed(h: Any, agent: str, scope: str = 'local') -> str:
    """A repo with memory, one note and agitmem's MCP server registered for
    agent at scope; the memory ref's tip commit as `git show` prints it."""
    h.init_repo()
    h.agitmem('init')
    h.agitmem('note', NOTE)
    h.agitmem('install', agent, '--mcp', '--scope', scope, '--command', f'{sys.executable} -P -m agitmem')
    return _memory(h)


def _memory(h: Any, spec: str = 'refs/agitmem/heads/main') -> str:
    return str(h.git('show', spec))


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
    before = _installed(claude, 'claude')
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
    assert _memory(claude) != before
    state = json.loads(_memory(claude, 'refs/agitmem/heads/main:state.json'))
    assert state['current_goal'] == GOAL
    assert state['step'] == 1
    # what the model was given back
    results = _tool_results(run.model_requests[-1].body)
    # Claude Code gives the model a tool's structuredContent (as JSON) when
    # there is one, rather than its text
    assert any('"step":1' in r for r in results), results
    assert any(NOTE in r for r in results), results


def _codex_outputs(body: dict[str, Any]) -> list[str]:
    """The text of every Responses-API function_call_output Codex sent."""
    ret = []
    for item in body.get('input') or []:
        if isinstance(item, dict) and item.get('type') == 'function_call_output':
            output = item.get('output')
            ret.append(output if isinstance(output, str) else json.dumps(output))
    return ret


@pytest.mark.parametrize('scope', ['local', 'user'])
def test_codex_calls_the_memory_tools(codex: Any, scope: str) -> None:
    before = _installed(codex, 'codex', scope)
    api = codex.server
    # `codex exec` does not wait for an MCP server that is not `required`:
    # the first turn gets the tools of servers up by then (ours takes
    # seconds to import on a loaded machine)
    with (codex.home / '.codex' / 'config.toml' if scope == 'user' else codex.repo / '.codex' / 'config.toml').open('a') as f:
        f.write('required = true\n')  # our table is the file's last
    # Codex 0.171.0 defers MCP tools behind its client-side tool_search: a
    # model searches, then calls them in the namespace mcp__agitmem
    api.queue_tool_search('agitmem state_set recall memory')
    api.queue_function_call('state_set', {'current_goal': GOAL, 'next_intent': 'update the imports'}, namespace='mcp__agitmem')
    api.queue_function_call('recall', {'query': 'config cache'}, namespace='mcp__agitmem')
    api.queue_text('Memory updated.')
    run = codex.run('Record the goal in memory, then recall the config cache.')
    state = json.loads(_memory(codex, 'refs/agitmem/heads/main:state.json'))
    assert _memory(codex) != before
    assert state['current_goal'] == GOAL
    results = _codex_outputs(run.model_requests[-1].body)
    assert any('step 1' in r or '"step":1' in r or '"step": 1' in r for r in results), results
    assert any(NOTE in r for r in results), results


def _gemini_responses(body: dict[str, Any]) -> list[str]:
    """Every functionResponse Gemini CLI sent, as JSON text."""
    ret = []
    for content in body.get('contents') or []:
        for part in (content.get('parts') or []) if isinstance(content, dict) else ():
            if isinstance(part, dict) and 'functionResponse' in part:
                ret.append(json.dumps(part['functionResponse'], ensure_ascii=False))
    return ret


@pytest.fixture
def gemini(tmp_path: Path) -> Any:
    from testing.fake_gemini import FakeGemini
    from testing.gemini_cli import GeminiHarness
    from testing.gemini_cli import find_gemini
    path, why = find_gemini(tmp_path / 'version-home')
    if path is None:
        pytest.skip(why)
    server = FakeGemini().start()
    try:
        yield GeminiHarness(path, tmp_path, server)
    finally:
        server.stop()


def test_gemini_calls_the_memory_tools(gemini: Any) -> None:
    h = gemini
    before = _installed(h, 'gemini')
    api = h.server
    api.queue_call(STATE_SET, {'current_goal': GOAL, 'next_intent': 'update the imports'})
    api.queue_call(RECALL, {'query': 'config cache'})
    api.queue_text('Memory updated.')
    run = h.run('Record the goal in memory, then recall the config cache.')
    tools = run.model_requests[0].tool_names
    assert STATE_SET in tools and RECALL in tools, tools
    assert _memory(h) != before
    state = json.loads(_memory(h, 'refs/agitmem/heads/main:state.json'))
    assert state['current_goal'] == GOAL
    results = _gemini_responses(run.model_requests[-1].body)
    assert any('step 1' in r for r in results), results
    assert any(NOTE in r for r in results), results
