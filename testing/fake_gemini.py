"""A loopback stand-in for the Gemini API (generativelanguage), for end-to-end tests.

Standard library only. Start it, point the real Gemini CLI at it with
``GOOGLE_GEMINI_BASE_URL=server.url`` (and any ``GEMINI_API_KEY``), script the
model's turns, then assert on ``server.requests``::

    with FakeGemini() as server:
        server.queue_call("write_file", {"file_path": "a.txt", "content": "hi\\n"})
        server.queue_text("Done.")
        ...run the client...
        assert "MARKER" in server.model_requests[0].text

Endpoints (``/v1beta/models/<model>:<method>``):

- ``:streamGenerateContent?alt=sse`` and ``:generateContent``: answered as below,
  streamed as server-sent events (``data: <GenerateContentResponse>``) or as one
  JSON response.
- ``:countTokens``: ``{"totalTokens": <estimate>}`` (about 4 characters a token).
- Anything else is logged in ``unknown_paths`` and answered ``{}``.

How a generate request is answered:

1. A compression request (``is_compression_request``: Gemini CLI's
   ChatCompressionService asks for a ``<state_snapshot>``, once to write it and
   once to verify it) gets ``summary_text``; it never consumes the script.
2. A main-loop request (one that declares tools) takes the next scripted reply;
   when the queue is empty it gets ``default_text``.
3. Any other request (side queries without tools: next-speaker checks, routing,
   loop detection, session titles) gets ``side_text``, or ``side_json`` when the
   request asks for ``application/json``; it never consumes the script.

Usage: every reply reports ``usageMetadata``; ``promptTokenCount`` is
``prompt_tokens`` unless the scripted reply carries its own. Gemini CLI compares
the last reply's ``promptTokenCount`` with half the model's window before each
model call (its automatic compression): a reply claiming 900,000 prompt tokens
makes the next call compress first.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass
from typing import Any

from testing import loopback

__all__ = [
    "FakeGemini",
    "RecordedRequest",
    "Reply",
    "is_compression_request",
    "request_text",
]

# Phrases only Gemini CLI's compression requests carry (the user turn that
# ends the history it asks the model to summarize).
COMPRESSION_MARKERS: tuple[str, ...] = (
    "generate the updated <state_snapshot>",
    "critically evaluate the <state_snapshot>",
    "a previous <state_snapshot> exists",
)

# One JSON answer that satisfies every JSON side query of Gemini CLI 0.61.0: the
# next-speaker check, the routing classifiers (they pick the model) and the loop
# detector; each reads only its own keys.
SIDE_JSON = json.dumps(
    {
        "reasoning": "fake",
        "next_speaker": "user",
        "model_choice": "flash",
        "complexity_reasoning": "fake",
        "complexity_score": 10,
        "unproductive_state_confidence": 0.0,
        "unproductive_state_analysis": "fake",
    }
)

DEFAULT_SUMMARY = (
    "<state_snapshot>\n<overall_goal>The user asked for files to be written; they "
    "were written.</overall_goal>\n<key_knowledge>none</key_knowledge>\n"
    "</state_snapshot>"
)


@dataclass
class Reply:
    """One scripted model turn: parts, plus an optional promptTokenCount."""

    parts: list[dict[str, Any]]
    prompt_tokens: int | None = None

    @classmethod
    def text(cls, text: str, prompt_tokens: int | None = None) -> "Reply":
        return cls([{"text": text}], prompt_tokens)

    @classmethod
    def call(
        cls,
        name: str,
        args: dict[str, Any],
        text: str | None = None,
        prompt_tokens: int | None = None,
    ) -> "Reply":
        parts: list[dict[str, Any]] = []
        if text:
            parts.append({"text": text})
        parts.append({"functionCall": {"name": name, "args": args, "id": "call_" + uuid.uuid4().hex[:12]}})
        return cls(parts, prompt_tokens)

    @property
    def function_calls(self) -> list[dict[str, Any]]:
        return [p["functionCall"] for p in self.parts if "functionCall" in p]


def _parts_text(parts: Any) -> str:
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        return ""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part.get("functionResponse"), dict):
                out.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
            elif isinstance(part.get("functionCall"), dict):
                out.append(json.dumps(part["functionCall"].get("args"), ensure_ascii=False))
    return "\n".join(out)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return _parts_text(content.get("parts"))
    return ""


def request_text(body: dict[str, Any]) -> str:
    """The system instruction and the text of every turn of a generate request."""
    parts = [_content_text(body.get("systemInstruction"))]
    for content in body.get("contents") or []:
        parts.append(_content_text(content))
    return loopback.join_text(parts)


@dataclass
class RecordedRequest(loopback.Recorded):
    # kind: "main", "compression", "side", "count_tokens", "other"
    reply: Reply | None = None

    request_text = staticmethod(request_text)

    @property
    def contents(self) -> list[dict[str, Any]]:
        if not isinstance(self.body, dict):
            return []
        return [c for c in self.body.get("contents") or [] if isinstance(c, dict)]

    @staticmethod
    def offered(body: dict[str, Any]) -> list[str]:
        return tool_names(body)

    @property
    def function_calls(self) -> list[str]:
        """Names of the function calls already in the history sent."""
        return [
            str(part["functionCall"].get("name"))
            for content in self.contents
            for part in content.get("parts") or []
            if isinstance(part, dict) and isinstance(part.get("functionCall"), dict)
        ]


def last_user_text(body: dict[str, Any]) -> str:
    for content in reversed(body.get("contents") or []):
        if isinstance(content, dict) and content.get("role", "user") == "user":
            return _content_text(content)
    return ""


def tool_names(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            for decl in tool.get("functionDeclarations") or []:
                if isinstance(decl, dict):
                    names.append(str(decl.get("name", "")))
    return names


def is_compression_request(body: Any) -> bool:
    """True when Gemini CLI asks the model for a <state_snapshot> of the chat."""
    if not isinstance(body, dict):
        return False
    text = last_user_text(body).lower()
    return any(marker in text for marker in COMPRESSION_MARKERS)


def wants_json(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    config = body.get("generationConfig") or {}
    return isinstance(config, dict) and config.get("responseMimeType") == "application/json"


def estimate_tokens(body: Any) -> int:
    if not isinstance(body, dict):
        return 1
    text = request_text(body) or json.dumps(body)
    return max(1, len(text) // 4)


class FakeGemini(loopback.Server[RecordedRequest, Reply]):
    """A threaded Gemini API stand-in on 127.0.0.1 with a random port."""

    name = "fake-gemini"
    recorded = RecordedRequest

    default_summary = DEFAULT_SUMMARY
    default_model = "gemini-2.5-pro"

    def __init__(self, *, side_json: str = SIDE_JSON, prompt_tokens: int = 1200, **options: Any) -> None:
        super().__init__(**options)
        self.side_json = side_json
        self.prompt_tokens = prompt_tokens

    # -- scripting ---------------------------------------------------------
    def queue_text(self, text: str, prompt_tokens: int | None = None) -> None:
        self.queue(Reply.text(text, prompt_tokens))

    def queue_call(
        self,
        name: str,
        args: dict[str, Any],
        text: str | None = None,
        prompt_tokens: int | None = None,
    ) -> None:
        self.queue(Reply.call(name, args, text, prompt_tokens))

    def queue_write_file(self, file_path: str, content: str, prompt_tokens: int | None = None) -> None:
        self.queue_call("write_file", {"file_path": file_path, "content": content}, prompt_tokens=prompt_tokens)

    def queue_replace(
        self, file_path: str, old: str, new: str, instruction: str = "edit", prompt_tokens: int | None = None
    ) -> None:
        args = {"file_path": file_path, "old_string": old, "new_string": new, "instruction": instruction}
        self.queue_call("replace", args, prompt_tokens=prompt_tokens)

    def queue_shell(self, command: str, description: str = "run", prompt_tokens: int | None = None) -> None:
        args = {"command": command, "description": description}
        self.queue_call("run_shell_command", args, prompt_tokens=prompt_tokens)

    # -- views on what was recorded ----------------------------------------
    @property
    def compression_requests(self) -> list[RecordedRequest]:
        return self._of_kind("compression")

    @property
    def generate_requests(self) -> list[RecordedRequest]:
        return self._of_kind("main", "compression", "side")

    # -- answering ---------------------------------------------------------
    def classify_and_pick(self, body: Any) -> tuple[str, Reply]:
        """Decide the request kind and the reply, consuming the script if main."""
        if is_compression_request(body):
            return "compression", Reply.text(self.summary_text)
        if tool_names(body):
            custom = self.responder(body) if self.responder and isinstance(body, dict) else None
            if custom is not None:
                return "main", custom
            return "main", self.next_reply() or Reply.text(self.default_text)
        if wants_json(body):
            return "side", Reply.text(self.side_json)
        return "side", Reply.text(self.side_text)

    def usage_metadata(self, reply: Reply, body: Any) -> dict[str, int]:
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else self.prompt_tokens
        out = max(1, len(json.dumps(reply.parts)) // 4)
        return {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}

    def response_chunks(self, reply: Reply, body: Any, model: str) -> list[dict[str, Any]]:
        """GenerateContentResponse chunks; the last carries finishReason and usage."""
        chunks: list[list[dict[str, Any]]] = []
        n = self.chunk_size
        for part in reply.parts:
            if "text" in part:
                text = part["text"]
                for i in range(0, max(len(text), 1), n):
                    chunks.append([{"text": text[i : i + n]}])
            else:  # a function call arrives whole, as the real API sends it
                chunks.append([copy.deepcopy(part)])
        response_id = uuid.uuid4().hex[:16]
        out = []
        for index, parts in enumerate(chunks):
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": response_id}
            if index == len(chunks) - 1:
                candidate["finishReason"] = "STOP"
                chunk["usageMetadata"] = self.usage_metadata(reply, body)
            out.append(chunk)
        return out

    def whole_response(self, reply: Reply, body: Any, model: str) -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"role": "model", "parts": copy.deepcopy(reply.parts)}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": self.usage_metadata(reply, body),
            "modelVersion": model,
            "responseId": uuid.uuid4().hex[:16],
        }


class _Handler(loopback.Handler):
    fake: FakeGemini  # set on the bound subclass
    server_version = "fake-gemini/1"

    def answer(self, path: str, record: loopback.Recorded) -> None:
        assert isinstance(record, RecordedRequest)
        fake, method, body = self.fake, record.method, record.body
        _, _, action = path.rpartition(":")
        model = path.rpartition("/models/")[2].partition(":")[0] or fake.model
        if method == "POST" and action == "countTokens":
            record.kind = "count_tokens"
            fake._record(record)
            self.send_json(200, {"totalTokens": estimate_tokens(body)})
            return
        if method == "POST" and action in ("generateContent", "streamGenerateContent"):
            kind, reply = fake.classify_and_pick(body)
            record.kind = kind
            record.reply = reply
            fake._record(record)
            if action == "streamGenerateContent":
                self.stream((None, chunk) for chunk in fake.response_chunks(reply, body, model))
            else:
                self.send_json(200, fake.whole_response(reply, body, model))
            return
        self.other(record)


FakeGemini.handler = _Handler


if __name__ == "__main__":  # pragma: no cover - manual use
    loopback.serve(FakeGemini())
