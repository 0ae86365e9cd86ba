"""agitmem's directory in the git dir (.git/agitmem: caches, hook state,
the memory base, locks) or an entry of it made a symlink to outside the
repository: agitmem wrote its caches and state through it (and a lock's
open truncates its target).  Commands refuse (exit 2, one line), hooks
warn and let the agent go on; nothing outside is written."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import ok

CANARY = 'the attacker wants this file emptied or overwritten\n'


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / 'outside'
    outside.mkdir()
    for name in ('lock', 'observed.json', 'base', 'tree-cache', 'scanned', 'canary'):
        (outside / name).write_text(CANARY)
    (outside / 'sessions').mkdir()
    return outside


def _snapshot(outside: Path) -> dict[str, str]:
    return {str(p.relative_to(outside)): p.read_text() if p.is_file() else '<dir>' for p in sorted(outside.rglob('*'))}


def _plant(memrepo: Path, outside: Path, where: str) -> None:
    own = memrepo / '.git' / 'agitmem'
    if where == 'agitmem':
        shutil.rmtree(own, ignore_errors=True)
        own.symlink_to(outside)
        return
    own.mkdir(exist_ok=True)
    target = own / where
    shutil.rmtree(target, ignore_errors=True)
    target.unlink(missing_ok=True)
    target.symlink_to(outside / ('sessions' if where == 'sessions' else 'canary'))


PLACES = ['agitmem', 'lock', 'sessions']


@pytest.mark.parametrize('where', PLACES)
@pytest.mark.parametrize('args', [
    ('state', 'set', 'next_intent=write through the link'), ('note', 'a note'), ('status',),
])
def test_commands_refuse(memrepo: Path, tmp_path: Path, where: str, args: tuple[str, ...]) -> None:
    outside = _outside(tmp_path)
    _plant(memrepo, outside, where)
    before = _snapshot(outside)
    said = bad(*args, cwd=memrepo)
    assert 'is a symlink to outside the repository' in said
    assert _snapshot(outside) == before


def _payload(memrepo: Path, event: str) -> str:
    if event == 'post-edit':
        return json.dumps({
            'hook_event_name': 'PostToolUse', 'session_id': 's1', 'cwd': str(memrepo),
            'tool_name': 'Bash', 'tool_input': {'command': 'pytest -q'},
            'tool_response': {'stdout': '1 failed', 'stderr': '', 'interrupted': False},
        })
    if event == 'prompt':
        return json.dumps({
            'hook_event_name': 'UserPromptSubmit', 'session_id': 's1', 'cwd': str(memrepo),
            'transcript_path': str(memrepo / 'none.jsonl'), 'prompt': 'fix the cache',
        })
    return json.dumps({
        'hook_event_name': 'SessionStart', 'session_id': 's1', 'cwd': str(memrepo),
        'transcript_path': str(memrepo / 'none.jsonl'), 'source': 'startup',
    })


@pytest.mark.parametrize('where', PLACES)
@pytest.mark.parametrize('event', ['post-edit', 'prompt', 'session-start'])
def test_hooks_warn_and_write_nothing_outside(memrepo: Path, tmp_path: Path, where: str, event: str) -> None:
    outside = _outside(tmp_path)
    _plant(memrepo, outside, where)
    before = _snapshot(outside)
    proc = agitmem('hook', event, '--agent', 'claude', cwd=memrepo, input=_payload(memrepo, event))
    assert proc.returncode == 0, proc.stderr
    assert 'is a symlink to outside the repository' in proc.stderr
    assert 'Traceback' not in proc.stderr
    assert _snapshot(outside) == before


def test_a_link_within_the_git_dir_is_followed(memrepo: Path) -> None:
    """.git/agitmem moved elsewhere in the git dir and linked: still the
    repository's own, used as before."""
    own = memrepo / '.git' / 'agitmem'
    own.rename(memrepo / '.git' / 'agitmem-moved')
    own.symlink_to('agitmem-moved')
    ok('note', 'through a link inside', cwd=memrepo)
    assert 'agitmem: ' not in ok('status', cwd=memrepo)


def test_a_cache_file_linked_out_is_replaced_not_written_through(memrepo: Path, tmp_path: Path) -> None:
    """observed.json a symlink to a file outside: the hook replaces the
    link with its own file (and reads the link as nothing)."""
    outside = _outside(tmp_path)
    _plant(memrepo, outside, 'observed.json')
    before = _snapshot(outside)
    proc = agitmem('hook', 'post-edit', '--agent', 'claude', cwd=memrepo, input=_payload(memrepo, 'post-edit'))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ''
    observed = memrepo / '.git' / 'agitmem' / 'observed.json'
    assert not observed.is_symlink()
    assert json.loads(observed.read_text())['commands'][-1]['command'] == 'pytest -q'
    assert _snapshot(outside) == before
