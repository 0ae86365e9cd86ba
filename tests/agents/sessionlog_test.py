"""Reading the clients' session logs: older and newer shapes of each."""
from __future__ import annotations

import json
from pathlib import Path

from agitmem.agents import sessionlog


def _kinds(path: Path) -> list[tuple[str, str]]:
    return [(c, i.kind) for c, i in sessionlog.items(str(path))]


def test_an_early_codex_rollout(tmp_path: Path) -> None:
    """Codex's first rollouts: a bare header, then bare items (no
    `payload` wrapper), a shell call's output as JSON with its exit code."""
    log = tmp_path / 'rollout-old.jsonl'
    log.write_text('\n'.join(json.dumps(r) for r in [
        {'id': 'old-1', 'timestamp': '2025-05-01T10:00:00.000Z', 'instructions': 'be nice'},
        {'record_type': 'state'},
        {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': 'fix the build'}]},
        {'type': 'function_call', 'name': 'shell', 'arguments': json.dumps({'command': ['bash', '-lc', 'cargo test']}), 'call_id': 'c1'},
        {'type': 'function_call_output', 'call_id': 'c1', 'output': json.dumps({'output': '1 failed', 'metadata': {'exit_code': 101}})},
        {'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': 'The test fails.'}]},
    ]) + '\n')
    found = list(sessionlog.items(str(log)))
    assert [i.kind for _, i in found] == ['meta', 'prompt', 'tool', 'text']
    assert found[2][1].data['run'] == ('cargo test', 101, '1 failed')


def test_an_older_claude_code_compaction_without_a_boundary(tmp_path: Path) -> None:
    """Before `compact_boundary`, the summary record alone marked a
    compaction; a session title (`type: summary`) is none."""
    log = tmp_path / 's.jsonl'
    log.write_text('\n'.join(json.dumps(r) for r in [
        {'type': 'summary', 'summary': 'Port the loader', 'leafUuid': 'x'},
        {'type': 'user', 'sessionId': 's', 'version': '1.0.30', 'cwd': '/w', 'uuid': 'u1', 'message': {'role': 'user', 'content': 'go'}},
        {'type': 'user', 'sessionId': 's', 'uuid': 'u2', 'isCompactSummary': True, 'timestamp': '2025-07-01T00:00:00Z',
         'message': {'role': 'user', 'content': 'This session is being continued from a previous conversation ...'}},
    ]) + '\n')
    assert [k for _, k in _kinds(log)] == ['meta', 'prompt', 'compaction', 'summary']


def test_a_gemini_resume_rewrite_is_no_compression(tmp_path: Path) -> None:
    """Gemini CLI rewrites `messages` at every start and resume: only a
    summary not seen before is a compression."""
    summary = {'type': 'user', 'content': [{'text': '<state_snapshot>x</state_snapshot>'}]}
    ack = {'type': 'gemini', 'content': [{'text': 'Got it. Thanks for the additional context!'}]}
    log = tmp_path / 'session-a.jsonl'
    log.write_text('\n'.join(json.dumps(r) for r in [
        {'sessionId': 'g', 'projectHash': 'h', 'startTime': '2026-01-01T00:00:00Z'},
        {'$set': {'messages': [{'type': 'user', 'content': [{'text': '<session_context>'}]}]}},
        {'$set': {'messages': [summary, ack]}},
        {'$set': {'messages': [summary, ack, {'type': 'user', 'content': [{'text': 'next'}]}]}},
    ]) + '\n')
    assert [k for _, k in _kinds(log)].count('compaction') == 1
