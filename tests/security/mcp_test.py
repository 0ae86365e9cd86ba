"""`agitmem mcp` under hostile or careless input: a verify whose command
starts children that outlive it, calls with huge or deep arguments, request
lines the SDK cannot read (each still answered)."""
from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.mcp_client import McpClient
from testing.mcp_client import served
from testing.mcp_client import text
from testing.mcp_client import user_allows
from testing.util import agitmem_argv
from testing.util import count
from testing.util import ok


@pytest.fixture
def server(memrepo: Path) -> Iterator[McpClient]:
    with served(memrepo) as client:
        yield client


def test_verify_runs_no_program_the_model_names(server: McpClient, memrepo: Path, tmp_path: Path) -> None:
    """The tool ran any program the model named, writing outside the
    repository too: now only what the user's own config lists."""
    marker = tmp_path / 'PWNED'
    before = count(memrepo)
    for command in (f'touch {marker}', f'sh -c "touch {marker}"', 'true'):
        result = server.call('verify', {'command': command})
        assert result.get('isError') is True, result
        assert 'is not in verify_commands of $AGITMEM_HOME/config.yaml' in text(result)
    assert not marker.exists()
    assert count(memrepo) == before


def test_a_command_only_the_repository_lists_is_not_run(memrepo: Path, tmp_path: Path) -> None:
    """A clone's .agent/config.yaml names its own commands: not runnable
    until the user lists them in their own config."""
    marker = tmp_path / 'PWNED'
    command = f'touch {marker}'
    (memrepo / '.agent' / 'config.yaml').write_text(f'verification_commands: ["{command}"]\n')
    with served(memrepo) as server:
        result = server.call('verify', {'command': command})
        assert result.get('isError') is True
        assert not marker.exists()
        user_allows(command)  # the user confirms it
        result = server.call('verify', {'command': command})
        assert result['structuredContent']['result'] == 'passed', result
    assert marker.exists()


@pytest.mark.parametrize('home', ['~', 'sub'])
def test_a_home_that_names_no_absolute_directory_is_no_users_config(
        memrepo: Path, tmp_path: Path, home: str,
) -> None:
    """HOME unset for a uid without a passwd entry (`~` stays `~`), or a
    relative HOME: `~/.agent/config.yaml` was read relative to the project,
    whose files a clone ships, and its verify_commands ran."""
    marker = tmp_path / 'PWNED'
    command = f'touch {marker}'
    for agent in (memrepo / '~' / '.agent', memrepo / 'sub' / '.agent'):
        agent.mkdir(parents=True)
        (agent / 'config.yaml').write_text(f'verify_commands: ["{command}"]\n')
    env = {k: v for k, v in os.environ.items() if k != 'AGITMEM_HOME'}
    env['HOME'] = home
    client = McpClient([*agitmem_argv(), 'mcp'], cwd=memrepo, env=env)
    try:
        client.initialize()
        result = client.call('verify', {'command': command})
        assert result.get('isError') is True, result
        assert not marker.exists()
    finally:
        client.close()
    # and every other command goes on as without a config of the user's
    assert ok('state', 'show', cwd=memrepo, env={'HOME': home, 'AGITMEM_HOME': ''})


def test_a_user_config_that_is_a_device_is_refused(server: McpClient, memrepo: Path) -> None:
    home = Path(os.environ['AGITMEM_HOME'])
    home.mkdir(parents=True, exist_ok=True)
    (home / 'config.yaml').symlink_to('/dev/zero')
    result = server.call('verify', {'command': 'true'})
    assert result.get('isError') is True
    assert 'not a regular file' in text(result)


def test_verify_timeout_stops_what_the_command_started(memrepo: Path) -> None:
    """A test runner that forks (sh running sleep; npm running node) and
    hangs: past timeout_seconds the whole group is stopped and the server
    answers, instead of waiting for the children to let go of the output
    pipe (it waited the full 60 s)."""
    user_allows('sh -c "sleep 60; :"')
    with served(memrepo) as server:
        began = time.monotonic()
        result = server.call('verify', {'command': 'sh -c "sleep 60; :"', 'timeout_seconds': 0.5})
        assert time.monotonic() - began < 10
    assert result['structuredContent']['result'] == 'failed'
    assert result['structuredContent']['timed_out'] is True
    assert 'timed out after 0.5s' in text(result)


@pytest.mark.parametrize('command', [
    # ends at once, leaving a child in its group that holds the output open
    'sh -c "sleep 60 & exit 0"',
    # the child leaves the group (a daemon): it cannot be stopped, and is not waited for
    'sh -c "setsid sleep 60 & exit 0"',
])
def test_a_daemon_holding_the_output_does_not_hold_the_server(memrepo: Path, command: str) -> None:
    """The server blocked well past timeout_seconds on the open pipe,
    then said passed: now it answers within a second or two of the
    program's end."""
    user_allows(command)
    with served(memrepo) as server:
        began = time.monotonic()
        result = server.call('verify', {'command': command, 'timeout_seconds': 30})
        took = time.monotonic() - began
    assert took < 10, took
    assert result['structuredContent']['exit_code'] == 0


def test_a_daemon_that_never_ends_is_timed_out_not_passed(memrepo: Path) -> None:
    command = 'sh -c "exec sleep 60"'
    user_allows(command)
    with served(memrepo) as server:
        began = time.monotonic()
        result = server.call('verify', {'command': command, 'timeout_seconds': 1})
        assert time.monotonic() - began < 10
    assert result['structuredContent']['result'] == 'failed'
    assert result['structuredContent']['exit_code'] is None


def test_verify_reads_its_output_with_a_bound(memrepo: Path) -> None:
    command = shlex.join([sys.executable, '-c', 'import sys; sys.stdout.write("x" * 60_000_000 + "\\n1 passed\\n")'])
    user_allows(command)
    with served(memrepo) as server:
        result = server.call('verify', {'command': command, 'timeout_seconds': 120})
    assert result['structuredContent']['result'] == 'passed'
    assert result['structuredContent']['reason'] == '1 passed'


@pytest.mark.parametrize(('name', 'args', 'said'), [
    ('note', {'text': 'z' * 3_000_000}, 'over max_file_kb'),
    ('state_set', {'other': {'x': 'y' * 3_000_000}}, 'over max_file_kb'),
    ('state_set', {'other': {'tree': '--output=pwned'}}, '"tree" is managed by agitmem'),
    ('fragment_add', {'goal': 'g', 'next': 'n', 'refs': ['../../x'] * 1000}, 'no fragment'),
])
def test_huge_or_hostile_arguments_get_one_line(
        server: McpClient, memrepo: Path, name: str, args: dict[str, object], said: str,
) -> None:
    result = server.call(name, args)
    assert result.get('isError') is True, result
    line = text(result)
    assert said in line
    assert '\n' not in line and 'Traceback' not in line
    assert not (memrepo / 'pwned').exists()


DEEP = '[' * 500 + ']' * 500


@pytest.mark.parametrize(('line', 'id_', 'code'), [
    # nested past pydantic's recursion limit: the SDK dropped the line and
    # the client waited forever for id 2
    (f'{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"note","arguments":{{"text":{DEEP}}}}}}}', 2, -32700),
    # the id last (as the TypeScript SDK writes it), after the deep part
    (f'{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"note","arguments":{{"text":{DEEP}}}}},"id":"last"}}', 'last', -32700),
    # JSON, but no JSON-RPC request: a method that is a number, no jsonrpc
    ('{"jsonrpc":"2.0","id":"s","method":7}', 's', -32600),
    ('{"id":8,"method":"tools/list"}', 8, -32600),
    # an "id" inside the params is not the request's
    ('{"jsonrpc":"2.0","method":5,"params":{"id":9}}', None, -32600),
    ('not json at all', None, -32700),
    ('{"jsonrpc":"2.0","id":3,', 3, -32700),
])
def test_every_request_line_is_answered(
        server: McpClient, memrepo: Path, line: str, id_: object, code: int,
) -> None:
    before = count(memrepo)
    server.send_line(line)
    answer = server.message(timeout=30)
    assert answer['id'] == id_, answer
    assert answer['error']['code'] == code, answer
    assert '\n' not in answer['error']['message']
    # and the server goes on serving
    assert [t['name'] for t in server.tools()][0] == 'load'
    assert count(memrepo) == before


def test_a_line_past_the_bound_is_answered_unread(server: McpClient, memrepo: Path) -> None:
    """40 MB on one line (the bound is 32 MB): read on to its end, refused
    with its id, never held whole, and the next request is served."""
    before = count(memrepo)
    big = 'z' * (40 * 1024 * 1024)
    server.send_line(f'{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"note","arguments":{{"text":"{big}"}}}},"id":41}}')
    answer = server.message(timeout=120)
    assert answer['id'] == 41, answer
    assert answer['error']['code'] == -32600
    assert 'over 32 MB' in answer['error']['message']
    assert text(server.call('note', {'text': 'after the flood'})).startswith('noted')
    assert count(memrepo) == before + 1


def test_blank_lines_are_no_requests(server: McpClient) -> None:
    server.send_line('')
    server.send_line('   ')
    # the next message is the answer to the next request, not an error for a blank
    server.notify('tools/list', id=99)
    assert server.message(timeout=30)['id'] == 99


@pytest.mark.parametrize('id_', ['1.5', '{}', 'true', 'false', '[1]', 'null', '1e3', '-0.5', '{"a":1}'])
def test_a_request_with_an_invalid_id_is_answered_with_id_null(
        server: McpClient, memrepo: Path, id_: str,
) -> None:
    """An id that is no string or whole number made the SDK take the
    request for a notification: no answer at all, the client waited for
    ever.  JSON-RPC 2.0: an Invalid Request error whose id is null."""
    before = count(memrepo)
    server.send_line(f'{{"jsonrpc":"2.0","id":{id_},"method":"tools/call","params":{{"name":"note","arguments":{{"text":"x"}}}}}}')
    answer = server.message(timeout=30)
    assert answer['id'] is None, answer
    assert answer['error']['code'] == -32600, answer
    assert '"id"' in answer['error']['message']
    # nothing was run, and the server goes on serving
    assert count(memrepo) == before
    assert [t['name'] for t in server.tools()][0] == 'load'


def test_a_notification_is_still_not_answered(server: McpClient) -> None:
    server.notify('notifications/cancelled', {'requestId': 5, 'reason': 'x'})
    server.notify('tools/list', id=12)
    assert server.message(timeout=30)['id'] == 12
