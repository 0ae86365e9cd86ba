"""The post-edit hook under a shell's huge output: each client's shell
event with 20 MB and 200 MB of test output is observed (the command, the
failed run and its reason, from the summary at the output's end) within an
agent's hook time limit: the output is examined at its start and end only
(every failure pattern read all of it: 10 s for 20 MB)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testing.util import agitmem_argv

SUMMARY = 'error: test failed, to rerun pass `--lib`'
# a compiler warning: a file:line that every failure pattern reads far
# into, looking for an error it does not hold
LINE = 'src/cache.rs:12:5: warning: unused variable `entry`' + ' `entry`' * 10 + '\n'


def _output(mb: int) -> str:
    # megabytes of warnings, cargo's verdict last
    lines = LINE * (mb * 1024 * 1024 // len(LINE))
    return f'   Compiling cache v0.1.0\n{lines}test result: ok. 0 passed\n{SUMMARY}\n'


def _payload(agent: str, repo: Path, output: str) -> dict[str, object]:
    base = {'session_id': 's1', 'cwd': str(repo), 'tool_input': {'command': 'cargo test'}}
    if agent == 'claude':
        return {**base, 'hook_event_name': 'PostToolUseFailure', 'tool_name': 'Bash',
                'error': f'Exit code 1\n{output}', 'is_interrupt': False}
    if agent == 'codex':
        return {**base, 'hook_event_name': 'PostToolUse', 'tool_name': 'Bash',
                'tool_response': f'Exit code: 1\nWall time: 9 seconds\nOutput:\n{output}'}
    return {**base, 'hook_event_name': 'AfterTool', 'tool_name': 'run_shell_command',
            'tool_response': {'llmContent': f'Command: cargo test\nDirectory: (root)\nOutput: {output}\nExit Code: 1\n'}}


@pytest.mark.parametrize('mb', [20, 200])
@pytest.mark.parametrize('agent', ['claude', 'codex', 'gemini'])
def test_huge_shell_output_is_observed_in_time(memrepo: Path, agent: str, mb: int) -> None:
    payload = json.dumps(_payload(agent, memrepo, _output(mb)))
    # generous (half the clients' default hook limit of 60 s; it takes 5 s
    # here): before the fix, 7 s for 20 MB and 44 s for 200 MB
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'post-edit', '--agent', agent],
        cwd=memrepo, input=payload, capture_output=True, text=True, timeout=30, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr and 'not observed' not in proc.stderr
    state = json.loads((memrepo / '.agent' / 'memory' / 'state.json').read_text())
    lv = state['last_verification']
    assert lv['result'] == 'failed'
    assert lv['exit_code'] == 1
    assert lv['reason'] == SUMMARY
