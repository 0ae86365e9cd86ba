"""repo.py through the CLI: the working tree's tree computed on index copies
that never outlive their command, and repositories at any path git accepts."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agitmem import repo as repo_mod
from agitmem import trees
from agitmem.errors import AgitmemError
from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import git
from testing.util import ok

COPY = 'agitmem-index-'


def _copies(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / '.git').iterdir() if p.name.startswith(COPY))


def _release(repo: Path) -> Path:
    return repo.parent / 'release'


def _slow_tree(repo: Path, seconds: int = 30) -> None:
    """`git add -A` of the tree chain waits until the test releases it
    (`_release(repo)` exists) or `seconds` have passed: a clean filter on a
    new file (the filter is this test's own config)."""
    wait = f'i=0; while [ ! -e "{_release(repo)}" ] && [ $i -lt {seconds * 20} ]; do sleep 0.05; i=$((i+1)); done'
    git('config', 'filter.slow.clean', f'{wait}; cat', cwd=repo)
    (repo / '.git' / 'info' / 'attributes').write_text('slow.txt filter=slow\n')
    (repo / 'slow.txt').write_text('slow\n')
    # intent-to-add: `git status` cannot give the tree, the chain computes it
    (repo / 'later.txt').write_text('later\n')
    git('add', '-N', 'later.txt', cwd=repo)


def _wait_for(what: str, test: object, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not test():  # type: ignore[operator]
        assert time.monotonic() < end, f'waited {timeout}s for {what}'
        time.sleep(0.02)


# A test run started under nohup, or in the background by a script, hands
# its children SIGHUP / SIGINT ignored; these tests mean a command whose
# signals are as `ignore` says: set, then agitmem exec-ed in the same
# process (what is ignored stays so across exec)
_SIGNALS_THEN_EXEC = (
    'import os, signal, sys\n'
    'for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):\n'
    '    signal.signal(s, signal.SIG_DFL)\n'
    'for s in filter(None, sys.argv[1].split(",")):\n'
    '    signal.signal(int(s), signal.SIG_IGN)\n'
    'os.execv(sys.argv[2], sys.argv[2:])\n'
)


def _start(repo: Path, *args: str, ignore: tuple[int, ...] = ()) -> subprocess.Popen[str]:
    argv = agitmem_argv()
    return subprocess.Popen(
        [sys.executable, '-c', _SIGNALS_THEN_EXEC, ','.join(str(int(s)) for s in ignore), *argv, *args],
        cwd=repo, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


@pytest.fixture
def slow(memrepo: Path) -> Iterator[Path]:
    _slow_tree(memrepo)
    yield memrepo
    _release(memrepo).touch()  # a filter still waiting ends


def _owned(repo: Path) -> bool:
    """An owned copy that `git add` of its chain is writing (its lock)."""
    names = _copies(repo)
    return any(n.endswith('.owner') for n in names) and any(n.endswith('.lock') for n in names)


@pytest.mark.parametrize(('sig', 'code'), [
    (signal.SIGTERM, -signal.SIGTERM),
    (signal.SIGHUP, -signal.SIGHUP),
    (signal.SIGINT, 130),  # Python's KeyboardInterrupt: "interrupted"
])
def test_a_signal_while_the_tree_is_computed_removes_the_copy(slow: Path, sig: int, code: int) -> None:
    proc = _start(slow, 'state', 'set', 'next_intent=x')
    _wait_for('the index copy', lambda: _owned(slow))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert 'Traceback' not in err
    assert _copies(slow) == []


@pytest.mark.parametrize(('sig', 'code', 'said'), [
    (signal.SIGINT, 130, 'agitmem: interrupted\n'),  # Ctrl-C: KeyboardInterrupt
    (signal.SIGTERM, -signal.SIGTERM, ''),  # `timeout`, an agent's hook time limit
    (signal.SIGHUP, -signal.SIGHUP, ''),
])
@pytest.mark.parametrize('edit', [
    'b\n',  # as long as before: `git status` reads it through the filter
    'longer than before\n',  # `hash-object --stdin-paths` does
])
def test_a_signal_while_git_runs_a_filter_leaves_nothing_running(
        memrepo: Path, edit: str, sig: int, code: int, said: str,
) -> None:
    """Git is begun in a process group of its own (posix_spawn's Child as
    Popen's), so no signal sent to agitmem's group (the terminal's SIGINT,
    `timeout`'s SIGTERM) reaches it: stopped by agitmem while it waits on
    git (a status or a hash-object running a slow clean filter), git and
    the filter stop too, and none goes on after agitmem has ended."""
    (memrepo / 'slow.txt').write_text('a\n')
    git('add', 'slow.txt', cwd=memrepo)
    git('commit', '-q', '-m', 'slow', cwd=memrepo)
    began, release, ended = (memrepo.parent / n for n in ('began', 'release', 'ended'))
    wait = f'i=0; while [ ! -e "{release}" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done'
    git('config', 'filter.slow.clean', f'echo >> "{began}"; {wait}; echo >> "{ended}"; cat', cwd=memrepo)
    (memrepo / '.git' / 'info' / 'attributes').write_text('slow.txt filter=slow\n')
    (memrepo / 'slow.txt').write_text(edit)
    proc = _start(memrepo, 'state', 'set', 'next_intent=x')
    _wait_for('the filter', began.exists)
    time.sleep(0.2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (code, said)
    release.touch()  # a filter still running ends now, and says so
    time.sleep(1)
    assert not ended.exists()


def test_an_ignored_signal_stops_nothing(slow: Path) -> None:
    """Under nohup SIGHUP is ignored: the command goes on to its end, and
    still leaves no copy behind."""
    proc = _start(slow, 'state', 'set', 'next_intent=x', ignore=(signal.SIGHUP,))
    _wait_for('the index copy', lambda: _owned(slow))
    proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)  # what SIGHUP would do, it would have done by now
    assert proc.poll() is None
    _release(slow).touch()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _copies(slow) == []
    assert json.loads((slow / '.agent' / 'memory' / 'state.json').read_text())['next_intent'] == 'x'


def test_a_live_commands_copy_is_not_swept(slow: Path) -> None:
    proc = _start(slow, 'state', 'set', 'next_intent=x')
    _wait_for('the index copy', lambda: _owned(slow))
    live = _copies(slow)
    try:
        ok('status', cwd=slow)
        assert set(live) <= set(_copies(slow))
    finally:
        _release(slow).touch()  # the state set's filter ends
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert _copies(slow) == []
    # its tree is the whole working tree's, slow.txt included
    state = json.loads((slow / '.agent' / 'memory' / 'state.json').read_text())
    git('add', '-A', cwd=slow)
    assert state['tree'] == git('write-tree', cwd=slow).strip()


def _dead_pid() -> int:
    p = subprocess.Popen(['true'])
    p.wait()
    return p.pid


def test_unowned_copies_are_swept_when_their_chain_is_gone(memrepo: Path) -> None:
    gd = memrepo / '.git'
    dead = f'{COPY}0123456789ab-{_dead_pid()}'
    living = f'{COPY}0123456789ac-{os.getpid()}'
    legacy = f'{COPY}0123456789ad'  # an older agitmem's: kept while young
    for name in (dead, f'{dead}.lock', living, legacy):
        (gd / name).write_bytes(b'DIRC')
    ok('status', cwd=memrepo)
    assert _copies(memrepo) == sorted([living, legacy])


def test_an_owner_file_nobody_holds_is_swept_with_its_copy(memrepo: Path) -> None:
    gd = memrepo / '.git'
    for name in (f'{COPY}0123456789ab', f'{COPY}0123456789ab.owner', f'{COPY}0123456789ac.owner'):
        (gd / name).write_bytes(b'')
    ok('status', cwd=memrepo)
    assert _copies(memrepo) == []


# -- a repository at any path --------------------------------------------------

ODD = ['a\nb', 'tab\there', 'quote"d', "apo'strophe", 'back\\slash', 'ünï cødé', 'ends in newline\n']


@pytest.mark.parametrize('name', ODD)
def test_a_repository_at_an_odd_path_works(tmp_path: Path, name: str) -> None:
    root = tmp_path / name / 'repo'
    root.mkdir(parents=True)
    git('init', '-q', cwd=root)
    (root / 'src').mkdir()
    (root / 'src' / 'app.py').write_text('x = 1\n')
    git('add', '.', cwd=root)
    git('commit', '-qm', 'initial', cwd=root)
    ok('init', cwd=root)
    ok('state', 'set', 'next_intent=go on', cwd=root / 'src')  # from a subdirectory too
    ok('save', '-m', 'first', cwd=root)
    (root / 'src' / 'ü.py').write_text('y = 2\n')
    out = ok('load', cwd=root)
    assert 'STALE: the working tree changed since this state was written: src/ü.py' in out
    assert 'no unsaved changes' in ok('status', cwd=root)
    ok('check', cwd=root)
    prompt = agitmem(
        'hook', 'prompt', '--agent', 'claude', cwd=root,
        input=json.dumps({'prompt': 'hi', 'cwd': str(root), 'session_id': 's1'}),
    )
    assert prompt.returncode == 0 and 'Traceback' not in prompt.stderr
    assert 'agitmem:' not in prompt.stderr, prompt.stderr
    ok('install', 'git', cwd=root)
    ok('state', 'set', 'last_action=added ü.py', '--no-save', cwd=root)
    git('add', '-A', cwd=root)
    git('commit', '-qm', 'with ü', cwd=root)  # pre-commit, commit-msg, post-commit
    assert 'hook post-commit' in git('log', '-1', '--format=%s', 'refs/agitmem/heads/main', cwd=root)
    assert _copies(root) == []


def test_a_missing_directory_is_not_a_missing_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / 'gone\nfor good'
    with pytest.raises(AgitmemError, match='for good: no such directory'):
        repo_mod.git('status', cwd=gone)
    with pytest.raises(AgitmemError, match='no such directory'):
        repo_mod.git_each(('status',), cwd=gone)
    monkeypatch.setenv('PATH', str(tmp_path))
    with pytest.raises(AgitmemError, match='git is not installed or not on PATH'):
        repo_mod.git('status', cwd=tmp_path)


def _git_runs(trace: Path) -> list[str]:
    """The git commands (their first word after the options) a GIT_TRACE2_EVENT
    file saw start, in order."""
    runs = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get('event') == 'start':
            words = iter(event['argv'][1:])
            runs.append(next((w for w in words if not (w == '-c' and next(words)) and not w.startswith('-')), ''))
    return runs


@pytest.mark.parametrize('args', [('load',), ('state', 'set', 'next_intent=go on'), ('verify', '--', 'true')])
def test_each_git_read_runs_once(memrepo: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    """The reads begun ahead (status, where the repository is) are begun
    once, however many places ask to begin them, and used: one `status`,
    one `rev-parse`, nothing hashed again on a working tree the tree cache
    knows."""
    (memrepo / 'edited.py').write_text('x = 1\n')
    ok('state', 'set', 'next_intent=warm the tree cache', cwd=memrepo)
    time.sleep(trees.RACY_NS / 1e9)  # the edit is no longer racy: remembered
    ok('state', 'set', 'next_intent=remember the tree', cwd=memrepo)
    trace = tmp_path / 'trace'
    ok(*args, cwd=memrepo, env={'GIT_TRACE2_EVENT': str(trace)})
    runs = _git_runs(trace)
    assert runs.count('status') == 1, runs
    assert runs.count('rev-parse') == 1, runs
    # the memory commit's own plumbing (for-each-ref, then hash-object of the
    # memory files, mktree, commit-tree) is the write, not a read of the tree
    reads = runs[:runs.index('for-each-ref')] if 'for-each-ref' in runs else runs
    assert not {'hash-object', 'cat-file', 'mktree', 'add', 'write-tree'} & set(reads), runs


@pytest.mark.parametrize(('state_later', 'verification_stale', 'diffs'), [
    # verify records its tree as the state's: that tree is diffed against
    # the working tree once, and the change named for both
    (False, 'later.py', 1),
    # a state written after a change: each tree diffed
    (True, 'first.py, later.py', 2),
])
def test_a_state_and_verification_are_diffed_once_a_tree(
        memrepo: Path, tmp_path: Path, state_later: bool, verification_stale: str, diffs: int,
) -> None:
    ok('verify', '--', 'true', cwd=memrepo)
    if state_later:
        (memrepo / 'first.py').write_text('x = 1\n')
        ok('state', 'set', 'next_intent=after the first', cwd=memrepo)
    (memrepo / 'later.py').write_text('y = 2\n')
    trace = tmp_path / 'trace'
    out = ok('load', cwd=memrepo, env={'GIT_TRACE2_EVENT': str(trace)})
    assert 'STALE: the working tree changed since this state was written: later.py' in out
    assert f'STALE verification: files changed since it ran: {verification_stale}' in out
    assert _git_runs(trace).count('diff-tree') == diffs


# the patterns _valid_ref and is_oid were, before they became str methods
# (re is not imported on the hooks' paths)
_BAD_REF_PATTERN = r'(?:\.\.|@\{|//|/\.|\.lock(?:/|$)|[\x00-\x20~^:?*\[\\\x7f])'
_REF_CHARS = st.lists(st.sampled_from([*'ab./@{}~^:?*[\\-_ \t\x00\x7fé', '.lock']), max_size=12).map(''.join)


@given(_REF_CHARS.map(lambda t: f'refs/agitmem/{t}') | st.text(max_size=12))
def test_valid_ref_is_the_pattern_it_was(ref: str) -> None:
    import re
    was = not (re.search(_BAD_REF_PATTERN, ref) or ref.endswith(('/', '.')))
    assert repo_mod._valid_ref(ref) is was


@given(st.text(alphabet='0123456789abcdefABCDEFg\n', min_size=38, max_size=66) | st.text())
def test_is_oid_is_the_pattern_it_was(value: str) -> None:
    import re
    was = re.fullmatch(r'[0-9a-f]{40}(?:[0-9a-f]{24})?', value) is not None
    assert repo_mod.is_oid(value) is was
