"""Harness for end-to-end tests that drive the real Gemini CLI offline.

The CLI (pinned by ``.ci/install-gemini``) talks to ``testing.fake_gemini``, a
loopback Gemini API stand-in, in a scratch git repository with its own ``HOME``
(user settings select API-key auth; the folder is trusted through
``GEMINI_CLI_TRUST_WORKSPACE=true``). Headless runs use ``gemini -p ...
--approval-mode yolo -o json``; ``GeminiHarness.interactive`` drives the
interactive UI through a pseudo-terminal (``/compress``, ``/quit``).

Finding the CLI, in order: ``$AGITMEM_GEMINI``; ``.ci/node-gemini/bin/gemini``
(what ``bash .ci/install-gemini`` installs); ``gemini`` on ``PATH``.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testing.clients import find_cli, version_line
from testing.fake_gemini import FakeGemini, RecordedRequest
from testing.harness import CLI_TIMEOUT, Harness, Run

REPO_ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.61.0"
# Every hook event of Gemini CLI 0.61.0.
ALL_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
    "Notification",
)
_CI_MARKERS = frozenset(("CI", "GITHUB_ACTIONS", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID"))
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")


def _cli_version(path: str, home: Path) -> str | None:
    line = version_line(path, env={**os.environ, "HOME": str(home)}, timeout=60)
    return line if line and re.fullmatch(r"\d+\.\d+\.\d+\S*", line) else None


def find_gemini(scratch_home: Path) -> tuple[str | None, str]:
    """(path, why) of a working CLI, or (None, the reason to skip)."""
    found, why = find_cli(
        "gemini", label="Gemini CLI", env_var="AGITMEM_GEMINI", ci_dir=".ci/node-gemini",
        package="@google/gemini-cli", version=lambda path: _cli_version(path, scratch_home),
    )
    return found, why if found is None else f"Gemini CLI {why}"


@dataclass
class GeminiRun(Run):
    @property
    def response(self) -> str:
        return str(self.result.get("response", ""))

    @property
    def compression_requests(self) -> list[RecordedRequest]:
        return self.of_kind("compression")


class Terminal:
    """The interactive CLI on a pseudo-terminal: type lines, wait for output."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.raw: list[str] = []
        self.exit_status: int | None = None

    @property
    def screen(self) -> str:
        """Everything the CLI printed so far, without terminal escapes."""
        return _ANSI.sub("", "".join(self.raw))

    def pump(self, seconds: float) -> bool:
        """Read output for up to ``seconds``; False once the CLI closed the terminal."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return True
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.1))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    return False
                if not data:
                    return False
                text = data.decode("utf-8", "replace")
                self.raw.append(text)
                self._answer_queries(text)

    def _answer_queries(self, text: str) -> None:
        """Answer the terminal queries the UI sends at start-up, as a terminal
        would: it draws no input box until the primary device attributes
        (``ESC [ c``) come back."""
        if "\x1b]11;?" in text:  # background colour
            os.write(self.fd, b"\x1b]11;rgb:0000/0000/0000\x1b\\")
        if "\x1b[c" in text:  # primary device attributes: a VT220
            os.write(self.fd, b"\x1b[?62;22c")

    def wait_for(self, what: str, done: Callable[[], bool], timeout: float = CLI_TIMEOUT) -> None:
        end = time.monotonic() + timeout
        while not done():
            if time.monotonic() > end:
                raise AssertionError(f"interactive gemini: timed out waiting for {what}\n{self.screen[-3000:]}")
            if not self.pump(0.2):
                if done():
                    return
                raise AssertionError(f"interactive gemini exited waiting for {what}\n{self.screen[-3000:]}")

    def type_line(self, text: str, done: Callable[[], bool], what: str) -> None:
        """Type ``text``, press Enter, wait until ``done``.  The UI redraws its
        input box in place, so the echo is not looked for; ``done`` tells."""
        os.write(self.fd, text.encode())
        self.pump(1.0)  # the input box settles (it debounces pasted text)
        os.write(self.fd, b"\r")
        self.wait_for(what, done)

    def close(self, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_status = status
                break
            if not self.pump(0.2):
                _, status = os.waitpid(self.pid, 0)
                self.exit_status = status
                break
        else:
            os.killpg(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


class GeminiHarness(Harness[FakeGemini, GeminiRun]):
    """A scratch repo, a private HOME, the fake API and the CLI wired together."""

    # Environment variables that must not leak from the outer session into the CLI.
    drop_prefixes = ("GEMINI", "GOOGLE", "AGITMEM_", "GIT_", "OTEL_", "CLOUDSDK")
    log_echo = "{}"  # Gemini CLI parses a hook's stdout as JSON
    headless_flags = ("--approval-mode", "yolo", "-o", "json")
    base_url_var = "GOOGLE_GEMINI_BASE_URL"
    client_vars = {  # noqa: RUF012 - read only
        "GEMINI_API_KEY": "test",
        # Headless in an untrusted folder exits 55; project hooks need trust.
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_TELEMETRY_ENABLED": "false",
        "NO_BROWSER": "1",
    }

    def __init__(self, gemini: str, base: Path, server: FakeGemini) -> None:
        super().__init__(gemini, base, server)
        self.write_user_settings()

    def write_user_settings(self, extra: dict[str, Any] | None = None) -> None:
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        settings.update(extra or {})
        path = self.home / ".gemini" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2) + "\n")

    @property
    def settings_path(self) -> Path:
        return self.repo / ".gemini" / "settings.json"

    def logging_hook(self, event: str) -> dict[str, Any]:
        """A command hook that saves its stdin payload under ``hook_log``."""
        return {"name": f"log-{event}", **super().logging_hook(event)}

    def logging_hooks(self, events: tuple[str, ...] = ALL_EVENTS) -> dict[str, list[dict[str, Any]]]:
        return {event: [{"hooks": [self.logging_hook(event)]}] for event in events}

    def add_hooks(self, hooks: dict[str, list[dict[str, Any]]]) -> None:
        """Append hook groups to the project settings, keeping what is there."""
        settings = self.read_settings()
        table = settings.setdefault("hooks", {})
        for event, groups in hooks.items():
            table.setdefault(event, []).extend(groups)
        self.write_settings(settings)

    def events(self) -> list[str]:
        return [str(p.get("hook_event_name")) for p in self.hook_payloads()]

    def chat_files(self) -> list[Path]:
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/*.jsonl"))

    # -- running the CLI ------------------------------------------------------
    def run(
        self, prompt: str, *, resume: str | None = None, extra_args: tuple[str, ...] = (),
        timeout: float = CLI_TIMEOUT, check: bool = True,
    ) -> GeminiRun:
        return self.headless(
            prompt, GeminiRun, resume=resume, extra_args=extra_args, timeout=timeout, check=check,
        )

    def interactive(self, *extra_args: str) -> Terminal:
        """Start the interactive UI on a pseudo-terminal; returns once it is ready
        (its SessionStart hooks ran and the banner is on screen)."""
        env = dict(self.env, TERM="xterm-256color", COLUMNS="120", LINES="50")
        env.pop("NO_COLOR", None)
        # Under CI=true (or GITHUB_ACTIONS=true) Gemini CLI runs headless even on a
        # terminal, and ink's is-in-ci stops drawing: the UI would never come up.
        for name in list(env):
            if name in _CI_MARKERS or name.startswith("CI_"):
                del env[name]
        argv = [self.cli, "--approval-mode", "yolo", *extra_args]
        starts = len(self.hook_payloads("SessionStart"))
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.chdir(self.repo)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        term = Terminal(pid, fd)
        term.wait_for(
            "the banner and SessionStart",
            lambda: "Gemini CLI v" in term.screen and len(self.hook_payloads("SessionStart")) > starts,
            60,
        )
        term.pump(1.0)
        return term
