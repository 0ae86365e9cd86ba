"""A minimal MCP client over stdio (newline-delimited JSON-RPC 2.0), for
the tests and the bench: independent of the SDK the server is built on,
so a test sees the wire as a client does."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

PROTOCOL = '2025-06-18'


class McpClient:
    def __init__(self, argv: list[str], *, cwd: Path | str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding='utf-8',
        )
        self._id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The response to one request (notifications the server sends
        in between are skipped)."""
        self._id += 1
        self.notify(method, params, id=self._id)
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f'the server closed its output; stderr: {self.stderr()}')
            msg: dict[str, Any] = json.loads(line)
            if msg.get('id') == self._id:
                return msg

    def notify(self, method: str, params: dict[str, Any] | None = None, **more: Any) -> None:
        msg: dict[str, Any] = {'jsonrpc': '2.0', 'method': method, **more}
        if params is not None:
            msg['params'] = params
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + '\n')
        self.proc.stdin.flush()

    def initialize(self) -> dict[str, Any]:
        answer = self.request('initialize', {
            'protocolVersion': PROTOCOL, 'capabilities': {},
            'clientInfo': {'name': 'agitmem-tests', 'version': '1'},
        })
        self.notify('notifications/initialized')
        return answer['result']  # type: ignore[no-any-return]

    def tools(self) -> list[dict[str, Any]]:
        return self.request('tools/list')['result']['tools']  # type: ignore[no-any-return]

    def call(self, name: str, arguments: object) -> dict[str, Any]:
        """The tools/call result (content, isError, structuredContent)."""
        answer = self.request('tools/call', {'name': name, 'arguments': arguments})
        assert 'result' in answer, answer
        return answer['result']  # type: ignore[no-any-return]

    def timed_call(self, name: str, arguments: object) -> tuple[dict[str, Any], float]:
        started = time.perf_counter()
        result = self.call(name, arguments)
        return result, time.perf_counter() - started

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ''
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> McpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def text(result: dict[str, Any]) -> str:
    return ''.join(c.get('text', '') for c in result['content'])
