"""End to end: the real Claude Code CLI, offline, against a loopback fake model API.

Each test scripts the model's turns on ``testing.fake_anthropic.FakeAnthropic``,
runs ``claude -p ... --output-format json --dangerously-skip-permissions`` in a
scratch repo, then ``claude -p /compact --resume <session>`` (a real, manual
compaction: the CLI sends one summary request, runs PreCompact, then SessionStart
with source ``compact``), then one more prompt in the resumed session, and
asserts on what the model was sent and what the hooks did.

Skipped with the reason when the CLI is not installed (``bash .ci/install-claude``).

``AGITMEM_RECORD_PAYLOADS=1`` makes ``test_harness_hooks_fire`` (re)write the
real hook payloads, scrubbed, to ``tests/agents/payloads/claude_real_*.json``;
otherwise it checks that the CLI still sends every field those files hold.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import HOOK_EVENTS, REPO_ROOT, ClaudeHarness, ClaudeRun

pytestmark = pytest.mark.e2e

PAYLOAD_DIR = REPO_ROOT / "tests" / "agents" / "payloads"
RECORD = os.environ.get("AGITMEM_RECORD_PAYLOADS") == "1"

MARKER = "MARKER-123"
# SessionStart hook that injects the marker, tagged with the source it ran for.
MARKER_HOOK = (
    "src=$(sed -n 's/.*\"source\" *: *\"\\([a-z]*\\)\".*/\\1/p'); "
    "printf '{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\","
    f"\"additionalContext\":\"{MARKER} source=%s\"}}}}' \"$src\""
)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def payload_file_name(payload: dict[str, Any]) -> str:
    """claude_real_<event>[_<source|trigger|tool>].json"""
    event = str(payload.get("hook_event_name", "unknown"))
    qualifier = {
        "SessionStart": payload.get("source"),
        "PreCompact": payload.get("trigger"),
        "PostToolUse": payload.get("tool_name"),
    }.get(event)
    name = _snake(event) + (f"_{str(qualifier).lower()}" if qualifier else "")
    return f"claude_real_{name}.json"


def scrub(value: Any, harness: ClaudeHarness, ids: dict[str, str]) -> Any:
    """Replace machine paths and ids with placeholders, keeping the shape."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("session_id", "prompt_id", "tool_use_id") and isinstance(item, str):
                ids.setdefault(item, f"<{key}>")
            out[key] = scrub(item, harness, ids)
        return out
    if isinstance(value, list):
        return [scrub(item, harness, ids) for item in value]
    if isinstance(value, str):
        repo = str(harness.repo.resolve())
        home = str(harness.home.resolve())
        # Claude Code names a project's transcript folder after its path.
        project_dir = re.sub(r"[^A-Za-z0-9]", "-", repo)
        text = value
        for raw, placeholder in sorted(ids.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(raw, placeholder)
        text = text.replace(project_dir, "<project>")
        text = text.replace(repo, "<cwd>").replace(home, "<home>")
        return text
    return value


def record_or_check_payloads(harness: ClaudeHarness, only: set[str] | None = None) -> None:
    """Save the first real payload of each kind (file name), or check drift."""
    firsts: dict[str, dict[str, Any]] = {}
    for payload in harness.hook_payloads():
        name = payload_file_name(payload)
        if only is None or name in only:
            firsts.setdefault(name, payload)
    ids: dict[str, str] = {}
    # Fill the id table from every payload first so that ids scrub everywhere.
    for payload in firsts.values():
        scrub(payload, harness, ids)
    for name, payload in sorted(firsts.items()):
        clean = scrub(payload, harness, ids)
        path = PAYLOAD_DIR / name
        if RECORD:
            PAYLOAD_DIR.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(clean, indent=2, ensure_ascii=False) + "\n")
        elif path.exists():
            saved = json.loads(path.read_text())
            missing = sorted(set(saved) - set(payload))
            assert not missing, f"{name}: the CLI no longer sends {missing}; payload: {payload}"


def test_harness_hooks_fire(claude: ClaudeHarness) -> None:
    claude.init_repo()
    hooks = claude.logging_hooks()
    hooks["SessionStart"][0]["hooks"].append({"type": "command", "command": MARKER_HOOK})
    claude.write_settings({"hooks": hooks})
    api = claude.server
    target = claude.repo / "hello.txt"
    api.queue_tool_use("Write", {"file_path": str(target), "content": "hello from the model\n"})
    edit = {"file_path": str(target), "old_string": "hello", "new_string": "greetings"}
    api.queue_tool_use("Edit", edit)
    api.queue_text("I wrote hello.txt.")

    # 1. A prompt: SessionStart(startup), UserPromptSubmit, Write and Edit ->
    #    PostToolUse twice, Stop.
    first = claude.run("Create hello.txt with a greeting.")
    session = first.session_id
    assert session, first.describe()
    assert first.result.get("result") == "I wrote hello.txt.", first.describe()
    assert target.read_text() == "greetings from the model\n"
    assert len(first.model_requests) == 3, first.describe()  # two tool calls, then the answer
    assert f"{MARKER} source=startup" in first.model_requests[0].text
    assert "Write" in first.model_requests[0].tool_names

    # 2. A real compaction, offline: one summary request, PreCompact, SessionStart(compact).
    compact = claude.run("/compact Keep the file names.", resume=session)
    assert compact.result.get("session_id") == session, compact.describe()
    assert len(compact.summary_requests) == 1, compact.describe()
    assert not compact.model_requests, compact.describe()
    assert "Keep the file names." in compact.summary_requests[0].text

    # 3. The next request the model receives carries the compact-time injection.
    after = claude.run("What is next?", resume=session)
    assert after.model_requests, after.describe()
    next_text = after.model_requests[0].text
    assert f"{MARKER} source=compact" in next_text
    assert "This session is being continued from a previous conversation" in next_text
    # The history was replaced by the summary: the Write call is gone.
    messages = after.model_requests[0].body["messages"]
    assert not [
        block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ], "the pre-compaction tool call is still in the conversation"

    # The hooks saw what the contract needs.
    starts = claude.hook_payloads("SessionStart")
    assert [p["source"] for p in starts] == ["startup", "resume", "compact", "resume"]
    for payload in claude.hook_payloads():
        assert payload["session_id"] == session
        assert payload["cwd"] == str(claude.repo.resolve())
        assert payload["transcript_path"].endswith(f"{session}.jsonl")
    (pre,) = claude.hook_payloads("PreCompact")
    assert pre["trigger"] == "manual"
    assert pre["custom_instructions"] == "Keep the file names."
    post, post_edit = claude.hook_payloads("PostToolUse")
    assert post["tool_name"] == "Write"
    assert post["tool_input"] == {"file_path": str(target), "content": "hello from the model\n"}
    assert post["tool_response"]["filePath"] == str(target)
    assert post_edit["tool_name"] == "Edit"
    assert post_edit["tool_input"]["file_path"] == str(target)
    assert post_edit["tool_response"]["filePath"] == str(target)
    prompts = [p["prompt"] for p in claude.hook_payloads("UserPromptSubmit")]
    assert prompts == ["Create hello.txt with a greeting.", "What is next?"]  # not /compact
    stops = claude.hook_payloads("Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, False]
    assert stops[0]["last_assistant_message"] == "I wrote hello.txt."
    assert {p["hook_event_name"] for p in claude.hook_payloads()} == set(HOOK_EVENTS)
    assert not api.unknown_paths, api.unknown_paths
    assert not api.script, "scripted replies left unused"

    record_or_check_payloads(claude)


def test_harness_auto_compact_from_usage(claude: ClaudeHarness) -> None:
    """Reported usage drives the CLI's context logic: a reply that claims a
    nearly full context window makes the CLI compact on its own (trigger
    ``auto``) before its next request, within the same run."""
    claude.init_repo()
    hooks = claude.logging_hooks()
    hooks["SessionStart"][0]["hooks"].append({"type": "command", "command": MARKER_HOOK})
    claude.write_settings({"hooks": hooks})
    api = claude.server
    target = claude.repo / "big.txt"
    # The default model's window is 1,000,000 tokens in the pinned CLI.
    api.queue_tool_use("Write", {"file_path": str(target), "content": "x\n"}, input_tokens=985_000)
    api.queue_text("Done after compaction.")

    run = claude.run("Fill the context.")
    assert [r.kind for r in run.requests] == ["main", "summary", "main"], run.describe()
    assert run.result.get("result") == "Done after compaction.", run.describe()
    (pre,) = claude.hook_payloads("PreCompact")
    assert pre["trigger"] == "auto"
    sources = [p["source"] for p in claude.hook_payloads("SessionStart")]
    assert sources == ["startup", "compact"]
    # The request right after the compaction carries the compact-time injection.
    assert f"{MARKER} source=compact" in run.model_requests[1].text
    # The transcript keeps the usage the fake reported (what `hook prompt` reads).
    transcript = Path(pre["transcript_path"])
    usages = [
        json.loads(line)["message"]["usage"]["input_tokens"]
        for line in transcript.read_text().splitlines()
        if '"type":"assistant"' in line.replace(" ", "")
    ]
    assert 985_000 in usages
    assert not api.script, "scripted replies left unused"
    record_or_check_payloads(claude, only={"claude_real_pre_compact_auto.json"})


# ---------------------------------------------------------------------------
# agitmem's own hooks, installed by `agitmem install claude`

GOAL = "port the config loader to TOML (e2e-goal-7f3a)"
NEXT = "delete the INI parser in src/app.py (e2e-next-91c2)"
NOTE_SAVED = "- e2e: the agent noted that app.py v2 reads TOML"
NOTE_UNSAVED = "- e2e: unsaved note, written just before the compaction"
MEMORY_BEGIN = "===== AGENT MEMORY BEGIN ====="
MEMORY_REF = "refs/agitmem/heads/main"


def agitmem(harness: ClaudeHarness, *args: str) -> subprocess.CompletedProcess[str]:
    return harness.agitmem(*args)


def ref_tip(harness: ClaudeHarness) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(harness.repo), "rev-parse", "--verify", "-q", MEMORY_REF],
        capture_output=True,
        text=True,
        env=harness.env,
    )
    return proc.stdout.strip() or None


def memory_commits(harness: ClaudeHarness, since: str | None) -> list[tuple[str, str]]:
    """(sha, message) of memory commits after ``since``, newest first."""
    span = f"{since}..{MEMORY_REF}" if since else MEMORY_REF
    out = harness.git("log", "--format=%H%x1f%B%x1e", span)
    commits = []
    for entry in out.split("\x1e"):
        if entry.strip():
            sha, _, message = entry.strip().partition("\x1f")
            commits.append((sha, message))
    return commits


def test_agitmem_memory_survives_compact(claude: ClaudeHarness) -> None:
    claude.init_repo({"README.md": "# scratch\n", "src/app.py": "print('v1: INI')\n"})
    # Settings that already hold hooks and other keys: install must keep them.
    claude.write_settings({"env": {"E2E_KEEP": "1"}, "hooks": claude.logging_hooks()})

    agitmem(claude, "init")
    memory = claude.repo / ".agent" / "memory"
    assert memory.is_dir(), "`agitmem init` created no .agent/memory"
    agitmem(claude, "state", "set", f"current_goal={GOAL}", f"next_intent={NEXT}")
    state = json.loads((memory / "state.json").read_text())
    assert (state.get("current_goal"), state.get("next_intent")) == (GOAL, NEXT)
    # agitmem on the login shell's PATH, as after `pipx install`: the hooks
    # then call the hooks' own program (scripts/agitmem-hook) by name
    (claude.home / ".profile").write_text(f'PATH="{Path(sys.executable).parent}:$PATH"\nexport PATH\n')
    claude.env["SHELL"] = "/bin/sh"
    agitmem(claude, "install", "claude", "--scope", "project")
    settings_text = claude.settings_path.read_text()
    assert "agitmem" in settings_text, "`agitmem install claude` wrote no hooks"
    assert '"agitmem-hook session-start --agent claude"' in settings_text, settings_text
    settings = json.loads(settings_text)
    assert settings.get("env") == {"E2E_KEEP": "1"}, "install dropped an existing key"
    for event, groups in claude.logging_hooks().items():
        commands = [
            hook.get("command")
            for group in settings["hooks"].get(event, [])
            for hook in group.get("hooks", [])
        ]
        assert groups[0]["hooks"][0]["command"] in commands, f"install dropped the existing {event} hook"
        assert any("agitmem" in str(c) for c in commands), f"install added no {event} hook"

    # The scripted session: read and rewrite a code file, then the memory notes.
    app = claude.repo / "src" / "app.py"
    notes = memory / "notes.md"
    old_notes = notes.read_text() if notes.exists() else ""
    new_notes = old_notes + ("" if old_notes.endswith("\n") or not old_notes else "\n") + NOTE_SAVED + "\n"
    api = claude.server
    api.queue_tool_use("Read", {"file_path": str(app)})
    api.queue_tool_use("Write", {"file_path": str(app), "content": "print('v2: TOML')\n"})
    api.queue_tool_use("Read", {"file_path": str(notes)})
    api.queue_tool_use("Write", {"file_path": str(notes), "content": new_notes})
    api.queue_text("Ported app.py to TOML and noted it.")

    before = ref_tip(claude)
    first = claude.run("Port the config loader to TOML.")
    session = first.session_id
    assert first.result.get("result") == "Ported app.py to TOML and noted it.", first.describe()

    # The model's very first request already holds the injected memory.
    opening = first.model_requests[0].text
    assert MEMORY_BEGIN in opening, "no memory block in the first request"
    assert GOAL in opening
    assert app.read_text() == "print('v2: TOML')\n"

    # Both Writes fired PostToolUse; agitmem's post-edit saved the memory edit.
    edited = [p["tool_input"]["file_path"] for p in claude.hook_payloads("PostToolUse")]
    assert edited == [str(app), str(notes)]
    assert ref_tip(claude), f"{MEMORY_REF} does not exist after the session"
    saved_notes = claude.git("show", f"{MEMORY_REF}:notes.md")
    assert NOTE_SAVED in saved_notes, (
        "hook post-edit did not save the edit to .agent/memory/notes.md; "
        f"memory commits: {memory_commits(claude, before)}"
    )

    # An edit the hooks did not see (e.g. made through Bash), then a real /compact.
    with notes.open("a") as handle:
        handle.write(NOTE_UNSAVED + "\n")
    before_compact = ref_tip(claude)
    compact = claude.run("/compact", resume=session)
    assert len(compact.summary_requests) == 1, compact.describe()
    assert [p["trigger"] for p in claude.hook_payloads("PreCompact")] == ["manual"]
    assert "compact" in [p["source"] for p in claude.hook_payloads("SessionStart")]

    # The memory ref holds the pre-compact checkpoint, with the unsaved note.
    commits = memory_commits(claude, before_compact)
    checkpoints = [
        sha for sha, message in commits if re.search(r"^Agitmem-Event: pre-compact\s*$", message, re.M)
    ]
    assert checkpoints, f"no 'Agitmem-Event: pre-compact' commit on {MEMORY_REF}: {commits}"
    assert NOTE_UNSAVED in claude.git("show", f"{checkpoints[0]}:notes.md")

    # The next request the model receives restates goal and next intent.
    after = claude.run("Carry on.", resume=session)
    resumed = after.model_requests[0].text
    assert GOAL in resumed
    assert NEXT in resumed
    assert "restate" in resumed.lower(), "no restate instruction after the compaction"
    # src/app.py changed since the state was written: the state is marked STALE.
    assert "STALE" in resumed


def test_two_sessions_never_cross(claude: ClaudeHarness) -> None:
    """Two Claude Code sessions in one checkout: /compact in session A
    gives A its memory back with the restate instruction; B, which never
    compacted, never gets an after-compaction block."""
    claude.init_repo({"README.md": "# scratch\n"})
    agitmem(claude, "init")
    agitmem(claude, "state", "set", f"current_goal={GOAL}", f"next_intent={NEXT}")
    agitmem(claude, "install", "claude")
    api = claude.server
    api.queue_text("A one.")
    a = claude.run("Task A.")
    api.queue_text("B one.")
    b = claude.run("Task B.")
    assert a.session_id and b.session_id and a.session_id != b.session_id
    compact = claude.run("/compact", resume=a.session_id)
    assert len(compact.summary_requests) == 1, compact.describe()
    api.queue_text("B two.")
    b2 = claude.run("Carry on with B.", resume=b.session_id)
    assert MEMORY_BEGIN in b2.model_requests[0].text
    assert "restate" not in b2.model_requests[0].text.lower(), "session B got session A's compaction"
    api.queue_text("A two.")
    a2 = claude.run("Carry on with A.", resume=a.session_id)
    assert "restate" in a2.model_requests[0].text.lower()
    # a prompt without a compaction gets no after-compaction block
    api.queue_text("A three.")
    a3 = claude.run("And then?", resume=a.session_id)
    tail = a3.model_requests[0].text.rsplit("And then?", 1)[-1]
    assert "restate" not in tail.lower()


# ---------------------------------------------------------------------------
# Issue 12: observed state and the recovery report, with the real client

APP_PY = (
    "import configparser\n\n\n"
    "def load_config(path):\n"
    "    parser = configparser.ConfigParser()\n"
    "    parser.read(path)\n"
    "    return dict(parser['main'])\n"
)
TEST_APP = (
    "from src.app import load_config\n\n\n"
    "def test_load_config_reads_toml():\n"
    "    assert load_config('config.toml') == {'name': 'demo'}\n"
)
SUMMARIES = ("SUMMARY-ONE: porting load_config", "SUMMARY-TWO", "SUMMARY-THREE", "SUMMARY-FOUR")


def test_recovery_report_classifies_four_behaviours(claude: ClaudeHarness) -> None:
    """Four /compact's in one real Claude Code session, the model stand-in
    answering differently after each: it edits current_file, edits an
    unrelated file, asks the user what to do, claims the tests pass after
    a failed run.  `agitmem recovery --json` judges each, and the first
    request after the first /compact holds an OBSERVED section with the
    edited symbol and the failed test's reason, which the agent never wrote."""
    claude.init_repo({
        "README.md": "# scratch\n",
        "src/__init__.py": "",
        "src/app.py": APP_PY,
        "tests/test_app.py": TEST_APP,
        "docs/guide.md": "# guide\n",
    })
    agitmem(claude, "init")
    agitmem(
        claude, "state", "set", f"current_goal={GOAL}", "current_file=src/app.py",
        "current_symbol=load_config", "next_intent=replace configparser in load_config with tomllib",
    )
    agitmem(claude, "install", "claude")
    api = claude.server
    app = claude.repo / "src" / "app.py"
    pytest_cmd = "python3 -m pytest -q -p no:cacheprovider tests/test_app.py"

    # The work before any compaction: an edit inside load_config, a failed test run.
    api.queue_tool_use("Edit", {
        "file_path": str(app), "old_string": "    parser.read(path)\n",
        "new_string": "    parser.read(path)  # TOML next\n",
    })
    api.queue_tool_use("Bash", {"command": pytest_cmd, "description": "run the tests"})
    api.queue_text("The test fails: load_config still reads INI.")
    first = claude.run("Port the config loader to TOML.")
    session = first.session_id
    state = json.loads((claude.repo / ".agent" / "memory" / "state.json").read_text())
    lv = state["last_verification"]
    assert (lv["result"], lv["observed"]) == ("failed", True), lv
    assert state["step"] == 1, "the observed test run counted as progress"

    def compact_then(summary: str, prompt: str) -> ClaudeRun:
        api.summary_text = f"<summary>{summary}</summary>"
        done = claude.run("/compact", resume=session)
        assert len(done.summary_requests) == 1, done.describe()
        return claude.run(prompt, resume=session)

    # 1. recovered: the first action edits current_file, in load_config
    api.queue_tool_use("Edit", {
        "file_path": str(app), "old_string": "    parser = configparser.ConfigParser()\n",
        "new_string": "    parser = configparser.ConfigParser()  # to go\n",
    })
    api.queue_text("Continuing in load_config.")
    after = compact_then(SUMMARIES[0], "Carry on.")
    opening = after.model_requests[0].text
    assert "## OBSERVED (recorded by hooks, not by you)" in opening
    assert re.search(r"- edited src/app\.py:\d+-\d+ in load_config", opening), opening
    assert "- last test run: failed `python3 -m pytest" in opening
    assert "test_load_config_reads_toml" in opening.split("## OBSERVED", 1)[1], "no failure reason"
    assert "STATE is authoritative (step 1" in opening

    # 2. goal drift: an unrelated file
    api.queue_tool_use("Write", {"file_path": str(claude.repo / "docs" / "guide.md"), "content": "# guide\n\nNew words.\n"})
    api.queue_text("Rewrote the guide.")
    compact_then(SUMMARIES[1], "Carry on.")

    # 3. full reset: asks the user, no tool use
    api.queue_text("I am not sure where we are. What would you like me to work on?")
    compact_then(SUMMARIES[2], "Carry on.")

    # 4. state confusion: claims the tests pass after the failed run
    api.queue_text("All tests pass now; the port is complete.")
    compact_then(SUMMARIES[3], "Carry on.")

    report = json.loads(agitmem(claude, "recovery", "--json").stdout)
    rows = report["compactions"]
    assert [r["verdict"] for r in rows] == ["recovered", "drift", "reset", "state"], json.dumps(rows, indent=1)
    assert {(r["agent"], r["trigger"]) for r in rows} == {("claude", "manual")}
    assert all(r["checkpoint"] for r in rows)
    assert report["summary"]["all"]["recovered"] == 25.0
    shown = agitmem(claude, "recovery", "show", "1").stdout
    assert SUMMARIES[0] in shown, "the client's summary (PostCompact) is not in the log"
    assert "--- the injection given ---" in shown and "restate" in shown
    table = agitmem(claude, "recovery").stdout
    assert table.splitlines()[0] == "4 compaction(s); 0 verdict(s) marked by hand (0.0%)"

    # the same compactions read back from Claude Code's own log (found under
    # the harness's HOME, by the repository's path) get the hooks' verdicts
    audited = json.loads(agitmem(claude, "recovery", "audit", "--json").stdout)["compactions"]
    assert [(a["session"], a["index"], a["client"]) for a in audited] == [(session, i, "claude") for i in range(4)], audited
    assert [a["verdict"] for a in audited] == [r["verdict"] for r in rows], json.dumps(audited, indent=1)
    assert all(a["agitmem"] and a["client_version"] and a["timestamp"] for a in audited), audited
