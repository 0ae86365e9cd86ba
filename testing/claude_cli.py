"""Drive the real Claude Code CLI offline, for the end-to-end tests (tests/e2e/).

The CLI (pinned by ``.ci/install-claude``) talks to ``testing.fake_anthropic``,
a loopback Messages API stand-in, in a scratch git repository with its own
``HOME``.  Headless runs use ``claude -p ... --output-format json
--dangerously-skip-permissions``.

Finding the CLI, in order: ``$AGITMEM_CLAUDE``; ``.ci/node/bin/claude`` (what
``bash .ci/install-claude`` installs); ``claude`` on ``PATH``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from testing.clients import find_cli, version_line
from testing.fake_anthropic import FakeAnthropic, RecordedRequest
from testing.harness import CLI_TIMEOUT, Harness, Run

HOOK_EVENTS = ("SessionStart", "PreCompact", "PostToolUse", "UserPromptSubmit", "Stop")


def _cli_version(path: str) -> str | None:
    line = version_line(path)
    return line if line and "Claude Code" in line else None


def find_claude() -> tuple[str | None, str]:
    """(path, why) of a working CLI, or (None, the reason to skip)."""
    return find_cli(
        "claude", label="Claude Code CLI", env_var="AGITMEM_CLAUDE", ci_dir=".ci/node",
        package="@anthropic-ai/claude-code", version=_cli_version,
    )


@dataclass
class ClaudeRun(Run):
    @property
    def summary_requests(self) -> list[RecordedRequest]:
        return self.of_kind("summary")


class ClaudeHarness(Harness[FakeAnthropic, ClaudeRun]):
    """A scratch repo, a private HOME, the fake API and the CLI wired together."""

    # an outer Claude Code sets CLAUDECODE, CLAUDE_CODE_*, ...
    drop_prefixes = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AGITMEM_", "GIT_")

    headless_flags = ("--output-format", "json", "--dangerously-skip-permissions")
    error_key = "is_error"
    base_url_var = "ANTHROPIC_BASE_URL"
    # IS_SANDBOX: as root, --dangerously-skip-permissions is refused without
    # it; the rest keep it offline (no telemetry, autoupdate, error reports,
    # connectivity check (HEAD /api/hello), release notes ...)
    client_vars: ClassVar[dict[str, str]] = dict.fromkeys((
        "IS_SANDBOX", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING",
    ), "1") | {"ANTHROPIC_API_KEY": "test"}

    @property
    def settings_path(self) -> Path:
        return self.repo / ".claude" / "settings.json"

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

    def run(
        self, prompt: str, *, resume: str | None = None, extra_args: tuple[str, ...] = (),
        timeout: float = CLI_TIMEOUT,
    ) -> ClaudeRun:
        return self.headless(prompt, ClaudeRun, resume=resume, extra_args=extra_args, timeout=timeout)
