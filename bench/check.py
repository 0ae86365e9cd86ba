"""`agitmem check --staged` against `git status --porcelain`, side by side.

    python bench/check.py [--runs N] [--files N] [--fresh]

Issue 14's target: on a repository of 20,000 files with a 10-file staged
change, `agitmem check --staged` takes at most 1.5x `python -c pass` plus
`git status --porcelain` (and the same ratio at 100,000 files).
The repository is built once (kept in the temp dir, rebuilt with --fresh);
its memory turns on every check: enforce rules (forbid, dependencies,
commit_msg), a recorded verification (compared with the index),
`current_file`, a snapshot naming paths; the change adds a dependency."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

AGITMEM = c.AGITMEM  # this interpreter's console script
CHANGED = 10
ENFORCE = '''\
enforce:
- rule: indent with 4 spaces, never tabs
  forbid: "\\t"
  files: ["*.py"]
- rule: no new dependencies without approval
  dependencies: [requests, pyyaml]
- rule: commit messages start with a ticket id
  commit_msg: "^[A-Z]+-[0-9]+ "
'''


def build(root: Path, files: int) -> None:
    c.sh('git', 'init', '-q', '-b', 'main', cwd=root)
    per_dir = 100
    for i in range(files):
        d = root / 'src' / f'pkg{i // per_dir:03d}'
        if i % per_dir == 0:
            d.mkdir(parents=True)
        (d / f'mod{i % per_dir:03d}.py').write_text(
            f'"""module {i}"""\n\n\ndef f{i}(x):\n    return x + {i}\n',
        )
    (root / 'requirements.txt').write_text('requests\n')
    c.sh('git', 'add', '-A', cwd=root)
    c.sh('git', 'commit', '-q', '-m', 'code', cwd=root)
    c.sh(*AGITMEM, 'init', cwd=root)
    mem = root / '.agent' / 'memory'
    with open(mem / 'tattoo.md', 'a') as f:
        f.write(
            '- indent: 4 spaces\n'
            '- indent with 4 spaces, never tabs\n'
            '- no new dependencies without approval\n'
            '- commit messages start with a ticket id\n'
            '- never use `eval`\n',
        )
    with open(mem / 'snapshot.md', 'a') as f:
        f.write('- indent: 4 spaces\n- loader: `src/pkg000/mod000.py`\n')
    (root / '.agent' / 'config.yaml').write_text(ENFORCE)
    c.sh(*AGITMEM, 'verify', '--', 'true', cwd=root)
    c.sh(
        *AGITMEM, 'state', 'set', 'current_file=src/pkg000/mod000.py',
        'current_symbol=f0', 'next_intent=stage the change', cwd=root,
    )
    (root / '.built').write_text(f'{files}\n')


def stage_change(root: Path) -> None:
    """A 10-file change, staged; the same one on every run of the bench."""
    c.sh('git', 'reset', '-q', '--hard', 'HEAD', cwd=root)
    for i in range(CHANGED):
        path = root / 'src' / f'pkg{i:03d}' / f'mod{i:03d}.py'
        with open(path, 'a') as f:
            f.write(f'\n\ndef g{i}(x):\n    return f{i * 100}(x) * 2\n')
    with open(root / 'requirements.txt', 'a') as f:
        f.write('pyyaml\n')
    c.sh('git', 'add', '-u', cwd=root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--files', type=int, default=20_000)
    parser.add_argument('--fresh', action='store_true', help='rebuild the repository')
    args = parser.parse_args(argv)
    # as users run it: with bytecode caches (a CI box may turn them off)
    os.environ.pop('PYTHONDONTWRITEBYTECODE', None)

    root = Path(tempfile.gettempdir()) / f'agitmem-bench-check-{args.files}'
    marker = root / '.built'
    if args.fresh or not marker.exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        print(f'building {args.files} files in {root} ...', flush=True)
        build(root, args.files)
    stage_change(root)
    staged = c.sh('git', 'diff', '--cached', '--name-only', cwd=root).split()
    tracked = len(c.sh('git', 'ls-files', cwd=root).splitlines())
    out = c.sh(*AGITMEM, 'check', '--staged', cwd=root)
    print(f'repository: {root} ({tracked} files, {len(staged)} staged)')
    print('agitmem check --staged says:\n  ' + '\n  '.join(out.splitlines()))

    imports = 'import agitmem.cli, agitmem.porcelain.context, agitmem.commands.check'
    m = c.medians({
        'git status --porcelain': (['git', 'status', '--porcelain'], root, None),
        'agitmem check --staged': ([*AGITMEM, 'check', '--staged'], root, None),
        'python -c pass': (c.FLOOR_PASS, root, None),
        'imports': ([sys.executable, '-c', imports], root, None),
    }, args.runs)
    status, check = m['git status --porcelain'], m['agitmem check --staged']
    print(f'median of {args.runs} interleaved runs each:')
    print(f'  git status --porcelain   {status * 1000:7.1f} ms')
    print(f'  agitmem check --staged   {check * 1000:7.1f} ms')
    print('  where the time goes:')
    print(f'    python -c pass         {m["python -c pass"] * 1000:7.1f} ms (the interpreter)')
    print(f'    + importing agitmem    {(m["imports"] - m["python -c pass"]) * 1000:7.1f} ms')
    print(f'    + checking             {(check - m["imports"]) * 1000:7.1f} ms (git calls included)')
    floor = m['python -c pass'] + status
    verdict = 'ok' if check <= 1.5 * floor else 'OVER TARGET'
    print(f'ratio to python -c pass + git status: {check / floor:.2f}x (target <= 1.5x: {verdict})')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
