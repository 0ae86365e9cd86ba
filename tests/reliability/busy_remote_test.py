"""Many agents, one remote: every note arrives and no push fails.

The remote is a bare repository served on loopback by the test itself
(testing/gitserver.py): `git daemon --enable=receive-pack` over git://, and
`git http-backend` behind a threaded HTTP server.  Each agent is a clone
driven by its own thread, which runs the real CLI (`agitmem note`, then
`agitmem push`) in a loop, so up to N pushes race for the remote's ref
locks at any moment."""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing import gitserver
from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import ok
from testing.util import run
from testing.util import tip
from tests.reliability.conftest import BUSY_REMOTE_FULL
from tests.reliability.conftest import BUSY_REMOTE_SHORT

MAIN = 'refs/agitmem/heads/main'


class Remote:
    """A bare repository under a server's base directory, and its URL."""

    def __init__(self, bare: Path, url: str) -> None:
        self.bare = bare
        self.url = url

    def clone(self, path: Path) -> Path:
        git('clone', '-q', self.url, str(path), cwd=path.parent)
        return path


def _seeded(base: Path) -> Path:
    """remote.git under base, with one code commit on main."""
    bare = gitserver.bare(base)
    seed = base.parent / 'seed'
    seed.mkdir()
    git('init', '-q', cwd=seed)
    (seed / 'README').write_text('hello\n')
    git('add', '.', cwd=seed)
    git('commit', '-q', '-m', 'initial', cwd=seed)
    git('push', '-q', str(bare), 'main', cwd=seed)
    return bare


@pytest.fixture(params=('git', 'http'))
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Remote]:
    base = tmp_path / 'srv'
    base.mkdir()
    bare = _seeded(base)
    serve = gitserver.daemon if request.param == 'git' else gitserver.http
    with serve(base) as url:
        yield Remote(bare, url + bare.name)


@pytest.fixture
def daemon_remote(tmp_path: Path) -> Iterator[Remote]:
    base = tmp_path / 'srv'
    base.mkdir()
    bare = _seeded(base)
    with gitserver.daemon(base) as url:
        yield Remote(bare, url + bare.name)


def _agents(remote: Remote, tmp_path: Path, n: int) -> list[Path]:
    """n clones sharing one memory: the first initialises and pushes it,
    the others fetch it at `agitmem init`."""
    first = remote.clone(tmp_path / 'agent0')
    ok('init', cwd=first)
    ok('push', cwd=first)
    clones = [first]
    for i in range(1, n):
        path = remote.clone(tmp_path / f'agent{i}')
        assert 'fetched the memory of 1 branch(es)' in ok('init', cwd=path)
        clones.append(path)
    return clones


def _race(n: int, body: Callable[[int], list[str]]) -> list[str]:
    """body(i) in n threads started together; their failures, together."""
    barrier = threading.Barrier(n)
    out: list[list[str]] = [[] for _ in range(n)]
    errors: list[BaseException] = []

    def go(i: int) -> None:
        try:
            barrier.wait()
            out[i] = body(i)
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return [line for lines in out for line in lines]


def _note_and_push(clones: list[Path], notes: int) -> list[str]:
    """Each clone: `notes` times note + push; the failed pushes' stderr."""
    def agent(i: int) -> list[str]:
        failed = []
        for j in range(notes):
            ok('note', f'agent {i} note {j}', cwd=clones[i])
            proc = agitmem('push', cwd=clones[i])
            if proc.returncode != 0:
                failed.append(f'agent {i} push {j}: {proc.stderr.strip()}')
        return failed
    return _race(len(clones), agent)


def _remote_notes(remote: Remote, ref: str = MAIN) -> str:
    return git('show', f'{ref}:notes.md', cwd=remote.bare)


def _missing(text: str, agents: range, notes: int) -> list[str]:
    return [
        f'agent {i} note {j}' for i in agents for j in range(notes)
        if f'agent {i} note {j}\n' not in text
    ]


def _assert_fsck_clean(remote: Remote) -> None:
    proc = run('git', 'fsck', '--strict', '--no-dangling', '--no-progress', cwd=remote.bare)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '', '')


def _unpushed(path: Path) -> dict[str, object]:
    status = json.loads(ok('status', '--json', cwd=path))
    return status['unpushed']  # type: ignore[no-any-return]


def _busy(remote: Remote, tmp_path: Path, size: tuple[int, int]) -> None:
    agents, notes = size
    clones = _agents(remote, tmp_path, agents)
    failed = _note_and_push(clones, notes)
    assert failed == []
    assert _missing(_remote_notes(remote), range(agents), notes) == []
    _assert_fsck_clean(remote)
    # every push moved the remote-tracking ref: nothing counts as unpushed
    for path in clones:
        assert _unpushed(path) == {'remote': 'origin', 'commits': 0, 'refs': {}}


def test_busy_remote_every_note_arrives(remote: Remote, tmp_path: Path) -> None:
    _busy(remote, tmp_path, BUSY_REMOTE_SHORT)


@pytest.mark.slow
def test_busy_remote_every_note_arrives_full(remote: Remote, tmp_path: Path) -> None:
    _busy(remote, tmp_path, BUSY_REMOTE_FULL)


def _busy_branches(remote: Remote, tmp_path: Path, size: tuple[int, int]) -> None:
    agents, notes = size
    clones = _agents(remote, tmp_path, agents)
    main_before = tip(remote.bare)
    for i, path in enumerate(clones):
        git('checkout', '-q', '-b', f'agent-{i}', cwd=path)
    failed = _note_and_push(clones, notes)
    assert failed == []
    for i in range(agents):
        text = _remote_notes(remote, f'refs/agitmem/heads/agent-{i}')
        assert _missing(text, range(i, i + 1), notes) == []
        # a branch's memory holds its agent's notes only
        others = range(agents)[:i]
        assert len(_missing(text, others, notes)) == len(others) * notes
    assert tip(remote.bare) == main_before
    _assert_fsck_clean(remote)


def test_busy_remote_each_agent_its_own_branch(remote: Remote, tmp_path: Path) -> None:
    _busy_branches(remote, tmp_path, BUSY_REMOTE_SHORT)


@pytest.mark.slow
def test_busy_remote_each_agent_its_own_branch_full(remote: Remote, tmp_path: Path) -> None:
    _busy_branches(remote, tmp_path, BUSY_REMOTE_FULL)


# -- a refusal is final ------------------------------------------------------------

_DECLINE_MEMORY = '''#!/bin/sh
echo run >> "$GIT_DIR/pre-receive-runs"
while read old new ref; do
    case "$ref" in
    refs/agitmem/*) echo "memory is not accepted here" >&2; exit 1 ;;
    esac
done
exit 0
'''


def _decline_memory(remote: Remote) -> Path:
    """A pre-receive hook on the server that declines memory refs (and
    lets code through); returns the file counting its runs."""
    hook = remote.bare / 'hooks' / 'pre-receive'
    hook.write_text(_DECLINE_MEMORY)
    hook.chmod(0o755)
    return remote.bare / 'pre-receive-runs'


def _runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def test_refusal_is_final_one_line_no_retry(daemon_remote: Remote, tmp_path: Path) -> None:
    a = daemon_remote.clone(tmp_path / 'a')
    ok('init', cwd=a)
    runs = _decline_memory(daemon_remote)
    line = bad('push', cwd=a, code=1)
    assert line == (
        'agitmem: refs/agitmem/heads/main not pushed: origin refused it '
        '(pre-receive hook declined): memory is not accepted here'
    )
    assert _runs(runs) == 1
    assert tip(daemon_remote.bare) is None


def test_unpushed_memory_is_shown_and_the_next_push_carries_it(
        daemon_remote: Remote, tmp_path: Path,
) -> None:
    a = daemon_remote.clone(tmp_path / 'a')
    ok('init', cwd=a)
    ok('push', cwd=a)
    assert 'memory not pushed' not in ok('status', cwd=a)
    runs = _decline_memory(daemon_remote)
    ok('note', 'kept while the server refuses', cwd=a)
    ok('note', 'and another', cwd=a)
    bad('push', cwd=a, code=1)
    assert 'memory not pushed: 2 commits ahead of origin' in ok('status', cwd=a)
    assert _unpushed(a) == {
        'remote': 'origin', 'commits': 2, 'refs': {MAIN: 2},
    }
    runs.unlink()
    (daemon_remote.bare / 'hooks' / 'pre-receive').unlink()
    ok('push', cwd=a)
    assert tip(daemon_remote.bare) == tip(a)
    assert 'kept while the server refuses' in _remote_notes(daemon_remote)
    assert 'memory not pushed' not in ok('status', cwd=a)
    assert _unpushed(a) == {'remote': 'origin', 'commits': 0, 'refs': {}}


@pytest.fixture
def busy_http(tmp_path: Path) -> Iterator[tuple[Remote, gitserver.Busy]]:
    base = tmp_path / 'srv'
    base.mkdir()
    bare = _seeded(base)
    with gitserver.http_busy(base) as (url, busy):
        yield Remote(bare, url + bare.name), busy


def test_push_turned_away_on_the_way_is_retried(
        busy_http: tuple[Remote, gitserver.Busy], tmp_path: Path,
) -> None:
    remote, busy = busy_http
    a = remote.clone(tmp_path / 'a')
    ok('init', cwd=a)
    busy.left = 3
    assert 'pushed memory to origin' in ok('push', cwd=a)
    assert busy.turned_away == 3
    assert tip(remote.bare) == tip(a)


def test_a_server_busy_for_good_is_given_up_bounded(
        busy_http: tuple[Remote, gitserver.Busy], tmp_path: Path,
) -> None:
    remote, busy = busy_http
    a = remote.clone(tmp_path / 'a')
    ok('init', cwd=a)
    busy.left = 1000
    line = bad('push', cwd=a, code=1)
    assert line.startswith('agitmem: origin stayed busy: memory not pushed after 10 attempts in ')
    assert line.endswith(
        '(RPC failed; HTTP 503 curl 22 The requested URL returned error: 503); '
        'it stays here and the next push carries it',
    )
    assert busy.turned_away == 10
    assert tip(remote.bare) is None
    assert 'memory not pushed: 1 commit ahead of origin' in ok('status', cwd=a)


def _pre_push_hook(path: Path) -> None:
    assert 'pre-push' in ok('install', 'git', cwd=path)


def _code_commit(path: Path) -> None:
    (path / 'code.txt').write_text('code\n')
    git('add', 'code.txt', cwd=path)
    git('commit', '-q', '-m', 'code', cwd=path)


def test_pre_push_warns_and_the_code_push_goes_on(daemon_remote: Remote, tmp_path: Path) -> None:
    a = daemon_remote.clone(tmp_path / 'a')
    ok('init', cwd=a)
    _pre_push_hook(a)
    _decline_memory(daemon_remote)
    _code_commit(a)
    proc = run('git', 'push', '-q', 'origin', 'main', cwd=a)
    assert proc.returncode == 0, proc.stderr
    assert tip(daemon_remote.bare, 'refs/heads/main') == tip(a, 'refs/heads/main')
    assert tip(daemon_remote.bare) is None
    warning = [x for x in proc.stderr.splitlines() if x.startswith('agitmem:')]
    assert warning == [
        'agitmem: memory refs not pushed: refs/agitmem/heads/main not pushed: '
        'origin refused it (pre-receive hook declined): memory is not accepted '
        'here (the code push goes on; the next push carries the memory)',
    ]
    assert 'memory not pushed: 1 commit ahead of origin' in ok('status', cwd=a)


def test_pre_push_strict_refuses_the_code_push(daemon_remote: Remote, tmp_path: Path) -> None:
    a = daemon_remote.clone(tmp_path / 'a')
    ok('init', cwd=a)
    (a / '.agent' / 'config.yaml').write_text('push_strict: true\n')
    _pre_push_hook(a)
    _decline_memory(daemon_remote)
    _code_commit(a)
    proc = run('git', 'push', '-q', 'origin', 'main', cwd=a)
    assert proc.returncode != 0
    assert 'agitmem: push refused (push_strict): memory refs not pushed' in proc.stderr
    assert tip(daemon_remote.bare, 'refs/heads/main') != tip(a, 'refs/heads/main')


def test_a_daemon_is_not_taken_for_another_on_its_port(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under pytest-xdist two workers may pick the same free port: the
    daemon that could not bind it is not mistaken for the one that did
    (which serves another worker's repositories)."""
    mine, theirs = tmp_path / 'mine', tmp_path / 'theirs'
    for base in (mine, theirs):
        base.mkdir()
    gitserver.seeded(mine)
    with gitserver.daemon(theirs) as taken:
        picks = [int(taken.rsplit(':', 1)[1].strip('/'))]
        free = gitserver.free_port
        monkeypatch.setattr(gitserver, 'free_port', lambda: picks.pop() if picks else free())
        with gitserver.daemon(mine) as url:
            assert url != taken
            assert 'refs/heads/main' in git('ls-remote', url + 'remote.git', cwd=tmp_path)
