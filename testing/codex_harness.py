"""Drive the real Codex CLI offline, for the end-to-end tests (tests/e2e/).

The CLI (pinned by ``.ci/install-codex``) talks to ``testing.fake_openai``, a
loopback Responses API stand-in, in a scratch git repository with its own
``HOME`` and ``CODEX_HOME``. Codex ignores ``OPENAI_BASE_URL``: the fake is a
model provider in ``$CODEX_HOME/config.toml``.

Every run passes ``--trust`` (trust the project, so that its ``.codex/hooks.json``
is read at all) and ``--dangerously-bypass-hook-trust`` (run hooks nobody
reviewed in ``/hooks``): without either, Codex skips the project's hooks without
a word.

Finding the CLI, in order: ``$AGITMEM_CODEX``; ``.ci/node/bin/codex`` (what
``bash .ci/install-codex`` installs); ``codex`` on ``PATH``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testing.clients import find_cli, version_line
from testing.fake_openai import FakeOpenAI, RecordedRequest
from testing.harness import CLI_TIMEOUT, Harness, Run, Running

REPO_ROOT = Path(__file__).resolve().parents[1]
MODEL = "gpt-5.5"  # a model Codex knows: an unknown name gets no apply_patch tool
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact", "Stop")


def _cli_version(path: str) -> str | None:
    line = version_line(path)
    return line if line and line.startswith("codex-cli ") else None


def find_codex() -> tuple[str | None, str]:
    """(path, why) of a working CLI, or (None, the reason to skip)."""
    return find_cli(
        "codex", label="Codex CLI", env_var="AGITMEM_CODEX", ci_dir=".ci/node",
        package="@openai/codex", version=_cli_version,
    )


@dataclass
class CodexRun(Run):
    events: list[dict[str, Any]] = field(default_factory=list)  # --json lines

    @property
    def thread_id(self) -> str:
        for event in self.events:
            if event.get("type") == "thread.started":
                return str(event.get("thread_id", ""))
        return ""

    @property
    def compaction_requests(self) -> list[RecordedRequest]:
        return self.of_kind("compaction")

    @property
    def last_message(self) -> str:
        texts = [
            str(e["item"].get("text", ""))
            for e in self.events
            if e.get("type") == "item.completed" and (e.get("item") or {}).get("type") == "agent_message"
        ]
        return texts[-1] if texts else ""


class CodexHarness(Harness[FakeOpenAI, CodexRun]):
    """A scratch repo, a private HOME/CODEX_HOME, the fake API and the CLI wired together."""

    drop_prefixes = ("OPENAI_", "CODEX", "AGITMEM_", "GIT_", "ANTHROPIC_", "CLAUDE")

    def __init__(self, codex: str, base: Path, server: FakeOpenAI) -> None:
        super().__init__(codex, base, server)
        self.codex_home.mkdir(parents=True, exist_ok=True)
        self.write_config()

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def client_env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex_home), "FAKE_OPENAI_API_KEY": "test"}

    def write_config(self) -> None:
        """``$CODEX_HOME/config.toml``: the fake as the model provider."""
        (self.codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "fake"\n'
            "\n"
            "[model_providers.fake]\n"
            'name = "fake"\n'
            f'base_url = "{self.server.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_OPENAI_API_KEY"\n'
        )

    # -- the project's hooks ---------------------------------------------------
    @property
    def settings_path(self) -> Path:
        return self.repo / ".codex" / "hooks.json"

    @property
    def hooks_path(self) -> Path:
        return self.settings_path

    def read_hooks(self) -> dict[str, Any]:
        return self.read_settings()

    def write_hooks(self, hooks: dict[str, Any]) -> None:
        self.write_settings(hooks)

    def logging_hooks(self, events: tuple[str, ...] = HOOK_EVENTS) -> dict[str, list[dict[str, Any]]]:
        return {event: [{"hooks": [self.logging_hook(event)]}] for event in events}

    def hook_events(self, session: str | None = None) -> list[str]:
        """Event names (SessionStart with its source) in the order they fired."""
        names = []
        for payload in self.hook_payloads(session=session):
            name = str(payload.get("hook_event_name"))
            if name == "SessionStart":
                name += f":{payload.get('source')}"
            names.append(name)
        return names

    # -- running the CLI ------------------------------------------------------
    def argv(self, prompt: str, *, resume: str | None = None, compact_limit: int | None = None) -> list[str]:
        args = [self.cli, "exec"]
        if resume:
            args.append("resume")
        args += [
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--trust",
            "--dangerously-bypass-hook-trust",
        ]
        if compact_limit is not None:
            args += ["-c", f"model_auto_compact_token_limit={compact_limit}"]
        if resume:
            args.append(resume)
        args.append(prompt)
        return args

    def start(  # type: ignore[override]
        self,
        prompt: str,
        *,
        resume: str | None = None,
        compact_limit: int | None = None,
        env: dict[str, str] | None = None,
        timeout: float = CLI_TIMEOUT,
    ) -> Running:
        """Start ``codex exec`` in the background; ``finish`` waits for it."""
        args = self.argv(prompt, resume=resume, compact_limit=compact_limit)
        return super().start(args, env=env, timeout=timeout)

    def finish(self, running: Running, *, check: bool = True) -> CodexRun:
        stdout, stderr, seconds = self.wait(running)
        events = []
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        thread = next((str(e.get("thread_id")) for e in events if e.get("type") == "thread.started"), "")
        run = CodexRun(
            args=self.shown_args(running.args),
            returncode=running.proc.returncode,
            stdout=stdout,
            stderr=stderr,
            seconds=seconds,
            requests=[r for r in self.server.requests if r.session_id == thread and r.at >= running.wall],
            events=events,
        )
        self.runs.append(run)
        if check:
            assert run.returncode == 0, run.describe()
            assert run.thread_id, "no thread.started event on stdout\n" + run.describe()
            failed = [e for e in events if e.get("type") in ("turn.failed", "error")]
            assert not failed, run.describe()
        return run

    def run(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        compact_limit: int | None = None,
        env: dict[str, str] | None = None,
    ) -> CodexRun:
        return self.finish(self.start(prompt, resume=resume, compact_limit=compact_limit, env=env))
