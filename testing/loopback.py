"""The loopback HTTP server the model-API stand-ins share.

``fake_anthropic``, ``fake_openai`` and ``fake_gemini`` each keep only their
API's shapes (which requests are main-loop, summaries or side queries; the
JSON and server-sent events of a reply).  This module is what is the same
for all three: a threaded server on 127.0.0.1 with a random port, every
request recorded in order, a script of replies, JSON and SSE answers, and
a standalone mode that logs what arrives.  Standard library only."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any
from typing import ClassVar
from typing import Generic
from typing import TypeVar


@dataclass
class Recorded:
    """One request as it arrived."""
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None
    kind: str = ""  # the stand-in's classification: "main", "side", "other", ...
    at: float = 0.0

    # each API's readers of a request body: all the text it sends the
    # model, and the names of the tools it offers
    @staticmethod
    def request_text(body: dict[str, Any]) -> str:
        return ""

    @staticmethod
    def offered(body: dict[str, Any]) -> list[str]:
        return []

    @property
    def text(self) -> str:
        """All the text the model was sent: its instructions and every message."""
        return self.request_text(self.body) if isinstance(self.body, dict) else ""

    @property
    def tool_names(self) -> list[str]:
        return self.offered(self.body) if isinstance(self.body, dict) else []


def join_text(parts: Iterable[str]) -> str:
    """The parts that hold text, a line apart."""
    return "\n".join(p for p in parts if p)


R = TypeVar("R", bound=Recorded)
Reply = TypeVar("Reply")


class Server(Generic[R, Reply]):
    """Recording, scripting and the lifecycle; subclasses set ``name``,
    ``recorded`` (their request class) and ``handler``."""

    name = "loopback"
    recorded: type[R]
    handler: type[Handler]

    # each API's defaults: what a summary request gets, the model named in
    # replies, the token counts a reply reports
    default_summary: ClassVar[str] = ""
    default_model: ClassVar[str] = ""
    default_usage: ClassVar[dict[str, int]] = {}

    def __init__(
            self, *, summary_text: str | None = None, default_text: str = "OK.", side_text: str = "OK",
            usage: dict[str, int] | None = None, model: str | None = None, chunk_size: int = 40,
    ) -> None:
        # what a summary request, an unscripted main request and a side
        # query get; the model named in replies; characters per streamed chunk
        self.summary_text = self.default_summary if summary_text is None else summary_text
        self.default_text = default_text
        self.side_text = side_text
        self.usage: dict[str, int] = {**self.default_usage, **(usage or {})}
        self.model = model or self.default_model
        self.chunk_size = chunk_size
        # tried before the script: a function of the request (its body, or the
        # recorded request, as the stand-in says) -> a reply, or None
        self.responder: Callable[[Any], Reply | None] | None = None
        self.requests: list[R] = []
        self.unknown_paths: list[str] = []
        self.script: list[Reply] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------
    def queue(self, reply: Reply) -> None:
        with self._lock:
            self.script.append(reply)

    def next_reply(self) -> Reply | None:
        """The next scripted reply, taken off the script (None when empty)."""
        with self._lock:
            return self.script.pop(0) if self.script else None

    # -- views on what was recorded ----------------------------------------
    def _of_kind(self, *kinds: str) -> list[R]:
        with self._lock:
            return [r for r in self.requests if r.kind in kinds]

    @property
    def model_requests(self) -> list[R]:
        """Main-loop requests (with tools), in order: what the agent saw."""
        return self._of_kind("main")

    def endpoints(self) -> list[str]:
        with self._lock:
            return [f"{r.method} {r.path} [{r.kind}]" for r in self.requests]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.unknown_paths.clear()

    # -- lifecycle ---------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self: S) -> S:
        bound = type("_BoundHandler", (self.handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self._server.daemon_threads = True  # open keep-alive connections never block stop()
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self: S) -> S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- recording ---------------------------------------------------------
    def _record(self, request: R) -> None:
        with self._lock:
            self.requests.append(request)

    def record_other(self, request: R) -> None:
        """A request to a path the stand-in does not serve."""
        request.kind = "other"
        self._record(request)
        with self._lock:
            self.unknown_paths.append(f"{request.method} {request.path}")


S = TypeVar("S", bound=Server[Any, Any])


class Handler(BaseHTTPRequestHandler):
    """Parses and records each request, then hands it to ``answer``."""

    fake: Any  # the Server, set on the bound subclass
    protocol_version = "HTTP/1.1"
    server_version = "fake/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: everything is in fake.requests

    def headers_out(self) -> dict[str, str]:
        """Headers every answer carries (an API's request id)."""
        return {}

    def answer(self, path: str, record: Recorded) -> None:
        raise NotImplementedError

    def other(self, record: Recorded) -> None:
        """Record and answer a request to a path the stand-in does not serve."""
        self.fake.record_other(record)
        if record.method == "HEAD":
            self.send_empty()
        else:
            self.send_json(200, {})

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.headers_out().items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_empty(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def stream(self, events: Iterable[tuple[str | None, Any]]) -> None:
        """Server-sent events: (event name or None, data as JSON), then close."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in self.headers_out().items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        for event, data in events:
            head = f"event: {event}\n" if event is not None else ""
            end = "\n\n" if event is not None else "\r\n\r\n"
            self.wfile.write(f"{head}data: {json.dumps(data, ensure_ascii=False)}{end}".encode())
            self.wfile.flush()

    def _handle(self, method: str) -> None:
        body = self._read_body() if method in ("POST", "PUT", "PATCH") else None
        record = self.fake.recorded(
            method=method,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            at=time.time(),
        )
        self.answer(self.path.split("?", 1)[0], record)

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    def do_HEAD(self) -> None:  # noqa: N802
        self._handle("HEAD")


def serve(server: Server[Any, Any]) -> None:  # pragma: no cover - manual use
    """Run a stand-in standalone: print its URL, log each request's kind and path."""
    import sys

    server.start()
    print(server.url, flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.5)
            for r in server.requests[seen:]:
                print(f"{r.method} {r.path} [{r.kind}]", file=sys.stderr, flush=True)
            seen = len(server.requests)
    except KeyboardInterrupt:
        server.stop()
