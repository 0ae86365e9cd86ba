"""A cloned repository can track files under .agent/ (only the clone's
info/exclude hides it): a `log/` or `hooks/` directory, or a log file,
that is a symlink out of the repository is never written through (the
audit log's lines appended to ~/.bashrc ran as commands there: a branch
named `$(...)` is in them)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import git
from testing.util import ok


def _hostile_clone(tmp_path: Path, link: str, target: Path) -> Path:
    """A clone of a repository that tracks .agent/<link> as a symlink to
    target (outside both)."""
    src = tmp_path / 'src'
    git('init', '-q', '-b', 'main', str(src), cwd=tmp_path)
    (src / '.agent' / Path(link).parent).mkdir(parents=True, exist_ok=True)
    os.symlink(target, src / '.agent' / link)
    git('add', '-f', '.agent', cwd=src)
    git('commit', '-q', '-m', 'hostile', cwd=src)
    clone = tmp_path / 'clone'
    git('clone', '-q', str(src), str(clone), cwd=tmp_path)
    assert (clone / '.agent' / link).is_symlink()
    return clone


def test_a_log_file_linked_out_is_not_appended_to(tmp_path: Path) -> None:
    link = 'log/memory.log'
    bashrc = tmp_path / 'bashrc'
    bashrc.write_text('# the user\'s own\n')
    clone = _hostile_clone(tmp_path, link, bashrc)
    proc = agitmem('init', cwd=clone)
    assert proc.returncode == 0, proc.stderr
    ok('note', 'a note', cwd=clone)
    git('checkout', '-q', '-b', '$(touch${IFS}pwned)', cwd=clone)
    ok('note', 'on a branch named like a command', cwd=clone)
    agitmem('hook', 'stop', cwd=clone, input='{"hook_event_name": "Stop", "session_id": "s"}')
    agitmem('recovery', cwd=clone)
    assert bashrc.read_text() == '# the user\'s own\n'
    assert (clone / '.agent' / link).is_symlink()


@pytest.mark.parametrize('sub', ('log', 'hooks'))
def test_a_directory_linked_out_is_refused_by_init(tmp_path: Path, sub: str) -> None:
    outside = tmp_path / 'outside'
    outside.mkdir()
    clone = _hostile_clone(tmp_path, sub, outside)
    proc = agitmem('init', cwd=clone)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert 'Traceback' not in proc.stderr
    assert f'.agent/{sub} is a symlink' in proc.stderr.splitlines()[-1]
    assert list(outside.iterdir()) == []
    # a command after it writes nothing there either
    agitmem('note', 'x', cwd=clone)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize('kind', ('device', 'fifo'))
def test_a_config_yaml_that_never_ends_is_refused(tmp_path: Path, kind: str) -> None:
    """.agent/config.yaml tracked as a link to /dev/zero was read without
    end (a MemoryError traceback, after all the machine's memory), to a
    FIFO it waited for ever: every command and hook read it."""
    target = Path('/dev/zero')
    if kind == 'fifo':
        target = tmp_path / 'fifo'
        os.mkfifo(target)
    clone = _hostile_clone(tmp_path, 'config.yaml', target)
    def bounded(*args: str, stdin: str = '') -> subprocess.CompletedProcess[str]:
        # the bound only stops a hang from stopping the suite
        return subprocess.run(
            [*agitmem_argv(), *args], cwd=clone, input=stdin, capture_output=True, text=True, timeout=120,
        )

    proc = bounded('init')
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        'agitmem: .agent/config.yaml: not a regular file of at most 1024 KB '
        '(a link to a device or a pipe?): make it one, or remove it',
    ]
    assert not (clone / '.agent' / 'memory').exists()  # init wrote nothing
    # memory there, the config.yaml a pull brought: every command and hook reads it
    os.unlink(clone / '.agent' / 'config.yaml')
    ok('init', cwd=clone)
    os.unlink(clone / '.agent' / 'config.yaml')
    os.symlink(target, clone / '.agent' / 'config.yaml')
    for args in (('status',), ('note', 'x'), ('load',), ('check',)):
        proc = bounded(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.splitlines() == [
            'agitmem: .agent/config.yaml: not a regular file of at most 1024 KB '
            '(a link to a device or a pipe?): make it one, or remove it',
        ], (args, proc.stderr)
    proc = bounded('hook', 'session-start', stdin='{"hook_event_name": "SessionStart", "source": "startup"}')
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
