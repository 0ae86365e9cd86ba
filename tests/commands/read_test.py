"""log, show, diff, status: the read commands and their --json."""
from __future__ import annotations

import json
from pathlib import Path

from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip


def test_log(memrepo: Path) -> None:
    ok('note', 'first note', cwd=memrepo)
    out = ok('log', cwd=memrepo).splitlines()
    assert len(out) == 2
    assert out[0].endswith('note: first note')
    assert out[1].endswith('init: agitmem memory')
    assert len(ok('log', '-n', '1', cwd=memrepo).splitlines()) == 1


def test_log_json(memrepo: Path) -> None:
    ok('note', 'n', cwd=memrepo)
    rows = json.loads(ok('log', '--json', cwd=memrepo))
    assert [r['event'] for r in rows] == ['note', 'init']
    assert rows[0]['id'] == tip(memrepo)
    assert rows[0]['code_branch'] == 'main'
    assert rows[0]['code_head'] == git('rev-parse', 'HEAD', cwd=memrepo).strip()


def test_log_bad_n(memrepo: Path) -> None:
    assert '-n must be at least 1' in bad('log', '-n', '0', cwd=memrepo)
    assert 'invalid int value' in bad('log', '-n', 'x', cwd=memrepo)


def test_show_file_at_revisions(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- one\n')
    ok('save', cwd=memrepo)
    mem(memrepo, 'notes.md').write_text('- two\n')
    ok('save', cwd=memrepo)
    assert ok('show', ':notes.md', cwd=memrepo) == '- two\n'
    assert ok('show', '@:notes.md', cwd=memrepo) == '- two\n'
    assert ok('show', '@~1:notes.md', cwd=memrepo) == '- one\n'
    first = tip(memrepo, 'refs/agitmem/heads/main~1')
    assert first is not None
    assert ok('show', f'{first[:7]}:notes.md', cwd=memrepo) == '- one\n'
    assert ok('show', f'{first}:.agent/memory/notes.md', cwd=memrepo) == '- one\n'
    data = json.loads(ok('show', '@~1:notes.md', '--json', cwd=memrepo))
    assert data == {'id': first, 'path': 'notes.md', 'content': '- one\n'}


def test_show_commit(memrepo: Path) -> None:
    out = ok('show', cwd=memrepo)
    assert 'init: agitmem memory' in out
    assert '  tattoo.md' in out
    data = json.loads(ok('show', '@', '--json', cwd=memrepo))
    assert data['event'] == 'init'
    assert 'state.json' in data['files']


def test_show_bad_input(memrepo: Path) -> None:
    for spec in ('@:../../etc/passwd', '@:/etc/passwd', ':..'):
        assert 'not a path inside .agent/memory' in bad('show', spec, cwd=memrepo)
    assert 'no missing.md in memory' in bad('show', ':missing.md', cwd=memrepo)
    assert 'unknown memory revision "deadbeef"' in bad('show', 'deadbeef:notes.md', cwd=memrepo)
    assert 'unknown memory revision "main"' in bad('show', 'main:notes.md', cwd=memrepo)
    assert 'only 1 commit(s) deep' in bad('show', '@~5', cwd=memrepo)


def test_diff_worktree_against_saved(memrepo: Path) -> None:
    assert ok('diff', cwd=memrepo) == ''
    mem(memrepo, 'notes.md').write_text('- new note\n')
    out = ok('diff', cwd=memrepo)
    assert '--- a/notes.md\n+++ b/notes.md\n' in out
    assert '+- new note\n' in out
    rows = json.loads(ok('diff', '--json', cwd=memrepo))
    assert [(r['path'], r['status']) for r in rows] == [('notes.md', 'modified')]


def test_diff_between_revisions(memrepo: Path) -> None:
    ok('note', 'a note', cwd=memrepo)
    out = ok('diff', '@~1', '@', cwd=memrepo)
    assert '+- ' in out and 'a note' in out
    assert 'at most two revisions' in bad('diff', '@', '@', '@', cwd=memrepo)


def test_status(memrepo: Path) -> None:
    out = ok('status', cwd=memrepo)
    assert 'memory ref refs/agitmem/heads/main (main)' in out
    assert 'no unsaved changes' in out
    assert 'STALE' in out  # template state was never updated
    mem(memrepo, 'notes.md').write_text('- x\n')
    ok('state', 'set', 'current_goal=g', '--no-save', cwd=memrepo)
    out = ok('status', cwd=memrepo)
    assert 'modified  notes.md' in out
    assert 'modified  state.json' in out
    assert 'step 1, updated' in out
    assert 'STALE' not in out
    data = json.loads(ok('status', '--json', cwd=memrepo))
    assert {c['path'] for c in data['changed']} == {'notes.md', 'state.json'}
    assert data['state']['step'] == 1
    assert data['state']['stale'] is False


def test_status_stale_after_stale_minutes(memrepo: Path) -> None:
    mem(memrepo, 'state.json').write_text(json.dumps({
        'current_goal': 'g', 'step': 3, 'updated_at': '2020-01-01T00:00:00Z',
    }))
    data = json.loads(ok('status', '--json', cwd=memrepo))
    assert data['state']['stale'] is True
    assert data['state']['age_seconds'] > 600


def test_audit_log_records_reads_and_writes(memrepo: Path) -> None:
    ok('note', 'hello', cwd=memrepo)
    ok('log', cwd=memrepo)
    lines = (memrepo / '.agent' / 'log' / 'memory.log').read_text().splitlines()
    import re
    assert all(re.match(r'^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] [\w -]+: ', ln) for ln in lines)
    assert any('write note: hello' in ln for ln in lines)
    assert lines[-1].split('] ', 1)[1].startswith('read log:')
