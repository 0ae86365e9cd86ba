from __future__ import annotations

from pathlib import Path

from testing.util import bad
from testing.util import git
from testing.util import ok


def test_demo_walks_through_and_ends_with_history(tmp_path: Path) -> None:
    out = ok('demo', str(tmp_path / 'scratch'), cwd=tmp_path)
    assert 'agitmem init' in out
    assert '$ agitmem rollback' in out
    # the compaction step: checkpoint, then exactly what the agent is given
    assert 'memory checkpoint' in out
    assert '"hookEventName": "SessionStart"' in out
    assert '| Your context was just compacted. Before doing anything else, restate' in out
    assert '| STALE verification: files changed since it ran:' in out
    assert "| next_intent: delete the original in loader.ts and update the imports" in out
    # the first turn after the compaction edits current_file: recovered
    recovery = out[out.index('did the agent recover?'):out.index('a bad snapshot is saved')]
    assert '$ agitmem hook post-edit --agent claude' in recovery
    assert '$ agitmem hook stop --agent claude' in recovery
    report = recovery[recovery.index('$ agitmem recovery'):]
    assert '1 compaction(s); 0 verdict(s) marked by hand (0.0%)' in report
    row = next(line for line in report.splitlines() if line.strip().startswith('all '))
    assert row.split()[1:3] == ['1', '100.0%']  # compactions, recovered
    assert 'claude auto: recovered; first: edit src/config/loader.ts in loadConfig' in report
    assert 'recovery log' not in out  # no failure of the log was reported
    # doctor finds one problem, its fix is run, doctor is clean
    doctor = out[out.index('agitmem doctor: is everything wired?'):out.index('git refuses a commit')]
    first, fixed = doctor.split('$ agitmem install git')
    assert 'error    git-hooks      git hooks missing: pre-commit, commit-msg' in first
    assert 'fix: agitmem install git' in first
    assert 'doctor: 1 problem(s)' in first
    assert 'git hooks: all 7 in place' in fixed
    assert 'doctor: all good' in fixed
    # a commit refused for contradicting memory, then let through
    assert 'error tattoo-vs-snapshot' in out
    assert 'Agitmem-Event: post-commit' in out
    # the feature branch: forked, reviewed, merged back
    assert 'memory of feature forked from main' in out
    assert '- **added:** Validate config files with `zod` schemas.' in out
    assert '.agent/memory/tattoo.md:- Validate config files with `zod` schemas.' in out
    history = out[out.index('the memory history'):]
    assert 'archive: ' in history
    assert 'rollback: to ' in history
    log = git('log', '--format=%s', 'refs/agitmem/heads/main', cwd=tmp_path / 'scratch')
    assert log.splitlines()[0].startswith('archive: ')
    assert any(s.startswith('rollback: ') for s in log.splitlines())


def test_demo_refuses_non_empty_dir(tmp_path: Path) -> None:
    (tmp_path / 'x').mkdir()
    (tmp_path / 'x' / 'f').write_text('keep')
    assert 'exists and is not empty' in bad('demo', str(tmp_path / 'x'), cwd=tmp_path)
    assert (tmp_path / 'x' / 'f').read_text() == 'keep'
