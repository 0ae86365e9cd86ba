"""A loopback stand-in for the OpenAI Responses API, for end-to-end tests.

Standard library only. Start it, point the real Codex CLI at it through a model
provider in ``$CODEX_HOME/config.toml`` (``base_url = server.url + "/v1"``,
``wire_api = "responses"``; Codex ignores ``OPENAI_BASE_URL``), script the
model's turns, then assert on ``server.requests``::

    with FakeOpenAI() as server:
        server.queue_apply_patch("*** Begin Patch\\n*** Add File: a.txt\\n+hi\\n*** End Patch\\n")
        server.queue_text("Done.")
        ...run codex exec...
        assert "MARKER" in server.model_requests[0].text

How a request to ``POST /v1/responses`` is answered:

1. A compaction request (``is_compaction_request``: Codex's
   ``x-codex-turn-metadata`` header says ``"request_kind": "compaction"``) gets
   ``summary_text``; it never consumes the script.
2. A main-loop request (one that offers tools) takes the next scripted reply
   from the queue; when the queue is empty it gets ``default_text``.
3. Any other request (no tools) gets ``side_text``; it never consumes the script.

Replies stream as server-sent events (``response.created``, then per output
item ``response.output_item.added`` / deltas / ``response.output_item.done``,
then ``response.completed`` with ``usage``) when the body says
``"stream": true``, and come back as one JSON response object otherwise.
``GET /v1/models`` answers an empty model list; any other path is logged in
``unknown_paths`` and answered with ``{}``.

Tool calls adapt to the tools the request offers, as the real model would:
``apply_patch`` is sent as a freeform ``custom_tool_call`` when the tool is
declared ``"type": "custom"`` and as a ``function_call`` with ``{"input": ...}``
otherwise; a shell call uses ``exec_command`` (``{"cmd": ...}``), ``shell_command``
(``{"command": str}``) or ``shell`` (``{"command": [argv]}``), whichever is offered.

Usage figures: ``server.usage`` is reported for every reply; a scripted reply may
carry its own ``usage`` (e.g. ``input_tokens=900_000``) so that Codex believes its
context is large and, with ``-c model_auto_compact_token_limit=N``, auto-compacts.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from testing import loopback

__all__ = [
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "is_compaction_request",
    "request_text",
]

DEFAULT_USAGE: dict[str, int] = {"input_tokens": 1200, "output_tokens": 40}

SHELL_TOOLS = ("exec_command", "shell_command", "shell")


@dataclass
class Reply:
    """One scripted assistant turn.

    ``kind`` is ``text``, ``apply_patch`` or ``shell``; tool calls are turned into
    output items only when answering, because their shape depends on the tools
    the request offers.
    """

    kind: str
    text: str = ""  # the message text, the patch, or the shell command
    usage: dict[str, int] = field(default_factory=dict)
    call_id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)  # kind "function"
    namespace: str = ""  # kind "function": a tool of a namespace tool_search found

    @classmethod
    def message(cls, text: str, **usage: int) -> "Reply":
        return cls("text", text, dict(usage))

    @classmethod
    def apply_patch(cls, patch: str, **usage: int) -> "Reply":
        return cls("apply_patch", patch, dict(usage), "call_" + uuid.uuid4().hex[:20])

    @classmethod
    def function(cls, name: str, arguments: dict[str, Any], **usage: int) -> "Reply":
        """A call of any offered function tool (an MCP server's, say) by name."""
        return cls("function", name, dict(usage), "call_" + uuid.uuid4().hex[:20], dict(arguments))

    @classmethod
    def shell(cls, command: str, **usage: int) -> "Reply":
        return cls("shell", command, dict(usage), "call_" + uuid.uuid4().hex[:20])


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def item_text(item: Any) -> str:
    """The text one Responses API input item carries."""
    if not isinstance(item, dict):
        return ""
    kind = item.get("type", "message")
    if kind == "message":
        return _content_text(item.get("content"))
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        return output if isinstance(output, str) else _content_text(output)
    if kind == "function_call":
        return str(item.get("arguments", ""))
    if kind == "custom_tool_call":
        return str(item.get("input", ""))
    if kind == "compaction":  # an opaque summary of earlier turns
        return str(item.get("encrypted_content", ""))
    return ""


def request_text(body: dict[str, Any]) -> str:
    """The instructions and the text of every input item of a request body."""
    parts = [str(body.get("instructions") or "")]
    items = body.get("input")
    if isinstance(items, str):
        parts.append(items)
    elif isinstance(items, list):
        parts.extend(item_text(item) for item in items)
    return loopback.join_text(parts)


@dataclass
class RecordedRequest(loopback.Recorded):
    # kind: "main", "compaction", "side", "models", "other"
    request_text = staticmethod(request_text)

    @staticmethod
    def offered(body: dict[str, Any]) -> list[str]:
        return list(offered_tools(body))

    @property
    def turn_metadata(self) -> dict[str, Any]:
        return turn_metadata(self.headers)

    @property
    def session_id(self) -> str:
        """The Codex session (thread) that sent this request."""
        return self.headers.get("session-id") or str(self.turn_metadata.get("session_id", ""))


def offered_tools(body: Any) -> dict[str, dict[str, Any]]:
    """The request's tools by name (function and freeform tools)."""
    if not isinstance(body, dict):
        return {}
    tools = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                tools[name] = tool
    return tools


def searched_tools(body: Any) -> dict[str, set[str]]:
    """{namespace: tool names} that tool_search outputs in the input gave."""
    ret: dict[str, set[str]] = {}
    for item in (body.get("input") or []) if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            for ns in item.get("tools") or []:
                if isinstance(ns, dict) and ns.get("type") == "namespace":
                    names = {t.get("name") for t in ns.get("tools") or [] if isinstance(t, dict)}
                    ret.setdefault(str(ns.get("name")), set()).update(n for n in names if isinstance(n, str))
    return ret


def turn_metadata(headers: dict[str, str]) -> dict[str, Any]:
    raw = headers.get("x-codex-turn-metadata", "")
    try:
        meta = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def is_compaction_request(headers: dict[str, str]) -> bool:
    return turn_metadata(headers).get("request_kind") == "compaction"


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def output_items(reply: Reply, body: Any) -> list[dict[str, Any]]:
    """The Responses API output items that deliver ``reply`` to this request."""
    tools = offered_tools(body)
    if reply.kind == "text":
        return [
            {
                "type": "message",
                "id": _new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        ]
    if reply.kind == "apply_patch":
        tool = tools.get("apply_patch")
        if tool is None:
            raise ScriptError(f"apply_patch scripted but not offered; tools: {sorted(tools)}")
        if tool.get("type") == "custom":
            return [
                {
                    "type": "custom_tool_call",
                    "id": _new_id("ctc"),
                    "status": "completed",
                    "call_id": reply.call_id,
                    "name": "apply_patch",
                    "input": reply.text,
                }
            ]
        return [_function_call(reply.call_id, "apply_patch", {"input": reply.text})]
    if reply.kind == "shell":
        if "exec_command" in tools:
            return [_function_call(reply.call_id, "exec_command", {"cmd": reply.text})]
        if "shell_command" in tools:
            return [_function_call(reply.call_id, "shell_command", {"command": reply.text})]
        if "shell" in tools:
            argv = ["bash", "-lc", reply.text]
            return [_function_call(reply.call_id, "shell", {"command": argv})]
        raise ScriptError(f"shell call scripted but none of {SHELL_TOOLS} offered; tools: {sorted(tools)}")
    if reply.kind == "tool_search":
        if not any(isinstance(t, dict) and t.get("type") == "tool_search" for t in body.get("tools") or []):
            raise ScriptError("tool_search scripted but not offered")
        return [{
            "type": "tool_search_call", "id": _new_id("tsc"), "status": "completed",
            "call_id": reply.call_id, "execution": "client", "arguments": {"query": reply.text},
        }]
    if reply.kind == "function":
        if reply.namespace:
            found = searched_tools(body).get(reply.namespace, set())
            if reply.text not in found:
                raise ScriptError(f"{reply.namespace}.{reply.text} scripted but no tool_search found it")
            return [{**_function_call(reply.call_id, reply.text, reply.arguments), "namespace": reply.namespace}]
        if reply.text not in tools:
            raise ScriptError(f"{reply.text} scripted but not offered; tools: {sorted(tools)}")
        return [_function_call(reply.call_id, reply.text, reply.arguments)]
    raise ScriptError(f"unknown reply kind {reply.kind!r}")


def _function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": _new_id("fc"),
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


class ScriptError(Exception):
    """The script asks for something this request cannot carry."""


class FakeOpenAI(loopback.Server[RecordedRequest, Reply]):
    """A threaded Responses API stand-in on 127.0.0.1 with a random port."""

    name = "fake-openai"
    recorded = RecordedRequest
    default_usage = DEFAULT_USAGE

    default_summary = (
        "Summary of the conversation so far: the user asked for files to be "
        "edited; they were edited. Pending tasks: none."
    )
    default_model = "gpt-5.5"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.errors: list[str] = []  # script errors, answered with HTTP 400

    # -- scripting ---------------------------------------------------------
    def queue_text(self, text: str, **usage: int) -> None:
        self.queue(Reply.message(text, **usage))

    def queue_apply_patch(self, patch: str, **usage: int) -> None:
        self.queue(Reply.apply_patch(patch, **usage))

    def queue_shell(self, command: str, **usage: int) -> None:
        self.queue(Reply.shell(command, **usage))

    def queue_function_call(
        self, name: str, arguments: dict[str, Any], namespace: str = "", **usage: int
    ) -> None:
        reply = Reply.function(name, arguments, **usage)
        reply.namespace = namespace
        self.queue(reply)

    def queue_tool_search(self, query: str, **usage: int) -> None:
        """A call of the client-side `tool_search` (Codex defers MCP tools
        behind it): the tools it finds are offered in the next request."""
        self.queue(Reply("tool_search", query, dict(usage), "call_" + uuid.uuid4().hex[:20]))

    # -- views on what was recorded ----------------------------------------
    @property
    def compaction_requests(self) -> list[RecordedRequest]:
        return self._of_kind("compaction")

    @property
    def response_requests(self) -> list[RecordedRequest]:
        """Every POST /v1/responses request, whatever its kind."""
        return self._of_kind("main", "compaction", "side")

    # -- answering ---------------------------------------------------------
    def classify_and_pick(self, record: RecordedRequest) -> Reply:
        """Set ``record.kind`` and choose the reply, consuming the script if main."""
        body = record.body
        if is_compaction_request(record.headers):
            record.kind = "compaction"
        elif isinstance(body, dict) and body.get("tools"):
            record.kind = "main"
        else:
            record.kind = "side"
        if self.responder is not None:
            custom = self.responder(record)
            if custom is not None:
                return custom
        if record.kind == "compaction":
            return Reply.message(self.summary_text)
        if record.kind == "main":
            reply = self.next_reply()
            return reply or Reply.message(self.default_text)
        return Reply.message(self.side_text)

    def _usage_for(self, reply: Reply) -> dict[str, Any]:
        usage = dict(self.usage)
        usage.update(reply.usage)
        total = usage["input_tokens"] + usage["output_tokens"]
        return {
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
            "total_tokens": total,
        }

    def response_json(self, reply: Reply, body: Any, response_id: str) -> dict[str, Any]:
        model = body.get("model", self.model) if isinstance(body, dict) else self.model
        return {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": model,
            "output": output_items(reply, body),
            "usage": self._usage_for(reply),
        }

    def sse_events(self, reply: Reply, body: Any) -> list[dict[str, Any]]:
        """The stream of events (each with its ``type``) that delivers ``reply``."""
        response_id = _new_id("resp")
        full = self.response_json(reply, body, response_id)
        shell = {k: v for k, v in full.items() if k not in ("output", "usage")}
        shell.update(status="in_progress", output=[])
        events: list[dict[str, Any]] = [{"type": "response.created", "response": shell}]
        n = self.chunk_size
        for index, item in enumerate(full["output"]):
            started = copy.deepcopy(item)
            started["status"] = "in_progress"
            if item["type"] == "message":
                started["content"] = []
            events.append({"type": "response.output_item.added", "output_index": index, "item": started})
            if item["type"] == "message":
                text = item["content"][0]["text"]
                for i in range(0, len(text), n):
                    events.append(
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": text[i : i + n],
                        }
                    )
            elif item["type"] == "custom_tool_call":
                raw = item["input"]
                for i in range(0, len(raw), n):
                    events.append(
                        {
                            "type": "response.custom_tool_call_input.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "delta": raw[i : i + n],
                        }
                    )
            elif item["type"] == "function_call":
                raw = item["arguments"]
                for i in range(0, len(raw), n):
                    events.append(
                        {
                            "type": "response.function_call_arguments.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "delta": raw[i : i + n],
                        }
                    )
            events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        events.append({"type": "response.completed", "response": full})
        return events


class _Handler(loopback.Handler):
    fake: FakeOpenAI  # set on the bound subclass
    server_version = "fake-openai/1"

    def headers_out(self) -> dict[str, str]:
        return {"x-request-id": _new_id("req")}

    def answer(self, path: str, record: loopback.Recorded) -> None:
        assert isinstance(record, RecordedRequest)
        fake, method, body = self.fake, record.method, record.body
        if method == "POST" and path.endswith("/responses"):
            reply = fake.classify_and_pick(record)
            fake._record(record)
            stream = isinstance(body, dict) and body.get("stream")
            try:
                if stream:
                    events = fake.sse_events(reply, body)
                else:
                    payload = fake.response_json(reply, body, _new_id("resp"))
            except ScriptError as error:
                with fake._lock:
                    fake.errors.append(str(error))
                self.send_json(400, {"error": {"message": str(error), "type": "invalid_request_error"}})
                return
            if stream:
                self.stream((event["type"], event) for event in events)
            else:
                self.send_json(200, payload)
            return
        if method == "GET" and path.endswith("/models"):
            record.kind = "models"
            fake._record(record)
            self.send_json(200, {"object": "list", "data": [], "models": []})
            return
        self.other(record)


FakeOpenAI.handler = _Handler


if __name__ == "__main__":  # pragma: no cover - manual use
    loopback.serve(FakeOpenAI())
