"""A remote that stalls never hangs agitmem: every fetch and push has a
wall-clock bound (`network_timeout`, or $AGITMEM_NETWORK_TIMEOUT), past
which git and everything it started are stopped.

The stalls are real: a bare repository whose pre-receive hook hangs when
memory refs arrive (pushed to over file://, so the hook runs under the
pushing git), a loopback server that accepts connections and never
answers (git://), and an upload-pack that never speaks."""
from __future__ import annotations

import contextlib
import time
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

MAIN = 'refs/agitmem/heads/main'
BOUND = 2  # seconds: $AGITMEM_NETWORK_TIMEOUT in these tests
FAST = {'AGITMEM_NETWORK_TIMEOUT': str(BOUND)}
# what a bounded call may take beyond its bound on a loaded machine
SLACK = 20.0


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """A bare repository with one code commit on main."""
    return gitserver.seeded(tmp_path)[0]


@pytest.fixture
def clone(bare: Path, tmp_path: Path) -> Path:
    """An initialised clone of bare, with the git hooks installed."""
    path = tmp_path / 'a'
    git('clone', '-q', f'file://{bare}', str(path), cwd=tmp_path)
    ok('init', cwd=path)
    assert 'pre-push' in ok('install', 'git', cwd=path)
    return path


@pytest.fixture
def silent() -> Iterator[str]:
    with gitserver.silent() as url:
        yield url + 'remote.git'


def _code_commit(path: Path) -> str:
    (path / 'code.txt').write_text('code\n')
    git('add', 'code.txt', cwd=path)
    git('commit', '-q', '-m', 'code', cwd=path)
    return git('rev-parse', 'HEAD', cwd=path).strip()


def _warnings(stderr: str) -> list[str]:
    return [x for x in stderr.splitlines() if x.startswith('agitmem:')]


def _timed(*cmd: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, str, int]:
    start = time.monotonic()
    proc = run(*cmd, cwd=cwd, env=env)
    assert 'Traceback' not in proc.stderr, proc.stderr
    return time.monotonic() - start, proc.stderr, proc.returncode


def test_pre_push_abandons_a_stalled_memory_push_and_the_code_lands(
        bare: Path, clone: Path,
) -> None:
    hung = gitserver.hang_on_memory(bare)
    head = _code_commit(clone)
    took, err, code = _timed('git', 'push', '-q', 'origin', 'main', cwd=clone, env=FAST)
    assert code == 0, err
    assert BOUND <= took < BOUND + SLACK
    assert tip(bare, 'refs/heads/main') == head
    assert tip(bare) is None
    assert _warnings(err) == [(
        f'agitmem: memory refs not pushed: git push origin gave no answer in '
        f'{BOUND}s and was stopped (network_timeout in .agent/config.yaml sets '
        f'the bound) (the code push goes on; the next push carries the memory)'
    )]
    # the hook hung under the pushing git: stopped with it, not left behind
    assert not gitserver.alive(int(hung.read_text()))
    assert 'memory not pushed: 1 commit ahead of origin' in ok('status', cwd=clone)
    # the remote answers again: the next push carries the memory
    (bare / 'hooks' / 'pre-receive').unlink()
    ok('push', cwd=clone)
    assert tip(bare) == tip(clone)


def test_push_strict_refuses_when_the_memory_push_stalls(bare: Path, clone: Path) -> None:
    # the bound from config.yaml this time
    (clone / '.agent' / 'config.yaml').write_text(f'push_strict: true\nnetwork_timeout: {BOUND}\n')
    gitserver.hang_on_memory(bare)
    before = tip(bare, 'refs/heads/main')
    _code_commit(clone)
    took, err, code = _timed('git', 'push', '-q', 'origin', 'main', cwd=clone)
    assert code != 0
    assert took < BOUND + SLACK
    assert _warnings(err) == [(
        f'agitmem: push refused (push_strict): memory refs not pushed: git push '
        f'origin gave no answer in {BOUND}s and was stopped (network_timeout in '
        f'.agent/config.yaml sets the bound)'
    )]
    assert tip(bare, 'refs/heads/main') == before


@pytest.mark.parametrize('transport', ['file', 'git'])
def test_agitmem_push_to_a_stalled_remote_is_one_line_exit_1(
        bare: Path, clone: Path, transport: str,
) -> None:
    gitserver.hang_on_memory(bare)
    with contextlib.ExitStack() as stack:
        if transport == 'git':  # over the network: git daemon on loopback
            url = stack.enter_context(gitserver.daemon(bare.parent))
            git('remote', 'set-url', 'origin', url + bare.name, cwd=clone)
        start = time.monotonic()
        line = bad('push', cwd=clone, code=1, env=FAST)
    assert time.monotonic() - start < BOUND + SLACK
    assert line == (
        f'agitmem: git push origin gave no answer in {BOUND}s and was stopped '
        f'(network_timeout in .agent/config.yaml sets the bound)'
    )
    assert tip(bare) is None


@pytest.mark.parametrize('cmd', ['fetch', 'pull', 'push'])
def test_a_host_that_never_answers(clone: Path, silent: str, cmd: str) -> None:
    git('remote', 'set-url', 'origin', silent, cwd=clone)
    start = time.monotonic()
    line = bad(cmd, cwd=clone, code=1 if cmd == 'push' else 2, env=FAST)
    assert time.monotonic() - start < BOUND + SLACK
    verb = 'push' if cmd == 'push' else 'fetch'
    assert line == (
        f'agitmem: git {verb} origin gave no answer in {BOUND}s and was stopped '
        f'(network_timeout in .agent/config.yaml sets the bound)'
    )


def test_init_in_a_clone_whose_remote_hangs_goes_on(bare: Path, tmp_path: Path, silent: str) -> None:
    path = tmp_path / 'b'
    git('clone', '-q', f'file://{bare}', str(path), cwd=tmp_path)
    git('remote', 'set-url', 'origin', silent, cwd=path)
    proc = agitmem('init', cwd=path, env=FAST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [(
        f'agitmem: no memory fetched from origin: git fetch origin gave no '
        f'answer in {BOUND}s and was stopped (network_timeout in '
        f'.agent/config.yaml sets the bound)'
    )]
    assert (path / '.agent' / 'memory' / 'tattoo.md').is_file()
    assert tip(path) is not None

