"""agitmem/ahead.py: what a command waits on from git (where the
repository is, the working tree's status) is begun before the rest of
agitmem imports, once, and a status begun in another repository than the
one the command works on is never taken for it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agitmem import ahead
from testing.util import agitmem_argv
from testing.util import git
from testing.util import ok

# what agitmem/__main__.py does first, then what it had imported and begun
_PROBE = '''
import json, sys
from agitmem import ahead
ahead.begin(sys.argv[1:])
print(json.dumps({
    'modules': sorted(m for m in sys.modules if m.startswith('agitmem')),
    'status': [cwd for cwd, _ in ahead.STATUS_AHEAD],
    'early': [list(key[1]) for key in ahead.EARLY],
}))
'''


def _begun(cwd: Path, *argv: str) -> dict[str, list[Any]]:
    proc = subprocess.run(
        [sys.executable, '-c', _PROBE, *argv], cwd=cwd, capture_output=True, text=True, check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize('argv', [
    ('load',), ('state', 'set', 'k=v'), ('hook', 'session-start', '--agent', 'claude'),
])
def test_status_and_find_begin_before_agitmem_imports(memrepo: Path, argv: tuple[str, ...]) -> None:
    begun = _begun(memrepo, *argv)
    assert begun['modules'] == ['agitmem', 'agitmem.ahead', 'agitmem.platforms']
    assert begun['status'] == [str(memrepo)]
    assert begun['early'] == [list(ahead.FIND_HEAD)]


@pytest.mark.parametrize('argv', [('verify', '--', 'true'), ('hook', 'post-commit')])
def test_verify_and_commit_hooks_begin_find_only(memrepo: Path, argv: tuple[str, ...]) -> None:
    """verify's tree is the one its command leaves: no status before it;
    the commit hooks need none."""
    begun = _begun(memrepo, *argv)
    assert begun['status'] == []
    assert begun['early'] == [list(ahead.FIND_HEAD)]


def test_pre_commit_hook_begins_find_and_the_staged_diff(memrepo: Path) -> None:
    """Its one read of the whole index runs while it imports, begun
    first (the longest of its reads), and the hook takes it (one
    diff-index in all, with the index git gave it)."""
    begun = _begun(memrepo, 'hook', 'pre-commit')
    assert begun['status'] == []
    assert begun['early'] == [list(ahead.STAGED), list(ahead.FIND_HEAD)]
    (memrepo / 'src.py').write_text('x = 1\n')
    git('add', 'src.py', cwd=memrepo)
    trace = memrepo.parent / 'trace'
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'pre-commit'], cwd=memrepo, capture_output=True, text=True,
        env={**os.environ, 'GIT_TRACE2_EVENT': str(trace), 'GIT_INDEX_FILE': '.git/index'},
    )
    assert proc.returncode == 0, proc.stderr
    started = [json.loads(line) for line in trace.read_text().splitlines()]
    diffs = [e['argv'] for e in started if e['event'] == 'start' and 'diff-index' in e['argv']]
    assert diffs == [['git', '--no-optional-locks', *ahead.STAGED]]



@pytest.mark.parametrize('where', ['top', 'sub', 'outside'])
def test_check_staged_reads_the_index_once_wherever_it_runs(memrepo: Path, tmp_path: Path, where: str) -> None:
    """`check --staged` begins the staged diff as the pre-commit hook does,
    and takes it (one diff-index in all) where it is typed: at the top, in
    a subdirectory, or outside with GIT_DIR and GIT_WORK_TREE (the hook
    runs at the top; typed elsewhere, the one begun was left unread and
    the index read again)."""
    (memrepo / 'src').mkdir(exist_ok=True)
    (memrepo / 'src' / 'new.py').write_text('x = 1\n')
    git('add', 'src/new.py', cwd=memrepo)
    trace = tmp_path / 'trace'
    env = {**os.environ, 'GIT_TRACE2_EVENT': str(trace)}
    cwd = {'top': memrepo, 'sub': memrepo / 'src', 'outside': tmp_path}[where]
    if where == 'outside':
        env.update(GIT_DIR=str(memrepo / '.git'), GIT_WORK_TREE=str(memrepo))
    proc = subprocess.run(
        [*agitmem_argv(), 'check', '--staged'], cwd=cwd, capture_output=True, text=True, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'progress-not-updated' in proc.stdout  # (what the diff-index read)
    started = [json.loads(line) for line in trace.read_text().splitlines()]
    diffs = [e['argv'] for e in started if e['event'] == 'start' and 'diff-index' in e['argv']]
    assert diffs == [['git', '--no-optional-locks', *ahead.STAGED]]


@pytest.mark.parametrize('argv', [
    ('hook', 'post-edit', '--agent', 'claude'), ('hook', 'prompt', '--agent', 'codex'),
    ('hook', 'stop', '--agent', 'gemini'), ('hook', 'prompt'),
])
def test_agent_hooks_begin_find_before_agitmem_imports(memrepo: Path, argv: tuple[str, ...]) -> None:
    """Gemini's `hook prompt` (its BeforeModel, every model call) begins
    nothing: it nearly always ends without git."""
    begun = _begun(memrepo, *argv)
    assert begun == {'modules': ['agitmem', 'agitmem.ahead', 'agitmem.platforms'], 'status': [], 'early': [list(ahead.FIND)]}


@pytest.mark.parametrize('event,payload', [
    ('post-edit', {'hook_event_name': 'PostToolUse', 'tool_name': 'Edit', 'tool_input': {'file_path': 'src.py'}}),
    ('prompt', {'hook_event_name': 'UserPromptSubmit', 'prompt': 'go on'}),
    ('stop', {'hook_event_name': 'Stop', 'stop_hook_active': False}),
])
def test_an_agent_hook_asks_where_the_repository_is_once(
        memrepo: Path, tmp_path: Path, event: str, payload: dict[str, object],
) -> None:
    """The `find` begun ahead is the one the hook takes (in the
    directory the payload names): one rev-parse, and subprocess never
    imported for it (posix_spawn)."""
    trace = tmp_path / 'trace'
    stdin = json.dumps({'session_id': 's', 'transcript_path': None, 'cwd': str(memrepo), **payload})
    ok('hook', event, '--agent', 'claude', cwd=memrepo, input=stdin, env={'GIT_TRACE2_EVENT': str(trace)})
    assert _runs(trace, '--show-toplevel') == 1


def test_commit_msg_begins_find_without_head(memrepo: Path) -> None:
    assert _begun(memrepo, 'hook', 'commit-msg', 'MSG')['early'] == [list(ahead.FIND)]


@pytest.mark.parametrize('argv', [
    ('save',), ('state', 'show'), ('hook', 'prompt', '--agent', 'gemini'), ('hook', 'prompt', '--agent=gemini'),
    ('hook', 'pre-compact', '--agent', 'claude'), ('hook', 'pre-push'), ('status',), (),
])
def test_other_commands_begin_nothing(memrepo: Path, argv: tuple[str, ...]) -> None:
    assert _begun(memrepo, *argv) == {'modules': ['agitmem', 'agitmem.ahead', 'agitmem.platforms'], 'status': [], 'early': []}


def _runs(trace: Path, verb: str) -> int:
    return sum(
        e.get('event') == 'start' and verb in e['argv']
        for e in map(json.loads, trace.read_text().splitlines())
    )


def _session(repo: Path) -> str:
    return json.dumps({
        'session_id': 's', 'transcript_path': None, 'cwd': str(repo),
        'hook_event_name': 'SessionStart', 'source': 'startup',
    })


def test_session_start_runs_one_status(memrepo: Path, tmp_path: Path) -> None:
    (memrepo / 'edited.py').write_text('x = 1\n')
    ok('state', 'set', 'next_intent=go on', cwd=memrepo)
    trace = tmp_path / 'trace'
    ok('hook', 'session-start', '--agent', 'claude', cwd=memrepo, input=_session(memrepo),
       env={'GIT_TRACE2_EVENT': str(trace)})
    assert _runs(trace, 'status') == 1
    assert _runs(trace, 'rev-parse') == 1


@pytest.mark.parametrize('hook', ['pre-commit', 'commit-msg', 'post-commit'])
def test_a_commit_hook_asks_where_the_repository_is_once(memrepo: Path, tmp_path: Path, hook: str) -> None:
    ok('install', 'git', cwd=memrepo)
    (memrepo / 'enforce.py').write_text('x = 1\n')
    git('add', 'enforce.py', cwd=memrepo)
    (memrepo / 'msg').write_text('add enforce.py\n')
    trace = tmp_path / 'trace'
    env = {'GIT_TRACE2_EVENT': str(trace), 'GIT_INDEX_FILE': str(memrepo / '.git' / 'index')}
    ok('hook', hook, *(['msg'] if hook == 'commit-msg' else []), cwd=memrepo, env=env)
    assert _runs(trace, '--show-toplevel') == 1


def test_a_status_begun_in_another_repository_is_not_taken(tmp_path: Path) -> None:
    """The hook runs in one repository, its payload names another: the
    injection's STALE is the payload's repository's, not the one the
    status was begun in."""
    here, there = tmp_path / 'here', tmp_path / 'there'
    for root in (here, there):
        git('init', '-q', '-b', 'main', str(root), cwd=tmp_path)
        (root / 'a.py').write_text('a = 1\n')
        git('add', '-A', cwd=root)
        git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '-m', 'a', cwd=root)
        ok('init', cwd=root)
        ok('state', 'set', 'current_goal=work', cwd=root)
    time.sleep(0.01)
    (here / 'only_here.py').write_text('x = 1\n')  # here changed since its state; there did not
    out = ok('hook', 'session-start', '--agent', 'claude', cwd=here, input=_session(there))
    assert 'only_here.py' not in out
    assert 'STALE' not in out
    out = ok('hook', 'session-start', '--agent', 'claude', cwd=there, input=_session(here))
    assert 'only_here.py' in out


_BEGINNERS = [
    ('load',), ('state', 'set', 'next_intent=go on'), ('verify', '--', 'true'),
    ('hook', 'session-start', '--agent', 'claude'), ('hook', 'pre-commit'),
]


# every command with an empty PATH entry, every relative entry with `load`;
# the rest of the cross product repeats those (slow: the full run has it,
# the fast tier does not)
@pytest.mark.parametrize(('argv', 'relative'), [
    pytest.param(
        argv, relative, id=f'argv{i}-{relative}',
        marks=() if relative == '' or i == 0 else pytest.mark.slow,
    )
    for i, argv in enumerate(_BEGINNERS) for relative in ('', '.', 'bin')
])
def test_nothing_begun_runs_the_repositorys_own_git(
        memrepo: Path, tmp_path: Path, relative: str, argv: tuple[str, ...],
) -> None:
    """A PATH with a relative entry (an empty one is the current
    directory) in a cloned repository that ships its own `git`: what is
    begun before the imports runs the real git, as every later call does."""
    marker = tmp_path / 'ran'
    for d in (memrepo, memrepo / 'bin'):
        d.mkdir(exist_ok=True)
        fake = d / 'git'
        fake.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
        fake.chmod(0o755)
    env = {'PATH': f'{relative}{os.pathsep}{os.environ["PATH"]}'}
    ok(*argv, cwd=memrepo, env=env, input=_session(memrepo) if 'session-start' in argv else None)
    assert not marker.exists(), marker.read_text()


@pytest.mark.parametrize('event', ['session-start', 'post-edit', 'stop'])
def test_an_agent_hook_run_from_a_deleted_directory_works_where_its_payload_says(
        memrepo: Path, tmp_path: Path, event: str,
) -> None:
    """An agent left in a directory since deleted runs its hooks there; the
    payload names the repository, and git runs in it (by Popen: posix_spawn
    has no directory of its own), not `git is not installed or not on
    PATH`, which asking for the gone directory used to make of it."""
    gone = tmp_path / 'gone'
    gone.mkdir()
    proc = subprocess.run(
        ['sh', '-c', f'cd {gone} && rmdir {gone} && exec "$0" "$@"', *agitmem_argv(), 'hook', event, '--agent', 'claude'],
        input=_session(memrepo), capture_output=True, text=True,
    )
    assert (proc.returncode, proc.stderr) == (0, '')
    if event == 'session-start':
        assert 'AGENT MEMORY BEGIN' in json.loads(proc.stdout)['hookSpecificOutput']['additionalContext']


def test_a_directory_gone_is_said_by_the_command(tmp_path: Path) -> None:
    """What is begun ahead fails quietly (the current directory was
    deleted): the command says so in its one line, as before."""
    gone = tmp_path / 'gone'
    gone.mkdir()
    proc = subprocess.run(
        ['sh', '-c', f'cd {gone} && rmdir {gone} && exec "$0" "$@"', *agitmem_argv(), 'load'],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        'agitmem: the current directory no longer exists (deleted?): cd into the repository and run it again',
    ]


# what the console script does first (pip's script imports re), then begin
_EARLY_PROBE = '''
import re, sys, json, os
{before}
from agitmem import ahead
ahead.begin(sys.argv[1:])
kinds = [type(p).__name__ for _, p in ahead.STATUS_AHEAD] + [type(p).__name__ for p in ahead.EARLY.values()]
imported = [m for m in ('subprocess', 'typing', 'signal') if m in sys.modules]
status = ahead.STATUS_AHEAD[0][1].communicate(timeout=60)[0]
find = list(ahead.EARLY.values())[0].communicate(timeout=60)[0]
with open(os.environ['PROBE_OUT'], 'w') as f:
    json.dump({{'kinds': kinds, 'imported': imported, 'status': status.decode('utf-8', 'surrogateescape'), 'find': find.decode('utf-8', 'surrogateescape')}}, f)
'''


@pytest.mark.parametrize('before', ['', 'os.close(1)', 'os.close(0); os.close(1); os.close(2)'])
def test_what_is_begun_ahead_is_what_git_prints(memrepo: Path, tmp_path: Path, before: str) -> None:
    """The status and `find` begun before subprocess, typing and
    signal.py (and its enum, for `python -m agitmem`) are imported, by
    posix_spawn, give what git gives them run as any other read; with
    the standard streams closed (a pipe's writing end would take one's
    number) they are begun by subprocess instead, and give the same."""
    (memrepo / 'new.py').write_text('x = 1\n')
    out = tmp_path / 'probe.json'
    # not measured by coverage (CI), which imports typing and subprocess itself
    env = {k: v for k, v in os.environ.items() if not k.startswith('COVERAGE_')}
    proc = subprocess.run(
        [sys.executable, '-c', _EARLY_PROBE.format(before=before), 'load'],
        cwd=memrepo, capture_output=True, text=True, env={**env, 'PROBE_OUT': str(out)},
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())
    if 'os.close(2)' in before:
        assert got['kinds'] == ['Popen', 'Popen']
    else:
        assert got['kinds'] == ['Child', 'Child']
        assert got['imported'] == []
    status = subprocess.run(ahead.STATUS, cwd=memrepo, capture_output=True, text=True, check=True).stdout
    assert got['status'] == status
    assert '? new.py' in status
    find = git(*ahead.FIND_HEAD, cwd=memrepo)
    assert got['find'] == find


def test_a_child_past_its_bound_is_stopped_and_read(tmp_path: Path) -> None:
    """Past its bound a process begun ahead raises TimeoutExpired as
    Popen would; killed, what it printed is still read, and it is waited
    for (no zombie left)."""
    child = ahead.Child(('sh', '-c', 'echo begun; echo oops >&2; exec sleep 30'), dict(os.environ), text=True, stderr=True)
    with pytest.raises(subprocess.TimeoutExpired):
        child.communicate(timeout=0.5)
    assert child.poll() is None
    ahead.kill(child)  # its group: sleep went with it
    assert child.returncode == -9
    assert child.communicate() == ('begun\n', 'oops\n')
    child.kill()  # ended already: nothing to do
    assert child.wait() == -9


def test_a_child_that_cannot_start_leaves_no_descriptor(tmp_path: Path) -> None:
    before = set(os.listdir('/proc/self/fd'))
    with pytest.raises(FileNotFoundError):
        ahead.Child(('agitmem-no-such-program',), dict(os.environ), text=False, stderr=True)
    assert set(os.listdir('/proc/self/fd')) == before


def test_a_child_holds_no_descriptor_it_was_not_given(tmp_path: Path) -> None:
    """As Popen's close_fds: an inheritable descriptor this process holds
    (an agent's pipe) is not passed on, and SIGPIPE is git's default again
    (Python ignores it)."""
    r, w = os.pipe()
    os.set_inheritable(w, True)
    try:
        child = ahead.Child(
            ('sh', '-c', 'ls /proc/$$/fd; grep SigIgn /proc/$$/status'), dict(os.environ), text=True, stderr=False,
        )
        out, _ = child.communicate(timeout=60)
    finally:
        os.close(r)
        os.close(w)
    fds, ignored = out.rsplit('\n', 2)[0], out.rsplit('\n', 2)[1]
    assert str(w) not in fds.split()
    assert not int(ignored.split()[1], 16) & (1 << (13 - 1))  # SIGPIPE


_ENDED_PROBE = '''
import os, sys, time
from agitmem import ahead
child = ahead.Child(('sh', '-c', 'echo out; echo err >&2'), dict(os.environ), text=True, stderr=True)
while child.poll() is None:
    time.sleep(0.01)
got = child.communicate(timeout=60)
print(repr(got), 'select' in sys.modules)
'''


def test_an_ended_childs_pipes_are_read_without_select(tmp_path: Path) -> None:
    """A git read begun ahead has nearly always ended when it is asked
    for: its output is read as it is, without importing select (a
    shared library: a fiftieth of a hook's run)."""
    # without coverage, which imports select itself as it starts (CI)
    env = {k: v for k, v in os.environ.items() if not k.startswith('COVERAGE_')}
    proc = subprocess.run(
        [sys.executable, '-c', _ENDED_PROBE], capture_output=True, text=True, check=True, env=env,
    )
    assert proc.stdout.strip() == "('out\\n', 'err\\n') False"


def test_an_ended_child_whose_pipe_a_child_of_its_own_holds_is_waited_for(tmp_path: Path) -> None:
    """The other side: the process has ended but a child of its own (a
    hook git ran, a daemon) still writes to the pipe: read to its end,
    within the bound, as before."""
    child = ahead.Child(('sh', '-c', 'echo first; (sleep 0.5; echo last) & exit 0'), dict(os.environ), text=True, stderr=False)
    while child.poll() is None:
        time.sleep(0.01)
    with pytest.raises(subprocess.TimeoutExpired):
        child.communicate(timeout=0.1)
    assert child.communicate(timeout=60) == ('first\nlast\n', None)


def test_a_child_fed_on_stdin_is_served_both_ways_at_once(tmp_path: Path) -> None:
    """git's `--stdin` reads (repo.git_bytes: cat-file --batch, hash-object
    --stdin-paths, mktree) write while they read: 4 MB in and out, each far
    past a pipe's 64 KB, end without either side waiting on the other."""
    data = b''.join(b'%07d\n' % i for i in range(512 * 1024))
    child = ahead.Child(('cat',), dict(os.environ), text=False, stderr=False, stdin=True)
    assert child.communicate(data, timeout=60) == (data, None)
    assert child.returncode == 0


def test_a_child_that_reads_no_stdin_ends_as_it_ends(tmp_path: Path) -> None:
    """A process that ends without reading what it is fed (git refusing
    its arguments) is no error of the feeding: its code is read, as from
    Popen; nothing given closes its stdin at once."""
    child = ahead.Child(('sh', '-c', 'exit 3'), dict(os.environ), text=False, stderr=False, stdin=True)
    assert child.communicate(b'x' * (4 << 20), timeout=60) == (b'', None)
    assert child.returncode == 3
    child = ahead.Child(('cat',), dict(os.environ), text=False, stderr=False, stdin=True)
    assert child.communicate(b'', timeout=60) == (b'', None)
    assert child.returncode == 0


def test_a_fed_child_past_its_bound_is_stopped(tmp_path: Path) -> None:
    child = ahead.Child(('sh', '-c', 'exec sleep 30'), dict(os.environ), text=False, stderr=False, stdin=True)
    with pytest.raises(subprocess.TimeoutExpired):
        child.communicate(b'x' * (1 << 20), timeout=0.5)
    ahead.kill(child)
    assert child.communicate() == (b'', None)
    assert child.returncode == -9


def test_git_bytes_by_posix_spawn_is_what_popen_gives(memrepo: Path) -> None:
    """repo.git_bytes begun by posix_spawn (no subprocess imported, as in a
    hook) and by Popen give the same bytes (CR, NUL and non-UTF-8 kept)."""
    code = (
        'import sys, json; from agitmem import repo; r = repo.find(); '
        "data = sys.stdin.buffer.read(); "
        "got = repo.git_bytes(r, ('hash-object', '-w', '--stdin'), data); "
        "print(json.dumps([got.decode(), 'subprocess' in sys.modules]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith('COVERAGE_')}
    data = b'a\r\nb\0\xff\n' * 10000
    proc = subprocess.run([sys.executable, '-c', code], cwd=memrepo, input=data, capture_output=True, check=True, env=env)
    oid, imported = json.loads(proc.stdout)
    assert not imported
    assert oid.strip() == subprocess.run(
        ['git', 'hash-object', '--stdin'], cwd=memrepo, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()
