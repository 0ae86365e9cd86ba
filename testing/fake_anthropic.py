"""A loopback stand-in for the Anthropic Messages API, for end-to-end tests.

Standard library only. Start it, point a real client at it with
``ANTHROPIC_BASE_URL=server.url``, script the model's turns, then assert on
``server.requests`` (every request the client made, with its JSON body)::

    with FakeAnthropic() as server:
        server.queue_tool_use("Write", {"file_path": "/x/a.txt", "content": "hi\\n"})
        server.queue_text("Done.")
        ...run the client...
        assert "MARKER" in server.model_requests[0].text

How a request to ``POST /v1/messages`` is answered:

1. A compaction request (``is_summary_request``: the client asks the model to
   summarize the conversation, as Claude Code's ``/compact`` does) gets
   ``summary_text``; it never consumes the script.
2. A main-loop request (one that offers tools) takes the next scripted reply
   from the queue; when the queue is empty it gets ``default_text``.
3. Any other request (a side query without tools: titles, topic checks, quota
   probes) gets ``side_text``; it never consumes the script.

Replies stream as server-sent events when the body says ``"stream": true`` and
come back as one JSON message otherwise. ``count_tokens`` is answered with an
estimate; any other path is logged in ``unknown_paths`` and answered with an
empty JSON object (``{}``), so the client carries on.

Usage figures: ``server.usage`` (a dict) is reported for every reply; a scripted
reply may carry its own ``usage`` to override single figures, e.g. to make the
client believe its context is large.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from testing import loopback

__all__ = [
    "FakeAnthropic",
    "RecordedRequest",
    "Reply",
    "is_summary_request",
    "request_text",
]

DEFAULT_USAGE: dict[str, int] = {
    "input_tokens": 1200,
    "output_tokens": 40,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}

# Phrases that only a compaction (summarization) request carries. Claude Code's
# compact prompt asks for "a detailed summary of the conversation"; the other
# phrases cover older and newer wordings. Matched case-insensitively against the
# text of the last user message.
SUMMARY_MARKERS: tuple[str, ...] = (
    "create a detailed summary of the conversation",
    "summary of the conversation so far",
    "your task is to create a detailed summary",
    "summarize the conversation",
)


@dataclass
class Reply:
    """One scripted assistant turn: content blocks plus optional usage override."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=dict)

    @classmethod
    def text(cls, text: str, **usage: int) -> "Reply":
        return cls([{"type": "text", "text": text}], "end_turn", dict(usage))

    @classmethod
    def tool_use(
        cls,
        name: str,
        tool_input: dict[str, Any],
        text: str | None = None,
        tool_id: str | None = None,
        **usage: int,
    ) -> "Reply":
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_id or "toolu_" + uuid.uuid4().hex[:24],
                "name": name,
                "input": tool_input,
            }
        )
        return cls(blocks, "tool_use", dict(usage))


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, list):
            return "\n".join(_block_text(b) for b in inner)
        return str(inner or "")
    if kind == "tool_use":
        return json.dumps(block.get("input", {}), ensure_ascii=False)
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(_block_text(b) for b in content)
    return _block_text(content)


def request_text(body: dict[str, Any]) -> str:
    """The system prompt and all message text of a Messages API request body."""
    parts = [_content_text(body.get("system"))]
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            parts.append(_content_text(message.get("content")))
    return loopback.join_text(parts)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]


@dataclass
class RecordedRequest(loopback.Recorded):
    # kind: "main", "summary", "side", "count_tokens", "other"
    request_text = staticmethod(request_text)
    offered = staticmethod(tool_names)


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def is_summary_request(body: Any) -> bool:
    """True when the request asks the model to summarize the conversation."""
    if not isinstance(body, dict):
        return False
    text = last_user_text(body).lower()
    return any(marker in text for marker in SUMMARY_MARKERS)


def estimate_tokens(body: Any) -> int:
    if not isinstance(body, dict):
        return 1
    size = len(request_text(body)) + len(json.dumps(body.get("tools") or []))
    return max(1, size // 4)


class FakeAnthropic(loopback.Server[RecordedRequest, Reply]):
    """A threaded Messages API stand-in on 127.0.0.1 with a random port."""

    name = "fake-anthropic"
    recorded = RecordedRequest
    default_usage = DEFAULT_USAGE

    default_summary = (
        "<summary>\n1. Primary Request and Intent: the user asked for a file to be "
        "written; it was written.\n2. Pending Tasks: none.\n</summary>"
    )
    default_model = "claude-sonnet-4-5"

    # -- scripting ---------------------------------------------------------
    def queue_text(self, text: str, **usage: int) -> None:
        self.queue(Reply.text(text, **usage))

    def queue_tool_use(
        self, name: str, tool_input: dict[str, Any], text: str | None = None, **usage: int
    ) -> None:
        reply = Reply.tool_use(name, tool_input, text)
        reply.usage.update(usage)
        self.queue(reply)

    # -- views on what was recorded ----------------------------------------
    @property
    def summary_requests(self) -> list[RecordedRequest]:
        return self._of_kind("summary")

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Every POST /v1/messages request, whatever its kind."""
        return self._of_kind("main", "summary", "side")

    # -- answering ---------------------------------------------------------
    def _classify_and_pick(self, body: Any) -> tuple[str, Reply]:
        """Decide the request kind and the reply, consuming the script if main."""
        if isinstance(body, dict) and self.responder is not None:
            custom = self.responder(body)
            if custom is not None:
                kind = "summary" if is_summary_request(body) else (
                    "main" if body.get("tools") else "side"
                )
                return kind, custom
        if is_summary_request(body):
            return "summary", Reply.text(self.summary_text)
        if isinstance(body, dict) and body.get("tools"):
            reply = self.next_reply()
            return "main", reply or Reply.text(self.default_text)
        return "side", Reply.text(self.side_text)

    def _usage_for(self, reply: Reply) -> dict[str, int]:
        usage = dict(self.usage)
        usage.update(reply.usage)
        return usage

    def message_json(self, reply: Reply, model: str) -> dict[str, Any]:
        return {
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": copy.deepcopy(reply.content),
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": self._usage_for(reply),
        }

    def sse_events(self, reply: Reply, model: str) -> list[tuple[str, dict[str, Any]]]:
        """The stream of (event name, data) pairs that delivers ``reply``."""
        usage = self._usage_for(reply)
        start_usage = dict(usage)
        start_usage["output_tokens"] = 1
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_" + uuid.uuid4().hex[:24],
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": start_usage,
                    },
                },
            )
        ]
        n = self.chunk_size
        for index, block in enumerate(reply.content):
            if block["type"] == "text":
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                text = block["text"]
                for i in range(0, max(len(text), 1), n):
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "text_delta", "text": text[i : i + n]},
                            },
                        )
                    )
            elif block["type"] == "tool_use":
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {
                                "type": "tool_use",
                                "id": block["id"],
                                "name": block["name"],
                                "input": {},
                            },
                        },
                    )
                )
                raw = json.dumps(block["input"], ensure_ascii=False)
                for i in range(0, len(raw), n):
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": raw[i : i + n]},
                            },
                        )
                    )
            else:  # pragma: no cover - only text and tool_use are scripted
                raise ValueError(f"unsupported block type {block['type']!r}")
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events


class _Handler(loopback.Handler):
    fake: FakeAnthropic  # set on the bound subclass
    server_version = "fake-anthropic/1"

    def headers_out(self) -> dict[str, str]:
        return {"request-id": "req_" + uuid.uuid4().hex[:24]}

    def answer(self, path: str, record: loopback.Recorded) -> None:
        assert isinstance(record, RecordedRequest)
        fake, method, body = self.fake, record.method, record.body
        if method == "POST" and path.endswith("/v1/messages/count_tokens"):
            record.kind = "count_tokens"
            fake._record(record)
            self.send_json(200, {"input_tokens": estimate_tokens(body)})
            return
        if method == "POST" and path.endswith("/v1/messages"):
            kind, reply = fake._classify_and_pick(body)
            record.kind = kind
            fake._record(record)
            model = body.get("model", fake.model) if isinstance(body, dict) else fake.model
            if isinstance(body, dict) and body.get("stream"):
                self.stream(fake.sse_events(reply, model))
            else:
                self.send_json(200, fake.message_json(reply, model))
            return
        self.other(record)


FakeAnthropic.handler = _Handler


if __name__ == "__main__":  # pragma: no cover - manual use
    loopback.serve(FakeAnthropic())
