"""The stdio wire under `agitmem mcp`: every request line gets an answer.

The SDK's stdin reader turns a line it cannot validate (not JSON, nested
past pydantic's recursion limit, not a JSON-RPC message) into an exception
that its server drops: the client waits forever for the answer to that id.
Here agitmem reads stdin itself, keeps each line until the SDK has read it,
and answers one it could not with a JSON-RPC error (-32700 parse error,
-32600 invalid request) carrying the id when the line names one.  A
request whose id is no string or whole number (1.5, true, null, {}) the
SDK takes for a notification: it is answered here too, with id null.  A line
past MAX_LINE is not kept whole: it is read on to its end and answered."""
from __future__ import annotations

import collections
import json
import os
import re
from collections.abc import AsyncIterator
from typing import IO
from typing import TYPE_CHECKING
from typing import Any
from typing import Self

from agitmem import platforms

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

# a request past this is refused unread (the largest tool argument the
# memory takes is far smaller: notes and state are capped by max_file_kb)
MAX_LINE = 32 * 1024 * 1024
# what an over-long line keeps of its end, where a client may write its id
TAIL = 4096
# how long the end of the client's input waits for answers in flight
SETTLE = 30.0
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_LAST_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')

RequestId = int | str | None


def _scalar_id(token: str) -> RequestId:
    try:
        value = json.loads(token)
    except (ValueError, RecursionError):
        return None
    # JSON-RPC ids are strings or whole numbers (true is an int to Python)
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def request_id(text: str) -> RequestId:
    """The top-level "id" of a JSON object as text, at any depth of the
    rest and without parsing it: one pass over its tokens."""
    depth = 0
    tokens = _TOKEN.finditer(text)
    for m in tokens:
        tok = m.group()
        if tok in '{[':
            depth += 1
        elif tok in '}]':
            depth -= 1
        elif depth == 1 and tok == '"id"':
            colon = next(tokens, None)
            value = next(tokens, None)
            if colon is not None and colon.group() == ':' and value is not None:
                return _scalar_id(value.group())
            return None
    return None


def tail_id(tail: str) -> RequestId:
    """The id of a line seen only by its end: the last member, as clients
    that add the id to the request they built write it."""
    m = _LAST_ID.search(tail)
    return None if m is None else _scalar_id(m.group(1))


class Rejected:
    """A line refused before the SDK read it: too long."""

    def __init__(self, id_: RequestId, message: str) -> None:
        self.id = id_
        self.message = message


def read_line(stream: IO[str], limit: int = MAX_LINE) -> str | Rejected:
    """One line; one past `limit` is read on to its end and refused."""
    line = stream.readline(limit)
    if len(line) < limit or line.endswith('\n'):
        return line
    head, tail = line, line[-TAIL:]
    while True:
        more = stream.readline(1024 * 1024)
        if not more:
            break
        tail = (tail + more)[-TAIL:]
        if more.endswith('\n'):
            break
    found = request_id(head)
    return Rejected(
        found if found is not None else tail_id(tail.rstrip('\n')),
        f'Invalid Request: a line over {limit // (1024 * 1024)} MB',
    )


def bad_id(line: str | Rejected) -> bool:
    """Whether a line the SDK read as a notification names an "id": one
    that is no string or whole number (1.5, true, null, {}, [1]) makes
    the SDK take the request for a notification and answer nothing;
    JSON-RPC 2.0 answers it with an error whose id is null."""
    if isinstance(line, Rejected):
        return False
    try:
        # it passed the SDK's validation: valid JSON, nested within bounds
        data = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and 'id' in data


def error_for(exc: Exception, line: str | Rejected) -> tuple[RequestId, int, str]:
    """The JSON-RPC error answering `line`, which the SDK could not read."""
    from agitmem import render
    if isinstance(line, Rejected):
        return line.id, INVALID_REQUEST, line.message
    errors = getattr(exc, 'errors', None)
    first: dict[str, Any] = errors()[0] if callable(errors) and errors() else {}
    if first.get('type') == 'json_invalid':
        code, said = PARSE_ERROR, f'Parse error: {first.get("msg", "")}'
    else:
        code, said = INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message'
    return request_id(line), code, render.controls_line(said)


class Lines:
    """agitmem's stdin for the SDK's stdio_server: each line it hands on
    is kept in `pending` until the server has what the SDK made of it."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.pending: collections.deque[str | Rejected] = collections.deque()

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio
        while True:
            line = await anyio.to_thread.run_sync(read_line, self._stream)
            if isinstance(line, Rejected):
                self.pending.append(line)
                yield 'x\n'  # fails the SDK's validation at once: answered below
                continue
            if not line:
                return
            if not line.strip():
                continue  # a blank line is no request (the SDK would drop it silently)
            self.pending.append(line)
            yield line


class Screened:
    """The read stream the server reads through: the SDK's, one item per
    line in order, with each item it could not read answered here."""

    def __init__(self, lines: Lines, read: Any, write: Any) -> None:
        self._pending = lines.pending
        self._read = read
        self._write = write
        # the requests read and not yet answered: the SDK cancels what is
        # in flight when its input ends, so the end waits for their answers
        self._open: set[RequestId] = set()
        self._settled: Any = None
        self.write = Answering(self, write)

    def asked(self, item: object) -> None:
        import mcp_types as types
        message = getattr(item, 'message', None)
        if isinstance(message, types.JSONRPCRequest):
            self._open.add(message.id)

    def answered(self, item: object) -> None:
        import mcp_types as types
        message = getattr(item, 'message', None)
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self._open.discard(message.id)
            if not self._open and self._settled is not None:
                self._settled.set()

    async def settle(self) -> None:
        """Wait (at most SETTLE seconds) until every request read has its
        answer: a client that writes its requests and closes stdin gets
        every answer."""
        import anyio
        with anyio.move_on_after(SETTLE):
            while self._open:
                self._settled = anyio.Event()
                await self._settled.wait()

    @property
    def last_context(self) -> Any:
        return getattr(self._read, 'last_context', None)

    async def receive(self) -> SessionMessage:
        import mcp_types as types
        from mcp.shared.message import SessionMessage
        import anyio
        while True:
            try:
                item = await self._read.receive()
            except anyio.EndOfStream:
                await self.settle()
                raise
            line = self._pending.popleft()
            if not isinstance(item, Exception):
                if not (isinstance(getattr(item, 'message', None), types.JSONRPCNotification) and bad_id(line)):
                    self.asked(item)
                    return item  # type: ignore[no-any-return]
                id_, code, said = None, INVALID_REQUEST, (
                    'Invalid Request: "id" must be a string or a whole number'
                )
            else:
                id_, code, said = error_for(item, line)
            await self._write.send(encodable(SessionMessage(types.JSONRPCError(
                jsonrpc='2.0', id=id_, error=types.ErrorData(code=code, message=said),
            ))))

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        import anyio
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._read.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _no_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode('utf-8', 'backslashreplace').decode('utf-8')
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    return value


def encodable(item: SessionMessage) -> SessionMessage:
    """`item`, its strings without lone surrogates (what a client's
    "\\ud800" escape reads as, echoed in an id, a method name or a
    tool's text): they cannot be written as UTF-8, and the SDK's writer
    would end the server on one.  Each is written as its escape."""
    from mcp.shared.message import SessionMessage
    message = item.message
    try:
        message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic's serialization error is one
        data = _no_surrogates(message.model_dump(by_alias=True, exclude_unset=True))
        return SessionMessage(type(message).model_validate(data))
    return item


class Answering:
    """The write stream the server answers through: the SDK's, each answer
    ticked off the requests Screened read."""

    def __init__(self, screened: Screened, write: Any) -> None:
        self._screened = screened
        self._write = write

    async def send(self, item: SessionMessage) -> None:
        await self._write.send(encodable(item))
        self._screened.answered(item)

    async def aclose(self) -> None:
        await self._write.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def claim_stdin() -> IO[str]:
    """The client's stdin on a descriptor of its own, fd 0 pointed at the
    null device: what the tools start reads EOF, never the client's
    requests (the SDK does the same when it reads stdin itself)."""
    import io
    wire = platforms.dup_private(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return io.TextIOWrapper(os.fdopen(wire, 'rb'), encoding='utf-8', errors='replace')


class Escaped:
    """The client's stdout as the SDK writes its answers to it, each line
    through render.controls: a string id or method name the client sent
    with bidi or zero-width characters goes back as JSON escapes of them
    (the same id to the client, nothing raw on a terminal showing it)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from agitmem import render
        return self._stream.write(render.controls(text))

    def flush(self) -> None:
        self._stream.flush()


def claim_stdout() -> Any:
    """The client's stdout on a descriptor of its own (an anyio file for
    stdio_server), fd 1 pointed at stderr, as the SDK does when it writes
    stdout itself: what the tools start never writes on the wire."""
    import io
    import anyio
    wire = platforms.dup_private(1)
    os.dup2(2, 1)
    stream = io.TextIOWrapper(os.fdopen(wire, 'wb'), encoding='utf-8', write_through=True)
    return anyio.wrap_file(Escaped(stream))  # type: ignore[arg-type]
