from __future__ import annotations

import datetime
import json
import re
import time
from pathlib import Path

from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import tip


def test_archive_moves_snapshot_into_dated_file(memrepo: Path) -> None:
    mem(memrepo, 'snapshot.md').write_text('## Goal\nMove config loading\n\n## Done\n- copied\n')
    ok('state', 'set', 'current_goal=Move config loading into index.ts', cwd=memrepo)
    before = time.time()
    out = ok('archive', cwd=memrepo)
    assert 'archived the snapshot to archive/' in out
    files = git('ls-tree', '-r', '--name-only', 'refs/agitmem/heads/main', cwd=memrepo).split()
    archived = [f for f in files if f.startswith('archive/')]
    assert len(archived) == 1
    now = datetime.datetime.now()
    assert re.fullmatch(
        rf'archive/{now:%Y}/{now:%m}/{now:%d}-\d{{6}}-move-config-loading-into-index-ts\.md',
        archived[0],
    )
    when = int(git('log', '-1', '--format=%ct', 'refs/agitmem/heads/main', cwd=memrepo))
    assert before - 2 <= when <= time.time() + 2
    assert message(memrepo).startswith('archive: Move config loading into index.ts\n')
    content = git('show', f'refs/agitmem/heads/main:{archived[0]}', cwd=memrepo)
    assert content.startswith('---\ncurrent_goal: Move config loading into index.ts\n')
    assert '## Done\n- copied\n' in content
    # reset from the templates
    assert mem(memrepo, 'snapshot.md').read_text().startswith('# Snapshot')
    assert json.loads(mem(memrepo, 'state.json').read_text())['current_goal'] == ''
    # the working tree holds the archive too, so a save keeps it
    assert (memrepo / '.agent' / 'memory' / archived[0]).is_file()
    assert 'nothing to save' in ok('save', cwd=memrepo)


def test_show_archive_by_slug_and_date(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=fix login bug', cwd=memrepo)
    ok('archive', cwd=memrepo)
    by_slug = ok('show', 'archive:login', cwd=memrepo)
    assert 'current_goal: fix login bug' in by_slug
    today = datetime.date.today().isoformat()
    assert ok('show', f'archive:{today}', cwd=memrepo) == by_slug
    assert 'no archived snapshot matches' in bad('show', 'archive:nope', cwd=memrepo)


def test_archive_of_untouched_templates_is_refused(memrepo: Path) -> None:
    before = tip(memrepo)
    assert 'nothing to archive' in bad('archive', cwd=memrepo)
    assert tip(memrepo) == before


def test_rollback_undoes_archive(memrepo: Path) -> None:
    mem(memrepo, 'snapshot.md').write_text('## Goal\nwork\n')
    ok('save', cwd=memrepo)
    ok('archive', cwd=memrepo)
    ok('rollback', cwd=memrepo)
    assert mem(memrepo, 'snapshot.md').read_text() == '## Goal\nwork\n'
    assert not (memrepo / '.agent' / 'memory' / 'archive').exists()
