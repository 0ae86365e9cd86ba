"""The payloads the real Codex CLI 0.171.0 sent its hooks (recorded by
tests/e2e/codex_test.py::test_hook_payloads), read by agitmem's parser."""
from __future__ import annotations

from pathlib import Path

import pytest

from agitmem.agents import parse
from agitmem.agents import Payload
from agitmem.agents import transcript

REAL = Path(__file__).parent / 'payloads' / 'codex'


def _parse(name: str) -> Payload:
    return parse((REAL / f'{name}.json').read_text(), environ={})


@pytest.mark.parametrize('name', sorted(p.stem for p in REAL.glob('*.json')))
def test_every_real_payload_is_codex(name: str) -> None:
    payload = _parse(name)
    assert payload.agent == 'codex'
    assert payload.event == name.split('_')[0]
    assert payload.session_id
    assert payload.cwd == '/home/dev/repo'


@pytest.mark.parametrize('name', ('SessionStart_startup', 'SessionStart_compact', 'SessionStart_resume'))
def test_session_start_has_no_turn_id(name: str) -> None:
    payload = _parse(name)
    assert 'turn_id' not in payload.raw
    assert payload.source == name.split('_')[1]


def test_apply_patch_names_the_patched_file() -> None:
    payload = _parse('PostToolUse_apply_patch')
    assert payload.tool_name == 'apply_patch'
    assert payload.edited_paths == ('a.txt',)
    assert isinstance(payload.raw['tool_response'], str)


@pytest.mark.parametrize('name', ('PostToolUse_Bash', 'PostToolUse_Bash_failed'))
def test_bash_response_is_the_output_only(name: str) -> None:
    payload = _parse(name)
    assert payload.tool_name == 'Bash'
    response = payload.raw['tool_response']
    assert isinstance(response, str)
    assert 'Exit code' not in response  # a failed command looks like a good one


@pytest.mark.parametrize('name', ('PreCompact_auto', 'PostCompact_auto'))
def test_compaction_trigger(name: str) -> None:
    assert _parse(name).trigger == 'auto'


def test_rollout_context_sizes_include_the_large_turn() -> None:
    sizes = transcript.context_sizes(str(REAL / 'rollout.jsonl'))
    assert 500_000 in sizes
    assert sizes[-1] < 500_000
