"""`agitmem mcp` under hostile or careless input: a verify whose command
starts children that outlive it, calls with huge or deep arguments."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from testing.mcp_client import McpClient
from testing.mcp_client import text
from testing.util import agitmem_argv


@pytest.fixture
def server(memrepo: Path) -> McpClient:
    client = McpClient([*agitmem_argv(), 'mcp'], cwd=memrepo)
    client.initialize()
    yield client  # type: ignore[misc]
    assert client.close() == 0


def test_verify_timeout_stops_what_the_command_started(server: McpClient) -> None:
    """A test runner that forks (sh running sleep; npm running node) and
    hangs: past timeout_seconds the whole group is stopped and the server
    answers, instead of waiting for the children to let go of the output
    pipe (it waited the full 60 s)."""
    began = time.monotonic()
    result = server.call('verify', {'command': ['sh', '-c', 'sleep 60; :'], 'timeout_seconds': 0.5})
    assert time.monotonic() - began < 30
    assert result['structuredContent']['result'] == 'failed'
    assert 'stopped after 0.5s' in text(result)


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
