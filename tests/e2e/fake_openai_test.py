"""The fake Responses API on its own (no CLI needed): streaming, routing, tool shapes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest

from testing.fake_openai import FakeOpenAI


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def post(server: FakeOpenAI, body: Any, headers: dict[str, str] | None = None) -> tuple[str, bytes]:
    request = urllib.request.Request(
        server.url + "/v1/responses",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **(headers or {})},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("content-type", ""), response.read()


def sse(raw: bytes) -> list[dict[str, Any]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if chunk.strip():
            lines = dict(line.split(": ", 1) for line in chunk.splitlines())
            data = json.loads(lines["data"])
            assert data["type"] == lines["event"]
            events.append(data)
    return events


CUSTOM_PATCH = {"type": "custom", "name": "apply_patch"}
EXEC = {"type": "function", "name": "exec_command", "parameters": {}}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def test_streams_a_freeform_apply_patch_with_usage(api: FakeOpenAI) -> None:
    api.queue_apply_patch("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", input_tokens=900_000)
    body = {"model": "gpt-5.5", "stream": True, "tools": [CUSTOM_PATCH, EXEC], "input": [user("go")]}
    kind, raw = post(api, body)
    assert kind == "text/event-stream"
    events = sse(raw)
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["usage"]["input_tokens"] == 900_000
    (done,) = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert (done["type"], done["name"]) == ("custom_tool_call", "apply_patch")
    assert done["input"].startswith("*** Begin Patch")
    assert api.model_requests[0].text == "go"


def test_shell_call_uses_the_offered_tool(api: FakeOpenAI) -> None:
    api.queue_shell("ls")
    _, raw = post(api, {"stream": True, "tools": [EXEC], "input": [user("go")]})
    (done,) = [e["item"] for e in sse(raw) if e["type"] == "response.output_item.done"]
    assert (done["type"], done["name"], json.loads(done["arguments"])) == ("function_call", "exec_command", {"cmd": "ls"})


def test_compaction_request_gets_the_summary_and_keeps_the_script(api: FakeOpenAI) -> None:
    api.queue_text("scripted")
    meta = json.dumps({"session_id": "s-1", "request_kind": "compaction"})
    _, raw = post(api, {"stream": True, "tools": [], "input": [user("summarize")]}, {"x-codex-turn-metadata": meta})
    (done,) = [e["item"] for e in sse(raw) if e["type"] == "response.output_item.done"]
    assert done["content"][0]["text"] == api.summary_text
    assert [r.kind for r in api.requests] == ["compaction"]
    assert api.compaction_requests[0].session_id == "s-1"
    assert len(api.script) == 1


def test_unoffered_tool_is_a_400_not_a_hang(api: FakeOpenAI) -> None:
    api.queue_apply_patch("*** Begin Patch\n*** End Patch\n")
    with pytest.raises(urllib.error.HTTPError) as error:
        post(api, {"stream": True, "tools": [EXEC], "input": [user("go")]})
    assert error.value.code == 400
    assert "apply_patch scripted but not offered" in api.errors[0]


def test_json_reply_without_stream(api: FakeOpenAI) -> None:
    api.queue_text("hi")
    kind, raw = post(api, {"tools": [EXEC], "input": [user("go")]})
    assert kind == "application/json"
    reply = json.loads(raw)
    assert reply["output"][0]["content"][0]["text"] == "hi"
