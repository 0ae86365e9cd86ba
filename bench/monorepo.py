"""agitmem at monorepo scale, against `git status --porcelain` in the same round.

    python bench/monorepo.py [--runs N] [--files N ...] [--fresh]

Issue 23's figures: on repositories of 20,000 and 100,000 tracked files (one
commit, four directory levels), with and without `core.untrackedCache`, and
agitmem's git hooks installed:

- `agitmem load`, `state set`, `verify -- true` and `hook session-start`,
  each against `git status --porcelain` on the same repository (target
  <= 1.2x): what knowing the working tree's state costs;
- `git commit` of a one-file change with agitmem's hooks, less the same
  commit with no hooks (`core.hooksPath=/dev/null`), against `python -c
  pass` (target <= 5x): what the commit hooks add; and the same for three
  hooks that only `exit 0`, what any hooks add (git reads the whole index
  again after a pre-commit hook).

The repositories are built once in the temp dir and reused (--fresh
rebuilds them); each has a one-line change in the working tree, as during
real work, so the working tree differs from HEAD."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

# a one-file change committed on every run: the file grows by a line
COMMIT = (
    'printf "%s\\n" "$$" >> churn.txt && git add churn.txt && '
    'exec git {opts} commit -q -m "bench: churn $$"'
)
FIGURES = (
    ('load', ['load'], None),
    ('state-set', ['state', 'set', 'next_intent=bench the monorepo'], None),
    ('verify', ['verify', '--', 'true'], None),
    ('session-start', ['hook', 'session-start', '--agent', 'claude'], 'session'),
)


def name(files: int, untracked_cache: bool) -> str:
    return f'{files:,} files' + (', untrackedCache' if untracked_cache else '')


def build(root: Path, files: int, untracked_cache: bool) -> None:
    """`files` tracked files four levels deep, one commit, agitmem set up
    with its git hooks, a one-line change left in the working tree."""
    c.sh('git', 'init', '-q', '-b', 'main', cwd=root)
    c.sh('git', 'config', 'user.name', 'bench', cwd=root)
    c.sh('git', 'config', 'user.email', 'bench@example.invalid', cwd=root)
    for i in range(files):
        d = root / 'services' / f's{i // 5000:02d}' / f'pkg{i // 500 % 10}' / f'mod{i // 50 % 10}'
        if i % 50 == 0:
            d.mkdir(parents=True)
        (d / f'f{i % 50:02d}.py').write_text(f'"""module {i}"""\n\n\ndef f{i}(x):\n    return x + {i}\n')
    (root / 'churn.txt').write_text('start\n')
    c.sh('git', 'add', '-A', cwd=root)
    c.sh('git', 'commit', '-q', '-m', 'code', cwd=root)
    if untracked_cache:
        c.sh('git', 'config', 'core.untrackedCache', 'true', cwd=root)
        c.sh('git', 'update-index', '--untracked-cache', cwd=root)
    c.sh(*c.AGITMEM, 'init', cwd=root)
    c.sh(*c.AGITMEM, 'install', 'git', cwd=root)
    c.sh(*c.AGITMEM, 'state', 'set', 'current_goal=bench at monorepo scale',
         'current_file=services/s00/pkg0/mod0/f00.py', cwd=root)
    with open(root / 'services' / 's00' / 'pkg0' / 'mod0' / 'f00.py', 'a') as f:
        f.write('# work in progress\n')
    c.sh('git', 'status', '--porcelain', cwd=root)  # the index refreshed, as any git command leaves it
    (root / '.built').write_text(f'{files} {int(untracked_cache)}\n')


def repo(files: int, untracked_cache: bool, *, fresh: bool = False) -> Path:
    root = Path(tempfile.gettempdir()) / f'agitmem-bench-mono-{files}{"-uc" if untracked_cache else ""}'
    if fresh or not (root / '.built').exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        print(f'bench: building {name(files, untracked_cache)} in {root} (kept for next time) ...', flush=True)
        build(root, files, untracked_cache)
    else:
        # a repository built by an older agitmem keeps that one's shims: the
        # commit figures are this agitmem's hooks
        c.sh(*c.AGITMEM, 'install', 'git', cwd=root)
    return root


HOOKS = ('pre-commit', 'commit-msg', 'post-commit')


def empty_hooks() -> Path:
    """A hooks directory whose three commit hooks are `exit 0`: what any
    hooks at all add to a commit (a shell each, and git reading the whole
    index again after a pre-commit hook, which may have changed it)."""
    d = Path(tempfile.gettempdir()) / 'agitmem-bench-empty-hooks'
    d.mkdir(exist_ok=True)
    for hook in HOOKS:
        (d / hook).write_text('#!/bin/sh\nexit 0\n')
        (d / hook).chmod(0o755)
    return d


def hook_counts(root: Path) -> dict[str, tuple[int, int]]:
    """hook -> (modules Python imports beyond `python -c pass`, git
    processes) of each commit hook, run once by its shim as git runs it
    (at the top of the working tree, a one-file change staged); a shim
    that ends before Python counts 0 imports.  After one commit made with
    the hooks: what the hooks keep for their shims (commit-msg's copy of
    config.yaml, post-commit's list of the saved memory) is there, as
    after any commit, not only in a repository used before."""
    c.sh('sh', '-c', COMMIT.format(opts=''), cwd=root)
    c.sh('sh', '-c', 'printf "%s\\n" "$$" >> churn.txt && git add churn.txt', cwd=root)
    message = root / '.git' / 'COMMIT_EDITMSG'
    message.write_text('bench: count the hooks\n')
    floor = _imports(c.FLOOR_PASS, root)[0]
    out = {}
    for hook in HOOKS:
        args = [str(root / '.git' / 'hooks' / hook), *([str(message)] if hook == 'commit-msg' else [])]
        imported, gits = _imports(args, root)
        out[hook] = (max(imported - floor, 0) if imported else 0, gits)
    c.sh('git', 'reset', '-q', 'HEAD', '--', 'churn.txt', cwd=root)
    return out


def _imports(cmd: list[str], root: Path) -> tuple[int, int]:
    """(modules imported, git processes started) of one run of cmd."""
    trace = Path(tempfile.mkdtemp(prefix='agitmem-bench-trace-')) / 'events'
    env = c.env()
    env.update({
        'PYTHONPROFILEIMPORTTIME': '1', 'GIT_TRACE2_EVENT': str(trace),
        'GIT_INDEX_FILE': str(root / '.git' / 'index'),  # as git sets it for a hook
    })
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    imported = sum(
        line.startswith('import time:') and 'cumulative' not in line
        for line in proc.stderr.splitlines()
    )
    try:
        gits = trace.read_text().count('"event":"start"')
    except OSError:
        gits = 0
    shutil.rmtree(trace.parent, ignore_errors=True)
    return imported, gits


def session_payload(root: Path) -> str:
    return json.dumps({
        'session_id': 'bench', 'transcript_path': None, 'cwd': str(root),
        'hook_event_name': 'SessionStart', 'source': 'startup',
    })


def cases(root: Path, tag: str) -> dict[str, tuple[list[str], Path, str | None]]:
    """key -> (command, cwd, stdin) of every figure on one repository."""
    out: dict[str, tuple[list[str], Path, str | None]] = {
        f'status {tag}': (['git', 'status', '--porcelain'], root, None),
        f'commit+hooks {tag}': (['sh', '-c', COMMIT.format(opts='')], root, None),
        f'commit-hooks {tag}': (['sh', '-c', COMMIT.format(opts='-c core.hooksPath=/dev/null')], root, None),
        f'commit+empty {tag}': (['sh', '-c', COMMIT.format(opts=f'-c core.hooksPath={empty_hooks()}')], root, None),
    }
    for key, args, stdin in FIGURES:
        out[f'{key} {tag}'] = ([*c.AGITMEM, *args], root, session_payload(root) if stdin else None)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--files', type=int, nargs='+', default=[20_000, 100_000])
    parser.add_argument('--fresh', action='store_true')
    args = parser.parse_args(argv)
    # as users run it, bytecode cached (as bench/run.py does)
    os.environ.pop('PYTHONDONTWRITEBYTECODE', None)
    print(f'bench: {c.compile_bytecode()}', flush=True)
    plan: dict[str, tuple[list[str], Path, str | None]] = {'pass': (c.FLOOR_PASS, Path.cwd(), None)}
    tags = []
    for files in args.files:
        for uc in (False, True):
            tag = name(files, uc)
            tags.append((files, tag))
            plan.update(cases(repo(files, uc, fresh=args.fresh), tag))
    m = c.medians(plan, args.runs)
    rows = []
    for files, tag in tags:
        status = m[f'status {tag}']
        rows.append((f'git status --porcelain ({tag})', status, 'python -c pass', m['pass']))
        # issue 41: floor (1 + pass/status) + 0.2 below 100,000 files
        bound = 1.2 + (m['pass'] / status if files < 100_000 else 0)
        for key, args_, _ in FIGURES:
            rows.append((f'agitmem {" ".join(args_[:2])} ({tag}; target <= {bound:.3g}x)', m[f'{key} {tag}'],
                         'git status', status))
            rows.append((f'agitmem {" ".join(args_[:2])} ({tag}), against its floor', m[f'{key} {tag}'],
                         'python -c pass + git status', m['pass'] + status))
        extra = m[f'commit+hooks {tag}'] - m[f'commit-hooks {tag}']
        rows.append((f'git commit: hooks\' extra cost ({tag}; target <= 5x)', extra, 'python -c pass', m['pass']))
        empty = m[f'commit+empty {tag}'] - m[f'commit-hooks {tag}']
        rows.append((f'git commit: three empty hooks\' extra ({tag})', empty, 'python -c pass', m['pass']))
    print(c.table(rows))
    for files in args.files:
        for uc in (False, True):
            for hook, (imported, gits) in hook_counts(repo(files, uc)).items():
                print(f'{hook} ({name(files, uc)}): {imported} imports beyond python -c pass, {gits} git processes')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
