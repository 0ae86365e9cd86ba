"""How agitmem scales with memory history (issue 5, "Speed and scale").

    python bench/history.py [--commits 10000] [--saves 1000] [--reps 15]

1. `save`, `log -n 20` and `rollback` on a memory ref with 10,000 commits
   of history against the same on a ref with one: the ratio of medians
   (target: <= 1.2x).  Timed twice: through the CLI (what a hook pays,
   interpreter start included) and in-process (agitmem's own work only).
2. 1,000 saves in a fresh repository: loose objects afterwards, and git's
   own `gc.auto` estimate of them (it samples objects/17/), against
   gc.auto's default threshold of 6,700.

The 10,000-commit history is written with `git fast-import` (one pack, as
a repository with that much history would be after git's gc).  Prints
numbers; asserts nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agitmem.porcelain import context
from agitmem.commands.log import log
from agitmem.commands.rollback import rollback
from agitmem.porcelain import write

GC_AUTO = 6700
REF = 'refs/agitmem/heads/main'
ENV = {
    'GIT_AUTHOR_NAME': 'bench', 'GIT_AUTHOR_EMAIL': 'bench@example.com',
    'GIT_COMMITTER_NAME': 'bench', 'GIT_COMMITTER_EMAIL': 'bench@example.com',
    'GIT_CONFIG_NOSYSTEM': '1',
}


def _agitmem() -> list[str]:
    exe = shutil.which('agitmem', path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, '-m', 'agitmem']


def run(*cmd: str, cwd: Path, stdin: str | None = None) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, input=stdin, capture_output=True, text=True,
        env={**os.environ, **ENV},
    )
    if proc.returncode != 0:
        raise SystemExit(f'{" ".join(cmd)}: {proc.stderr.strip()}')
    return proc.stdout


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    run('git', 'init', '-q', '-b', 'main', cwd=path)
    (path / 'app.py').write_text('print(1)\n')
    run('git', 'add', '.', cwd=path)
    run('git', 'commit', '-q', '-m', 'code', cwd=path)
    run(*_agitmem(), 'init', cwd=path)
    return path


def grow(repo: Path, commits: int) -> None:
    """commits more memory commits on REF (each changes notes.md), written
    by git fast-import into one pack; the worktree's memory then matches
    the new tip."""
    head = run('git', 'rev-parse', 'HEAD', cwd=repo).strip()
    tip = run('git', 'rev-parse', REF, cwd=repo).strip()
    files = {
        p.name: p.read_bytes()
        for p in sorted((repo / '.agent' / 'memory').iterdir()) if p.is_file()
    }
    files['config.yaml'] = (repo / '.agent' / 'config.yaml').read_bytes()
    out = io.BytesIO()
    when = int(time.time()) - commits * 60
    notes = files['notes.md']
    for i in range(commits):
        notes += f'- 2026-01-01 00:00 note {i}\n'.encode()
        if len(notes) > 64_000:
            notes = files['notes.md']
        msg = (
            f'save: notes.md\n\nAgitmem-Event: save\nCode-Branch: main\n'
            f'Code-Head: {head}\n'
        ).encode()
        out.write(f'commit {REF}\n'.encode())
        out.write(f'committer bench <bench@example.com> {when + i * 60} +0000\n'.encode())
        out.write(f'data {len(msg)}\n'.encode() + msg)
        if i == 0:
            out.write(f'from {tip}\n'.encode())
        for name, data in files.items():
            if name == 'notes.md':
                data = notes
            elif i:
                continue
            out.write(f'M 100644 inline {name}\ndata {len(data)}\n'.encode() + data + b'\n')
    _import(repo, out.getvalue(), notes)


def _import(repo: Path, stream: bytes, notes: bytes) -> None:
    """Feed a fast-import stream of memory commits to REF; the worktree's
    notes.md and memory base then match the new tip."""
    subprocess.run(
        ('git', 'fast-import', '--quiet', '--force'), cwd=repo,
        input=stream, check=True, env={**os.environ, **ENV},
    )
    (repo / '.agent' / 'memory' / 'notes.md').write_bytes(notes)
    new_tip = run('git', 'rev-parse', REF, cwd=repo).strip()
    (repo / '.git' / 'agitmem' / 'base').write_text(f'{new_tip}\n')


def grow_heavy(repo: Path, commits: int = 400, kb: int = 200) -> None:
    """commits memory commits on REF each rewriting a notes.md of about kb
    KB in place (20 lines changed, none appended: every commit costs
    recall a large blob), by git fast-import; the worktree's memory then
    matches the new tip.  The history after which a hook's RELATED search
    once took 12-16 s."""
    tip = run('git', 'rev-parse', REF, cwd=repo).strip()
    lines = [f'- note {i} about the loader, the index and the build' for i in range(kb * 1024 // 52)]
    out = io.BytesIO()
    when = int(time.time()) - commits * 60
    msg = b'save: notes.md\n\nAgitmem-Event: save\nCode-Branch: main\n'
    for c in range(commits):
        for j in range(20):
            at = (c * 37 + j * 101) % len(lines)
            lines[at] = f'- note {at} revised in step {c}: the loader and the index'
        notes = ('\n'.join(lines) + '\n').encode()
        out.write(f'commit {REF}\n'.encode())
        out.write(f'committer bench <bench@example.com> {when + c * 60} +0000\n'.encode())
        out.write(f'data {len(msg)}\n'.encode() + msg)
        if c == 0:
            out.write(f'from {tip}\n'.encode())
        out.write(f'M 100644 inline notes.md\ndata {len(notes)}\n'.encode() + notes + b'\n')
    _import(repo, out.getvalue(), notes)


def median_time(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Bench:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.i = 0

    def _touch(self) -> None:
        self.i += 1
        notes = self.repo / '.agent' / 'memory' / 'notes.md'
        with open(notes, 'a') as f:
            f.write(f'- 2026-01-02 00:00 bench {self.i}\n')

    # through the CLI
    def cli_save(self) -> None:
        self._touch()
        run(*_agitmem(), 'save', cwd=self.repo)

    def cli_log(self) -> None:
        run(*_agitmem(), 'log', '-n', '20', cwd=self.repo)

    def cli_rollback(self) -> None:
        run(*_agitmem(), 'rollback', cwd=self.repo)

    # in-process
    def save(self) -> None:
        self._touch()
        write.save(context.get(cwd=str(self.repo)))

    def log(self) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            log(context.get(cwd=str(self.repo)), 20, False)

    def rollback(self) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            rollback(context.get(cwd=str(self.repo)), None, None)


def loose_objects(repo: Path) -> tuple[int, int]:
    """(loose objects, git's gc.auto estimate: objects in 17/ times 256)."""
    objects = repo / '.git' / 'objects'
    total = sum(
        len(os.listdir(d)) for d in objects.iterdir()
        if len(d.name) == 2 and d.is_dir()
    )
    sample = objects / '17'
    estimate = len(os.listdir(sample)) * 256 if sample.is_dir() else 0
    return total, estimate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--commits', type=int, default=10_000)
    parser.add_argument('--saves', type=int, default=1000)
    parser.add_argument('--reps', type=int, default=15)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix='agitmem-bench-') as tmp:
        os.environ['HOME'] = tmp
        os.environ['AGITMEM_HOME'] = os.path.join(tmp, '.agent')
        os.environ.update(ENV)
        small = new_repo(Path(tmp, 'one'))
        big = new_repo(Path(tmp, 'big'))
        start = time.perf_counter()
        grow(big, args.commits)
        built = time.perf_counter() - start
        depth = int(run('git', 'rev-list', '--count', REF, cwd=big))
        print(f'history: {depth:,} memory commits built in {built:.1f}s '
              f'(git fast-import); the small repository has 1')
        print()
        print(f'{"operation":28} {"1 commit":>10} {f"{depth:,} commits":>16} {"ratio":>7}')
        for label, name in (
                ('save (CLI)', 'cli_save'), ('log -n 20 (CLI)', 'cli_log'),
                ('rollback (CLI)', 'cli_rollback'),
                ('save (in-process)', 'save'), ('log -n 20 (in-process)', 'log'),
                ('rollback (in-process)', 'rollback'),
        ):
            fns = [getattr(Bench(r), name) for r in (small, big)]
            for fn in fns:  # warm up
                fn()
            a, b = (median_time(fn, args.reps) for fn in fns)
            ratio = b / a
            mark = '' if ratio <= 1.2 else '  (over 1.2x)'
            print(f'{label:28} {a * 1000:8.1f}ms {b * 1000:14.1f}ms {ratio:6.2f}x{mark}')

        fresh = new_repo(Path(tmp, 'fresh'))
        before = loose_objects(fresh)[0]
        bench = Bench(fresh)
        start = time.perf_counter()
        for _ in range(args.saves):
            bench.save()
        took = time.perf_counter() - start
        loose, estimate = loose_objects(fresh)
        print()
        print(
            f'{args.saves:,} saves (in-process, {took:.1f}s): {loose - before:,} '
            f'new loose objects, {loose:,} in all; git\'s gc.auto estimate '
            f'{estimate:,} (threshold {GC_AUTO:,}): '
            f'{"under" if estimate <= GC_AUTO and loose <= GC_AUTO else "OVER"}',
        )
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
