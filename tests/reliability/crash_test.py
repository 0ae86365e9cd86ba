"""SIGKILL `agitmem save`, `rollback` and `archive` at random moments.

After every kill: the memory ref points at a valid commit and git finds
nothing wrong, every memory file is one of the complete versions it could
be (never truncated or half-written), the audit log has only whole lines,
and the next `save` succeeds and leaves memory matching the ref's tip.

The kill lands uniformly in a window near an uninterrupted run's time
(measured first: 0-250 ms here, more under coverage), so it hits start-up,
reading, object writes, the ref update and the file writes alike.  The
window follows the machine: a kill that came after the command had
finished shrinks it, one that caught the command running widens it a
little, and only kills that caught it running count towards the `n` each
test makes (a busy machine that sped up between the timing and the kills
once left 6 of 10 kills after the end).  Only the agitmem process is killed,
as a crash would; a git child it started (`update-ref`) finishes on its
own, and the next command runs once it has.  Set AGITMEM_SEED to replay."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import pytest
import yaml

from testing import util
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from tests.reliability.conftest import KILLS_FULL
from tests.reliability.conftest import KILLS_SHORT

REF = 'refs/agitmem/heads/main'
TEMPLATES = Path(__file__).resolve().parents[2] / 'templates'
_LOG_LINE = re.compile(r'^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] [^:\n]+: .*$')
SEED = int(os.environ.get('AGITMEM_SEED') or time.time_ns() % 1_000_000)


def _exe() -> list[str]:
    exe = util._AGITMEM  # the installed console script, as a user runs it
    return [exe] if exe else [sys.executable, '-m', 'agitmem']


def _group_alive(pgid: int) -> bool:
    """Any live (non-zombie) process left in the process group?"""
    if not os.path.isdir('/proc'):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        if fields[0] != 'Z' and int(fields[2]) == pgid:
            return True
    return False


@dataclass
class Kills:
    """What the kills hit, for the figures."""
    command: str
    total: int = 0
    mid_run: int = 0  # killed while still running (not already finished)
    committed: int = 0  # killed after the ref had moved
    delays: list[float] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f'{self.command}: {self.total} SIGKILLs survived, {self.mid_run} '
            f'mid-run, {self.committed} of those after the ref moved (seed {SEED})'
        )


class Window:
    """Where the kills land: from 0 to `seconds`, moved after each kill."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def after(self, mid_run: bool) -> None:
        # a staircase: about 4 of 5 kills catch the command running, and
        # the window stays a little past its end, so late phases get hit too
        self.seconds *= 1.1 if mid_run else 0.7


def _rounds(kills: Kills, n: int) -> Iterator[int]:
    """Round numbers until `n` kills caught the command running (at most
    4n rounds: a command the kills never catch fails the test)."""
    i = 0
    while kills.mid_run < n and i < 4 * n:
        yield i
        i += 1


def _kill_at_random(args: list[str], cwd: Path, window: Window, rng: random.Random,
                    kills: Kills) -> None:
    before = git('rev-parse', REF, cwd=cwd)
    proc = subprocess.Popen(
        [*_exe(), *args], cwd=cwd, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )
    delay = rng.uniform(0, window.seconds)
    time.sleep(delay)
    still_running = proc.poll() is None
    if still_running:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kills.total += 1
    kills.mid_run += still_running
    kills.delays.append(delay)
    window.after(still_running)
    # a git child (update-ref, write-tree) outlives its killed parent for
    # a moment: the "next command" runs after it, as a user's would
    deadline = time.monotonic() + 30
    while _group_alive(proc.pid):
        assert time.monotonic() < deadline, 'orphaned git child still running'
        time.sleep(0.01)
    kills.committed += still_running and git('rev-parse', REF, cwd=cwd) != before


def _timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    ok(*args, cwd=cwd)
    return time.perf_counter() - start


def _window(args: list[str], cwd: Path, prepare: Callable[[int], None]) -> Window:
    """To start with, 90% of an uninterrupted run's time: the fastest of
    three, each after the same kind of change the kills see (one run
    alone, the first with cold caches, overstated it on a loaded machine)."""
    times = []
    for k in range(3):
        prepare(k)
        times.append(_timed(args, cwd))
    return Window(0.9 * min(times))


class Versions:
    """Every complete version each memory file may hold."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.known: dict[str, set[bytes]] = {}
        self.snapshots: set[str] = set()
        self.states: list[dict[str, object]] = []
        for p in sorted((repo / '.agent' / 'memory').rglob('*')):
            if p.is_file():
                self.add(p.relative_to(repo / '.agent' / 'memory').as_posix(), p.read_bytes())
        for name in ('snapshot.md', 'state.json'):
            self.add(name, (TEMPLATES / name).read_bytes())

    def add(self, name: str, data: bytes) -> None:
        self.known.setdefault(name, set()).add(data)
        if name == 'snapshot.md':
            self.snapshots.add(data.decode())
        if name == 'state.json':
            self.states.append(json.loads(data))

    def write(self, name: str, text: str) -> None:
        self.add(name, text.encode())
        mem(self.repo, name).write_text(text)

    def assert_complete(self, where: str) -> None:
        root = self.repo / '.agent' / 'memory'
        for p in sorted(root.rglob('*')):
            rel = p.relative_to(root).as_posix()
            if p.is_dir() or p.name.startswith('.'):
                continue  # dot-names: atomic-write temp files, ignored by agitmem
            data = p.read_bytes()
            if rel.startswith('archive/'):
                self._assert_archive(rel, data.decode(), where)
            else:
                assert data in self.known.get(rel, set()), (
                    f'{where}: {rel} is no complete version: {data[:200]!r}'
                )

    def _assert_archive(self, rel: str, text: str, where: str) -> None:
        """snapshot with its state as front matter, both complete"""
        assert text.startswith('---\n'), (where, rel, text[:200])
        front, sep, snap = text[4:].partition('---\n\n')
        assert sep, (where, rel, text[:200])
        assert snap in self.snapshots, (where, rel, snap[:200])
        assert yaml.safe_load(front) in self.states, (where, rel, front[:200])


def _assert_intact(repo: Path, versions: Versions, where: str) -> None:
    proc = run('git', 'cat-file', '-e', f'{REF}^{{commit}}', cwd=repo)
    assert proc.returncode == 0, (where, proc.stderr)
    fsck = run('git', 'fsck', '--strict', '--no-dangling', '--no-progress', cwd=repo)
    assert fsck.returncode == 0, (where, fsck.stdout, fsck.stderr)
    assert fsck.stdout.strip() == '' and fsck.stderr.strip() == '', (where, fsck.stdout, fsck.stderr)
    versions.assert_complete(where)
    base = repo / '.git' / 'agitmem' / 'base'
    if base.exists():
        # "<commit> <memory ref>", written whole or not at all
        text = base.read_text().strip()
        assert re.fullmatch(r'[0-9a-f]{40} refs/agitmem/heads/main', text), (where, text)
        sha = text.split()[0]
        assert run('git', 'cat-file', '-e', f'{sha}^{{commit}}', cwd=repo).returncode == 0
    log = repo / '.agent' / 'log' / 'memory.log'
    if log.exists():
        text = log.read_text()
        assert text == '' or text.endswith('\n'), (where, text[-200:])
        for line in text.splitlines():
            assert _LOG_LINE.match(line), (where, line)


def _assert_next_save_works(repo: Path, where: str) -> None:
    proc = util.agitmem('save', cwd=repo)
    assert proc.returncode == 0, (where, proc.stdout, proc.stderr)
    assert proc.stderr == '', (where, proc.stderr)
    status = json.loads(ok('status', '--json', cwd=repo))
    assert status['changed'] == [], (where, status)
    tip = git('rev-parse', REF, cwd=repo).strip()
    assert status['tip'] == tip


def _report(kills: Kills, n: int) -> None:
    print(f'\n{kills}')
    # kills that land after the command finished prove nothing
    assert kills.mid_run >= n, kills


@pytest.mark.parametrize('n', [
    pytest.param(KILLS_SHORT, id='short'),
    pytest.param(KILLS_FULL, id='full', marks=pytest.mark.slow),
])
def test_kill_save(memrepo: Path, n: int) -> None:
    rng = random.Random(SEED)
    versions = Versions(memrepo)
    window = _window(['save'], memrepo, lambda k: versions.write('notes.md', f'- warm up {k}\n'))
    kills = Kills('save')
    for i in _rounds(kills, n):
        where = f'save kill {i} (seed {SEED})'
        versions.write('notes.md', ''.join(f'- note {j} of round {i}\n' for j in range(50)))
        versions.write('snapshot.md', f'## Goal\nround {i}\n## In progress\n- step {i}\n')
        versions.write('state.json', json.dumps({'current_goal': f'round {i}', 'step': i}) + '\n')
        _kill_at_random(['save', '-m', f'round {i}'], memrepo, window, rng, kills)
        _assert_intact(memrepo, versions, where)
        _assert_next_save_works(memrepo, where)
        assert mem(memrepo, 'snapshot.md').read_text().endswith(f'- step {i}\n')
    _report(kills, n)


@pytest.mark.parametrize('n', [
    pytest.param(KILLS_SHORT, id='short'),
    pytest.param(KILLS_FULL, id='full', marks=pytest.mark.slow),
])
def test_kill_rollback(memrepo: Path, n: int) -> None:
    rng = random.Random(SEED + 1)
    versions = Versions(memrepo)

    def prepare(k: int) -> None:
        versions.write('notes.md', f'- warm up {k}\n')
        ok('save', cwd=memrepo)
        versions.write('notes.md', f'- warm up {k} unsaved\n')

    window = _window(['rollback'], memrepo, prepare)
    kills = Kills('rollback')
    for i in _rounds(kills, n):
        where = f'rollback kill {i} (seed {SEED + 1})'
        versions.write('notes.md', f'- saved {i}\n')
        versions.write('state.json', json.dumps({'current_goal': f'saved {i}', 'step': i}) + '\n')
        ok('save', cwd=memrepo)
        # an unsaved edit too: rollback saves it first
        versions.write('notes.md', f'- unsaved {i}\n')
        versions.write('tattoo.md', f'- rule {i}\n')
        _kill_at_random(['rollback'], memrepo, window, rng, kills)
        _assert_intact(memrepo, versions, where)
        _assert_next_save_works(memrepo, where)
        # the unsaved edit is never lost: it is on disk or in history
        patch = git('log', '-p', '--format=', REF, cwd=memrepo)
        assert f'+- unsaved {i}\n' in patch or mem(memrepo, 'notes.md').read_text() == f'- unsaved {i}\n'
    _report(kills, n)


@pytest.mark.parametrize('n', [
    pytest.param(KILLS_SHORT, id='short'),
    pytest.param(KILLS_FULL, id='full', marks=pytest.mark.slow),
])
def test_kill_archive(memrepo: Path, n: int) -> None:
    rng = random.Random(SEED + 2)
    versions = Versions(memrepo)

    def fill(i: int) -> None:
        versions.write('snapshot.md', f'## Goal\ngoal {i}\n## Done\n- part {i}\n')
        versions.write('state.json', json.dumps({'current_goal': f'goal {i}', 'step': i + 1}) + '\n')

    window = _window(['archive'], memrepo, lambda k: fill(-1))
    versions.assert_complete('after the timed archive')
    kills = Kills('archive')
    for i in _rounds(kills, n):
        where = f'archive kill {i} (seed {SEED + 2})'
        fill(i)
        _kill_at_random(['archive'], memrepo, window, rng, kills)
        _assert_intact(memrepo, versions, where)
        _assert_next_save_works(memrepo, where)
    archived = git('ls-tree', '-r', '--name-only', REF, 'archive', cwd=memrepo).split()
    assert len(archived) >= 1
    _report(kills, n)


def test_stale_lock_of_a_killed_writer_does_not_block(memrepo: Path) -> None:
    """The writers' lock is an flock on .git/agitmem/lock: the kernel drops
    it when its holder dies, so the file left behind blocks nobody."""
    lock = memrepo / '.git' / 'agitmem' / 'lock'
    holder = subprocess.Popen(
        [sys.executable, '-c',
         'import sys, time, filelock\n'
         f'lock = filelock.FileLock({str(lock)!r})\n'
         'lock.acquire()\n'
         'print("held", flush=True)\n'
         'time.sleep(600)\n'],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == 'held\n'
        mem(memrepo, 'notes.md').write_text('- while locked\n')
        # while the holder lives, a save waits for it
        waiting = subprocess.Popen(
            [*_exe(), 'save'], cwd=memrepo, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )
        time.sleep(1.5)
        assert waiting.poll() is None, waiting.communicate()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        out, err = waiting.communicate(timeout=30)
        assert waiting.returncode == 0, (out, err)
        assert out.startswith('saved ')
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    # the lock file stays, and blocks nothing
    assert lock.exists()
    mem(memrepo, 'notes.md').write_text('- after the kill\n')
    start = time.perf_counter()
    assert ok('save', cwd=memrepo).startswith('saved ')
    assert time.perf_counter() - start < 10


def test_leftover_lock_file_without_holder_does_not_block(memrepo: Path) -> None:
    lock = memrepo / '.git' / 'agitmem' / 'lock'
    lock.parent.mkdir(exist_ok=True)
    lock.write_text('12345\n')  # a lock file nobody holds
    mem(memrepo, 'notes.md').write_text('- x\n')
    assert ok('save', cwd=memrepo).startswith('saved ')
