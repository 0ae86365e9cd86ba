"""End to end: the real Gemini CLI 0.61.0, offline, against a loopback fake Gemini API.

Each scenario (a module-scoped fixture: the CLI runs once, several tests assert
on what it did) scripts the model's turns on ``testing.fake_gemini.FakeGemini``
and drives ``gemini -p ... --approval-mode yolo -o json`` (``--resume`` for the
next prompt of the same session) or the interactive UI through a pty
(``/compress``) in a scratch repo after ``agitmem init`` and ``agitmem install
gemini``. Logging hooks for every event run next to agitmem's.

How the scenarios compress for real: Gemini CLI checks, before each model call,
the last reply's ``usageMetadata.promptTokenCount`` against half the model's
window (1,048,576 tokens); the fake claims 900,000 on a tool call, so the call
after the tool result compresses first (two ``<state_snapshot>`` requests, then
the shortened history). ``/compress`` compresses whatever the size.

A test marked ``xfail(strict=True, ...)`` describes what agitmem does not do
yet; it turns into a failure (XPASS) once it does.

Skipped with the reason when the CLI is not installed (``bash .ci/install-gemini``).
``AGITMEM_RECORD_PAYLOADS=1`` (re)writes the real hook payloads, scrubbed, and
a chat-file excerpt showing a compression, to ``tests/agents/payloads/gemini/``;
otherwise the payload test checks that the CLI still sends every saved field.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from testing.fake_gemini import FakeGemini, RecordedRequest
from testing.gemini_cli import REPO_ROOT, GeminiHarness, GeminiRun, find_gemini

# its scenarios are module fixtures (a real CLI run each): under xdist the
# module stays on one worker, which builds them once
pytestmark = pytest.mark.e2e

PAYLOAD_DIR = REPO_ROOT / "tests" / "agents" / "payloads" / "gemini"
RECORD = os.environ.get("AGITMEM_RECORD_PAYLOADS") == "1"

GOAL = "port the config loader to TOML (e2e-goal-7f3a)"
NEXT = "delete the INI parser in src/app.py (e2e-next-91c2)"
SNAP_MARK = "e2e-snapshot-written-by-gemini-5d1e"
MEMORY_BEGIN = "===== AGENT MEMORY BEGIN ====="
MEMORY_REF = "refs/agitmem/heads/main"
RESTATE = "restate"
RESTATE_SENTENCE = "Your context was just compacted."  # agitmem/inject.py's instruction
BIG_TOKENS = 900_000  # over half the 1,048,576-token window: the next call compresses
ACK = "Got it. Thanks for the additional context!"  # Gemini CLI's reply to its own summary


# -- fixtures ------------------------------------------------------------------


@pytest.fixture(scope="session")
def gemini_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    path, why = find_gemini(tmp_path_factory.mktemp("gemini-version-home"))
    if path is None:
        pytest.skip(why)
    return path


def _agitmem(h: GeminiHarness, *args: str, stdout_only: bool = False) -> str:
    proc = h.agitmem(*args)
    return proc.stdout if stdout_only else proc.stdout + proc.stderr


def _harness(gemini_bin: str, tmp: Path, server: FakeGemini) -> GeminiHarness:
    h = GeminiHarness(gemini_bin, tmp, server)
    h.init_repo({"README.md": "# scratch\n", "src/app.py": "print('v1: INI')\n"})
    h.git("config", "user.name", "e2e")
    h.git("config", "user.email", "e2e@example.invalid")
    _agitmem(h, "init")
    _agitmem(h, "state", "set", f"current_goal={GOAL}", f"next_intent={NEXT}")
    h.install_output = _agitmem(h, "install", "gemini")  # type: ignore[attr-defined]
    h.add_hooks(h.logging_hooks())
    return h


@dataclass
class Scenario:
    h: GeminiHarness
    runs: dict[str, GeminiRun] = field(default_factory=dict)
    term_requests: dict[str, list[RecordedRequest]] = field(default_factory=dict)


def _served(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Path, FakeGemini]]:
    server = FakeGemini().start()
    try:
        yield tmp_path_factory.mktemp(name), server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def headless(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """One session, four headless prompts: edits (run1), a plain prompt (run2),
    an automatic compression in the middle of a prompt (run3), one more (run4)."""
    for tmp, api in _served(tmp_path_factory, "gemini-headless"):
        h = _harness(gemini_bin, tmp, api)
        s = Scenario(h)
        snapshot = ".agent/memory/snapshot.md"
        old = (h.repo / snapshot).read_text()
        api.queue_write_file(snapshot, old + f"\n## In progress\n- {SNAP_MARK}\n")
        api.queue_replace("src/app.py", "v1: INI", "v2: TOML")
        api.queue_write_file("data.txt", "lorem ipsum dolor sit amet\n" * 300)
        api.queue_shell("echo shell-ran > shell.txt")
        api.queue_text("Done one.")
        s.runs["run1"] = h.run("Port the config loader to TOML.")
        session = s.runs["run1"].session_id
        api.queue_text("Done two.")
        s.runs["run2"] = h.run("Anything else?", resume=session)
        api.queue_shell("echo big", prompt_tokens=BIG_TOKENS)
        api.queue_shell("echo after-compression")
        api.queue_text("Done three.")
        s.runs["run3"] = h.run("Carry on.", resume=session)
        api.queue_text("Done four.")
        s.runs["run4"] = h.run("What is next?", resume=session)
        yield s


@pytest.fixture(scope="module")
def interactive(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """The interactive UI: a prompt, ``/compress``, another prompt, ``/quit``."""
    for tmp, api in _served(tmp_path_factory, "gemini-interactive"):
        h = _harness(gemini_bin, tmp, api)
        s = Scenario(h)
        api.queue_write_file("hello.txt", "hello\n")
        api.queue_text("Wrote hello.")
        term = h.interactive()
        try:
            mark = len(api.requests)
            term.type_line("Create hello.txt", lambda: "Wrote hello." in term.screen, "the first answer")
            s.term_requests["prompt1"] = api.requests[mark:]
            mark = len(api.requests)
            term.type_line(
                "/compress",
                lambda: "compressed from" in term.screen,
                "the compression",
            )
            term.pump(1.0)
            s.term_requests["compress"] = api.requests[mark:]
            mark = len(api.requests)
            api.queue_text("Second answer.")
            term.type_line("What is next?", lambda: "Second answer." in term.screen, "the second answer")
            term.pump(1.0)
            s.term_requests["prompt2"] = api.requests[mark:]
            os.write(term.fd, b"/quit")
            term.pump(0.5)
            os.write(term.fd, b"\r")
        finally:
            term.close()
        s.term = term  # type: ignore[attr-defined]
        yield s


@pytest.fixture(scope="module")
def two_sessions(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """Sessions A and B in one checkout, interleaved; only A compresses."""
    for tmp, api in _served(tmp_path_factory, "gemini-two"):
        h = _harness(gemini_bin, tmp, api)
        s = Scenario(h)
        api.queue_write_file("a.txt", "from session A\n" * 200)
        api.queue_text("A one.")
        s.runs["a1"] = h.run("Session A, first prompt.")
        a = s.runs["a1"].session_id
        api.queue_text("B one.")
        s.runs["b1"] = h.run("Session B, first prompt.")
        b = s.runs["b1"].session_id
        api.queue_shell("echo big", prompt_tokens=BIG_TOKENS)
        api.queue_text("A two.")
        s.runs["a2"] = h.run("Session A, second prompt.", resume=a)
        api.queue_text("B two.")
        s.runs["b2"] = h.run("Session B, second prompt.", resume=b)
        api.queue_text("A three.")
        # Gemini CLI 0.61.0 sometimes cannot find session A again once it
        # compressed and B ran (exit 42, "Invalid session identifier"):
        # the A-side test then skips on that client bug, B's still runs
        s.runs["a3"] = h.run("Session A, third prompt.", resume=a, check=False)
        yield s


# -- helpers -------------------------------------------------------------------


def has_restate_block(request: RecordedRequest) -> bool:
    """The after-compaction block: the memory block with its restate instruction.
    Gemini CLI escapes < and > in additionalContext; the words are intact."""
    text = request.text
    return MEMORY_BEGIN in text and RESTATE in text.lower() and GOAL in text and NEXT in text


def restate_count(request: RecordedRequest) -> int:
    return request.text.count(RESTATE_SENTENCE)


def after_compression(run: GeminiRun) -> list[RecordedRequest]:
    """The run's main requests made after its (last) compression request."""
    last = max(i for i, r in enumerate(run.requests) if r.kind == "compression")
    return [r for r in run.requests[last + 1 :] if r.kind == "main"]


def chat_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def compressions_in(path: Path) -> list[str]:
    """Ids of the summaries in a chat file: each compression rewrites the
    history with ``{"$set": {"messages": [...]}}`` whose messages hold a user
    turn (the summary) followed by the CLI's fixed acknowledgement."""
    found: list[str] = []
    for record in chat_records(path):
        messages = record.get("$set", {}).get("messages") if isinstance(record.get("$set"), dict) else None
        if not isinstance(messages, list):
            continue
        for first, second in zip(messages, messages[1:]):
            content = second.get("content")
            text = "".join(p.get("text", "") for p in content) if isinstance(content, list) else str(content)
            if first.get("type") == "user" and second.get("type") == "gemini" and text == ACK:
                if first["id"] not in found:
                    found.append(first["id"])
    return found


def memory_log(h: GeminiHarness) -> str:
    return h.git("log", "--format=%H %s%n%b", MEMORY_REF)


def audit_log(h: GeminiHarness) -> str:
    return (h.repo / ".agent" / "log" / "memory.log").read_text()


# -- (a) hooks fire ------------------------------------------------------------


def test_install_writes_gemini_hooks(headless: Scenario) -> None:
    settings = headless.h.read_settings()["hooks"]
    ours = {
        event: [hook["command"] for group in groups for hook in group["hooks"] if "agitmem" in hook["command"]]
        for event, groups in settings.items()
    }
    assert {e for e, commands in ours.items() if commands} == {
        "SessionStart", "PreCompress", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel",
    }
    # BeforeModel goes into the same `hook prompt`, which tells the two apart by the payload
    assert ours["BeforeModel"] == ours["BeforeAgent"]


def test_hooks_fire(headless: Scenario) -> None:
    h = headless.h
    events = h.events()
    for event in ("SessionStart", "BeforeAgent", "PreCompress", "BeforeModel", "AfterModel",
                  "BeforeToolSelection", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"):
        assert event in events, f"{event} never fired: {events}"
    assert [p["source"] for p in h.hook_payloads("SessionStart")] == ["startup", "resume", "resume", "resume"]
    assert {p["trigger"] for p in h.hook_payloads("PreCompress")} == {"auto"}
    # PreCompress fires before every model call, not only when it compresses.
    main_calls = sum(len(r.model_requests) for r in headless.runs.values())
    assert len(h.hook_payloads("PreCompress")) == main_calls
    tools = [p["tool_name"] for p in h.hook_payloads("AfterTool")]
    assert tools[:4] == ["write_file", "replace", "write_file", "run_shell_command"]
    sessions = {p["session_id"] for p in h.hook_payloads()}
    assert sessions == {headless.runs["run1"].session_id}
    # BeforeAgent fires once per prompt, before the first PreCompress of it.
    assert len(h.hook_payloads("BeforeAgent")) == 4
    assert events.index("BeforeAgent") < events.index("PreCompress")


def test_hook_payloads_match_saved(headless: Scenario, interactive: Scenario) -> None:
    """Record (AGITMEM_RECORD_PAYLOADS=1) or check the real payloads."""
    record_or_check_payloads(headless.h, interactive.h)


# -- (b) the memory block is in the first model request ------------------------


def test_memory_block_in_first_model_request(headless: Scenario) -> None:
    first = headless.runs["run1"].model_requests[0]
    assert MEMORY_BEGIN in first.text
    assert GOAL in first.text and NEXT in first.text
    # A fresh session's first prompt is not after a compaction.
    assert RESTATE not in first.text.lower()


# -- (c) an edit of the memory fires post-edit --------------------------------


def test_write_file_to_memory_fires_post_edit(headless: Scenario) -> None:
    h = headless.h
    (after_write,) = [p for p in h.hook_payloads("AfterTool") if p["tool_name"] == "write_file"][:1]
    assert after_write["tool_input"]["file_path"] == ".agent/memory/snapshot.md"
    assert SNAP_MARK in h.git("show", f"{MEMORY_REF}:snapshot.md")
    assert "hook post-edit: snapshot.md" in memory_log(h)
    assert (h.repo / "src" / "app.py").read_text() == "print('v2: TOML')\n"
    assert (h.repo / "shell.txt").read_text() == "shell-ran\n"


# -- (d) a real compression is followed by the restate block -------------------


def test_auto_compression_really_happens(headless: Scenario) -> None:
    run3 = headless.runs["run3"]
    assert len(run3.compression_requests) == 2, run3.describe()  # summary, then its verification
    (post, *_rest) = after_compression(run3)
    assert "<state_snapshot>" in post.text
    # The history was rewritten: run1's big write is gone from it.
    assert "lorem ipsum" not in post.text, "the pre-compression history is still sent"
    # The chat file records it: a $set of `messages` starting with the summary.
    (chat,) = {Path(p["transcript_path"]) for p in headless.h.hook_payloads("PreCompress")}
    assert len(compressions_in(chat)) == 1


def test_auto_compression_memory_back_by_next_prompt(headless: Scenario) -> None:
    """At the latest, the first request of the next prompt restates."""
    candidates = after_compression(headless.runs["run3"])[:1] + headless.runs["run4"].model_requests[:1]
    assert any(has_restate_block(r) for r in candidates)


def test_auto_compression_memory_back_in_next_model_request(headless: Scenario) -> None:
    """The request right after the compression gets a block of its own (the
    BeforeModel hook): the kept tail of the history may hold this prompt's
    earlier injection, so count."""
    run3 = headless.runs["run3"]
    first = min(i for i, r in enumerate(run3.requests) if r.kind == "compression")
    before = [r for r in run3.requests[:first] if r.kind == "main"][-1]
    post, *later = after_compression(run3)
    assert has_restate_block(post)
    assert restate_count(post) == restate_count(before) + 1
    # once: the next calls of the same prompt, and the next prompt, get none of their own
    assert later and all(restate_count(r) == restate_count(before) for r in later)
    assert not any(restate_count(r) for r in headless.runs["run4"].model_requests)


def test_before_model_adds_nothing_without_a_compression(headless: Scenario) -> None:
    """BeforeModel fires on every model call; before the compression it
    changes no request (every main request of run1 and run2 holds one
    memory block at most, the session's or the prompt's own)."""
    h = headless.h
    calls = h.hook_payloads("BeforeModel")
    assert len(calls) >= len(headless.runs["run1"].model_requests) + len(headless.runs["run2"].model_requests)
    for run in ("run1", "run2"):
        assert not any(has_restate_block(r) for r in headless.runs[run].model_requests)
    log = audit_log(h)
    assert log.count("re-inject before the next model call") == 1, log


def test_before_model_block_reaches_the_model_unescaped(headless: Scenario) -> None:
    """additionalContext has < and > escaped by the CLI; a BeforeModel
    rewrite reaches the model as written."""
    post = after_compression(headless.runs["run3"])[0]
    said = post.text.rindex(RESTATE_SENTENCE)
    block = post.text[post.text.rindex(MEMORY_BEGIN, 0, said):post.text.index("AGENT MEMORY END", said)]
    assert "agitmem verify -- <test command>`." in block, block[:2000]


def test_auto_compression_is_in_the_recovery_log(headless: Scenario) -> None:
    """Seen by BeforeModel right after the compression, recorded once with the checkpoint and
    Gemini's summary (its <state_snapshot>, from the chat file)."""
    report = json.loads(_agitmem(headless.h, "recovery", "--json", stdout_only=True))
    rows = report["compactions"]
    assert [(r["agent"], r["trigger"]) for r in rows] == [("gemini", "compressed")], rows
    assert rows[0]["checkpoint"]
    # seen first by BeforeModel, in the same prompt; BeforeAgent of run4 does not count it again
    assert "hook prompt: re-inject before the next model call" in audit_log(headless.h)
    assert "<state_snapshot>" in _agitmem(headless.h, "recovery", "show", "1")
    # the same compression read back from Gemini CLI's own chat files (found
    # through ~/.gemini/projects.json) gets the hooks' verdict, once
    (audited,) = json.loads(_agitmem(headless.h, "recovery", "audit", "--json", stdout_only=True))["compactions"]
    assert (audited["client"], audited["index"], audited["agitmem"]) == ("gemini", 0, True), audited
    assert audited["verdict"] == {"unknown": "unjudgeable"}.get(rows[0]["verdict"], rows[0]["verdict"]), (audited, rows)


def test_manual_compress_in_interactive_mode(interactive: Scenario) -> None:
    h = interactive.h
    compress = interactive.term_requests["compress"]
    assert [r.kind for r in compress if r.kind != "count_tokens"] == ["compression", "compression"]
    assert "manual" in [p["trigger"] for p in h.hook_payloads("PreCompress")]
    (chat,) = h.chat_files()
    assert len(compressions_in(chat)) == 1
    (first_after,) = [r for r in interactive.term_requests["prompt2"] if r.kind == "main"][:1]
    assert "<state_snapshot>" in first_after.text
    assert has_restate_block(first_after), first_after.text[-3000:]


# -- (e) no compression, no after-compaction block ----------------------------


def test_no_restate_without_compression(headless: Scenario) -> None:
    run2 = headless.runs["run2"]
    assert not run2.compression_requests
    assert not any(has_restate_block(r) for r in run2.model_requests)
    # Nor in the first interactive prompt's second call, nor the resumed session start.
    assert RESTATE not in run2.model_requests[0].text.lower()


# -- (f) two sessions in one checkout never cross -----------------------------


def test_sessions_do_not_cross(two_sessions: Scenario) -> None:
    runs = two_sessions.runs
    assert runs["a1"].session_id != runs["b1"].session_id
    assert runs["a2"].compression_requests and not runs["b2"].compression_requests
    assert not any(has_restate_block(r) for r in runs["b1"].model_requests)
    assert not any(has_restate_block(r) for r in runs["b2"].model_requests)


def test_compressed_session_gets_memory_back_despite_other_session(two_sessions: Scenario) -> None:
    runs = two_sessions.runs
    assert runs["a2"].compression_requests, runs["a2"].describe()
    if runs["a3"].returncode == 42 and "Invalid session identifier" in runs["a3"].stderr:
        pytest.skip("Gemini CLI lost session A after its compression (exit 42), a client bug")
    assert runs["a3"].returncode == 0, runs["a3"].describe()
    candidates = after_compression(runs["a2"])[:1] + runs["a3"].model_requests[:1]
    assert any(has_restate_block(r) for r in candidates)
    sessions = {p["session_id"] for p in two_sessions.h.hook_payloads()}
    assert sessions == {runs["a1"].session_id, runs["b1"].session_id}


# -- client facts agitmem relies on (what a BeforeModel hook can do) ----------

BEFORE_MODEL_HOOK = r'''
import json, sys
from pathlib import Path
payload = json.load(sys.stdin)
seen_file = Path(sys.argv[1])
ack = "Got it. Thanks for the additional context!"
found = set()
try:
    lines = Path(payload["transcript_path"]).read_text().splitlines()
except OSError:
    lines = []
for line in lines:
    try:
        record = json.loads(line)
    except ValueError:
        continue
    messages = (record.get("$set") or {}).get("messages") if isinstance(record.get("$set"), dict) else None
    for a, b in zip(messages or [], (messages or [])[1:]):
        text = "".join(p.get("text", "") for p in b.get("content") or [] if isinstance(p, dict))
        if a.get("type") == "user" and b.get("type") == "gemini" and text == ack:
            found.add(a["id"])
seen = set(seen_file.read_text().split()) if seen_file.exists() else set()
new = found - seen
seen_file.write_text("\n".join(sorted(found | seen)))
out = {}
if new:
    messages = payload["llm_request"]["messages"]
    for message in reversed(messages):
        if message["role"] == "user":
            message["content"] = "BEFORE-MODEL-INJECTED-4c2b\n\n" + message["content"]
            break
    out = {"hookSpecificOutput": {"hookEventName": "BeforeModel", "llm_request": {"messages": messages}}}
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def before_model(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """No agitmem: a BeforeModel hook that rewrites the request after a
    compression, context hooks with clean and with polluted stdout."""
    for tmp, api in _served(tmp_path_factory, "gemini-before-model"):
        h = GeminiHarness(gemini_bin, tmp, api)
        h.init_repo()
        script = tmp / "before_model.py"
        script.write_text(BEFORE_MODEL_HOOK)
        context = '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s <b>"}}'
        h.write_settings({"hooks": h.logging_hooks()})
        h.add_hooks({
            "BeforeModel": [{"hooks": [{
                "type": "command", "command": f"{sys.executable} {script} {tmp / 'seen'}",
            }]}],
            "SessionStart": [{"hooks": [{
                "type": "command", "command": "echo '" + context % ("SessionStart", "CTX-START-1a") + "'",
            }]}],
            "BeforeAgent": [
                {"hooks": [{"type": "command", "command": "echo '" + context % ("BeforeAgent", "CTX-PROMPT-2b") + "'"}]},
                {"hooks": [{"type": "command",
                            "command": "echo 'a stray line'; echo '" + context % ("BeforeAgent", "CTX-POLLUTED-3c") + "'"}]},
            ],
        })
        s = Scenario(h)
        api.queue_write_file("big.txt", "lorem ipsum dolor sit amet\n" * 300)
        api.queue_text("One.")
        s.runs["run1"] = h.run("First.")
        api.queue_shell("echo big", prompt_tokens=BIG_TOKENS)
        api.queue_shell("echo after")
        api.queue_text("Two.")
        s.runs["run2"] = h.run("Second.", resume=s.runs["run1"].session_id)
        yield s


def test_context_hooks_need_pure_json_stdout(before_model: Scenario) -> None:
    first = before_model.runs["run1"].model_requests[0]
    assert "CTX-START-1a &lt;b&gt;" in first.text  # < and > arrive escaped
    assert "CTX-PROMPT-2b &lt;b&gt;" in first.text
    assert "CTX-POLLUTED-3c" not in first.text  # one stray line and the JSON is ignored


def test_before_model_hook_rewrites_the_request_after_compression(before_model: Scenario) -> None:
    run2 = before_model.runs["run2"]
    assert len(run2.compression_requests) == 2, run2.describe()
    post, later = after_compression(run2)[:2]
    assert "BEFORE-MODEL-INJECTED-4c2b" in post.text
    # The rewrite is for that request only: neither the history nor the chat file keep it.
    assert "BEFORE-MODEL-INJECTED-4c2b" not in later.text
    (chat,) = {Path(p["transcript_path"]) for p in before_model.h.hook_payloads("BeforeModel")}
    assert "BEFORE-MODEL-INJECTED-4c2b" not in chat.read_text()
    assert not any("BEFORE-MODEL-INJECTED-4c2b" in r.text for r in before_model.runs["run1"].requests)


# -- payload recording ---------------------------------------------------------


def payload_file_name(payload: dict[str, Any]) -> str:
    event = str(payload.get("hook_event_name", "unknown"))
    qualifier = {
        "SessionStart": payload.get("source"),
        "SessionEnd": payload.get("reason"),
        "PreCompress": payload.get("trigger"),
        "BeforeTool": payload.get("tool_name"),
        "AfterTool": payload.get("tool_name"),
    }.get(event)
    return f"{event}-{qualifier}.json" if qualifier else f"{event}.json"


def scrub(value: Any, harnesses: list[GeminiHarness], ids: dict[str, str]) -> Any:
    """Replace machine paths and ids with placeholders, keeping the shape."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("session_id", "sessionId", "id") and isinstance(item, str) and len(item) > 8:
                ids.setdefault(item, f"<{key}>")
            out[key] = scrub(item, harnesses, ids)
        return out
    if isinstance(value, list):
        return [scrub(item, harnesses, ids) for item in value]
    if isinstance(value, str):
        text = value
        for raw, placeholder in sorted(ids.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(raw, placeholder)
            text = text.replace(raw[:8], placeholder)  # the chat file name holds the first 8
        for h in harnesses:
            text = text.replace(str(h.repo.resolve()), "<cwd>").replace(str(h.home.resolve()), "<home>")
            text = text.replace(str(h.base.resolve()), "<tmp>")
        text = text.replace(sys.executable, "<python>")
        text = re.sub(r"Process Group PGID: \d+", "Process Group PGID: <pgid>", text)
        return text
    return value


def record_or_check_payloads(*harnesses: GeminiHarness) -> None:
    firsts: dict[str, dict[str, Any]] = {}
    for h in harnesses:
        for payload in h.hook_payloads():
            firsts.setdefault(payload_file_name(payload), payload)
    hs = list(harnesses)
    ids: dict[str, str] = {}
    for payload in firsts.values():
        scrub(payload, hs, ids)
    for name, payload in sorted(firsts.items()):
        path = PAYLOAD_DIR / name
        if RECORD:
            PAYLOAD_DIR.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(scrub(payload, hs, ids), indent=2, ensure_ascii=False) + "\n")
        elif path.exists():
            saved = json.loads(path.read_text())
            missing = sorted(set(saved) - set(payload))
            assert not missing, f"{name}: the CLI no longer sends {missing}"
    if RECORD:
        _record_chat_excerpt(hs, ids)
    else:
        assert {"SessionStart-startup.json", "PreCompress-auto.json", "PreCompress-manual.json",
                "AfterTool-write_file.json", "BeforeAgent.json", "BeforeModel.json"} <= set(firsts)


def _record_chat_excerpt(hs: list[GeminiHarness], ids: dict[str, str]) -> None:
    """The interactive session's chat file, long texts cut, as JSON lines."""
    (chat,) = hs[-1].chat_files()

    def cut(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v) for v in value]
        if isinstance(value, str) and len(value) > 240:
            return value[:200] + f"...<{len(value) - 200} more characters>"
        return value

    lines = [json.dumps(cut(scrub(r, hs, ids)), ensure_ascii=False) for r in chat_records(chat)]
    (PAYLOAD_DIR / "chat-compress-manual.jsonl").write_text("\n".join(lines) + "\n")
