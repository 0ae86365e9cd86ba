from __future__ import annotations

import json
from pathlib import Path

from agitmem import merge
from agitmem.checks.merge_conflict import check
from agitmem.checks.merge_conflict import STATE_CONFLICTS
from testing.util import agitmem
from testing.util import mem

PATH = '.agent/memory/snapshot.md'
STATE = '.agent/memory/state.json'
CONFLICT = (
    '## Decisions\n'
    '<<<<<<< ours\n'
    '- indent: 4 spaces\n'
    '=======\n'
    '- indent: 2 spaces\n'
    '>>>>>>> theirs\n'
)


def test_no_markers() -> None:
    assert check({PATH: '# Snapshot\n\n## Goal\nship it\n'}) == []


def test_markdown_underline_is_not_a_marker() -> None:
    assert check({PATH: 'Title\n=======\n\ntext\n'}) == []


def test_conflict_is_an_error_at_its_start() -> None:
    found, = check({PATH: CONFLICT})
    assert (found.id, found.severity, found.path, found.line) == (
        'merge-conflict', 'error', PATH, 2,
    )
    assert found.message.startswith('unresolved merge conflict (lines 2-6)')


def test_each_conflict_and_each_file() -> None:
    found = check({PATH: CONFLICT + CONFLICT, '.agent/memory/notes.md': CONFLICT})
    assert [(f.path, f.line) for f in found] == [
        (PATH, 2), (PATH, 8), ('.agent/memory/notes.md', 2),
    ]


def test_unclosed_and_stray_markers() -> None:
    found = check({PATH: '<<<<<<< ours\na\n', '.agent/memory/notes.md': 'a\n>>>>>>> x\n'})
    assert [(f.path, f.line) for f in found] == [
        (PATH, 1), ('.agent/memory/notes.md', 2),
    ]


def test_markers_need_seven_characters_and_a_space() -> None:
    assert check({PATH: '<<<<<<<< eight\n<<<<<<<x\n'}) == []


def test_archived_snapshots_are_history() -> None:
    assert check({'.agent/memory/archive/2026/11/30-x.md': CONFLICT}) == []


def test_state_keys_a_merge_left() -> None:
    state = {'step': 3, 'merge_conflicts': {'next_intent': {'ours': 'a', 'theirs': 'b'}}}
    text = json.dumps(state, indent=2)
    found, = check({STATE: text}, state=state, state_path=STATE)
    assert (found.id, found.severity, found.path, found.line) == ('merge-conflict', 'error', STATE, 3)
    assert found.message.startswith(
        'a memory merge left "next_intent" changed on both sides (see "merge_conflicts");',
    )
    assert check({STATE: '{}'}, state={'merge_conflicts': {}}, state_path=STATE) == []


def test_state_key_is_the_one_merge_writes() -> None:
    assert STATE_CONFLICTS == merge.STATE_CONFLICTS


def test_through_the_cli(memrepo: Path) -> None:
    mem(memrepo, 'snapshot.md').write_text(CONFLICT)
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert f'error merge-conflict {PATH}:2: unresolved merge conflict' in proc.stdout
