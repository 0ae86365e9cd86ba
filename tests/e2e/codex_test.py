"""End to end: the real Codex CLI, offline, against a loopback fake Responses API.

Each test scripts the model's turns on ``testing.fake_openai.FakeOpenAI`` and runs
``codex exec --json ... --trust --dangerously-bypass-hook-trust`` (and ``codex
exec resume``) in a scratch repo with its own HOME and CODEX_HOME, after
``agitmem init`` and ``agitmem install codex``. A real auto-compaction: a reply
that reports ``usage.input_tokens`` over ``-c model_auto_compact_token_limit=N``
makes Codex compact before its next request (a ``/v1/responses`` request whose
``x-codex-turn-metadata`` says ``"request_kind":"compaction"``), then run
PreCompact, PostCompact and SessionStart with source ``compact``.

Skipped with the reason when the CLI is not installed (``bash .ci/install-codex``).

``AGITMEM_RECORD_PAYLOADS=1`` makes ``test_hook_payloads`` (re)write the real hook
payloads and a rollout excerpt, scrubbed, to ``tests/agents/payloads/codex/``;
otherwise it checks that the CLI still sends every field those files hold.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from testing.codex_harness import REPO_ROOT, CodexHarness, CodexRun
from testing.fake_openai import RecordedRequest, Reply, item_text

pytestmark = pytest.mark.e2e

PAYLOAD_DIR = REPO_ROOT / "tests" / "agents" / "payloads" / "codex"
RECORD = os.environ.get("AGITMEM_RECORD_PAYLOADS") == "1"

GOAL = "port the config loader to TOML (e2e-goal-7f3a)"
NEXT = "delete the INI parser in src/app.py (e2e-next-91c2)"
MEMORY_BEGIN = "===== AGENT MEMORY BEGIN ====="
RESTATE = "restate"  # the after-compaction instruction (agitmem.inject.RESTATE)
MEMORY_REF = "refs/agitmem/heads/main"
BIG = 500_000  # reported input tokens: over COMPACT_LIMIT
COMPACT_LIMIT = 100_000


# -- agitmem in the scratch repo ----------------------------------------------

def agitmem(harness: CodexHarness, *args: str) -> subprocess.CompletedProcess[str]:
    return harness.agitmem(*args)


def install_agitmem(harness: CodexHarness) -> None:
    """A repo with memory, goal and next intent, agitmem's Codex hooks next to
    the test's own logging hooks (which install must keep)."""
    harness.init_repo({"README.md": "# scratch\n", "src/app.py": "print('v1: INI')\n"})
    harness.write_hooks({"hooks": harness.logging_hooks()})
    agitmem(harness, "init")
    agitmem(harness, "install", "codex")
    agitmem(harness, "state", "set", f"current_goal={GOAL}", f"next_intent={NEXT}")
    hooks = harness.read_hooks()["hooks"]
    for event, groups in harness.logging_hooks().items():
        commands = [h.get("command") for g in hooks.get(event, []) for h in g.get("hooks", [])]
        assert groups[0]["hooks"][0]["command"] in commands, f"install dropped the existing {event} hook"


def memory_file(harness: CodexHarness, name: str) -> str:
    """A memory file as saved on the memory ref ('' when not there)."""
    proc = subprocess.run(
        ["git", "-C", str(harness.repo), "show", f"{MEMORY_REF}:{name}"],
        capture_output=True,
        text=True,
        env=harness.env,
    )
    return proc.stdout if proc.returncode == 0 else ""


def memory_subjects(harness: CodexHarness) -> list[str]:
    return harness.git("log", "--format=%s", MEMORY_REF).splitlines()


def append_patch(path: str, old_last_line: str, new_line: str) -> str:
    """An apply_patch envelope that adds ``new_line`` after the file's last line."""
    return (
        "*** Begin Patch\n"
        f"*** Update File: {path}\n"
        "@@\n"
        f" {old_last_line}\n"
        f"+{new_line}\n"
        "*** End of File\n"
        "*** End Patch\n"
    )


def added_text(request: RecordedRequest, before: RecordedRequest) -> str:
    """Text of the input items ``request`` has that ``before`` did not."""
    def key(item: Any) -> str:
        return str(item.get("id")) if isinstance(item, dict) and item.get("id") else json.dumps(item)

    seen = {key(item) for item in before.body.get("input") or []}
    return "\n".join(item_text(item) for item in request.body.get("input") or [] if key(item) not in seen)


def memory_blocks(text: str) -> int:
    return text.count(MEMORY_BEGIN)


# -- the tests ---------------------------------------------------------------

def test_hooks_fire_block_first_and_apply_patch_saves(codex: CodexHarness) -> None:
    install_agitmem(codex)
    snapshot = codex.repo / ".agent" / "memory" / "snapshot.md"
    last_line = snapshot.read_text().splitlines()[-1]
    patch = append_patch(".agent/memory/snapshot.md", last_line, "- e2e: patched by the model (snap-5d1e)")
    codex.server.queue_apply_patch(patch)
    codex.server.queue_text("Noted.")

    run = codex.run("Note the progress in the snapshot.")

    # (a) the hooks fire, in the order Codex runs them
    assert codex.hook_events() == ["SessionStart:startup", "UserPromptSubmit", "PostToolUse", "Stop"]
    assert run.last_message == "Noted.", run.describe()
    # (b) the memory block is in the very first model request, with the goal
    first = run.model_requests[0].text
    assert memory_blocks(first) == 1, "no memory block in the first request"
    assert GOAL in first
    assert RESTATE not in first.lower()
    # (c) the apply_patch edit reached `agitmem hook post-edit`, which saved it
    assert "snap-5d1e" in snapshot.read_text()
    assert "snap-5d1e" in memory_file(codex, "snapshot.md")
    assert "hook post-edit: snapshot.md" in memory_subjects(codex)
    assert not codex.server.script, "scripted replies left unused"
    assert not codex.server.errors and not codex.server.unknown_paths


def test_auto_compaction_reinjects_with_restate(codex: CodexHarness) -> None:
    install_agitmem(codex)
    api = codex.server
    # a tool call that changes no code (a code change would make the stop hook
    # ask for a state update), reporting a context over the limit
    api.queue_shell("ls src  # e2e-before-compaction", input_tokens=BIG)
    api.queue_text("Done after compaction.")

    run = codex.run("Port the loader.", compact_limit=COMPACT_LIMIT)

    assert [r.kind for r in run.requests] == ["main", "compaction", "main"], run.describe()
    assert run.compaction_requests[0].turn_metadata["request_kind"] == "compaction"
    assert run.last_message == "Done after compaction."
    session = run.thread_id
    assert codex.hook_events(session) == [
        "SessionStart:startup",
        "UserPromptSubmit",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "SessionStart:compact",
        "Stop",
    ]
    assert [p["trigger"] for p in codex.hook_payloads("PreCompact")] == ["auto"]
    assert [p["trigger"] for p in codex.hook_payloads("PostCompact")] == ["auto"]
    # (d) the request right after the compaction holds the block with the
    # restate instruction, and the summary replaced the history
    before, after = run.model_requests
    assert RESTATE not in before.text.lower()
    fresh = added_text(after, before)
    assert memory_blocks(fresh) == 1, "no memory block after the compaction"
    assert RESTATE in fresh.lower(), "no restate instruction after the compaction"
    assert GOAL in fresh and NEXT in fresh
    assert api.summary_text in after.text
    assert "e2e-before-compaction" not in after.text, "the pre-compaction tool call is still in the history"

    # (e) the next prompt, without a compaction, gets no after-compaction block
    api.queue_text("Carried on.")
    again = codex.run("Carry on.", resume=session)
    assert not again.compaction_requests, again.describe()
    assert again.thread_id == session
    fresh = added_text(again.model_requests[0], after)
    assert RESTATE not in fresh.lower(), "after-compaction block without a compaction"
    assert [p["source"] for p in codex.hook_payloads("SessionStart", session)] == [
        "startup",
        "compact",
        "resume",
    ]

    # (f) the recovery log holds the compaction once, judged at its Stop,
    # with Codex's summary read from the rollout's `compacted` record
    (row,) = json.loads(agitmem(codex, "recovery", "--json").stdout)["compactions"]
    assert (row["agent"], row["trigger"], row["session"]) == ("codex", "auto", session)
    assert row["checkpoint"] and row["verdict"], row
    assert api.summary_text in agitmem(codex, "recovery", "show", "1").stdout
    # (g) the same compaction read back from Codex's own rollout (found under
    # $CODEX_HOME by its session_meta cwd) gets the hooks' verdict
    (audited,) = json.loads(agitmem(codex, "recovery", "audit", "--json").stdout)["compactions"]
    assert (audited["client"], audited["session"], audited["index"]) == ("codex", session, 0), audited
    assert audited["verdict"] == {"unknown": "unjudgeable"}.get(row["verdict"], row["verdict"]), (audited, row)
    assert audited["client_version"] and audited["agitmem"], audited


def _wait_for(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_two_sessions_never_cross(codex: CodexHarness, tmp_path: Path) -> None:
    """(f) Session B runs while session A compacts, in the same checkout.

    Made deterministic: B's SessionStart waits (a test hook, gated by
    $E2E_GATE) until A's compaction request reached the fake; the fake holds
    that request until B has finished. So B's UserPromptSubmit runs after A's
    PreCompact and before A's SessionStart(compact)."""
    install_agitmem(codex)
    gate = tmp_path / "a-is-compacting"
    hooks = codex.read_hooks()
    hooks["hooks"]["SessionStart"].append(
        {
            "hooks": [
                {
                    "type": "command",
                    "command": 'if [ -n "$E2E_GATE" ]; then while [ ! -e "$E2E_GATE" ]; do sleep 0.05; done; fi',
                    "timeout": 90,
                }
            ]
        }
    )
    codex.write_hooks(hooks)
    api = codex.server
    b_done = threading.Event()

    def hold_compaction(record: RecordedRequest) -> Reply | None:
        if record.kind == "compaction":
            gate.touch()
            b_done.wait(timeout=90)
        return None

    api.responder = hold_compaction
    api.queue_shell("true", input_tokens=BIG)
    log_size = _audit_size(codex)
    b_running = codex.start("Session B: small question.", env={"E2E_GATE": str(gate)})
    _wait_for(lambda: codex.hook_payloads("SessionStart"), "session B's SessionStart")
    # agitmem's own session-start for B has finished when it logged its load
    _wait_for_quietly(lambda: _audit_size(codex) > log_size, timeout=10)
    a_running = codex.start("Session A: port the loader.", compact_limit=COMPACT_LIMIT)
    try:
        b = codex.finish(b_running)
    finally:
        b_done.set()
    a = codex.finish(a_running)

    assert a.thread_id != b.thread_id
    assert [r.kind for r in a.requests] == ["main", "compaction", "main"], a.describe()
    assert b.model_requests and not b.compaction_requests, b.describe()
    # the orchestration held: B's prompt ran between A's PreCompact and A's SessionStart(compact)
    order = [(p["hook_event_name"], p["session_id"]) for p in codex.hook_payloads()]
    assert order.index(("UserPromptSubmit", b.thread_id)) > order.index(("PreCompact", a.thread_id))
    # A gets its memory back, with the restate instruction
    a_after = added_text(a.model_requests[1], a.model_requests[0])
    assert RESTATE in a_after.lower(), "session A lost its after-compaction block"
    # B never compacted: no after-compaction block anywhere in B
    for request in b.model_requests:
        assert RESTATE not in request.text.lower(), "session B got session A's after-compaction block"


def _audit_size(harness: CodexHarness) -> int:
    try:
        return (harness.repo / ".agent" / "log" / "memory.log").stat().st_size
    except OSError:
        return 0


def _wait_for_quietly(condition: Any, timeout: float) -> None:
    """Wait for ``condition`` at most ``timeout`` seconds; carry on either way."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_bash_memory_edit_reaches_post_edit(codex: CodexHarness) -> None:
    """(g) A shell tool call (Codex names it Bash in hooks) that appends a note."""
    install_agitmem(codex)
    codex.server.queue_shell("printf -- '- e2e: noted through the shell (bash-3c9a)\\n' >> .agent/memory/notes.md")
    codex.server.queue_text("Noted.")

    run = codex.run("Add a note.")

    assert "bash-3c9a" in (codex.repo / ".agent" / "memory" / "notes.md").read_text(), run.describe()
    (post,) = codex.hook_payloads("PostToolUse")
    assert post["tool_name"] == "Bash"
    assert "bash-3c9a" in memory_file(codex, "notes.md"), (
        f"the Bash edit of notes.md was not saved; memory commits: {memory_subjects(codex)}"
    )


# -- the real payloads, recorded or checked ------------------------------------

def payload_file_name(payload: dict[str, Any]) -> str:
    """<Event>[_<source|trigger|tool>][_failed].json, as in ../shared/payloads/codex."""
    event = str(payload.get("hook_event_name", "unknown"))
    qualifier = {
        "SessionStart": payload.get("source"),
        "PreCompact": payload.get("trigger"),
        "PostCompact": payload.get("trigger"),
        "PostToolUse": payload.get("tool_name"),
    }.get(event)
    name = event + (f"_{qualifier}" if qualifier else "")
    if event == "PostToolUse" and "exit 3" in json.dumps(payload.get("tool_input")):
        name += "_failed"
    return name + ".json"


def scrub(value: Any, harness: CodexHarness) -> Any:
    """Replace this machine's paths with neutral ones, keeping the shape."""
    if isinstance(value, dict):  # paths are keys too (FileChange.changes)
        return {scrub(key, harness): scrub(item, harness) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub(item, harness) for item in value]
    if isinstance(value, str):
        text = value
        for real, neutral in (
            (str(harness.codex_home.resolve()), "/home/dev/.codex"),
            (str(harness.codex_home), "/home/dev/.codex"),
            (str(harness.repo.resolve()), "/home/dev/repo"),
            (str(harness.repo), "/home/dev/repo"),
            (str(harness.home.resolve()), "/home/dev"),
            (str(harness.home), "/home/dev"),
            (str(harness.server.url), "http://127.0.0.1:8080"),
        ):
            text = text.replace(real, neutral)
        return text
    return value


def trim(value: Any, limit: int = 300) -> Any:
    """Shorten long strings (instructions, skills) so that the excerpt stays small."""
    if isinstance(value, dict):
        return {key: trim(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [trim(item, limit) for item in value[:8]]
    if isinstance(value, str) and len(value) > limit:
        return value[:120] + "...[trimmed]"
    return value


def test_hook_payloads(codex: CodexHarness) -> None:
    """What Codex sends each hook, and what its rollout transcript records."""
    codex.init_repo()
    codex.write_hooks({"hooks": codex.logging_hooks()})
    api = codex.server
    api.queue_apply_patch("*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n")
    api.queue_shell("printf 'ok\\n' > b.txt")
    api.queue_shell("echo out; echo err >&2; exit 3", input_tokens=BIG)
    api.queue_text("Done after compaction.")
    first = codex.run("Make the files.", compact_limit=COMPACT_LIMIT)
    session = first.thread_id
    api.queue_text("Resumed.")
    codex.run("Resume please.", resume=session)

    starts = codex.hook_payloads("SessionStart")
    assert [p["source"] for p in starts] == ["startup", "compact", "resume"]
    assert all("turn_id" not in p for p in starts), "SessionStart now has a turn_id"
    patch_post, bash_post, failed_post = codex.hook_payloads("PostToolUse")
    assert patch_post["tool_name"] == "apply_patch"
    assert patch_post["tool_input"] == {"command": "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"}
    assert patch_post["tool_response"].startswith("Exit code: 0\n")
    # the shell tool (exec_command) is "Bash" to hooks; tool_response is just the
    # output, with no exit code; a failed command fires PostToolUse too
    assert (bash_post["tool_name"], bash_post["tool_input"]) == ("Bash", {"command": "printf 'ok\\n' > b.txt"})
    assert bash_post["tool_response"] == ""
    assert failed_post["tool_name"] == "Bash"
    # stdout and stderr share one pipe: their order is the scheduler's
    assert sorted(failed_post["tool_response"].splitlines()) == ["err", "out"]
    (stop_first, stop_resumed) = codex.hook_payloads("Stop")
    assert (stop_first["stop_hook_active"], stop_first["last_assistant_message"]) == (False, "Done after compaction.")
    assert stop_resumed["last_assistant_message"] == "Resumed."
    for payload in codex.hook_payloads():
        assert payload["session_id"] == session
        assert payload["cwd"] == str(codex.repo.resolve())
        assert Path(payload["transcript_path"]).name.endswith(f"-{session}.jsonl")

    # The rollout transcript: token_count events carry what the fake reported,
    # and the compaction is a "compacted" record.
    rollout = Path(starts[0]["transcript_path"])
    records = [json.loads(line) for line in rollout.read_text().splitlines()]
    usages = [
        r["payload"]["info"]["last_token_usage"]["input_tokens"]
        for r in records
        if r["type"] == "event_msg" and r["payload"].get("type") == "token_count" and r["payload"].get("info")
    ]
    assert BIG in usages
    (compacted,) = [r for r in records if r["type"] == "compacted"]
    assert api.summary_text in compacted["payload"]["message"]

    firsts: dict[str, dict[str, Any]] = {}
    for payload in codex.hook_payloads():
        firsts.setdefault(payload_file_name(payload), payload)
    for name, payload in sorted(firsts.items()):
        path = PAYLOAD_DIR / name
        if RECORD:
            PAYLOAD_DIR.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(scrub(payload, codex), indent=2, ensure_ascii=False) + "\n")
        elif path.exists():
            missing = sorted(set(json.loads(path.read_text())) - set(payload))
            assert not missing, f"{name}: the CLI no longer sends {missing}; payload: {payload}"
    if RECORD:
        lines = [json.dumps(trim(scrub(r, codex)), ensure_ascii=False) for r in records]
        (PAYLOAD_DIR / "rollout.jsonl").write_text("\n".join(lines) + "\n")
    else:
        saved = PAYLOAD_DIR / "rollout.jsonl"
        if saved.exists():
            kinds = {(json.loads(line)["type"]) for line in saved.read_text().splitlines()}
            assert kinds <= {r["type"] for r in records}, "the rollout lost a record type"


def test_codex_run_reports(codex: CodexHarness) -> None:
    """The harness sees what a run did (guards the other tests' premises)."""
    codex.init_repo()
    codex.server.queue_text("Hello.")
    run: CodexRun = codex.run("Say hello.")
    assert run.last_message == "Hello."
    assert len(run.model_requests) == 1
    assert "Say hello." in run.model_requests[0].text
    assert "apply_patch" in run.model_requests[0].tool_names, "the model gets no apply_patch tool"
    assert re.fullmatch(r"[0-9a-f-]{36}", run.thread_id)
    assert not codex.hook_payloads(), "hooks ran though none are installed"
