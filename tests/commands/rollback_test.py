from __future__ import annotations

import json
from pathlib import Path

from testing.util import bad
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import tip


def test_rollback_after_100_saves_restores_previous(memrepo: Path) -> None:
    for i in range(100):
        mem(memrepo, 'notes.md').write_text(f'- note {i}\n')
        mem(memrepo, 'snapshot.md').write_text(f'## Goal\nstep {i}\n')
        ok('save', cwd=memrepo)
    assert count(memrepo) == 101
    out = ok('rollback', cwd=memrepo)
    assert 'rolled back to' in out
    assert mem(memrepo, 'notes.md').read_text() == '- note 98\n'
    assert mem(memrepo, 'snapshot.md').read_text() == '## Goal\nstep 98\n'
    assert count(memrepo) == 102
    msg = message(memrepo)
    assert msg.startswith('rollback: to ')
    assert 'Agitmem-Event: rollback' in msg
    assert git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo) == '- note 98\n'


def test_rollback_twice_returns_to_start(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- good\n')
    ok('save', cwd=memrepo)
    mem(memrepo, 'notes.md').write_text('- bad\n')
    ok('save', cwd=memrepo)
    start = git('rev-parse', 'refs/agitmem/heads/main^{tree}', cwd=memrepo)
    ok('rollback', cwd=memrepo)
    assert mem(memrepo, 'notes.md').read_text() == '- good\n'
    ok('rollback', cwd=memrepo)
    assert mem(memrepo, 'notes.md').read_text() == '- bad\n'
    assert git('rev-parse', 'refs/agitmem/heads/main^{tree}', cwd=memrepo) == start


def test_rollback_saves_unsaved_edits_first(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- saved\n')
    ok('save', cwd=memrepo)
    mem(memrepo, 'notes.md').write_text('- unsaved edit\n')
    out = ok('rollback', cwd=memrepo)
    assert 'saved unsaved edits' in out
    # the edit is in history, and the rollback went to the commit before it
    assert mem(memrepo, 'notes.md').read_text() == '- saved\n'
    assert git('show', 'refs/agitmem/heads/main~1:notes.md', cwd=memrepo) == '- unsaved edit\n'


def test_rollback_to_named_revision(memrepo: Path) -> None:
    first = tip(memrepo)
    assert first is not None
    for i in range(3):
        ok('note', f'n{i}', cwd=memrepo)
    ok('rollback', first[:8], cwd=memrepo)
    assert '\n- ' not in mem(memrepo, 'notes.md').read_text()
    ok('rollback', '@~1', cwd=memrepo)
    assert mem(memrepo, 'notes.md').read_text().count('\n- ') == 3


def test_rollback_one_file(memrepo: Path) -> None:
    ok('note', 'keep this note', cwd=memrepo)
    ok('state', 'set', 'current_goal=first', cwd=memrepo)
    ok('state', 'set', 'current_goal=wrong', cwd=memrepo)
    ok('note', 'later note', cwd=memrepo)
    ok('rollback', '@~2', '--file', 'state.json', cwd=memrepo)
    state = json.loads(mem(memrepo, 'state.json').read_text())
    assert state['current_goal'] == 'first'
    assert 'later note' in mem(memrepo, 'notes.md').read_text()
    assert message(memrepo).startswith('rollback: state.json to ')


def test_rollback_keeps_config(memrepo: Path) -> None:
    ok('note', 'x', cwd=memrepo)
    (memrepo / '.agent' / 'config.yaml').write_text('budget_tokens: 600\n')
    ok('save', cwd=memrepo)
    ok('rollback', '@~2', cwd=memrepo)
    assert (memrepo / '.agent' / 'config.yaml').read_text() == 'budget_tokens: 600\n'


def test_rollback_nothing_to_do(memrepo: Path) -> None:
    ok('note', 'x', cwd=memrepo)
    before = tip(memrepo)
    out = ok('rollback', '@', cwd=memrepo)
    assert 'nothing to roll back' in out
    assert tip(memrepo) == before


def test_rollback_bad_revisions(memrepo: Path) -> None:
    before = tip(memrepo)
    assert 'only 1 commit(s) deep' in bad('rollback', cwd=memrepo)
    assert 'unknown memory revision "HEAD"' in bad('rollback', 'HEAD', cwd=memrepo)
    code_head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    assert 'unknown memory revision' in bad('rollback', code_head, cwd=memrepo)
    assert 'not a path inside .agent/memory' in bad(
        'rollback', '--file', '../../etc/passwd', cwd=memrepo,
    )
    assert tip(memrepo) == before
