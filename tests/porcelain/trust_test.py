"""A memory commit fetched from a remote is untrusted input (issue 10, item
1): every command that turns its tree into files, or reads one, refuses an
entry that could reach outside .agent/memory (or is not a regular file)
with one line naming it, and writes nothing."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from testing import gitserver
from testing.crafted import hostile_commit
from testing.crafted import planted
from testing.crafted import variants
from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

# a module fixture builds what every test here reads: the suite runs with
# `--dist loadfile`, so the module stays on one worker, which builds it once

MAIN = 'refs/agitmem/heads/main'
VARIANTS = sorted(variants(Path('/x')))


@pytest.fixture(scope='module')
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote with code and memory on main and feat (built once)."""
    root = tmp_path_factory.mktemp('origin')
    # module scope: the conftest's per-test identity and HOME are not set yet
    with pytest.MonkeyPatch.context() as mp:
        gitconfig = root / 'gitconfig'
        gitconfig.write_text('[user]\n\tname = Test User\n\temail = test@example.com\n')
        mp.setenv('HOME', str(root))
        mp.setenv('GIT_CONFIG_GLOBAL', str(gitconfig))
        mp.setenv('GIT_CONFIG_NOSYSTEM', '1')
        mp.setenv('AGITMEM_HOME', str(root / '.agent'))
        mp.delenv('AGITMEM_REF', raising=False)
        return _origin(root)


def _origin(root: Path) -> Path:
    bare, src = gitserver.seeded(root)
    ok('init', cwd=src)
    ok('note', 'a note from the origin', cwd=src)
    git('branch', 'feat', cwd=src)
    git('update-ref', 'refs/agitmem/heads/feat', MAIN, cwd=src)
    git('push', '-q', str(bare), 'main', 'feat', 'refs/agitmem/heads/*:refs/agitmem/heads/*', cwd=src)
    return bare


@pytest.fixture
def remote(origin: Path, tmp_path: Path) -> Path:
    path = tmp_path / 'remote.git'
    shutil.copytree(origin, path)
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / 'outside'
    path.mkdir()
    return path


def _poison(remote: Path, outside: Path, variant: str, ref: str = MAIN) -> tuple[str, str]:
    """Put the variant's hostile memory commit on the remote's ref:
    (its id, the entry name the refusal must show)."""
    under, entries, shown = variants(outside)[variant]
    oid = hostile_commit(remote, ref, entries, under=under)
    return oid, shown


def _clone(remote: Path, tmp_path: Path, *, init: bool) -> Path:
    clone = tmp_path / 'clone'
    git('clone', '-q', str(remote), str(clone), cwd=tmp_path)
    if init:
        ok('init', cwd=clone)
    return clone


def _snapshot(clone: Path) -> tuple[dict[str, bytes], str]:
    agent = clone / '.agent'
    files = {
        str(p.relative_to(clone)): p.read_bytes()
        for p in sorted(agent.rglob('*')) if p.is_file() and p.parent.name != 'log'
        and p.name != 'injected_context.txt'
    } if agent.exists() else {}
    return files, git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/agitmem/heads/', 'refs/agitmem/detached/', 'refs/worktree/', cwd=clone)


def _refused(line: str, shown: str) -> None:
    assert 'memory commit refused' in line, line
    assert f'"{shown}"' in line, line


@pytest.mark.parametrize('variant', VARIANTS)
def test_init_in_a_clone_refuses_and_writes_nothing(
        remote: Path, tmp_path: Path, outside: Path, variant: str,
) -> None:
    _, shown = _poison(remote, outside, variant)
    clone = _clone(remote, tmp_path, init=False)
    proc = agitmem('init', cwd=clone)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert 'Traceback' not in proc.stderr
    errors = [x for x in proc.stderr.splitlines() if 'refused' in x]
    assert len(errors) == 1, proc.stderr
    _refused(errors[0], shown)
    assert planted(clone, outside) == []
    assert not (clone / '.agent').exists()  # not half-created
    # and again (the memory refs are fetched now): the same refusal
    _refused(bad('init', cwd=clone), shown)
    assert not (clone / '.agent').exists()


@pytest.mark.parametrize('variant', VARIANTS)
def test_worktree_add_with_git_hooks_writes_nothing(
        remote: Path, tmp_path: Path, outside: Path, variant: str,
) -> None:
    """The clone's main memory is fine; feat's is hostile (fetched by
    init): a worktree on feat gets no .agent/, and says why."""
    _, shown = _poison(remote, outside, variant, 'refs/agitmem/heads/feat')
    clone = _clone(remote, tmp_path, init=True)
    ok('install', 'git', cwd=clone)
    wt = tmp_path / 'wt'
    proc = git_run('worktree', 'add', '-q', str(wt), 'feat', cwd=clone)
    assert 'Traceback' not in proc.stderr
    assert shown in proc.stderr, proc.stderr
    assert planted(wt, outside) == []
    assert not (wt / '.agent').exists()
    assert (wt / 'README').exists()  # the code checkout itself went on


def git_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run('git', *args, cwd=cwd)


def _fetched(remote: Path, tmp_path: Path, outside: Path, variant: str) -> tuple[Path, str, str]:
    """A clone initialised with good memory, then the remote's main memory
    turned hostile and fetched (refs/agitmem/remotes/origin/main)."""
    clone = _clone(remote, tmp_path, init=True)
    oid, shown = _poison(remote, outside, variant)
    ok('fetch', cwd=clone)
    assert tip(clone, 'refs/agitmem/remotes/origin/main') == oid
    return clone, oid, shown


COMMANDS: dict[str, Callable[[str], tuple[str, ...]]] = {
    'rollback': lambda oid: ('rollback', oid),
    'rollback-file': lambda oid: ('rollback', oid, '--file', 'notes.md'),
    'merge': lambda oid: ('merge', 'origin/main'),
    'pull': lambda oid: ('pull',),
    'show': lambda oid: ('show', oid),
    'show-file': lambda oid: ('show', f'{oid}:notes.md'),
    'diff': lambda oid: ('diff', '@', oid),
    'diff-worktree': lambda oid: ('diff', oid),
}


@pytest.mark.parametrize('command', sorted(COMMANDS))
@pytest.mark.parametrize('variant', VARIANTS)
def test_every_reader_of_a_fetched_tree_refuses(
        remote: Path, tmp_path: Path, outside: Path, variant: str, command: str,
) -> None:
    clone, oid, shown = _fetched(remote, tmp_path, outside, variant)
    mem(clone, 'notes.md').write_text(mem(clone, 'notes.md').read_text() + '- unsaved\n')
    before = _snapshot(clone)
    _refused(bad(*COMMANDS[command](oid), cwd=clone), shown)
    assert _snapshot(clone) == before
    assert planted(clone, outside) == []


def test_git_hooks_do_not_crash_on_a_hostile_merge(
        remote: Path, tmp_path: Path, outside: Path,
) -> None:
    """post-merge merging a fetched hostile memory: one line, exit 0, nothing written."""
    clone = _clone(remote, tmp_path, init=True)
    ok('install', 'git', cwd=clone)
    # the remote's feat gets code and hostile memory
    work = tmp_path / 'work'
    git('clone', '-q', '-b', 'feat', str(remote), str(work), cwd=tmp_path)
    (work / 'feat.txt').write_text('feat\n')
    git('add', '.', cwd=work)
    git('commit', '-q', '-m', 'feat', cwd=work)
    git('push', '-q', 'origin', 'feat', cwd=work)
    _, shown = _poison(remote, outside, 'dotdot-tree', 'refs/agitmem/heads/feat')
    git('fetch', '-q', cwd=clone)
    ok('fetch', cwd=clone)
    before = _snapshot(clone)
    proc = git_run('merge', '-q', '--no-edit', 'origin/feat', cwd=clone)
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr
    line, = proc.stderr.strip().splitlines()
    _refused(line, shown)
    assert _snapshot(clone) == before
    assert planted(clone, outside) == []


def test_init_names_a_config_that_came_with_the_memory(
        remote: Path, tmp_path: Path,
) -> None:
    """A fetched config.yaml adopted by init is announced: where it came
    from and how many enforce rules it brings."""
    src = tmp_path / 'src'
    git('clone', '-q', str(remote), str(src), cwd=tmp_path)
    ok('init', cwd=src)
    cfg = src / '.agent' / 'config.yaml'
    cfg.write_text(cfg.read_text() + 'enforce:\n  - {rule: no TODO, forbid: "TODO"}\n')
    ok('save', cwd=src)
    ok('push', cwd=src)
    clone = tmp_path / 'clone'
    git('clone', '-q', str(remote), str(clone), cwd=tmp_path)
    out = ok('init', cwd=clone)
    line, = [x for x in out.splitlines() if 'config.yaml is the one on' in x]
    assert MAIN in line and '1 enforce rule' in line and 'review it' in line
    assert 'enforce' in (clone / '.agent' / 'config.yaml').read_text()
    # the templates' config, not adopted: nothing said
    fresh = tmp_path / 'fresh'
    fresh.mkdir()
    git('init', '-q', cwd=fresh)
    assert 'is the one on' not in ok('init', cwd=fresh)
