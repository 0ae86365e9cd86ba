"""The suite's warm agitmem (testing/zygote.py) gives what the console
script gives, and steps aside where it could not."""
from __future__ import annotations

import json
import sys
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest

from testing import zygote
from testing.mcp_client import McpClient
from testing.util import agitmem_argv
from testing.util import ok
from testing.util import started


# one server for the module, as the suite has one per worker: every test
# here ends with it serving (a run it timed out included)
@pytest.fixture(scope='module')
def z() -> Iterator[zygote.Zygote]:
    with zygote.Zygote(agitmem_argv()[0]) as warm:
        yield warm


@pytest.mark.parametrize('argv, payload', [
    (('--version',), None),
    (('no-such-command',), None),
    (('load',), None),
    (('state', 'set', 'current_goal=caf\udce9 goal'), None),
    (('hook', 'prompt', '--agent', 'claude'), '{"prompt": "x\udcff", "session_id": "s"}'),
    (('hook', 'post-edit', '--agent', 'claude'), '{not json'),
])
def test_a_warm_run_gives_what_the_console_script_gives(
        memrepo: Path, z: zygote.Zygote, argv: tuple[str, ...], payload: str | None,
) -> None:
    warm = z.try_run(*argv, cwd=memrepo, input=payload)
    cold = started(*argv, cwd=memrepo, input=payload)
    assert warm is not None
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_a_run_that_would_start_otherwise_is_not_warm(memrepo: Path, z: zygote.Zygote) -> None:
    for env in ({'PYTHONUTF8': '1'}, {'LC_ALL': 'C'}, {'PYTHONPATH': '/elsewhere'}):
        assert z.try_run('--version', cwd=memrepo, env=env) is None
    assert z.try_run('--version', cwd=memrepo / 'gone') is None
    assert z.try_run('--version', cwd=memrepo, env={'HOME': str(memrepo)}) is not None


def test_a_second_thread_starts_its_own_process(memrepo: Path, z: zygote.Zygote) -> None:
    """Two agents at once stay two processes at once."""
    started, release = memrepo / 'started', memrepo / 'release'
    # the run holds the zygote until this thread has asked for it
    slow = threading.Thread(target=z.run, args=(
        'verify', '--', 'sh', '-c',
        f'touch {started}; while [ ! -e {release} ]; do sleep 0.01; done',
    ), kwargs={'cwd': memrepo})
    slow.start()
    while not started.exists():
        time.sleep(0.01)
    try:
        assert z.try_run('--version', cwd=memrepo) is None
    finally:
        release.touch()
    slow.join()
    assert z.try_run('--version', cwd=memrepo) is not None


def test_the_run_ends_as_the_program_does(memrepo: Path, z: zygote.Zygote) -> None:
    """Memory written by a warm run is there for a cold one, and the
    other way round."""
    done = z.try_run('state', 'set', 'next_intent=warm', cwd=memrepo)
    assert done is not None and done.returncode == 0, done
    assert 'warm' in ok('state', 'show', '--json', cwd=memrepo)
    assert json.loads(started('state', 'show', '--json', cwd=memrepo).stdout)


def test_bytes_in_and_out_and_a_timeout(memrepo: Path, z: zygote.Zygote) -> None:
    done = z.try_run_bytes(['hook', 'post-edit', '--agent', 'claude'], cwd=memrepo, stdin=b'\xff\xfe{')
    assert done is not None and done.returncode == 0 and isinstance(done.stdout, bytes)
    started_at = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        z.try_run_bytes(['verify', '--', 'sleep', '30'], cwd=memrepo, timeout=1)
    assert time.monotonic() - started_at < 20
    # the zygote serves the next run
    again = z.try_run_bytes(['--version'], cwd=memrepo)
    assert again is not None and again.returncode == 0


@pytest.mark.parametrize('preloaded', [True, False])
def test_a_warm_mcp_server_answers_as_a_started_one(
        memrepo: Path, z: zygote.Zygote, preloaded: bool,
) -> None:
    """Through the zygote that serves `agitmem mcp` (the SDK imported
    before the fork), and through the one that serves every other
    command (the run imports it)."""
    with zygote.Zygote(agitmem_argv()[0], mcp=True) if preloaded else nullcontext(z) as server:
        _same_answers_as_a_started_server(server, memrepo)


def _same_answers_as_a_started_server(z: zygote.Zygote, memrepo: Path) -> None:
    warm = z.try_popen(['mcp'], cwd=memrepo)
    assert warm is not None
    # `python -m agitmem` is not the console script: always its own process
    cold = subprocess.Popen(
        [sys.executable, '-m', 'agitmem', 'mcp'], cwd=memrepo, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding='utf-8',
    )
    answers = []
    for proc in (warm, cold):
        with McpClient.over(proc) as client:
            client.initialize()
            answers.append(([t['name'] for t in client.tools()], client.call('state_get', {})))
    assert answers[0] == answers[1]
    assert warm.returncode == cold.returncode == 0
