"""Everyday git workflows around agitmem, run for real: after each one the
memory is right (its ref, the files in .agent/memory/, what `load` gives
the agent).  Stash, submodules, sparse/shallow/partial clones, gc, LFS,
CRLF, husky v8/v9, the pre-commit framework, worktrees of a bare
repository, bisect, odd paths.  git-lfs must be installed (.ci/run does):
its test fails without it, it never skips."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing import husky
from testing.util import agitmem
from testing.util import bad
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

GOAL = 'ship the loader move'
NEXT = 'run the loader tests'


def _goal(repo: Path) -> str:
    return str(json.loads(mem(repo, 'state.json').read_text()).get('current_goal'))


def _loaded(repo: Path, goal: str = GOAL) -> str:
    """`load` gives the agent this goal; returns the block."""
    out = ok('load', cwd=repo)
    assert f'current_goal: {goal}' in out.splitlines(), out
    return out


def _set_goal(repo: Path, goal: str = GOAL) -> None:
    ok('state', 'set', f'current_goal={goal}', f'next_intent={NEXT}', cwd=repo)


def _edit_memory(repo: Path, note: str = 'progress') -> None:
    with open(mem(repo, 'notes.md'), 'a') as f:
        f.write(f'- {note}\n')


def _commit(repo: Path, name: str = 'src/app.py', msg: str = 'change') -> str:
    """A code commit, with a memory edit not saved yet (what post-commit
    records)."""
    if (repo / '.agent' / 'memory').is_dir():
        _edit_memory(repo, f'{msg}: {name}')
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, 'a') as f:
        f.write('# more\n')
    git('add', '--', name, cwd=repo)
    proc = run('git', 'commit', '-q', '-m', msg, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return git('rev-parse', 'HEAD', cwd=repo).strip()


def _recorded(repo: Path, head: str, ref: str = 'refs/agitmem/heads/main') -> None:
    """post-commit recorded the memory at code commit `head`."""
    msg = git('log', '-1', '--format=%B', ref, cwd=repo)
    assert f'Code-Head: {head}' in msg, msg


def _session_start(repo: Path) -> subprocess.CompletedProcess[str]:
    proc = agitmem('hook', 'session-start', '--agent', 'claude', cwd=repo, input=json.dumps({
        'hook_event_name': 'SessionStart', 'source': 'startup', 'session_id': 's',
        'cwd': str(repo),
    }))
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    return proc


def _remote_with_memory(tmp_path: Path, memrepo: Path) -> Path:
    """A bare remote holding main and its memory (the goal set)."""
    _set_goal(memrepo)
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    git('push', '-q', 'origin', 'main', cwd=memrepo)
    ok('push', 'origin', cwd=memrepo)
    assert tip(remote) == tip(memrepo)
    return remote


# -- stash ------------------------------------------------------------------------

def test_stash_keeps_memory_out_of_the_code_stash(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    _set_goal(memrepo)
    before = tip(memrepo)
    (memrepo / 'src' / 'app.py').write_text('changed\n')
    (memrepo / 'new.txt').write_text('untracked\n')
    mem(memrepo, 'notes.md').write_text('# Notes\n- unsaved note\n')
    git('stash', '-q', '-u', cwd=memrepo)  # untracked, but .agent/ is excluded
    assert not (memrepo / 'new.txt').exists()
    assert 'unsaved note' in mem(memrepo, 'notes.md').read_text()
    assert git('stash', 'show', '--include-untracked', '--name-only', cwd=memrepo).split() == ['new.txt', 'src/app.py']
    git('stash', 'pop', '-q', cwd=memrepo)
    assert (memrepo / 'new.txt').exists()
    assert tip(memrepo) == before
    _loaded(memrepo)


def test_stash_all_keeps_agent_in_the_stash_until_pop(memrepo: Path) -> None:
    """issue 19 item 11: `git stash --all` takes .agent/; an agent hook in
    between must not make it again (the pop would fail and keep the
    unsaved memory in the stash), and says where it is."""
    ok('install', 'git', cwd=memrepo)
    _set_goal(memrepo)
    before = tip(memrepo)
    mem(memrepo, 'notes.md').write_text('# Notes\n- unsaved note\n')
    (memrepo / 'src' / 'app.py').write_text('changed\n')
    git('stash', '-q', '--all', cwd=memrepo)
    assert not (memrepo / '.agent').exists()

    proc = _session_start(memrepo)
    assert not (memrepo / '.agent').exists()
    assert '.agent/ is in the stash (stash@{0}; `git stash --all` took it' in proc.stderr
    assert '`git stash pop` puts it back' in proc.stderr
    assert 'lost' not in proc.stderr
    line = bad('load', cwd=memrepo)
    assert 'stash@{0}' in line
    assert 'stash@{0}' in bad('init', cwd=memrepo)  # init would break the pop
    assert not (memrepo / '.agent').exists()
    # another stash on top: the entry holding .agent/ is named
    (memrepo / 'README').write_text('other\n')
    git('stash', '-q', cwd=memrepo)
    assert 'stash@{1}' in bad('status', cwd=memrepo)
    git('stash', 'pop', '-q', cwd=memrepo)

    proc = run('git', 'stash', 'pop', '-q', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert git('stash', 'list', cwd=memrepo) == ''
    assert 'unsaved note' in mem(memrepo, 'notes.md').read_text()
    assert tip(memrepo) == before
    _loaded(memrepo)
    assert 'unsaved' in ok('status', cwd=memrepo)  # still to save, not lost
    ok('save', cwd=memrepo)
    assert 'unsaved note' in git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo)


def test_missing_agent_without_a_stash_is_restored_and_says_what_is_missing(memrepo: Path) -> None:
    _set_goal(memrepo)
    mem(memrepo, 'notes.md').write_text('# Notes\n- unsaved note\n')
    git('clean', '-q', '-fdx', cwd=memrepo)
    proc = _session_start(memrepo)
    said = json.loads(proc.stdout)['systemMessage']
    assert 'no stash holds it' in said and 'not in it' in said
    assert _goal(memrepo) == GOAL


# -- submodules -------------------------------------------------------------------

def test_submodule_memory_is_its_own(memrepo: Path, tmp_path: Path) -> None:
    lib = tmp_path / 'lib'
    lib.mkdir()
    git('init', '-q', cwd=lib)
    (lib / 'lib.py').write_text('x = 1\n')
    git('add', '.', cwd=lib)
    git('commit', '-q', '-m', 'lib', cwd=lib)
    ok('install', 'git', cwd=memrepo)
    _set_goal(memrepo)
    git('submodule', 'add', '-q', str(lib), 'lib', cwd=memrepo)
    _recorded(memrepo, _commit(memrepo, msg='add lib'))

    sub = memrepo / 'lib'
    assert 'no .agent/' in bad('load', cwd=sub)  # the submodule is its own repository
    ok('init', cwd=sub)
    _set_goal(sub, 'fix the lib')
    assert tip(sub) is not None and tip(sub) != tip(memrepo)
    assert git('for-each-ref', '--format=%(refname)', 'refs/agitmem/', cwd=memrepo).split() == ['refs/agitmem/heads/main']
    _loaded(sub, 'fix the lib')
    _loaded(memrepo)
    # a clone with --recurse-submodules: each gets its own memory back
    clone = tmp_path / 'clone'
    git('push', '-q', str(lib), 'HEAD:refs/heads/unused', cwd=sub)
    git('clone', '-q', '--recurse-submodules', str(memrepo), str(clone), cwd=tmp_path)
    ok('init', cwd=clone)
    assert _goal(clone) == GOAL
    assert (clone / 'lib' / 'lib.py').exists()
    assert not (clone / 'lib' / '.agent').exists()


# -- sparse, shallow and partial clones --------------------------------------------

def test_sparse_checkout(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    _set_goal(memrepo)
    (memrepo / 'docs').mkdir()
    (memrepo / 'docs' / 'a.md').write_text('a\n')
    git('add', 'docs', cwd=memrepo)
    git('commit', '-q', '-m', 'docs', cwd=memrepo)
    git('sparse-checkout', 'set', 'src', cwd=memrepo)
    assert not (memrepo / 'docs').exists()
    assert _goal(memrepo) == GOAL  # .agent/ is not the sparse-checkout's
    head = _commit(memrepo)
    _recorded(memrepo, head)
    git('sparse-checkout', 'reapply', cwd=memrepo)
    git('checkout', '-q', '-b', 'side', cwd=memrepo)
    _set_goal(memrepo, 'side goal')
    git('checkout', '-q', 'main', cwd=memrepo)
    assert _goal(memrepo) == GOAL
    git('sparse-checkout', 'disable', cwd=memrepo)
    assert (memrepo / 'docs' / 'a.md').exists()
    _loaded(memrepo)
    assert 'side goal' in git('show', 'refs/agitmem/heads/side:state.json', cwd=memrepo)


def test_shallow_clone_gets_the_memory(memrepo: Path, tmp_path: Path) -> None:
    for i in range(3):
        _commit(memrepo, f'f{i}.py')
    remote = _remote_with_memory(tmp_path, memrepo)
    clone = tmp_path / 'clone'
    git('clone', '-q', '--depth', '1', f'file://{remote}', str(clone), cwd=tmp_path)
    assert git('rev-parse', '--is-shallow-repository', cwd=clone).strip() == 'true'
    ok('init', cwd=clone)
    assert tip(clone) == tip(memrepo)
    _loaded(clone)
    ok('install', 'git', cwd=clone)
    _set_goal(clone, 'shallow goal')
    head = _commit(clone)
    _recorded(clone, head)
    ok('push', 'origin', cwd=clone)
    assert 'shallow goal' in git('show', 'refs/agitmem/heads/main:state.json', cwd=remote)


@pytest.mark.parametrize('spec', ('blob:none', 'tree:0'))
def test_partial_clone_gets_the_memory(memrepo: Path, tmp_path: Path, spec: str) -> None:
    remote = _remote_with_memory(tmp_path, memrepo)
    git('config', 'uploadpack.allowFilter', 'true', cwd=remote)
    clone = tmp_path / 'clone'
    git('clone', '-q', f'--filter={spec}', f'file://{remote}', str(clone), cwd=tmp_path)
    assert git('config', 'remote.origin.promisor', cwd=clone).strip() == 'true'
    ok('init', cwd=clone)
    assert tip(clone) == tip(memrepo)
    _loaded(clone)
    assert 'fsck' not in ok('log', cwd=clone)
    ok('install', 'git', cwd=clone)
    _set_goal(clone, 'partial goal')
    _recorded(clone, _commit(clone))
    ok('push', 'origin', cwd=clone)
    ok('pull', 'origin', cwd=memrepo)
    assert _goal(memrepo) == 'partial goal'


# -- gc ----------------------------------------------------------------------------

def test_gc_prune_now_keeps_every_memory_commit(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    for i in range(3):
        _set_goal(memrepo, f'goal {i}')
        _commit(memrepo, f'f{i}.py')
    git('checkout', '-q', '-b', 'side', cwd=memrepo)
    _set_goal(memrepo, 'side goal')
    git('checkout', '-q', 'main', cwd=memrepo)
    git('branch', '-q', '-D', 'side', cwd=memrepo)  # the code branch goes, its memory stays
    refs = git('for-each-ref', 'refs/agitmem/', cwd=memrepo)
    n = count(memrepo)
    git('reflog', 'expire', '--expire=now', '--all', cwd=memrepo)
    git('gc', '-q', '--prune=now', cwd=memrepo)
    assert git('for-each-ref', 'refs/agitmem/', cwd=memrepo) == refs
    assert count(memrepo) == n
    assert run('git', 'fsck', '--no-dangling', cwd=memrepo).returncode == 0
    assert 'side goal' in git('show', 'refs/agitmem/heads/side:state.json', cwd=memrepo)
    _loaded(memrepo, 'goal 2')
    assert len(ok('log', cwd=memrepo).splitlines()) >= 3


# -- LFS -----------------------------------------------------------------------------

def test_lfs_hooks_chained_and_memory_recorded(memrepo: Path, tmp_path: Path) -> None:
    assert shutil.which('git-lfs'), 'git-lfs is not installed (.ci/run installs it)'
    git('lfs', 'install', '--skip-repo', cwd=memrepo)  # the filters, in the test's own global config
    git('lfs', 'install', '--local', cwd=memrepo)
    assert 'git lfs' in (memrepo / '.git' / 'hooks' / 'pre-push').read_text()
    ok('install', 'git', cwd=memrepo)
    assert 'git lfs' in (memrepo / '.git' / 'hooks' / 'pre-push.agitmem-chained').read_text()
    git('lfs', 'track', '*.bin', cwd=memrepo)
    (memrepo / 'blob.bin').write_bytes(b'\0binary\1' * 1000)
    git('add', '.gitattributes', 'blob.bin', cwd=memrepo)
    _set_goal(memrepo)
    _edit_memory(memrepo)
    proc = run('git', 'commit', '-q', '-m', 'lfs', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    _recorded(memrepo, git('rev-parse', 'HEAD', cwd=memrepo).strip())
    assert 'oid sha256:' in git('cat-file', '-p', 'HEAD:blob.bin', cwd=memrepo)  # a pointer

    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', f'file://{remote}', cwd=memrepo)
    proc = run('git', 'push', 'origin', 'main', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert (remote / 'lfs' / 'objects').is_dir()  # git lfs's pre-push ran
    assert tip(remote) == tip(memrepo)  # and agitmem's pushed the memory
    clone = tmp_path / 'clone'
    git('clone', '-q', f'file://{remote}', str(clone), cwd=tmp_path)
    assert (clone / 'blob.bin').read_bytes() == b'\0binary\1' * 1000
    ok('init', cwd=clone)
    _loaded(clone)


# -- CRLF ----------------------------------------------------------------------------

@pytest.mark.parametrize('how', ('autocrlf', 'gitattributes'))
def test_crlf_settings_leave_memory_files_lf(memrepo: Path, how: str) -> None:
    if how == 'autocrlf':
        git('config', 'core.autocrlf', 'true', cwd=memrepo)
    else:
        (memrepo / '.gitattributes').write_text('* text=auto eol=crlf\n')
        git('add', '.gitattributes', cwd=memrepo)
        git('commit', '-q', '-m', 'eol', cwd=memrepo)
    ok('install', 'git', cwd=memrepo)
    _set_goal(memrepo)
    ok('note', 'a note', cwd=memrepo)
    git('checkout', '-q', '-b', 'side', cwd=memrepo)
    _set_goal(memrepo, 'side goal')
    git('checkout', '-q', 'main', cwd=memrepo)  # memory checked out again
    for name in ('state.json', 'notes.md', 'tattoo.md', 'snapshot.md'):
        assert b'\r' not in mem(memrepo, name).read_bytes(), name
        assert b'\r' not in git('show', f'refs/agitmem/heads/main:{name}', cwd=memrepo).encode()
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 2\n')
    git('add', 'src/app.py', cwd=memrepo)
    _edit_memory(memrepo)
    proc = run('git', 'commit', '-q', '-m', 'crlf', cwd=memrepo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _recorded(memrepo, git('rev-parse', 'HEAD', cwd=memrepo).strip())
    ok('check', cwd=memrepo)
    _loaded(memrepo)
    assert 'no unsaved' in ok('status', cwd=memrepo)


# -- husky ----------------------------------------------------------------------------

def test_husky_v9_keeps_running_after_install_git(memrepo: Path) -> None:
    """issue 19 item 10: husky v9's .husky/_/<hook> stubs work out what to
    run from their own name."""
    husky.install_v9(memrepo)
    husky.add_v9(memrepo, 'pre-commit', 'echo "husky pre-commit $*" >> husky.log\n')
    husky.add_v9(memrepo, 'commit-msg', 'echo "husky commit-msg $1" >> husky.log\n')
    husky.add_v9(memrepo, 'post-checkout', 'echo "husky post-checkout" >> husky.log\n')
    git('add', '.husky', cwd=memrepo)
    assert git('ls-files', '.husky', cwd=memrepo).split() == [
        '.husky/commit-msg', '.husky/post-checkout', '.husky/pre-commit',
    ]  # .husky/_/ is husky's own, ignored
    out = ok('install', 'git', cwd=memrepo)
    assert 'installed .husky/_/pre-commit (the hook that was there is now pre-commit.agitmem-chained; it runs first)' in out
    _set_goal(memrepo)
    head = _commit(memrepo)
    _recorded(memrepo, head)
    assert (memrepo / 'husky.log').read_text().splitlines() == [
        'husky pre-commit ', 'husky commit-msg .git/COMMIT_EDITMSG',
    ]
    # a failing husky script still blocks the commit
    husky.add_v9(memrepo, 'pre-commit', 'echo lint failed >&2\nexit 3\n')
    (memrepo / 'src' / 'app.py').write_text('x\n')
    git('add', 'src/app.py', cwd=memrepo)
    proc = run('git', 'commit', '-q', '-m', 'blocked', cwd=memrepo)
    assert proc.returncode != 0 and 'husky - pre-commit script failed (code 3)' in proc.stdout + proc.stderr
    assert git('rev-parse', 'HEAD', cwd=memrepo).strip() == head
    husky.add_v9(memrepo, 'pre-commit', 'echo "husky pre-commit" >> husky.log\n')

    # `npm install` runs husky again: its stubs over our shims
    husky.install_v9(memrepo)
    proc = agitmem('doctor', cwd=memrepo)
    assert proc.returncode == 1 and 'fix: agitmem install git' in proc.stdout
    assert 'installed .husky/_/pre-commit' in ok('install', 'git', cwd=memrepo)
    git('checkout', '-q', '-b', 'side', cwd=memrepo)
    assert (memrepo / 'husky.log').read_text().splitlines()[-1] == 'husky post-checkout'
    _set_goal(memrepo, 'side goal')
    git('checkout', '-q', 'main', cwd=memrepo)
    assert _goal(memrepo) == GOAL  # agitmem's post-checkout ran too

    out = ok('uninstall', 'git', cwd=memrepo)
    assert 'removed .husky/_/pre-commit (the hook it chained is back)' in out
    d = memrepo / '.husky' / '_'
    assert not list(d.glob('*.agitmem-chained'))
    for hook in husky.V9_HOOKS:
        assert (d / hook).read_text() == husky.V9_STUB
    (memrepo / 'husky.log').unlink()
    n = count(memrepo)
    _commit(memrepo)
    assert (memrepo / 'husky.log').read_text().splitlines() == ['husky pre-commit', 'husky commit-msg .git/COMMIT_EDITMSG']
    assert count(memrepo) == n  # agitmem's hooks are gone


def test_husky_v8_tracked_hooks_are_refused_and_keep_running(memrepo: Path) -> None:
    husky.install_v8(memrepo)
    husky.add_v8(memrepo, 'pre-commit', 'echo "husky pre-commit" >> husky.log')
    git('add', '.husky', cwd=memrepo)
    git('commit', '-q', '-m', 'husky', cwd=memrepo)
    line = bad('install', 'git', cwd=memrepo)
    assert line == (
        'agitmem: .husky/pre-commit is tracked in this repository; agitmem '
        'will not move it: add the line `agitmem hook pre-commit "$@"` to it '
        'yourself'
    )
    assert not list((memrepo / '.husky').glob('*agitmem*'))
    # what the refusal says to do, done: husky.sh runs the script again
    # (`sh -e "$0"`), the line runs once
    hook = memrepo / '.husky' / 'post-commit'
    husky.add_v8(memrepo, 'post-commit', 'echo "husky post-commit" >> husky.log\nagitmem hook post-commit "$@"')
    assert hook.exists()
    _set_goal(memrepo)
    (memrepo / 'husky.log').unlink()
    n = count(memrepo)
    head = _commit(memrepo)
    assert (memrepo / 'husky.log').read_text().splitlines() == ['husky pre-commit', 'husky post-commit']
    assert count(memrepo) == n + 1
    _recorded(memrepo, head)


def test_husky_v8_untracked_is_chained_and_runs_once(memrepo: Path) -> None:
    husky.install_v8(memrepo)
    husky.add_v8(memrepo, 'post-commit', 'echo "husky post-commit $(basename "$0")" >> husky.log')
    ok('install', 'git', cwd=memrepo)  # .husky/post-commit is not tracked
    _set_goal(memrepo)
    n = count(memrepo)
    head = _commit(memrepo)
    assert (memrepo / 'husky.log').read_text() == 'husky post-commit post-commit\n'
    assert count(memrepo) == n + 1  # agitmem's post-commit once, not twice
    _recorded(memrepo, head)


# -- the pre-commit framework --------------------------------------------------------

def test_pre_commit_framework_with_agitmems_own_hooks(
        memrepo: Path, hook_repo: tuple[Path, str], pre_commit_home: Path,
        monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv('PRE_COMMIT_HOME', str(pre_commit_home))
    path, sha = hook_repo
    config = {
        'default_install_hook_types': ['pre-commit', 'post-commit', 'post-checkout'],
        'repos': [{
            'repo': str(path), 'rev': sha,
            'hooks': [{'id': i} for i in ('agitmem-check', 'agitmem-record', 'agitmem-branch')],
        }],
    }
    (memrepo / '.pre-commit-config.yaml').write_text(yaml.safe_dump(config))
    git('add', '.pre-commit-config.yaml', cwd=memrepo)
    git('commit', '-q', '-m', 'pre-commit config', cwd=memrepo)
    proc = run(sys.executable, '-m', 'pre_commit', 'install', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert 'pre-commit' in bad('install', 'git', cwd=memrepo)  # not over pre-commit's
    _set_goal(memrepo)
    _recorded(memrepo, _commit(memrepo))
    git('checkout', '-q', '-b', 'side', cwd=memrepo)
    _set_goal(memrepo, 'side goal')
    git('checkout', '-q', 'main', cwd=memrepo)
    assert _goal(memrepo) == GOAL
    _loaded(memrepo)


# -- worktrees of a bare repository ----------------------------------------------------

def test_worktrees_of_a_bare_repository(memrepo: Path, tmp_path: Path) -> None:
    bare = tmp_path / 'project.git'
    git('clone', '-q', '--bare', str(memrepo), str(bare), cwd=tmp_path)
    main = tmp_path / 'main'
    side = tmp_path / 'side'
    git('worktree', 'add', '-q', str(main), 'main', cwd=bare)
    git('worktree', 'add', '-q', '-b', 'side', str(side), 'main', cwd=bare)
    ok('init', cwd=main)
    ok('install', 'git', cwd=main)
    assert (bare / 'hooks' / 'post-commit').exists()  # one hooks directory for all
    _set_goal(main)
    ok('init', cwd=side)
    _set_goal(side, 'side goal')
    _recorded(main, _commit(main))
    _recorded(side, _commit(side), 'refs/agitmem/heads/side')
    refs = git('for-each-ref', '--format=%(refname)', 'refs/agitmem/heads/', cwd=bare).split()
    assert refs == ['refs/agitmem/heads/main', 'refs/agitmem/heads/side']
    assert 'side goal' in git('show', 'refs/agitmem/heads/side:state.json', cwd=bare)
    _loaded(main)
    _loaded(side, 'side goal')
    ok('check', cwd=side)


# -- bisect ------------------------------------------------------------------------------

def test_bisect_leaves_the_branch_memory_alone(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    _set_goal(memrepo)
    shas = [_commit(memrepo, f'f{i}.py') for i in range(6)]
    refs = git('for-each-ref', 'refs/agitmem/', cwd=memrepo)
    git('bisect', 'start', shas[-1], shas[0], cwd=memrepo)
    while True:
        current = git('rev-parse', 'HEAD', cwd=memrepo).strip()
        assert _goal(memrepo) == GOAL  # the branch's memory, not another
        verdict = 'bad' if shas.index(current) >= 3 else 'good'
        out = git('bisect', verdict, cwd=memrepo)
        if 'is the first bad commit' in out:
            break
    assert shas[3] in out
    _loaded(memrepo)
    git('bisect', 'reset', cwd=memrepo)
    assert git('for-each-ref', 'refs/agitmem/', cwd=memrepo) == refs
    assert _goal(memrepo) == GOAL
    _loaded(memrepo)


# -- odd paths ------------------------------------------------------------------------------

@pytest.mark.parametrize('name', ('my project', 'проект-记忆', '-dash'))
def test_odd_paths(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    root.mkdir()
    git('init', '-q', cwd=root)
    odd = f'src/{name} file.py'
    (root / 'src').mkdir()
    (root / odd).write_text('x = 1\n')
    git('add', '.', cwd=root)
    git('commit', '-q', '-m', 'initial', cwd=root)
    ok('init', cwd=root)
    ok('install', 'git', cwd=root)
    ok('state', 'set', f'current_goal={GOAL}', f'current_file={odd}', cwd=root)
    head = _commit(root, odd)
    _recorded(root, head)
    ok('check', cwd=root)
    out = _loaded(root)
    assert f'current_file: {odd}' in out
    git('checkout', '-q', '-b', 'side', cwd=root)
    _set_goal(root, 'branch goal')
    git('checkout', '-q', 'main', cwd=root)
    assert _goal(root) == GOAL
    assert os.path.isdir(root / '.agent' / 'memory')
