"""Harness for end-to-end tests that drive the real Claude Code CLI offline.

The CLI (pinned by ``.ci/install-claude``) talks to ``testing.fake_anthropic``,
a loopback Messages API stand-in that each test starts itself, in a scratch git
repository with its own ``HOME``. Where the CLI cannot be found these tests are
skipped with the reason.

Finding the CLI, in order: ``$AGITMEM_CLAUDE``; ``.ci/node/bin/claude`` (what
``bash .ci/install-claude`` installs); ``claude`` on ``PATH``.
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
from typing import Any, Iterator

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # `testing/` sits at the top of the checkout
    sys.path.insert(0, str(REPO_ROOT))

from testing.clients import find_cli
from testing.fake_anthropic import FakeAnthropic, RecordedRequest  # noqa: E402

CLI_TIMEOUT = 120  # seconds, per CLI run
HOOK_EVENTS = ("SessionStart", "PreCompact", "PostToolUse", "UserPromptSubmit", "Stop")

# Environment variables that must not leak from the outer session into the CLI
# under test (an outer Claude Code sets CLAUDECODE, CLAUDE_CODE_*, ...).
_DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AGITMEM_", "GIT_")


def _cli_version(path: str) -> str | None:
    try:
        proc = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0 or "Claude Code" not in proc.stdout:
        return None
    return proc.stdout.strip()


def find_claude() -> tuple[str | None, str]:
    """(path, why) of a working CLI, or (None, the reason to skip)."""
    return find_cli(
        "claude", label="Claude Code CLI", env_var="AGITMEM_CLAUDE", ci_dir=".ci/node",
        package="@anthropic-ai/claude-code", version=_cli_version,
    )


@pytest.fixture(scope="session")
def claude_bin() -> str:
    path, why = find_claude()
    if path is None:
        pytest.skip(why)
    return path


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class ClaudeRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[RecordedRequest]  # what the fake API received during this run
    result: dict[str, Any] = field(default_factory=dict)  # --output-format json

    @property
    def session_id(self) -> str:
        return str(self.result.get("session_id", ""))

    @property
    def model_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "main"]

    @property
    def summary_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "summary"]

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}\n"
            f"requests: {[f'{r.method} {r.path} [{r.kind}]' for r in self.requests]}"
        )


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout


class ClaudeHarness:
    """A scratch repo, a private HOME, the fake API and the CLI wired together."""

    def __init__(self, claude: str, base: Path, server: FakeAnthropic) -> None:
        self.claude = claude
        self.server = server
        self.repo = base / "repo"
        self.home = base / "home"
        self.hook_log = base / "hook-log"
        for d in (self.repo, self.home, self.hook_log):
            d.mkdir(parents=True, exist_ok=True)
        self.env = self._make_env()
        self.runs: list[ClaudeRun] = []

    def _make_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
        # The agitmem of this interpreter first: hooks call `agitmem` by name,
        # and a pyenv shim would look under the fake HOME.
        bindir = str(Path(sys.executable).parent)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            AGITMEM_HOME=str(self.home / ".agent"),
            ANTHROPIC_BASE_URL=self.server.url,
            ANTHROPIC_API_KEY="test",
            # As root, --dangerously-skip-permissions is refused without this.
            IS_SANDBOX="1",
            # Offline: no telemetry, autoupdate, error reports, connectivity
            # check (HEAD /api/hello), release notes ...
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            NO_COLOR="1",
        )
        return env

    # -- the scratch repository ---------------------------------------------
    def init_repo(self, files: dict[str, str] | None = None) -> None:
        """``git init -b main`` with one commit holding ``files``."""
        self.git("init", "-q", "-b", "main")
        for rel, text in (files or {"README.md": "# scratch\n"}).items():
            path = self.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", "-A")
        self.git(
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
            "commit",
            "-q",
            "-m",
            "initial",
        )

    def git(self, *args: str) -> str:
        return _git(self.repo, *args, env=self.env)

    @property
    def settings_path(self) -> Path:
        return self.repo / ".claude" / "settings.json"

    def read_settings(self) -> dict[str, Any]:
        if not self.settings_path.exists():
            return {}
        settings: dict[str, Any] = json.loads(self.settings_path.read_text())
        return settings

    def write_settings(self, settings: dict[str, Any]) -> None:
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(json.dumps(settings, indent=2) + "\n")

    def logging_hook(self, event: str) -> dict[str, Any]:
        """A command hook that saves its stdin payload under ``hook_log``."""
        return {
            "type": "command",
            "command": f'cat > "{self.hook_log}/{event}-$(date +%s%N).json"',
        }

    def logging_hooks(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "SessionStart": [
                {"matcher": "startup|resume|clear|compact", "hooks": [self.logging_hook("SessionStart")]}
            ],
            "PreCompact": [{"hooks": [self.logging_hook("PreCompact")]}],
            "PostToolUse": [
                {"matcher": "Write|Edit|MultiEdit", "hooks": [self.logging_hook("PostToolUse")]}
            ],
            "UserPromptSubmit": [{"hooks": [self.logging_hook("UserPromptSubmit")]}],
            "Stop": [{"hooks": [self.logging_hook("Stop")]}],
        }

    def hook_payloads(self, event: str | None = None) -> list[dict[str, Any]]:
        """Logged payloads in the order the hooks ran."""
        found = []
        for path in self.hook_log.glob("*.json"):
            name, _, stamp = path.stem.rpartition("-")
            if event is not None and name != event:
                continue
            try:
                found.append((int(stamp), json.loads(path.read_text())))
            except ValueError:
                found.append((int(stamp) if stamp.isdigit() else 0, {"unparsable": path.read_text()}))
        return [payload for _, payload in sorted(found, key=lambda item: item[0])]

    # -- running the CLI ------------------------------------------------------
    def run(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        extra_args: tuple[str, ...] = (),
        timeout: float = CLI_TIMEOUT,
    ) -> ClaudeRun:
        args = [
            self.claude,
            "-p",
            prompt,
            "--output-format",
            "json",
            "--dangerously-skip-permissions",
        ]
        if resume:
            args += ["--resume", resume]
        args += list(extra_args)
        seen = len(self.server.requests)
        started = time.monotonic()
        proc = subprocess.Popen(
            args,
            cwd=self.repo,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so a timeout can end the hooks it started too
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(
                f"claude did not finish within {timeout}s: {' '.join(args)}\n"
                f"stdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}\n"
                f"requests: {self.server.endpoints()[seen:]}"
            )
        run = ClaudeRun(
            args=[os.path.basename(a) if a == self.claude else a for a in args],
            returncode=proc.returncode,
            stdout=stdout,
            stderr=stderr,
            seconds=time.monotonic() - started,
            requests=list(self.server.requests[seen:]),
        )
        try:
            parsed = json.loads(stdout)
            if isinstance(parsed, dict):
                run.result = parsed
        except ValueError:
            pass
        self.runs.append(run)
        assert run.returncode == 0, run.describe()
        assert run.result, "no JSON result on stdout\n" + run.describe()
        assert not run.result.get("is_error"), run.describe()
        return run


@pytest.fixture
def claude(claude_bin: str, fake_api: FakeAnthropic, tmp_path: Path) -> ClaudeHarness:
    return ClaudeHarness(claude_bin, tmp_path, fake_api)


# ---------------------------------------------------------------------------
# Codex CLI (tests/e2e/codex_test.py): see testing/codex_harness.py

from testing.codex_harness import CodexHarness, find_codex  # noqa: E402
from testing.fake_openai import FakeOpenAI  # noqa: E402


@pytest.fixture(scope="session")
def codex_bin() -> str:
    path, why = find_codex()
    if path is None:
        pytest.skip(why)
    return path


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def codex(codex_bin: str, fake_openai: FakeOpenAI, tmp_path: Path) -> CodexHarness:
    return CodexHarness(codex_bin, tmp_path, fake_openai)
