"""Fixtures for the end-to-end tests that drive the real Claude Code, Codex and
Gemini CLIs offline (the harnesses: ``testing/claude_cli.py``,
``testing/codex_harness.py``, ``testing/gemini_cli.py`` over
``testing/harness.py``).  Where a CLI cannot be found its tests are skipped
with the reason."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # `testing/` sits at the top of the checkout
    sys.path.insert(0, str(REPO_ROOT))

from testing.claude_cli import (
    HOOK_EVENTS,  # noqa: F401
    ClaudeHarness,
    ClaudeRun,  # noqa: F401
    find_claude,
)
from testing.fake_anthropic import FakeAnthropic


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


@pytest.fixture
def claude(claude_bin: str, fake_api: FakeAnthropic, tmp_path: Path) -> ClaudeHarness:
    return ClaudeHarness(claude_bin, tmp_path, fake_api)


# ---------------------------------------------------------------------------
# Codex CLI (tests/e2e/codex_test.py): see testing/codex_harness.py

from testing.codex_harness import CodexHarness, find_codex
from testing.fake_openai import FakeOpenAI


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
