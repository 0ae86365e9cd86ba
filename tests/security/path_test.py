"""A cloned repository's own programs are never run by agitmem, even on a
PATH with a relative entry (`bin`, or an empty one, which means the
current directory): git, sh and friends are found only in absolute PATH
directories.  The git hook shims (v4) already drop relative entries before
looking for agitmem; this is the same class for every program agitmem
itself starts."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import run

PROGRAMS = ('git', 'sh', 'cmp', 'python3')


def _plant(repo: Path, canary: Path) -> None:
    """Programs of the repository, at its top and in bin/, that leave a
    canary and then do what the real one does (so a run that uses them
    still works and only the canary tells)."""
    for where in (repo, repo / 'bin'):
        where.mkdir(exist_ok=True)
        for name in PROGRAMS:
            real = shutil.which(name) or '/bin/false'
            prog = where / name
            prog.write_text(f'#!/bin/sh\ntouch "{canary}"\nexec "{real}" "$@"\n')
            prog.chmod(0o755)


def _path(relative: str) -> str:
    """A PATH whose first entry is `relative`, then this agitmem's and the
    usual directories."""
    real = [p for p in os.environ.get('PATH', '').split(os.pathsep) if os.path.isabs(p)]
    return os.pathsep.join([relative, os.path.dirname(sys.executable), *real])


def _payload(repo: Path, event: str, **more: object) -> str:
    return json.dumps({
        'hook_event_name': event, 'session_id': 's1', 'cwd': str(repo),
        'transcript_path': str(repo / 'no-such.jsonl'), **more,
    })


CALLS: list[tuple[str, tuple[str, ...], str | None]] = [
    ('status', ('status',), None),
    ('state-set', ('state', 'set', 'current_goal=x'), None),
    ('save', ('save', '-m', 'x'), None),
    ('load', ('load',), None),
    ('check', ('check',), None),
    ('session-start', ('hook', 'session-start', '--agent', 'claude'), 'SessionStart'),
    ('stop', ('hook', 'stop', '--agent', 'claude'), 'Stop'),
]


@pytest.mark.parametrize('relative', ['', 'bin', '.'])
@pytest.mark.parametrize(('name', 'args', 'event'), CALLS, ids=[c[0] for c in CALLS])
def test_relative_path_entry_runs_nothing_of_the_repository(
        memrepo: Path, tmp_path: Path, relative: str, name: str, args: tuple[str, ...],
        event: str | None,
) -> None:
    canary = tmp_path / 'ran'
    _plant(memrepo, canary)
    (memrepo / '.agent' / 'memory' / 'notes.md').write_text('# Notes\n- changed\n')
    stdin = None if event is None else _payload(memrepo, event, source='startup')
    proc = agitmem(*args, cwd=memrepo, input=stdin, env={'PATH': _path(relative)})
    assert 'Traceback' not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), (proc.stdout, proc.stderr)
    assert not canary.exists(), f'{name} ran a program of the repository'


def test_relative_path_entry_in_git_hooks(memrepo: Path, tmp_path: Path) -> None:
    """A commit through the installed git shims (pre-commit, commit-msg,
    post-commit): neither the shims nor the agitmem they start run the
    repository's programs."""
    assert agitmem('install', 'git', cwd=memrepo).returncode == 0
    canary = tmp_path / 'ran'
    _plant(memrepo, canary)
    real_git = shutil.which('git')
    assert real_git is not None
    (memrepo / 'README').write_text('changed\n')
    git('add', 'README', cwd=memrepo)
    # the real git, by its absolute path: the test's own lookup must not
    # find the planted one
    proc = run(real_git, 'commit', '-q', '-m', 'change', cwd=memrepo, env={'PATH': _path('')})
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr, proc.stderr
    assert not canary.exists(), 'a git hook ran a program of the repository'
