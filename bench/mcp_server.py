"""`agitmem mcp`: how long a tool call takes once the server is up (what
an agent waits for each time it calls one), measured over stdio as a client
sees it: the median of many `state_set` and `recall` round trips on one
server, after the handshake and one call of each to warm it."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _common as c  # noqa: E402

from testing.mcp_client import McpClient  # noqa: E402


def round_trips(root: Path, runs: int) -> dict[str, float]:
    """{'mcp-state-set': s, 'mcp-recall': s}: median seconds of a call."""
    times: dict[str, list[float]] = {'mcp-state-set': [], 'mcp-recall': []}
    calls = {
        'mcp-state-set': ('state_set', lambda i: {'last_action': f'bench step {i}'}),
        'mcp-recall': ('recall', lambda i: {'query': 'bench note fragment'}),
    }
    with McpClient([*c.AGITMEM, 'mcp'], cwd=root, env=c.env()) as client:
        client.initialize()
        for name, args in calls.values():
            client.call(name, args(-1))
        for i in range(runs):
            for key, (name, args) in calls.items():
                started = time.perf_counter()
                result = client.call(name, args(i))
                times[key].append(time.perf_counter() - started)
                if result.get('isError'):
                    raise RuntimeError(f'{name}: {result["content"]}')
    return {key: statistics.median(t) for key, t in times.items()}
