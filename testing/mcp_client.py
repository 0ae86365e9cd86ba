"""A minimal MCP client over stdio (newline-delimited JSON-RPC 2.0), for
the tests and the bench: independent of the SDK the server is built on,
so a test sees the wire as a client does."""
from __future__ import annotations

import contextlib
import json
import os
import yaml
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from testing import zygote
from testing.util import agitmem_argv

PROTOCOL = '2025-06-18'


class McpClient:
    def __init__(self, argv: list[str], *, cwd: Path | str, env: dict[str, str] | None = None) -> None:
        # agitmem's own server through the warm agitmem where it would
        # start alike (testing/zygote.py: the mcp SDK's import is a second)
        own = agitmem_argv()
        z = zygote.warm(own[0], mcp=True) if argv[:len(own)] == own else None
        warm = z.try_popen(argv[len(own):], cwd=cwd, env=env) if z else None
        self._serve(warm or subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding='utf-8',
        ))

    @classmethod
    def over(cls, proc: subprocess.Popen[str] | zygote.Warm) -> McpClient:
        """A client of a server already started."""
        client = cls.__new__(cls)
        client._serve(proc)
        return client

    def _serve(self, proc: subprocess.Popen[str] | zygote.Warm) -> None:
        self.proc = proc
        self._id = 0
        self._lines: queue.Queue[str] = queue.Queue()
        # the server's output read on a thread of its own: a test waits on
        # an answer with a bound, and fails instead of hanging when none comes
        threading.Thread(target=self._read_out, daemon=True).start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put('')

    def message(self, timeout: float = 60) -> dict[str, Any]:
        """The next message the server writes."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f'no answer from the server in {timeout}s') from None
        if not line:
            raise AssertionError(f'the server closed its output; stderr: {self.stderr()}')
        return json.loads(line)  # type: ignore[no-any-return]

    def send_line(self, line: str) -> None:
        """One raw line, as a careless or hostile client writes it."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + '\n')
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The response to one request (notifications the server sends
        in between are skipped)."""
        self._id += 1
        self.notify(method, params, id=self._id)
        while True:
            msg = self.message()
            if msg.get('id') == self._id:
                return msg

    def notify(self, method: str, params: dict[str, Any] | None = None, **more: Any) -> None:
        msg: dict[str, Any] = {'jsonrpc': '2.0', 'method': method, **more}
        if params is not None:
            msg['params'] = params
        self.send_line(json.dumps(msg))

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


@contextlib.contextmanager
def served(cwd: Path) -> Iterator[McpClient]:
    """`agitmem mcp` started in cwd, initialized; it must exit 0 when its
    stdin closes."""
    client = McpClient([*agitmem_argv(), 'mcp'], cwd=cwd)
    client.initialize()
    yield client
    assert client.close() == 0


def text(result: dict[str, Any]) -> str:
    return ''.join(c.get('text', '') for c in result['content'])


def user_allows(*commands: str) -> None:
    """The user's own config ($AGITMEM_HOME/config.yaml) lists `commands`."""
    home = Path(os.environ['AGITMEM_HOME'])
    home.mkdir(parents=True, exist_ok=True)
    (home / 'config.yaml').write_text(yaml.safe_dump({'verify_commands': list(commands)}))
