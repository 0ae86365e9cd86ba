"""Shared by the benchmarks: time commands as whole processes, repeated and
interleaved so that a noisy neighbour hits every figure alike."""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

PY = sys.executable
# this interpreter's console script first: not another agitmem found on PATH
_SCRIPT = shutil.which('agitmem', path=os.path.dirname(PY)) or shutil.which('agitmem')
AGITMEM = [_SCRIPT] if _SCRIPT else [PY, '-m', 'agitmem']
# the agent hooks' program as `agitmem install` writes it (scripts/agitmem-hook,
# beside the console script): `agitmem hook` without pip's wrapper
_HOOK = shutil.which('agitmem-hook', path=os.path.dirname(PY)) if _SCRIPT else None
# what `agitmem install AGENT` writes agitmem-hook for (git's hooks call agitmem)
HOOK_EVENTS = ('session-start', 'pre-compact', 'post-edit', 'prompt', 'stop')


def launch(args: Sequence[str]) -> list[str]:
    """The argv that runs `agitmem ARGS` as a user's install does: an agent
    hook (`hook EVENT`) through the hooks' program when it is installed."""
    if _HOOK and list(args[:1]) == ['hook'] and len(args) > 1 and args[1] in HOOK_EVENTS:
        return [_HOOK, *args[1:]]
    return [*AGITMEM, *args]


FLOOR_PASS = [PY, '-c', 'pass']
FLOOR_PYGIT2 = [PY, '-c', 'import pygit2']


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.update({
        'GIT_AUTHOR_NAME': 'bench', 'GIT_AUTHOR_EMAIL': 'bench@example.com',
        'GIT_COMMITTER_NAME': 'bench', 'GIT_COMMITTER_EMAIL': 'bench@example.com',
    })
    for k in ('GIT_DIR', 'GIT_INDEX_FILE', 'GIT_WORK_TREE', 'AGITMEM_REF'):
        e.pop(k, None)
    return e


def sh(*cmd: str, cwd: Path, stdin: str | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env(), input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f'bench: {" ".join(cmd)} failed: {proc.stderr.strip()}')
    return proc.stdout


def once(cmd: Sequence[str], cwd: Path, stdin: str | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env(), input=stdin, capture_output=True, text=True,
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f'bench: {" ".join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}')
    return took


def medians(
        cases: dict[str, tuple[Sequence[str], Path, str | None]],
        runs: int,
) -> dict[str, float]:
    """Median seconds of each case; runs are interleaved round-robin."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for name, (cmd, cwd, stdin) in cases.items():
        once(cmd, cwd, stdin)  # warm caches
    for _ in range(runs):
        for name, (cmd, cwd, stdin) in cases.items():
            times[name].append(once(cmd, cwd, stdin))
    return {name: statistics.median(t) for name, t in times.items()}


def table(rows: list[tuple[str, float, str, float]]) -> str:
    """rows: (figure, median s, floor name, floor s).  See Row/render for
    the table of bench/run.py."""
    out = [f'{"figure":44} {"median":>10} {"ratio":>7}  floor']
    for name, value, floor_name, floor in rows:
        out.append(f'{name:44} {value * 1000:8.1f}ms {value / floor:6.2f}x  {floor_name}')
    return '\n'.join(out)


def tmpdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


class Row(NamedTuple):
    """One line of the table: a figure, the floor it is divided by (both
    keys of the medians), the target ratio where there is one, and the
    figure's three most expensive imports where it is an agitmem command.
    `plus`: a figure whose ratio to the floor, in the same run, is added
    to the target (issue 41's "floor + 0.2" at 20,000 files: the target
    1.2 plus `python -c pass` over `git status`)."""
    label: str
    key: str
    floor: str
    floor_label: str
    target: float | None = None
    imports: str = ''
    plus: str | None = None


def render(rows: Sequence[Row], m: dict[str, float]) -> str:
    width = max([len(r.label) for r in rows] + [len('figure')])
    fwidth = max([len(r.floor_label) for r in rows] + [len('floor')])
    out = [
        f'{"figure":{width}}  {"median":>9}  {"floor":{fwidth}}  {"floor med":>9}  '
        f'{"ratio":>6}  {"target":13}  top imports (ms, -X importtime)',
    ]
    for r in rows:
        value, floor = m[r.key], m[r.floor]
        ratio = value / floor
        target = ''
        if r.target is not None:
            bound = r.target + (m[r.plus] / floor if r.plus is not None else 0)
            target = f'<= {bound:.3g}x ' + ('ok' if ratio <= bound else 'OVER')
        out.append(
            f'{r.label:{width}}  {value * 1000:7.1f}ms  {r.floor_label:{fwidth}}  '
            f'{floor * 1000:7.1f}ms  {ratio:5.2f}x  {target:13}  {r.imports}'.rstrip(),
        )
    return '\n'.join(out)

# -- what a command imports ----------------------------------------------------

def _import_tree(stderr: str) -> list[tuple[str, int, list[object]]]:
    """`python -X importtime`'s lines as a tree: (name, cumulative us,
    children), roots in import order.  A line comes after its own imports,
    one level deeper."""
    stack: list[tuple[int, tuple[str, int, list[object]]]] = []
    for line in stderr.splitlines():
        if not line.startswith('import time:') or 'cumulative' in line:
            continue
        _, cumulative, name = line[len('import time:'):].split('|')
        depth = (len(name) - len(name.lstrip())) // 2
        children: list[object] = []
        while stack and stack[-1][0] > depth:
            children.insert(0, stack.pop()[1])
        stack.append((depth, (name.strip(), int(cumulative), children)))
    return [node for _, node in stack]


def top_imports(stderr: str, n: int = 3) -> list[tuple[str, float]]:
    """The n most expensive imports a command makes itself (not the
    interpreter's start-up): what agitmem's own modules import from outside
    agitmem, top-level names merged, in ms, dearest first."""
    cost: dict[str, float] = {}

    def walk(node: tuple[str, int, list[object]]) -> None:
        name, cumulative, children = node
        if name == 'agitmem' or name.startswith('agitmem.'):
            for child in children:
                walk(child)  # type: ignore[arg-type]
        else:
            top = name.split('.')[0]
            cost[top] = cost.get(top, 0.0) + cumulative / 1000

    started = False
    for root in _import_tree(stderr):
        started = started or root[0].startswith('agitmem')
        if started:  # before agitmem: site, encodings, the console script
            walk(root)
    return sorted(cost.items(), key=lambda kv: -kv[1])[:n]


def imports(args: Sequence[str], cwd: Path, stdin: str | None = None, pre: str | None = None) -> str:
    """`agitmem ARGS`' three most expensive imports, as one cell of a table
    (one run under `python -X importtime`; its figures are inflated alike)."""
    argv = launch(args)
    cmd = [PY, '-X', 'importtime', *(argv[1:] if argv[0] == PY else argv)]
    if pre:
        cmd = ['sh', '-c', f'{pre} && exec "$@"', 'sh', *cmd]
    proc = subprocess.run(cmd, cwd=cwd, env=env(), input=stdin, capture_output=True, text=True)
    return ', '.join(f'{name} {ms:.0f}' for name, ms in top_imports(proc.stderr)) or '-'


def compile_bytecode() -> str:
    """Write agitmem's bytecode caches first: without them (a checkout run
    under PYTHONDONTWRITEBYTECODE=1) every import compiles its source."""
    import agitmem
    pkg = os.path.dirname(agitmem.__file__)
    proc = subprocess.run(
        [PY, '-m', 'compileall', '-q', pkg], env=env(), capture_output=True, text=True,
    )
    said = 'bytecode caches written' if proc.returncode == 0 else 'compileall failed'
    return f'{said} ({PY} -m compileall -q {pkg}); PYTHONDONTWRITEBYTECODE unset for the runs' + editable()


def editable() -> str:
    """A warning when agitmem is an editable install (`pip install -e`):
    its import finder, loaded by a .pth file, adds about 15 ms to every
    start of this interpreter, `python -c pass` included, and far less
    to agitmem's own commands, so every ratio to that floor reads low."""
    # (setuptools' finder module, imported by its .pth at start-up)
    if not any(m.startswith('__editable__') and 'agitmem' in m for m in sys.modules):
        return ''
    return (
        '\nWARNING: agitmem is an editable install in this environment: the '
        "editable finder's start-up inflates python -c pass more than agitmem's "
        'commands, so ratios to it read low; `pip install .` into a venv of its '
        'own for the figures a user sees'
    )
