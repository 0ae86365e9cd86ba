"""`agitmem mcp`: the real server over stdio, driven by a plain JSON-RPC
client (testing/mcp_client.py), in real repositories."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.mcp_client import McpClient
from testing.mcp_client import served
from testing.mcp_client import text
from testing.mcp_client import user_allows
from testing.util import agitmem_argv
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import message
from testing.util import ok

TOKEN = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'
TOOLS = ['load', 'state_set', 'note', 'fragment_add', 'verify', 'recall', 'recovery']


@pytest.fixture
def server(memrepo: Path) -> Iterator[McpClient]:
    with served(memrepo) as client:
        yield client


def _error(result: dict[str, object]) -> str:
    assert result.get('isError') is True, result
    said = text(result)
    assert 'Traceback' not in said
    assert len(said.splitlines()) == 1, said
    return said


def test_lists_the_tools_with_schemas(server: McpClient) -> None:
    tools = server.tools()
    assert [t['name'] for t in tools] == TOOLS
    for t in tools:
        assert t['inputSchema']['type'] == 'object', t
        assert t['description']
    by_name = {t['name']: t['inputSchema'] for t in tools}
    assert by_name['recall']['required'] == ['query']
    assert by_name['fragment_add']['required'] == ['goal', 'next']


def test_state_set_commits_on_the_memory_ref(server: McpClient, memrepo: Path) -> None:
    before = count(memrepo)
    result = server.call('state_set', {'current_goal': 'ship the loader', 'other': {'ticket': 'T-1'}})
    assert not result.get('isError'), result
    assert 'step 1' in text(result)
    assert result['structuredContent']['step'] == 1
    assert count(memrepo) == before + 1
    assert message(memrepo).startswith('state: current_goal, ticket')
    saved = json.loads(git('show', 'refs/agitmem/heads/main:state.json', cwd=memrepo))
    assert saved['current_goal'] == 'ship the loader'
    assert saved['ticket'] == 'T-1'
    assert saved['tree']  # stamped as the command stamps it


def test_note_fragment_and_recall(server: McpClient, memrepo: Path) -> None:
    assert text(server.call('note', {'text': 'the cache key is the tip'})) == 'noted (1 notes)'
    first = server.call('fragment_add', {'goal': 'index recall', 'next': 'bench it'})
    assert first['structuredContent'] == {'id': 'A-001'}
    second = server.call('fragment_add', {'goal': 'bench recall', 'next': 'ship', 'refs': ['A-001']})
    assert second['structuredContent'] == {'id': 'A-002'}
    assert 'A-002' in git('show', 'refs/agitmem/heads/main:fragments.jsonl', cwd=memrepo)
    hits = server.call('recall', {'query': 'cache key'})
    assert not hits.get('isError'), hits
    assert 'the cache key is the tip' in text(hits)
    assert hits['structuredContent']['hits'][0]['kind'] == 'note'
    by_id = server.call('recall', {'query': 'A-002', 'limit': 3})
    assert by_id['structuredContent']['hits'][0]['id'] == 'A-002'


def test_load_gives_the_injection_block(server: McpClient, memrepo: Path) -> None:
    server.call('state_set', {'next_intent': 'write the tests'})
    result = server.call('load', {})
    said = text(result)
    assert said.startswith('===== AGENT MEMORY BEGIN =====')
    assert 'write the tests' in said
    assert result['structuredContent']['tokens'] > 0
    # a fragments line broken by hand: named, and the rest still given
    with open(memrepo / '.agent' / 'memory' / 'fragments.jsonl', 'a') as f:
        f.write('{"id": "Z-001", oops}\n')
    result = server.call('load', {})
    assert not result.get('isError'), result
    assert 'write the tests' in text(result)
    assert 'NOTE: .agent/memory/fragments.jsonl:1: not valid JSON' in text(result)
    assert any('fragments.jsonl:1: not valid JSON' in w for w in result['structuredContent']['warnings'])


FAIL = shlex.join([sys.executable, '-c', 'import sys; print("E boom"); sys.exit(3)'])
PASS = shlex.join([sys.executable, '-c', 'pass'])
SLEEP = shlex.join([sys.executable, '-c', 'import time; time.sleep(60)'])


def test_verify_runs_a_command_the_user_listed(memrepo: Path) -> None:
    user_allows(FAIL, PASS)
    with served(memrepo) as server:
        failed = server.call('verify', {'command': FAIL})
        assert failed['structuredContent']['result'] == 'failed'
        assert failed['structuredContent']['exit_code'] == 3
        assert failed['structuredContent']['reported'] is False
        state = json.loads(mem(memrepo, 'state.json').read_text())
        assert state['last_verification']['exit_code'] == 3
        assert 'reported' not in state['last_verification']
        assert message(memrepo).startswith('verify: last_verification')
        passed = server.call('verify', {'command': PASS})
        assert passed['structuredContent']['result'] == 'passed'


def test_verify_records_a_run_the_agent_reports(server: McpClient, memrepo: Path) -> None:
    result = server.call('verify', {'command': 'make check', 'exit_code': 2, 'output': 'E   assert 1 == 2\n1 failed'})
    assert result['structuredContent'] == {
        'result': 'failed', 'exit_code': 2, 'reason': result['structuredContent']['reason'],
        'timed_out': False, 'reported': True,
    }
    assert 'recorded as reported' in text(result)
    lv = json.loads(mem(memrepo, 'state.json').read_text())['last_verification']
    assert (lv['command'], lv['exit_code'], lv['result'], lv['reported']) == ('make check', 2, 'failed', True)


def test_verify_stops_a_command_past_its_timeout(memrepo: Path) -> None:
    user_allows(SLEEP)
    with served(memrepo) as server:
        result = server.call('verify', {'command': SLEEP, 'timeout_seconds': 0.5})
    assert result['structuredContent']['result'] == 'failed'
    assert result['structuredContent']['timed_out'] is True
    assert 'timed out' in text(result)


def test_recovery_reports_none_yet(server: McpClient) -> None:
    result = server.call('recovery', {})
    assert text(result) == 'no compactions recorded yet'
    _error(server.call('recovery', {'n': 1}))


@pytest.mark.parametrize('name,args,said', [
    ('nope', {}, 'unknown tool "nope"'),
    ('note', {'text': 5}, '"text" must be a JSON string'),
    ('note', {}, '"text" is required'),
    ('note', {'text': ''}, '"text" must not be empty'),
    ('state_set', {}, 'give at least one of'),
    ('state_set', {'step': 3}, 'unknown argument "step"'),
    ('state_set', {'other': {'step': 3}}, '"step" is managed by agitmem'),
    ('state_set', {'other': {'tree': 'x'}}, '"tree" is managed by agitmem'),
    ('state_set', {'current_goal': 'a', 'other': {'current_goal': 'b'}}, 'given twice'),
    ('fragment_add', {'goal': 'g', 'next': 'n', 'refs': ['Z-9']}, 'no fragment Z-9'),
    ('fragment_add', {'goal': 'g', 'next': 'n', 'refs': 'A-001'}, '"refs" must be a JSON array'),
    ('verify', {'command': ''}, '"command" must not be empty'),
    ('verify', {'command': ['true']}, '"command" must be a JSON string'),
    ('verify', {'command': '/nonexistent/prog'}, 'is not in verify_commands of'),
    ('verify', {'command': 'true', 'timeout_seconds': 0}, 'must be more than 0'),
    ('verify', {'command': 'true', 'exit_code': 0, 'timeout_seconds': 5}, 'not one you report'),
    ('verify', {'command': 'true', 'output': 'x'}, 'output goes with exit_code'),
    ('verify', {'command': 'x' * 5000}, 'is over 4,096 characters'),
    ('recall', {'query': 'x', 'limit': 0}, 'must be at least 1'),
    ('recall', {'query': 'x', 'limit': True}, 'must be a JSON integer'),
    ('recovery', {'n': 1.5}, 'must be a JSON integer'),
])
def test_bad_calls_are_one_line_errors_and_the_server_goes_on(
        server: McpClient, memrepo: Path, name: str, args: object, said: str,
) -> None:
    before = count(memrepo)
    assert said in _error(server.call(name, args))
    assert count(memrepo) == before
    assert not server.call('note', {'text': 'still here'}).get('isError')


def test_arguments_not_an_object_are_refused_by_the_protocol(server: McpClient) -> None:
    answer = server.request('tools/call', {'name': 'note', 'arguments': ['x']})
    assert answer['error']['code'] == -32602
    assert not server.call('note', {'text': 'still here'}).get('isError')


def test_a_secret_is_refused_and_nothing_is_committed(server: McpClient, memrepo: Path) -> None:
    before = count(memrepo)
    said = _error(server.call('note', {'text': f'token {TOKEN}'}))
    assert 'possible GitHub token' in said, said
    assert TOKEN not in said
    assert count(memrepo) == before
    assert TOKEN not in git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo)


def test_a_broken_state_is_an_error_not_a_crash(server: McpClient, memrepo: Path) -> None:
    mem(memrepo, 'state.json').write_text('{not json')
    assert 'state.json' in _error(server.call('state_set', {'current_goal': 'x'}))
    assert mem(memrepo, 'state.json').read_text() == '{not json'


def test_memory_text_is_rendered(server: McpClient) -> None:
    server.call('note', {'text': 'look \x1b[2J here \u202e'})
    result = server.call('recall', {'query': 'look here'})
    said = text(result)
    assert '\x1b' not in said and '\u202e' not in said
    assert '\\u001b[2J' in said


def test_follows_the_branch_it_is_on(server: McpClient, memrepo: Path) -> None:
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    server.call('note', {'text': 'on the feature branch'})
    assert 'on the feature branch' in git('show', 'refs/agitmem/heads/feature:notes.md', cwd=memrepo)


def test_outside_a_repository_a_call_says_so(tmp_path: Path) -> None:
    with McpClient([*agitmem_argv(), 'mcp'], cwd=tmp_path) as client:
        client.initialize()
        assert 'not a git repository' in _error(client.call('load', {})).lower()


def test_without_the_sdk_one_line_and_exit_2(memrepo: Path) -> None:
    # the SDK made unimportable, as in an install without agitmem[mcp]
    probe = "import sys; sys.modules['mcp'] = None; from agitmem.cli import main; sys.exit(main(['mcp']))"
    proc = subprocess.run([sys.executable, '-c', probe], cwd=memrepo, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        'agitmem: agitmem mcp needs the MCP SDK: pip install "agitmem[mcp]" '
        '(or `pipx inject agitmem mcp`, `uv tool install "agitmem[mcp]"`)'
    )
    ok('status', cwd=memrepo)


def test_a_client_that_writes_its_calls_and_closes_stdin_gets_every_answer(memrepo: Path) -> None:
    # the SDK cancels the requests in flight when its input ends; the end
    # waits for their answers (a slow call, or a loaded machine, lost them)
    calls = [
        {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
            'protocolVersion': '2025-06-18', 'capabilities': {}, 'clientInfo': {'name': 't', 'version': '1'},
        }},
        {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
        *(
            {'jsonrpc': '2.0', 'id': 10 + i, 'method': 'tools/call', 'params': {
                'name': 'verify', 'arguments': {'command': 'sleep 0.3', 'exit_code': 0},
            }}
            for i in range(3)
        ),
        {'jsonrpc': '2.0', 'id': 20, 'method': 'tools/call', 'params': {'name': 'load', 'arguments': {}}},
    ]
    proc = subprocess.run(
        [*agitmem_argv(), 'mcp'], cwd=memrepo, capture_output=True, text=True, timeout=120,
        input=''.join(json.dumps(c) + '\n' for c in calls),
    )
    assert proc.returncode == 0, proc.stderr
    answered = sorted(json.loads(line)['id'] for line in proc.stdout.splitlines() if line.strip())
    assert answered == [1, 10, 11, 12, 20]


def test_a_server_ended_by_sigterm_stops_the_verify_it_runs(memrepo: Path, tmp_path: Path) -> None:
    """The client ends the server (SIGTERM) while a verify runs: the
    command, in a process group of its own (so that its timeout stops what
    it started), was tracked by no one and ran on to its end, writing
    after the server had gone."""
    import signal
    import time
    marker = tmp_path / 'ran-on'
    cmd = shlex.join([sys.executable, '-c', f'import pathlib, time; time.sleep(3); pathlib.Path({str(marker)!r}).write_text("x")'])
    user_allows(cmd)
    proc = subprocess.Popen(
        [*agitmem_argv(), 'mcp'], cwd=memrepo, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    client = McpClient.over(proc)
    client.initialize()
    client.notify('tools/call', {'name': 'verify', 'arguments': {'command': cmd, 'timeout_seconds': 30}}, id=99)
    time.sleep(1.5)  # the command started (a server's start and a verify's git reads: well under)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == -signal.SIGTERM
    time.sleep(3)
    assert not marker.exists()
