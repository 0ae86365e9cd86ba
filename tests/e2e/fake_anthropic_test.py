"""The fake Messages API on its own (no CLI needed): streaming, JSON, routing."""

from __future__ import annotations

import json
import urllib.request
from typing import Any, Iterator

import pytest

from testing.fake_anthropic import FakeAnthropic, is_summary_request


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def post(server: FakeAnthropic, path: str, body: Any) -> tuple[str, bytes]:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("content-type", ""), response.read()


def sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


TOOLS = [{"name": "Write", "input_schema": {"type": "object"}}]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_streams_a_scripted_tool_call_then_text(api: FakeAnthropic) -> None:
    api.queue_tool_use("Write", {"file_path": "/r/a.txt", "content": "x" * 100}, input_tokens=150_000)
    api.queue_text("done")
    body = {"model": "m", "stream": True, "tools": TOOLS, "messages": [user("go")]}
    kind, raw = post(api, "/v1/messages?beta=true", body)
    assert kind == "text/event-stream"
    events = sse(raw)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["usage"]["input_tokens"] == 150_000
    starts = [data for name, data in events if name == "content_block_start"]
    assert starts[0]["content_block"]["type"] == "tool_use"
    assert starts[0]["content_block"]["name"] == "Write"
    partial = "".join(
        data["delta"]["partial_json"]
        for name, data in events
        if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta"
    )
    assert json.loads(partial) == {"file_path": "/r/a.txt", "content": "x" * 100}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"

    _, raw = post(api, "/v1/messages", body)
    text = "".join(
        data["delta"]["text"]
        for name, data in sse(raw)
        if name == "content_block_delta" and data["delta"]["type"] == "text_delta"
    )
    assert text == "done"
    assert [r.kind for r in api.requests] == ["main", "main"]
    assert api.model_requests[0].body["messages"][0]["content"][0]["text"] == "go"


def test_json_side_summary_count_tokens_and_unknown(api: FakeAnthropic) -> None:
    api.queue_text("scripted")  # must survive the side and summary requests
    _, raw = post(api, "/v1/messages", {"model": "m", "messages": [user("title?")]})
    message = json.loads(raw)
    assert message["type"] == "message" and message["content"][0]["text"] == api.side_text

    summary_body = {
        "model": "m",
        "tools": TOOLS,
        "messages": [user("Your task is to create a detailed summary of the conversation so far")],
    }
    assert is_summary_request(summary_body)
    message = json.loads(post(api, "/v1/messages", summary_body)[1])
    assert message["content"][0]["text"] == api.summary_text

    message = json.loads(post(api, "/v1/messages", {"model": "m", "tools": TOOLS, "messages": [user("go")]})[1])
    assert message["content"][0]["text"] == "scripted"
    assert message["usage"]["input_tokens"] == api.usage["input_tokens"]

    counted = json.loads(post(api, "/v1/messages/count_tokens", {"messages": [user("x" * 400)]})[1])
    assert counted["input_tokens"] >= 100

    assert json.loads(post(api, "/v1/whatever", {})[1]) == {}
    assert api.unknown_paths == ["POST /v1/whatever"]
    assert [r.kind for r in api.requests] == ["side", "summary", "main", "count_tokens", "other"]
