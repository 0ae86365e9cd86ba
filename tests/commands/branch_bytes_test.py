"""A branch whose name is not UTF-8 (git allows any bytes but a few):
every command and hook works on it, its memory is saved to the ref of the
same bytes, and nothing prints a traceback."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from testing import util
from testing.util import git
from testing.util import ok

BRANCH = b'caf\xe9'  # latin-1 "café"
REF = b'refs/agitmem/heads/' + BRANCH
# how agitmem shows it (git's bytes, escaped where they are not UTF-8)
SHOWN = 'caf\\xe9'


def _run(repo: Path, *args: bytes | str, input: str = '') -> subprocess.CompletedProcess[str]:
    exe = util._AGITMEM or 'agitmem'
    proc = subprocess.run(
        [exe, *args], cwd=repo, input=input, capture_output=True, text=True,
        errors='replace', timeout=60,
    )
    assert 'Traceback' not in proc.stderr, proc.stderr
    return proc


def _tip(repo: Path, ref: bytes = REF) -> str | None:
    proc = subprocess.run(
        [b'git', b'rev-parse', b'-q', b'--verify', ref], cwd=repo,
        capture_output=True,
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


@pytest.fixture
def on_branch(memrepo: Path) -> Path:
    subprocess.run([b'git', b'checkout', b'-q', b'-b', BRANCH], cwd=memrepo, check=True)
    return memrepo


def test_commands_work_and_save_to_the_branch_ref(on_branch: Path) -> None:
    status = _run(on_branch, 'status')
    assert status.returncode == 0
    assert status.stderr == ''
    assert _run(on_branch, 'state', 'set', 'current_goal=accents').returncode == 0
    assert _run(on_branch, 'note', 'a note on café').returncode == 0
    (util.mem(on_branch, 'snapshot.md')).write_text('## Goal\naccents\n')
    save = _run(on_branch, 'save', '-m', 'on a latin-1 branch')
    assert save.returncode == 0, save.stderr
    assert 'saved ' in save.stdout
    tip = _tip(on_branch)
    assert tip is not None
    # the trailer records the branch, escaped: a commit message is text
    msg = git('log', '-1', '--format=%B', tip, cwd=on_branch)
    assert f'Code-Branch: {SHOWN}\n' in msg
    assert _tip(on_branch, b'refs/agitmem/heads/main') != tip
    load = _run(on_branch, 'load')
    assert load.returncode == 0
    assert 'accents' in load.stdout and 'a note on café' in load.stdout
    assert _run(on_branch, 'check').returncode == 0
    assert _run(on_branch, 'log').returncode == 0
    assert json.loads(_run(on_branch, 'status', '--json').stdout)['ref'].startswith(
        'refs/agitmem/heads/caf',
    )


@pytest.mark.parametrize('event', ['session-start', 'prompt', 'post-edit', 'pre-compact', 'stop'])
def test_agent_hooks(on_branch: Path, event: str) -> None:
    notes = util.mem(on_branch, 'notes.md')
    notes.write_text(notes.read_text() + '- edited by the agent\n')
    payload = {
        'session_id': 's', 'cwd': str(on_branch), 'hook_event_name': event,
        'source': 'compact', 'prompt': 'go', 'trigger': 'auto',
        'tool_name': 'Write', 'tool_input': {'file_path': str(notes)},
    }
    proc = _run(on_branch, 'hook', event, '--agent', 'claude', input=json.dumps(payload))
    assert proc.returncode == 0
    # a save first gives the edit (made on the branch: no post-checkout ran)
    # to the branch's memory, and says so where the user sees it: in the
    # hook's output; nothing on stderr
    assert proc.stderr == ''
    if event in ('post-edit', 'pre-compact'):
        said = json.loads(proc.stdout)['systemMessage']
        assert f"they go to {SHOWN}'s memory" in said
    if proc.stdout:
        json.loads(proc.stdout)
    if event in ('post-edit', 'pre-compact'):  # these save
        tip = _tip(on_branch)
        assert tip is not None
        assert 'edited by the agent' in git('show', f'{tip}:notes.md', cwd=on_branch)


def test_git_hooks_switch_and_commit(on_branch: Path) -> None:
    ok('install', 'git', cwd=on_branch)
    assert _run(on_branch, 'state', 'set', 'current_goal=latin').returncode == 0
    assert _run(on_branch, 'save').returncode == 0
    (on_branch / 'README').write_text('changed\n')
    git('commit', '-q', '-am', 'code on the branch', cwd=on_branch)  # post-commit
    ours = _tip(on_branch)
    assert ours is not None
    env = {**os.environ}
    for args in ([b'checkout', b'-q', b'main'], [b'checkout', b'-q', BRANCH]):
        proc = subprocess.run(
            [b'git', *args], cwd=on_branch, capture_output=True, env=env,
        )
        assert proc.returncode == 0
        assert b'Traceback' not in proc.stderr
    # post-checkout brought the branch's memory back
    state = json.loads(util.mem(on_branch, 'state.json').read_text())
    assert state['current_goal'] == 'latin'
    status = _run(on_branch, 'status')
    assert 'refs/agitmem/heads/caf' in status.stdout
