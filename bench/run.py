"""Every benchmark in bench/, one table, against floors measured in the same
run.

    python bench/run.py [--runs N] [--quick | --full] [--keep] [--only REGEX]

Each figure is the median wall time of a whole process (as a hook or a user
pays it), runs interleaved round-robin across all figures so a noisy
neighbour hits every one alike, and is divided by a floor measured in the
same run:

  python -c pass              the interpreter
  python -c "import pygit2"   the interpreter and libgit2 (what any pygit2
                              command pays before doing anything)
  python -c pass + git status the two, one after the other, on the same
                              repository (what `check --staged` is held to)
  plumbing save               a one-file memory save done by hand with git:
                              rev-parse, hash-object -w, ls-tree, mktree,
                              commit-tree, update-ref (compare-and-swap), as
                              one `sh -c` pipeline

The targets are issue 14's, and issue 41's for the hooks and the big
repositories (at 20,000 files: the floor 1 + pass/status of the same run,
plus 0.2, against `git status`).  The figures come from bench/hooks.py (hot hook
paths on a realistic memory: 20 rules, a 300-line snapshot, 1,000 notes, 500
fragments), bench/check.py (`check --staged` on a 20,000- and a 100,000-file
repository, 10 files staged) and bench/history.py (save, log and rollback on
a 10,000-commit memory history against a 1-commit one; recall over it, its
cache warm and cold), bench/monorepo.py
(load, state set, verify and hook session-start against `git status` on
20,000- and 100,000-file repositories, with and without
core.untrackedCache, each also against `python -c pass + git status`, the
least a Python command that waits for a status can take; what agitmem's
hooks add to a `git commit`, and each commit hook's imports and git
processes, in a note), plus every write
command, status, log -n 20 and rollback on the realistic memory.  The last
column is each agitmem command's three most expensive imports (one run under
`python -X importtime`: what agitmem imports from outside itself, in ms), so
a regression shows its cause.  agitmem's bytecode caches are written first
(`compileall`) and the runs do not set PYTHONDONTWRITEBYTECODE.  A benchmark
module that is missing, or whose setup fails, is named under the table
instead.

--only REGEX: only the rows whose figure matches REGEX (case-insensitive,
anywhere in it), their floors timed with them in the same rounds, and only
the benchmarks that make such rows set up (`--only monorepo` or `--only
'20,000 files'`: issue 23's rows; the machine is shared, so time what you
need).

--quick: 3 runs, 2,000- and 10,000-file repositories, a 1,000-commit history
(a smoke test).  Default: 10 runs, full sizes.  --full: 30 runs, full sizes, and
1,000 saves in a fresh repository to count the loose objects they leave.
The long reliability tests are separate: `AGITMEM_FULL=1 python -m pytest
tests/reliability` (or `-m slow`)."""
from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402
from _common import Row  # noqa: E402

Case = tuple[list[str], Path, str | None]

_TOUCH_NOTES = 'printf -- "- bench %s\\n" "$$" >> .agent/memory/notes.md'
PLUMBING_SAVE = r'''set -e
printf -- '- plumbing %s\n' "$$" >> .agent/plumb.md
old=$(git rev-parse refs/bench/plumbing)
blob=$(git hash-object -w .agent/plumb.md)
tree=$({ git ls-tree "$old" | grep -v "	plumb.md\$" || true; printf '100644 blob %s\tplumb.md\n' "$blob"; } | git mktree)
new=$(git commit-tree "$tree" -p "$old" -m 'save: plumb.md')
git update-ref refs/bench/plumbing "$new" "$old"
'''


class Plan:
    """The cases to time, the floors that are sums of cases, and the rows
    to print."""

    def __init__(self) -> None:
        self.cases: dict[str, Case] = {}
        self.runs = 10
        self.sums: dict[str, tuple[str, ...]] = {}
        self.diffs: dict[str, tuple[str, str]] = {}
        self.rows: list[Row] = []
        self.notes: list[str] = []
        # figures a bench module times itself (inside one process), taken
        # after the cases' medians, in the same run as the floors
        self.timed: list[Callable[[], dict[str, float]]] = []
        # agitmem cases: how to run them once under -X importtime
        self.probes: dict[str, tuple[list[str], Path, str | None, str | None]] = {}
        self.only: re.Pattern[str] | None = None

    def wants(self, *labels: str) -> bool:
        """Whether a benchmark that makes rows with these labels is set up
        (--only)."""
        return self.only is None or any(self.only.search(label) for label in labels)

    def keep_wanted(self) -> None:
        """--only: the rows it names, and the cases they need (their
        floors, the parts of a sum or a difference), no others."""
        if self.only is None:
            return
        only = self.only
        self.rows = [r for r in self.rows if only.search(r.label)]
        needed = set()
        for r in self.rows:
            for key in (r.key, r.floor):
                needed |= {key, *self.sums.get(key, ()), *self.diffs.get(key, ())}
        self.cases = {k: v for k, v in self.cases.items() if k in needed}
        if not any(r.key.startswith('mcp-') for r in self.rows):
            self.timed = []  # the MCP round trips: only their rows use them

    def case(self, key: str, cmd: list[str], cwd: Path, stdin: str | None = None) -> str:
        self.cases[key] = (cmd, cwd, stdin)
        return key

    def agitmem(self, key: str, args: list[str], cwd: Path, stdin: str | None = None,
                *, pre: str | None = None) -> str:
        """A case that runs `agitmem ARGS` (after the shell command `pre`)."""
        cmd = c.launch(args)
        self.case(key, _sh(f'{pre} && exec {shlex.join(cmd)}') if pre else cmd, cwd, stdin)
        self.probes[key] = (args, cwd, stdin, pre)
        return key

    def sum(self, key: str, *parts: str) -> str:
        """A floor that is the sum of cases (two processes run one after the
        other, as a hook that runs both would pay)."""
        self.sums[key] = parts
        return key

    def diff(self, key: str, plus: str, minus: str) -> str:
        """A figure that is one case less another (what a commit's hooks
        add: the commit with them less the commit without)."""
        self.diffs[key] = (plus, minus)
        return key

    def row(self, label: str, key: str, floor: str, floor_label: str,
            target: float | None = None, plus: str | None = None) -> None:
        self.rows.append(Row(label, key, floor, floor_label, target, plus=plus))

    def imports(self) -> None:
        """Each agitmem row's three most expensive imports."""
        for i, r in enumerate(self.rows):
            if r.key in self.probes:
                args, cwd, stdin, pre = self.probes[r.key]
                self.rows[i] = r._replace(imports=c.imports(args, cwd, stdin, pre))


def _module(name: str) -> ModuleType | None:
    if not (Path(__file__).parent / f'{name}.py').exists():
        return None
    return importlib.import_module(name)


def _sh(script: str) -> list[str]:
    return ['sh', '-c', script]


def floors(plan: Plan, root: Path) -> None:
    plan.case('pass', c.FLOOR_PASS, root)
    plan.case('pygit2', c.FLOOR_PYGIT2, root)
    plan.row('python -c "import pygit2"', 'pygit2', 'pass', 'python -c pass')


HOOK_ROWS = (  # key, label, target against python -c pass
    ('post-edit', 'agitmem hook post-edit', 2),
    ('prompt', 'agitmem hook prompt', 2),
    ('stop', 'agitmem hook stop', 2),
    ('before-model', 'agitmem hook prompt (Gemini BeforeModel, every model call)', 2),
    ('load', 'agitmem load', 2.5),
    ('state-show', 'agitmem state show', None),
)
MCP_ROWS = (
    ('mcp-state-set', 'agitmem mcp: state_set call (server up)'),
    ('mcp-recall', 'agitmem mcp: recall call (server up)'),
)
WRITE_ROWS = (  # key, what, against import pygit2 (target 1.3x)
    ('save', 'save (one-file change)'), ('state-set', 'state set'),
    ('note', 'note'), ('fragment', 'fragment add'), ('verify', 'verify -- true'),
    ('status', 'status'), ('log', 'log -n 20'),
)
WRITE_LABELS = (
    'git status --porcelain (200 files)', 'plumbing save (6 git calls)',
    *(f'agitmem {label}' for _, label in WRITE_ROWS),
    'agitmem save, against plumbing', 'agitmem rollback',
)


def hooks(plan: Plan, mod: ModuleType, work: Path) -> Path | None:
    """bench/hooks.py's realistic memory: the hot hooks and load (None:
    neither they nor the writes on a copy of it are wanted)."""
    labels = [label for _, label, _ in HOOK_ROWS] + [label for _, label in MCP_ROWS]
    if not plan.wants(*labels, *WRITE_LABELS):
        return None
    root: Path = mod.realistic_repo()
    shutil.move(str(root), str(work / 'realistic'))
    root = work / 'realistic'
    edit, prompt = mod.payloads(root)
    plan.agitmem('post-edit', ['hook', 'post-edit', '--agent', 'claude'], root, edit)
    # the same hook through pip's console script (an install made before
    # agitmem-hook, or `--command agitmem`): what the hooks' program saves
    plan.case('post-edit-console', [*c.AGITMEM, 'hook', 'post-edit', '--agent', 'claude'], root, edit)
    plan.agitmem('prompt', ['hook', 'prompt', '--agent', 'claude'], root, prompt)
    plan.agitmem('stop', ['hook', 'stop', '--agent', 'claude'], root, mod.stop_payload(root))
    plan.agitmem('before-model', ['hook', 'prompt', '--agent', 'gemini'], root, mod.before_model_payload(root))
    plan.agitmem('load', ['load'], root)
    plan.agitmem('state-show', ['state', 'show'], root)
    for key, label, target in HOOK_ROWS:
        plan.row(label, key, 'pass', 'python -c pass', target)
    plan.row('agitmem hook post-edit, through the console script', 'post-edit-console', 'pass', 'python -c pass')
    mcp = _try(plan, 'bench/mcp_server.py', lambda: _module('mcp_server')) if plan.wants(*labels[-2:]) else None
    if isinstance(mcp, ModuleType):
        # a tool call on a server already up: under 20 ms (issue 25),
        # about the interpreter's own start
        plan.timed.append(lambda: mcp.round_trips(root, max(plan.runs, 20)))
        for key, label in MCP_ROWS:
            plan.row(label, key, 'pass', 'python -c pass', 1)
    return root


def writes(plan: Plan, realistic: Path, work: Path) -> None:
    """The write commands, status, log and rollback on the realistic memory
    (a copy of it), against `import pygit2` (what any of them pays first);
    the plumbing save in the same repository for scale."""
    if not plan.wants(*WRITE_LABELS):
        return
    root = work / 'writes'
    shutil.copytree(realistic, root, symlinks=True)
    # the copies have new inodes, so every entry of the index looks changed
    # until a git command refreshes it (any the user runs would): otherwise
    # each working-tree tree agitmem computes re-hashes all 200 files
    c.sh('git', 'status', '--porcelain', cwd=root)
    tip = c.sh('git', 'rev-parse', 'refs/agitmem/heads/main', cwd=root).strip()
    c.sh('git', 'update-ref', 'refs/bench/plumbing', tip, cwd=root)
    c.sh(*c.AGITMEM, 'note', 'one more, so rollback has a step to undo', cwd=root)
    plan.case('status-200', ['git', 'status', '--porcelain'], root)
    plan.case('plumbing', _sh(PLUMBING_SAVE), root)
    plan.agitmem('save', ['save'], root, pre=_TOUCH_NOTES)
    plan.agitmem('state-set', ['state', 'set', 'next_intent=bench the writes'], root)
    plan.agitmem('note', ['note', 'a note from the bench'], root)
    plan.agitmem('fragment', ['fragment', 'add', '--goal', 'bench', '--next', 'more'], root)
    plan.agitmem('verify', ['verify', '--', 'true'], root)
    plan.agitmem('status', ['status'], root)
    plan.agitmem('log', ['log', '-n', '20'], root)
    plan.agitmem('rollback', ['rollback'], root)
    status, plumbing, *each, against, rollback = WRITE_LABELS
    plan.row(status, 'status-200', 'pass', 'python -c pass')
    plan.row(plumbing, 'plumbing', 'pass', 'python -c pass')
    for (key, _), label in zip(WRITE_ROWS, each):
        plan.row(label, key, 'pygit2', 'import pygit2', 1.3)
    plan.row(against, 'save', 'plumbing', 'plumbing save')
    plan.row(rollback, 'rollback', 'plumbing', 'plumbing save')


def check(plan: Plan, mod: ModuleType, files: int) -> None:
    """bench/check.py: check --staged on a big repository, 10 files staged
    (built once in the temp dir, shared with bench/check.py)."""
    labels = (f'git status --porcelain ({files:,} files)', f'agitmem check --staged ({files:,} files)')
    if not plan.wants(*labels):
        return
    root = Path(tempfile.gettempdir()) / f'agitmem-bench-check-{files}'
    if not (root / '.built').exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        print(f'bench: building {files:,} files in {root} (kept for next time) ...', flush=True)
        mod.build(root, files)
    mod.stage_change(root)
    status = plan.case(f'status-{files}', ['git', 'status', '--porcelain'], root)
    check = plan.agitmem(f'check-{files}', ['check', '--staged'], root)
    floor = plan.sum(f'pass+status-{files}', 'pass', status)
    plan.row(labels[0], status, 'pass', 'python -c pass')
    plan.row(labels[1], check, floor, 'python -c pass + git status', 1.5)


def monorepo(plan: Plan, mod: ModuleType, files: int, untracked_cache: bool) -> None:
    """bench/monorepo.py: what knowing the working tree's state costs, and
    what the commit hooks add, on a big repository (built once in the temp
    dir, shared with bench/monorepo.py)."""
    tag = mod.name(files, untracked_cache)
    status = f'status {tag}'
    rows: list[tuple[str, str, str, str, float | None, str | None]] = [
        (f'git status --porcelain ({tag})', status, 'pass', 'python -c pass', None, None),
    ]
    # issue 41: at 100,000 files 1.2x the status; below, where the
    # interpreter's start is a larger part, the floor (1 + pass/status)
    # plus 0.2, from the same run's medians
    plus = 'pass' if files < 100_000 else None
    # what any Python command that needs `git status` pays at least: the
    # interpreter's start and the status, were nothing overlapped
    floor = plan.sum(f'pass+status {tag}', 'pass', status)
    for key, args, _ in mod.FIGURES:
        what = f'agitmem {" ".join(args[:2])} ({tag})'
        rows.append((what, f'{key} {tag}', status, 'git status', 1.2, plus))
        rows.append((f'{what}, against its floor', f'{key} {tag}', floor, 'python -c pass + git status', None, None))
    extra = plan.diff(f'commit-extra {tag}', f'commit+hooks {tag}', f'commit-hooks {tag}')
    rows.append((f"git commit, agitmem hooks' extra ({tag})", extra, 'pass', 'python -c pass', 5, None))
    # the part of that no hook can avoid: three `exit 0` hooks' extra
    empty = plan.diff(f'commit-empty-extra {tag}', f'commit+empty {tag}', f'commit-hooks {tag}')
    rows.append((f"git commit, three empty hooks' extra ({tag})", empty, 'pass', 'python -c pass', None, None))
    if not plan.wants(*(r[0] for r in rows)):
        return
    root = mod.repo(files, untracked_cache)
    counts = mod.hook_counts(root)
    plan.notes.append(f'commit hooks ({tag}): ' + '; '.join(
        f'{hook} {imported} imports beyond python -c pass, {gits} git processes'
        for hook, (imported, gits) in counts.items()
    ))
    for key, (cmd, cwd, stdin) in mod.cases(root, tag).items():
        plan.case(key, cmd, cwd, stdin)
    for key, args, _ in mod.FIGURES:
        plan.probes[f'{key} {tag}'] = (args, root, mod.session_payload(root) if _ else None, None)
    for label, key, floor, floor_label, target, added in rows:
        plan.row(label, key, floor, floor_label, target, added)


def history(plan: Plan, mod: ModuleType, commits: int, work: Path) -> None:
    """bench/history.py: save, log, rollback on a long memory history
    against the same on a 1-commit one."""
    n = f'{commits:,}'
    ops = (('save', 'save'), ('log', 'log -n 20'), ('rollback', 'rollback'))
    labels = [f'agitmem {label} ({n}-commit history)' for _, label in ops]
    if not plan.wants(*labels, *recall_labels(n), HEAVY_LABEL):
        return
    small = mod.new_repo(work / 'history-1')
    big = mod.new_repo(work / f'history-{commits}')
    mod.grow(big, commits)
    for root, n in ((small, '1'), (big, f'{commits:,}')):
        c.sh(*c.AGITMEM, 'note', 'a step for rollback to undo', cwd=root)
        plan.case(f'save-{n}', _sh(f'{_TOUCH_NOTES} && exec {shlex.join(c.AGITMEM)} save'), root)
        plan.case(f'log-{n}', [*c.AGITMEM, 'log', '-n', '20'], root)
        plan.case(f'rollback-{n}', [*c.AGITMEM, 'rollback'], root)
    for (op, label), row in zip(ops, labels):
        plan.row(row, f'{op}-{n}', f'{op}-1', f'{label}, 1 commit', 1.2)
    recall(plan, big, n, work)
    heavy_related(plan, mod, work)


HEAVY_LABEL = 'agitmem load --after-compact (400 commits rewriting a 200 KB notes.md, RELATED cold)'


def heavy_related(plan: Plan, mod: ModuleType, work: Path) -> None:
    """The block after a compaction on a heavy memory history (issue 37),
    its RELATED search cold each run: held by its deadline (related_seconds,
    1 s), against plain `load` on the same repository."""
    root = mod.new_repo(work / 'heavy')
    mod.grow_heavy(root)
    c.sh(*c.AGITMEM, 'state', 'set', 'current_goal=move the loader into the index', cwd=root)
    plan.agitmem('load-heavy', ['load'], root)
    plan.agitmem('load-heavy-compact', ['load', '--after-compact'], root, pre='rm -rf .git/agitmem/recall')
    plan.row(HEAVY_LABEL, 'load-heavy-compact', 'load-heavy', 'agitmem load, same repository')


RECALL_QUERY = 'note 4321'  # a word every note holds, and one only one does


def recall_labels(n: str) -> tuple[str, str]:
    return (
        f'agitmem recall ({n}-commit history, cache warm)',
        f'agitmem recall ({n}-commit history, cold: the first call)',
    )


def recall(plan: Plan, big: Path, n: str, work: Path) -> None:
    """`recall` over the whole long history (issue 25), in a copy of it the
    other cases do not move: with its cache warm (what every call but the
    first pays) and cold (the cache removed before each run: the first)."""
    root = work / f'recall-{n}'
    shutil.copytree(big, root, symlinks=True)
    c.sh(*c.AGITMEM, 'recall', RECALL_QUERY, cwd=root)  # the cache, warm
    plan.agitmem('recall-warm', ['recall', RECALL_QUERY], root)
    plan.agitmem('recall-cold', ['recall', RECALL_QUERY], root, pre='rm -rf .git/agitmem/recall')
    warm, cold = recall_labels(n)
    plan.row(warm, 'recall-warm', 'pygit2', 'import pygit2', 1.3)
    plan.row(cold, 'recall-cold', 'pygit2', 'import pygit2')


def loose_objects(mod: ModuleType, saves: int, work: Path) -> str:
    """--full: what `saves` saves leave behind (bench/history.py's count)."""
    fresh = mod.new_repo(work / 'fresh')
    before = mod.loose_objects(fresh)[0]
    bench = mod.Bench(fresh)
    start = time.perf_counter()
    for _ in range(saves):
        bench.save()
    took = time.perf_counter() - start
    loose, estimate = mod.loose_objects(fresh)
    return (
        f'{saves:,} saves in-process in {took:.1f}s left {loose - before:,} loose '
        f'objects; git\'s gc.auto estimate {estimate:,} (threshold {mod.GC_AUTO:,})'
    )


def _try(plan: Plan, what: str, fn: Callable[[], object]) -> object:
    try:
        return fn()
    except (Exception, SystemExit) as e:
        detail = ' '.join(str(e).split()) or type(e).__name__
        plan.notes.append(f'{what}: not measured ({type(e).__name__}: {detail[:200]})')
        if os.environ.get('AGITMEM_BENCH_DEBUG'):
            traceback.print_exc()
        return None


def _regex(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as e:
        raise argparse.ArgumentTypeError(f'not a regular expression: {e}')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument('--quick', action='store_true', help='3 runs, small repositories')
    size.add_argument('--full', action='store_true', help='30 runs, full sizes, loose-object count')
    parser.add_argument('--runs', type=int, help='runs per figure (default 10; 3 quick, 30 full)')
    parser.add_argument('--keep', action='store_true', help='keep the scratch repositories')
    parser.add_argument(
        '--only', metavar='REGEX', type=_regex,
        help='only the rows whose figure matches REGEX (case-insensitive), with their floors',
    )
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 30 if args.full else 10)
    sizes = (2_000, 10_000) if args.quick else (20_000, 100_000)
    commits = 1_000 if args.quick else 10_000

    work = Path(tempfile.mkdtemp(prefix='agitmem-bench-run-'))
    # no user tattoo, no global git config: the same memory everywhere
    os.environ.update({
        'HOME': str(work), 'AGITMEM_HOME': str(work / '.agent'),
        'GIT_CONFIG_NOSYSTEM': '1',
    })
    os.environ.pop('PYTHONDONTWRITEBYTECODE', None)  # as users run it
    plan = Plan()
    plan.runs = runs
    plan.only = args.only
    plan.notes.append(c.compile_bytecode())
    try:
        floors(plan, work)
        realistic = None
        hooks_mod = _try(plan, 'bench/hooks.py', lambda: _module('hooks'))
        if isinstance(hooks_mod, ModuleType):
            realistic = _try(plan, 'bench/hooks.py', lambda: hooks(plan, hooks_mod, work))
        else:
            plan.notes.append('bench/hooks.py: not present')
        if isinstance(realistic, Path):
            _try(plan, 'save/log/rollback', lambda: writes(plan, realistic, work))
        for name, setup in (
                ('check', lambda mod: [check(plan, mod, files) for files in sizes]),
                ('history', lambda mod: history(plan, mod, commits, work)),
                ('monorepo', lambda mod: [monorepo(plan, mod, files, uc) for files in sizes for uc in (False, True)]),
        ):
            mod = _try(plan, f'bench/{name}.py', lambda: _module(name))
            if isinstance(mod, ModuleType):
                _try(plan, f'bench/{name}.py', lambda: setup(mod))
            elif mod is None and not any(n.startswith(f'bench/{name}.py') for n in plan.notes):
                plan.notes.append(f'bench/{name}.py: not present')
        extra = None
        if args.full:
            hist = _try(plan, 'loose objects', lambda: _module('history'))
            if isinstance(hist, ModuleType):
                extra = _try(plan, 'loose objects', lambda: loose_objects(hist, 1000, work))

        plan.keep_wanted()
        print(f'bench: {len(plan.cases)} commands, {runs} interleaved runs each ...', flush=True)
        start = time.perf_counter()
        m = c.medians(plan.cases, runs)
        for timed in plan.timed:
            figures = _try(plan, 'timed figures', timed)
            if isinstance(figures, dict):
                m.update(figures)
        took = time.perf_counter() - start
        for key, parts in plan.sums.items():
            if all(p in m for p in parts):
                m[key] = sum(m[p] for p in parts)
        for key, (plus, minus) in plan.diffs.items():
            if plus in m and minus in m:
                m[key] = m[plus] - m[minus]
        # those measured (a sum or a difference counts once its parts are)
        plan.rows = [r for r in plan.rows if r.key in m]
        plan.imports()
        git_version = c.sh('git', '--version', cwd=work).strip()
        print()
        print(
            f'agitmem bench ({"quick" if args.quick else "full" if args.full else "default"}: '
            f'median of {runs} runs; {platform.python_implementation()} '
            f'{platform.python_version()}, {git_version}, {os.cpu_count()} CPUs; '
            f'timed in {took:.0f}s)',
        )
        print(c.render(plan.rows, m))
        if extra:
            print(extra)
        for note in plan.notes:
            print(f'note: {note}')
    finally:
        if args.keep:
            print(f'scratch repositories kept in {work}')
        else:
            subprocess.run(['chmod', '-R', 'u+w', str(work)], check=False)
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
