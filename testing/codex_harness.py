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
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testing.clients import find_cli
from testing.fake_openai import FakeOpenAI, RecordedRequest

REPO_ROOT = Path(__file__).resolve().parents[1]
CLI_TIMEOUT = 120  # seconds, per CLI run
MODEL = "gpt-5.5"  # a model Codex knows: an unknown name gets no apply_patch tool
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact", "Stop")

# Environment variables that must not leak from the outer session into the CLI
# under test (an outer Codex sets CODEX_*; git's GIT_DIR would redirect the repo).
_DROP_PREFIXES = ("OPENAI_", "CODEX", "AGITMEM_", "GIT_", "ANTHROPIC_", "CLAUDE")


def _cli_version(path: str) -> str | None:
    try:
        proc = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0 or not proc.stdout.startswith("codex-cli "):
        return None
    return proc.stdout.strip()


def find_codex() -> tuple[str | None, str]:
    """(path, why) of a working CLI, or (None, the reason to skip)."""
    return find_cli(
        "codex", label="Codex CLI", env_var="AGITMEM_CODEX", ci_dir=".ci/node",
        package="@openai/codex", version=_cli_version,
    )


@dataclass
class CodexRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[RecordedRequest]  # this run's requests to the fake, in order
    events: list[dict[str, Any]] = field(default_factory=list)  # --json lines

    @property
    def thread_id(self) -> str:
        for event in self.events:
            if event.get("type") == "thread.started":
                return str(event.get("thread_id", ""))
        return ""

    @property
    def model_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "main"]

    @property
    def compaction_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "compaction"]

    @property
    def last_message(self) -> str:
        texts = [
            str(e["item"].get("text", ""))
            for e in self.events
            if e.get("type") == "item.completed" and (e.get("item") or {}).get("type") == "agent_message"
        ]
        return texts[-1] if texts else ""

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}\n"
            f"requests: {[f'{r.method} {r.path} [{r.kind}]' for r in self.requests]}"
        )


@dataclass
class Running:
    """A ``codex exec`` started in the background (see ``CodexHarness.start``)."""

    proc: subprocess.Popen[str]
    args: list[str]
    started: float
    timeout: float


class CodexHarness:
    """A scratch repo, a private HOME/CODEX_HOME, the fake API and the CLI wired together."""

    def __init__(self, codex: str, base: Path, server: FakeOpenAI) -> None:
        self.codex = codex
        self.server = server
        self.repo = base / "repo"
        self.home = base / "home"
        self.codex_home = self.home / ".codex"
        self.hook_log = base / "hook-log"
        for d in (self.repo, self.codex_home, self.hook_log):
            d.mkdir(parents=True, exist_ok=True)
        self.env = self._make_env()
        self.write_config()
        self.runs: list[CodexRun] = []

    def _make_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
        # The agitmem of this interpreter first: hooks call `agitmem` by name.
        bindir = str(Path(sys.executable).parent)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.update(
            HOME=str(self.home),
            CODEX_HOME=str(self.codex_home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            AGITMEM_HOME=str(self.home / ".agent"),
            FAKE_OPENAI_API_KEY="test",
            NO_COLOR="1",
        )
        return env

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

    # -- the scratch repository ---------------------------------------------
    def init_repo(self, files: dict[str, str] | None = None) -> None:
        """``git init -b main`` with one commit holding ``files``."""
        self.git("init", "-q", "-b", "main")
        for rel, text in (files or {"README.md": "# scratch\n"}).items():
            path = self.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", "-A")
        self.git("-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "initial")

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.repo), *args], check=True, capture_output=True, text=True, env=self.env
        ).stdout

    @property
    def hooks_path(self) -> Path:
        return self.repo / ".codex" / "hooks.json"

    def read_hooks(self) -> dict[str, Any]:
        if not self.hooks_path.exists():
            return {}
        hooks: dict[str, Any] = json.loads(self.hooks_path.read_text())
        return hooks

    def write_hooks(self, hooks: dict[str, Any]) -> None:
        self.hooks_path.parent.mkdir(parents=True, exist_ok=True)
        self.hooks_path.write_text(json.dumps(hooks, indent=2) + "\n")

    def logging_hook(self, event: str) -> dict[str, Any]:
        """A command hook that saves its stdin payload under ``hook_log``."""
        return {"type": "command", "command": f'cat > "{self.hook_log}/{event}-$(date +%s%N).json"'}

    def logging_hooks(self, events: tuple[str, ...] = HOOK_EVENTS) -> dict[str, list[dict[str, Any]]]:
        return {event: [{"hooks": [self.logging_hook(event)]}] for event in events}

    def hook_payloads(self, event: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        """Logged payloads in the order the hooks ran, optionally of one session."""
        found = []
        for path in self.hook_log.glob("*.json"):
            name, _, stamp = path.stem.rpartition("-")
            if event is not None and name != event:
                continue
            try:
                payload = json.loads(path.read_text())
            except ValueError:
                payload = {"unparsable": path.read_text()}
            if session is None or payload.get("session_id") == session:
                found.append((int(stamp) if stamp.isdigit() else 0, payload))
        return [payload for _, payload in sorted(found, key=lambda item: item[0])]

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
        args = [self.codex, "exec"]
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

    def start(
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
        proc = subprocess.Popen(
            args,
            cwd=self.repo,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so a timeout can end the hooks it started too
        )
        return Running(proc, args, time.monotonic(), timeout)

    def finish(self, running: Running, *, check: bool = True) -> CodexRun:
        proc = running.proc
        left = max(1.0, running.timeout - (time.monotonic() - running.started))
        try:
            stdout, stderr = proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise AssertionError(
                f"codex did not finish within {running.timeout}s: {' '.join(running.args)}\n"
                f"stdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}\nrequests: {self.server.endpoints()}"
            ) from None
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
            args=[os.path.basename(a) if a == self.codex else a for a in running.args],
            returncode=proc.returncode,
            stdout=stdout,
            stderr=stderr,
            seconds=time.monotonic() - running.started,
            requests=[r for r in self.server.requests if r.session_id == thread and r.at >= _wall(running)],
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


def _wall(running: Running) -> float:
    """The wall-clock time a run started (requests are stamped with time.time())."""
    return time.time() - (time.monotonic() - running.started)
