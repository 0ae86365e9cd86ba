"""Many agents, one remote (issue 15): how long until N agents' notes are
all on the remote, against plain `git push` in the same run.

    python bench/remote.py [--agents 2,4,8,16] [--runs 3] [--keep]

The remote is a bare repository served over git:// by `git daemon
--enable=receive-pack` on loopback (testing/gitserver.py).  For each N:

  agitmem     N clones sharing one memory ref each run `agitmem note` then
              `agitmem push`, all started at once: the wall time until the
              last has exited, every note checked on the remote's ref (the
              pushes race for one ref lock: fetch, merge, retry)
  plain git   N clones each commit one small file and `git push` it to a
              branch of its own, all at once (no race: the transport alone)

Runs are interleaved (agitmem N=2, plain N=2, agitmem N=4, ...) and the
median of each is shown with the ratio.  Prints numbers; asserts nothing
(a failed push or a missing note is reported under the table)."""
from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _common as c  # noqa: E402
from testing import gitserver  # noqa: E402

MEMORY = 'refs/agitmem/heads/main'


def _agents(url: str, work: Path, n: int) -> list[Path]:
    """n clones of the remote sharing one memory: the first initialises
    and pushes it, the others fetch it at init."""
    clones = []
    for i in range(n):
        path = work / f'agent{i}'
        c.sh('git', 'clone', '-q', url, str(path), cwd=work)
        c.sh(*c.AGITMEM, 'init', cwd=path)
        if i == 0:
            c.sh(*c.AGITMEM, 'push', cwd=path)
        clones.append(path)
    return clones


def _at_once(cmds: list[tuple[list[str], Path]]) -> tuple[float, list[str]]:
    """Start every command together; the wall time until the last exits,
    and the stderr of those that failed."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            cmd, cwd=cwd, env=c.env(), stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
        )
        for cmd, cwd in cmds
    ]
    errs = [p.communicate()[1] for p in procs]
    took = time.perf_counter() - start
    failed = [e.strip() for p, e in zip(procs, errs) if p.returncode != 0]
    return took, failed


def _agitmem_round(clones: list[Path], tag: str) -> list[tuple[list[str], Path]]:
    agitmem = shlex.join(c.AGITMEM)
    return [
        (['sh', '-c', f'{agitmem} note "{tag} agent {i}" && exec {agitmem} push'], path)
        for i, path in enumerate(clones)
    ]


def _plain_round(clones: list[Path], tag: str) -> list[tuple[list[str], Path]]:
    return [
        ([
            'sh', '-c',
            f'echo "{tag}" >> plain-{i}.txt && git add plain-{i}.txt && '
            f'git commit -q -m "{tag}" && exec git push -q origin HEAD:refs/heads/{tag.replace(" ", "-")}-{i}',
        ], path)
        for i, path in enumerate(clones)
    ]


def _missing(bare: Path, tag: str, n: int) -> int:
    notes = c.sh('git', 'show', f'{MEMORY}:notes.md', cwd=bare)
    return sum(1 for i in range(n) if f'{tag} agent {i}\n' not in notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--agents', default='2,4,8,16', help='comma-separated N (default 2,4,8,16)')
    parser.add_argument('--runs', type=int, default=3, help='runs per figure (default 3)')
    parser.add_argument('--keep', action='store_true', help='keep the scratch repositories')
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.agents.split(',')]

    work = Path(tempfile.mkdtemp(prefix='agitmem-bench-remote-'))
    os.environ.update({
        'HOME': str(work), 'AGITMEM_HOME': str(work / '.agent'),
        'GIT_CONFIG_NOSYSTEM': '1',
    })
    os.environ.pop('PYTHONDONTWRITEBYTECODE', None)
    (work / '.gitconfig').write_text('[init]\n\tdefaultBranch = main\n')
    base = work / 'srv'
    base.mkdir()
    bare = gitserver.bare(base)
    seed = work / 'seed'
    seed.mkdir()
    c.sh('git', 'init', '-q', cwd=seed)
    (seed / 'README').write_text('hello\n')
    c.sh('git', 'add', '.', cwd=seed)
    c.sh('git', 'commit', '-q', '-m', 'initial', cwd=seed)
    c.sh('git', 'push', '-q', str(bare), 'main', cwd=seed)
    times: dict[tuple[str, int], list[float]] = {}
    problems: list[str] = []
    try:
        with gitserver.daemon(base) as url:
            print(f'bench: {sum(sizes)} clones, {len(sizes) * 2} figures, {args.runs} runs each ...', flush=True)
            groups = {}
            for n in sizes:
                (work / f'n{n}').mkdir()
                groups[n] = _agents(url + bare.name, work / f'n{n}', n)
            start = time.perf_counter()
            for run in range(args.runs):
                for n in sizes:
                    tag = f'run {run} n {n}'
                    for kind, cmds in (
                            ('agitmem', _agitmem_round(groups[n], tag)),
                            ('plain', _plain_round(groups[n], tag)),
                    ):
                        took, failed = _at_once(cmds)
                        times.setdefault((kind, n), []).append(took)
                        problems += [f'{kind} N={n}: {f.splitlines()[-1]}' for f in failed]
                    lost = _missing(bare, tag, n)
                    if lost:
                        problems.append(f'agitmem N={n} run {run}: {lost} notes not on the remote')
            took_all = time.perf_counter() - start
        fsck = subprocess.run(
            ('git', 'fsck', '--no-dangling', '--no-progress'), cwd=bare,
            capture_output=True, text=True,
        )
        if fsck.returncode != 0 or fsck.stdout or fsck.stderr:
            problems.append(f'git fsck on the remote: {(fsck.stdout + fsck.stderr).strip()}')
        git_version = c.sh('git', '--version', cwd=work).strip()
        print()
        print(
            f'agitmem bench remote (git:// on loopback; median of {args.runs} runs; '
            f'{platform.python_implementation()} {platform.python_version()}, '
            f'{git_version}, {os.cpu_count()} CPUs; timed in {took_all:.0f}s)',
        )
        print(f'{"agents":>6}  {"agitmem note+push":>17}  {"plain git push":>14}  {"ratio":>6}')
        for n in sizes:
            mine = statistics.median(times[('agitmem', n)])
            plain = statistics.median(times[('plain', n)])
            print(f'{n:>6}  {mine:16.2f}s  {plain:13.2f}s  {mine / plain:5.1f}x')
        for p in problems:
            print(f'note: {p}')
        if not problems:
            print('note: every push succeeded, every note is on the remote, git fsck is clean')
    finally:
        if args.keep:
            print(f'scratch repositories kept in {work}')
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
