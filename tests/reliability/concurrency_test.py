"""Many writers on one memory ref at once: nothing is lost.

Each writer is a thread that runs the real CLI in a loop, so up to N
`agitmem` processes race for the same ref at any moment.  They share one
working tree, and a save commits the tree as it is, so a writer's change
may be carried by another writer's commit: what must hold is that every
content ever written and saved is in some commit of the ref's history, that
the history is one linear chain in which every commit was the tip once (no
update lost by a concurrent writer), and that git finds nothing wrong."""
from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from tests.reliability.conftest import CONCURRENCY_FULL
from tests.reliability.conftest import CONCURRENCY_SHORT

REF = 'refs/agitmem/heads/main'
_SAVED = re.compile(r'^saved ([0-9a-f]{12}) to ')


def _atomic(path: Path, text: str) -> None:
    # a dot-name temp file: agitmem ignores those, so a concurrent save
    # sees the old content or the new one, never half of it
    tmp = path.with_name(f'.{path.name}.{threading.get_ident()}')
    tmp.write_text(text)
    os.replace(tmp, path)


def _race(workers: int, body: Callable[[int], list[str]]) -> list[list[str]]:
    """Run body(worker) in `workers` threads started together; re-raise the
    first failure."""
    barrier = threading.Barrier(workers)
    results: list[list[str]] = [[] for _ in range(workers)]
    errors: list[BaseException] = []

    def run(w: int) -> None:
        try:
            barrier.wait()
            results[w] = body(w)
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _chain(repo: Path) -> list[tuple[str, list[str]]]:
    """(commit, parents) of the ref's history, newest first."""
    rows = git('rev-list', '--parents', REF, cwd=repo).splitlines()
    return [(r.split()[0], r.split()[1:]) for r in rows]


def _assert_linear_and_nothing_lost(repo: Path) -> list[str]:
    """One chain, root to tip, in which every commit was the ref's tip at
    some point (the reflog) with the tip before it as parent."""
    chain = _chain(repo)
    for i, (sha, parents) in enumerate(chain):
        if i == len(chain) - 1:
            assert parents == [], (sha, parents)
        else:
            assert parents == [chain[i + 1][0]], (sha, parents)
    tips = git('reflog', 'show', '--format=%H', REF, cwd=repo).split()
    assert tips == [sha for sha, _ in chain]
    return tips


def _assert_fsck_clean(repo: Path) -> None:
    proc = run('git', 'fsck', '--strict', '--no-dangling', '--no-progress', cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '', proc.stdout
    assert proc.stderr.strip() == '', proc.stderr


def _assert_worktree_matches_tip(repo: Path) -> None:
    status = json.loads(ok('status', '--json', cwd=repo))
    assert status['changed'] == []
    on_ref = set(git('ls-tree', '-r', '--name-only', REF, cwd=repo).split())
    on_disk = {
        p.relative_to(repo / '.agent' / 'memory').as_posix()
        for p in (repo / '.agent' / 'memory').rglob('*')
        if p.is_file() and not p.name.startswith('.')
    }
    assert on_ref == on_disk | {'config.yaml'}
    for name in sorted(on_disk):
        shown = git('cat-file', 'blob', f'{REF}:{name}', cwd=repo)
        assert shown == mem(repo, name).read_text(), name


def _own_file_saves(repo: Path, workers: int, saves: int) -> None:
    def body(w: int) -> list[str]:
        saved = []
        path = mem(repo, f'p{w}.md')
        for k in range(saves):
            _atomic(path, f'- p{w} save {k:03d}\n')
            proc = agitmem('save', '-m', f'p{w} {k}', cwd=repo)
            assert proc.returncode == 0, (w, k, proc.stdout, proc.stderr)
            assert proc.stderr == '', proc.stderr
            m = _SAVED.match(proc.stdout)
            if m:
                saved.append(m[1])
            else:
                assert proc.stdout.startswith('nothing to save'), proc.stdout
        return saved

    before = _chain(repo)
    saved = [s for ss in _race(workers, body) for s in ss]

    tips = _assert_linear_and_nothing_lost(repo)
    new = tips[:len(tips) - len(before)]
    # every commit a writer reported is in history, each exactly once, and
    # every new commit was reported by the writer that made it
    assert sorted(saved) == sorted(sha[:12] for sha in new)

    # all workers x saves contents are in some commit of the history
    patch = git('log', '-p', '--format=', '--no-color', REF, cwd=repo)
    held = set(re.findall(r'^\+- (p\d+ save \d{3})$', patch, re.MULTILINE))
    want = {f'p{w} save {k:03d}' for w in range(workers) for k in range(saves)}
    assert want - held == set()
    assert held == want
    print(
        f'\n{workers} processes x {saves} saves: all {len(want)} contents held, '
        f'in {len(new)} linear commits',
    )

    _assert_fsck_clean(repo)
    out = ok('save', cwd=repo)
    assert out.startswith('nothing to save'), out
    _assert_worktree_matches_tip(repo)
    for w in range(workers):
        assert mem(repo, f'p{w}.md').read_text() == f'- p{w} save {saves - 1:03d}\n'


@pytest.mark.parametrize('workers,saves', [
    pytest.param(*CONCURRENCY_SHORT, id='short'),
    pytest.param(*CONCURRENCY_FULL, id='full', marks=pytest.mark.slow),
])
def test_concurrent_saves_keep_every_change(memrepo: Path, workers: int, saves: int) -> None:
    _own_file_saves(memrepo, workers, saves)


def test_concurrent_notes_keep_every_note(memrepo: Path) -> None:
    """`note` reads notes.md, appends and writes it back: concurrent notes
    in one worktree must not overwrite each other."""
    workers, notes = 4, 5

    def body(w: int) -> list[str]:
        for k in range(notes):
            proc = agitmem('note', f'n{w}-{k}', cwd=memrepo)
            assert proc.returncode == 0, (w, k, proc.stdout, proc.stderr)
        return []

    _race(workers, body)
    text = mem(memrepo, 'notes.md').read_text()
    found = set(re.findall(r' (n\d+-\d+)$', text, re.MULTILINE))
    assert found == {f'n{w}-{k}' for w in range(workers) for k in range(notes)}
    _assert_linear_and_nothing_lost(memrepo)
    _assert_fsck_clean(memrepo)
    assert ok('save', cwd=memrepo).startswith('nothing to save')
    _assert_worktree_matches_tip(memrepo)


def test_concurrent_state_sets_count_every_step(memrepo: Path) -> None:
    workers, sets = 4, 5
    step0 = json.loads(mem(memrepo, 'state.json').read_text()).get('step', 0)

    def body(w: int) -> list[str]:
        for k in range(sets):
            proc = agitmem('state', 'set', f'p{w}={k}', cwd=memrepo)
            assert proc.returncode == 0, (w, k, proc.stdout, proc.stderr)
        return []

    _race(workers, body)
    state = json.loads(mem(memrepo, 'state.json').read_text())
    assert state['step'] == step0 + workers * sets
    assert {state[f'p{w}'] for w in range(workers)} == {str(sets - 1)}
    _assert_linear_and_nothing_lost(memrepo)
    assert ok('save', cwd=memrepo).startswith('nothing to save')
    _assert_worktree_matches_tip(memrepo)


def test_concurrent_fragments_get_distinct_ids(memrepo: Path) -> None:
    workers, adds = 4, 4

    def body(w: int) -> list[str]:
        for k in range(adds):
            proc = agitmem('fragment', 'add', '--goal', f'g{w}-{k}', '--next', 'n', cwd=memrepo)
            assert proc.returncode == 0, (w, k, proc.stdout, proc.stderr)
        return []

    _race(workers, body)
    lines = mem(memrepo, 'fragments.jsonl').read_text().splitlines()
    frags = [json.loads(ln) for ln in lines if ln.strip()]
    assert sorted(f['goal'] for f in frags) == sorted(
        f'g{w}-{k}' for w in range(workers) for k in range(adds)
    )
    assert len({f['id'] for f in frags}) == len(frags)
    _assert_linear_and_nothing_lost(memrepo)
    assert ok('save', cwd=memrepo).startswith('nothing to save')
    _assert_worktree_matches_tip(memrepo)
