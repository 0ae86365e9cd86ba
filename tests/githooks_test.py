"""`agitmem install git` / `uninstall git` and `agitmem hook <git event>`.
The issue's scenarios through these shims are in precommit_test.py, next
to the same scenarios through the pre-commit framework."""
from __future__ import annotations

import json
import os
import subprocess
import re
import shlex
import shutil
import stat
import sys
from pathlib import Path

import pytest

from agitmem import githooks
from agitmem.commands.githook import githook
from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import bad
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run

HOOKS = ('pre-commit', 'commit-msg', 'post-commit', 'pre-push', 'post-checkout', 'post-merge', 'post-rewrite')
# a hook of the user's own: records how it was called
RECORDER = '#!/bin/sh\necho "$(basename "$0") $* [$(cat)]" >> "$(git rev-parse --show-toplevel)/ran.log"\n'


def _hooks(repo: Path) -> Path:
    return repo / '.git' / 'hooks'


def _write_hook(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _commit(repo: Path, msg: str = 'change', **kw: str) -> subprocess.CompletedProcess[str]:
    with open(repo / 'src' / 'app.py', 'a') as f:
        f.write('# more\n')
    git('add', 'src/app.py', cwd=repo)
    return run('git', 'commit', '-q', '-m', msg, cwd=repo, **kw)  # type: ignore[arg-type]


def test_install_writes_marked_executable_shims(memrepo: Path) -> None:
    out = ok('install', 'git', cwd=memrepo)
    assert out.splitlines() == [f'installed .git/hooks/{h}' for h in HOOKS]
    for h in HOOKS:
        path = _hooks(memrepo) / h
        text = path.read_text()
        assert text.startswith(f'#!/bin/sh\n# agitmem-shim v{githooks.VERSION}\n')
        assert f'agitmem hook {h} "$@"' in text
        python, = re.findall(r'(\S+) -P -m agitmem hook ' + h, text)
        assert os.access(python, os.X_OK)
        assert path.stat().st_mode & stat.S_IXUSR


def test_install_is_idempotent(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    before = {h: (_hooks(memrepo) / h).read_text() for h in HOOKS}
    assert ok('install', 'git', cwd=memrepo) == 'agitmem hooks for git already installed: nothing changed\n'
    assert {h: (_hooks(memrepo) / h).read_text() for h in HOOKS} == before
    assert not list(_hooks(memrepo).glob('*.agitmem-chained'))


def test_install_updates_an_older_shim(memrepo: Path) -> None:
    _write_hook(_hooks(memrepo) / 'pre-commit', '#!/bin/sh\n# agitmem-shim v0\nexit 0\n')
    out = ok('install', 'git', cwd=memrepo)
    assert 'updated .git/hooks/pre-commit' in out.splitlines()
    assert f'# agitmem-shim v{githooks.VERSION}' in (_hooks(memrepo) / 'pre-commit').read_text()
    assert not (_hooks(memrepo) / 'pre-commit.agitmem-chained').exists()


def _starts_logged(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH with an `agitmem` first that writes down each hook it is
    started for, then runs this agitmem: what the shims start."""
    bin_dir = tmp_path / 'logging-bin'
    log = tmp_path / 'started.log'
    real = shlex.join(agitmem_argv())
    _write_hook(bin_dir / 'agitmem', f'#!/bin/sh\necho "$2" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
    return {'PATH': f'{bin_dir}{os.pathsep}{os.environ["PATH"]}'}, log


def _started(log: Path) -> list[str]:
    started = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return started


def test_install_works_before_agitmem_init(repo: Path, tmp_path: Path) -> None:
    ok('install', 'git', cwd=repo)
    env, log = _starts_logged(tmp_path)
    # no .agent/: nothing to check, and the shims start no Python to say so
    assert _commit(repo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == []
    assert not (repo / '.agent').exists()


def test_commit_msg_shim_starts_nothing_while_config_has_no_message_rule(memrepo: Path, tmp_path: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    env, log = _starts_logged(tmp_path)
    idle = memrepo / '.git' / 'agitmem' / githooks.COMMIT_MSG_IDLE
    config = memrepo / '.agent' / 'config.yaml'
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == ['pre-commit', 'commit-msg', 'post-commit']
    # the hook found no commit_msg rule in this config.yaml: it kept a copy
    assert idle.read_bytes() == config.read_bytes()
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == ['pre-commit']  # (post-commit: the memory is saved as it is)
    # AGITMEM_SKIP is announced by each hook, as before
    proc = _commit(memrepo, env={**env, 'AGITMEM_SKIP': 'secrets'})  # type: ignore[arg-type]
    assert proc.returncode == 0
    assert _started(log) == ['pre-commit', 'commit-msg']
    assert proc.stderr.count('agitmem: skipped (AGITMEM_SKIP): secrets') == 2
    # a rule for the message: the copy no longer matches, the hook runs
    with open(mem(memrepo, 'tattoo.md'), 'a') as f:
        f.write('- commit messages start with a ticket id\n')
    config.write_text(
        'enforce:\n- rule: commit messages start with a ticket id\n'
        '  commit_msg: "^[A-Z]+-[0-9]+ "\n',
    )
    proc = _commit(memrepo, 'no ticket', env=env)  # type: ignore[arg-type]
    assert proc.returncode != 0
    assert 'error enforce commit message breaks tattoo rule' in proc.stderr
    assert _started(log) == ['pre-commit', 'commit-msg']
    assert not idle.exists()
    assert _commit(memrepo, 'CFG-1 with a ticket', env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == ['pre-commit', 'commit-msg', 'post-commit']
    assert not idle.exists()


def test_post_commit_shim_starts_nothing_while_the_memory_is_saved_as_it_is(memrepo: Path, tmp_path: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    env, log = _starts_logged(tmp_path)
    saved = memrepo / '.git' / 'agitmem' / githooks.POST_COMMIT_IDLE
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == ['pre-commit', 'commit-msg', 'post-commit']
    # the hook found the memory saved as it is: it kept the list of its files
    top = git('rev-parse', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    assert (saved / 'head').read_text().splitlines()[2:] == ['refs/heads/main', 'refs/agitmem/heads/main', top]
    assert '.agent/memory/notes.md\n' in (saved / 'files').read_text()
    n = count(memrepo)
    for _ in range(2):
        proc = _commit(memrepo, env=env)  # type: ignore[arg-type]
        assert (proc.returncode, proc.stdout) == (0, '')
        assert 'agitmem: memory saved' not in proc.stderr
        assert _started(log) == ['pre-commit']
    assert count(memrepo) == n
    # what the hook does not read changes nothing: a dot-name (an
    # editor's), a file's mode
    mem(memrepo, '.notes.md.swp').write_text('x')
    mem(memrepo, 'notes.md').chmod(0o755)
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == ['pre-commit']
    assert count(memrepo) == n
    # an edit, a new file in archive/, a file removed: the hook saves each
    for change in (
            lambda: mem(memrepo, 'notes.md').write_text('- progress\n'),
            lambda: (mem(memrepo, 'archive') / 'old.md').write_text('- old\n'),
            lambda: (mem(memrepo, 'archive') / 'old.md').unlink(),
    ):
        (mem(memrepo, 'archive')).mkdir(exist_ok=True)
        change()
        proc = _commit(memrepo, env=env)  # type: ignore[arg-type]
        assert 'agitmem: memory saved to refs/agitmem/heads/main' in proc.stderr
        assert _started(log) == ['pre-commit', 'post-commit']
        n += 1
        assert count(memrepo) == n
        # the next commit finds it saved: the hook's save kept the list
        for _ in range(2):
            assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
            assert _started(log) == ['pre-commit']
        assert count(memrepo) == n
    # the memory saved by a command: the tip moved, and the save kept the
    # list: the shim starts nothing, the hook would have saved nothing
    mem(memrepo, 'notes.md').write_text('- saved by hand\n')
    ok('save', '-m', 'by hand', cwd=memrepo)
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _started(log) == ['pre-commit']
    assert count(memrepo) == n + 1
    # ... unless the memory changed after it
    mem(memrepo, 'notes.md').write_text('- saved by the hook\n')
    proc = _commit(memrepo, env=env)  # type: ignore[arg-type]
    assert 'agitmem: memory saved to refs/agitmem/heads/main' in proc.stderr
    assert _started(log) == ['pre-commit', 'post-commit']
    assert count(memrepo) == n + 2


@pytest.mark.parametrize('case', (
    'merge', 'symlink', 'fifo', 'conflict', 'base', 'detached', 'agitmem-ref', 'config', 'crlf',
))
def test_post_commit_shim_leaves_what_it_is_unsure_of_to_the_hook(
        memrepo: Path, tmp_path: Path, case: str,
) -> None:
    """Each case the hook has something to do or say for: it runs."""
    ok('install', 'git', cwd=memrepo)
    env, log = _starts_logged(tmp_path)
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    _started(log)
    notes = mem(memrepo, 'notes.md')
    kw: dict[str, str] = dict(env)
    if case == 'merge':
        # a merge committed by hand: the hook merges the branch's memory
        git('checkout', '-q', '-b', 'other', cwd=memrepo)
        (memrepo / 'other.txt').write_text('x\n')
        git('add', 'other.txt', cwd=memrepo)
        git('commit', '-q', '--no-verify', '-m', 'other', cwd=memrepo)
        git('checkout', '-q', 'main', cwd=memrepo)
        git('merge', '-q', '--no-ff', '--no-commit', 'other', cwd=memrepo)
        _started(log)
        proc = run('git', 'commit', '-q', '--no-edit', cwd=memrepo, env=env)  # type: ignore[arg-type]
        assert proc.returncode == 0
        assert 'post-commit' in _started(log)
        return
    if case == 'symlink':
        (tmp_path / 'notes.md').write_bytes(notes.read_bytes())
        notes.unlink()
        notes.symlink_to(tmp_path / 'notes.md')
    elif case == 'fifo':
        os.mkfifo(mem(memrepo, 'pipe.md'))
    elif case == 'conflict':
        (memrepo / '.git' / 'agitmem' / 'conflicts').write_text('notes.md: both changed\n')
    elif case == 'base':
        top = git('rev-parse', 'refs/agitmem/heads/main', cwd=memrepo).strip()
        (memrepo / '.git' / 'agitmem' / 'base').write_text(f'{top} refs/agitmem/heads/other\n')
    elif case == 'detached':
        git('checkout', '-q', '--detach', cwd=memrepo)
        _started(log)
    elif case == 'agitmem-ref':
        kw['AGITMEM_REF'] = 'elsewhere'
    elif case == 'config':
        with open(memrepo / '.agent' / 'config.yaml', 'a') as f:
            f.write('# another line\n')
    elif case == 'crlf':
        # the same text to git's eyes with autocrlf (`git diff --no-index`
        # finds no difference), other bytes to the hook's
        git('config', 'core.autocrlf', 'true', cwd=memrepo)
        notes.write_bytes(notes.read_bytes().replace(b'\n', b'\r\n'))
    if case in ('symlink', 'fifo', 'crlf'):
        # pre-commit refuses it; a commit made without the checks: the
        # post-commit hook says why it saves nothing
        (memrepo / 'src' / 'app.py').write_text('# more\n')
        git('add', 'src/app.py', cwd=memrepo)
        proc = run('git', 'commit', '-q', '--no-verify', '-m', 'unchecked', cwd=memrepo, env=kw)  # type: ignore[arg-type]
        assert (proc.returncode, _started(log)) == (0, ['post-commit'])
        assert 'agitmem: hook post-commit: .agent/memory/' in proc.stderr
        return
    proc = _commit(memrepo, env=kw)  # type: ignore[arg-type]
    assert proc.returncode == 0
    started = ['pre-commit', 'commit-msg', 'post-commit'] if case == 'config' else ['pre-commit', 'post-commit']
    assert _started(log) == started


@pytest.mark.parametrize('link', ('dir', 'head'))
@pytest.mark.parametrize('writer', ('hook', 'save'))
def test_post_commit_hook_never_writes_its_list_through_a_link(
        memrepo: Path, tmp_path: Path, link: str, writer: str,
) -> None:
    """The list is agitmem's own: a symlink where it goes (to a directory
    outside, or as its `head`) is replaced, what it points at untouched,
    by the hook and by a save, which keeps it too."""
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'secret.txt').write_text('mine\n')
    saved = memrepo / '.git' / 'agitmem' / githooks.POST_COMMIT_IDLE
    shutil.rmtree(saved)  # (kept by the fixture's save)
    if link == 'dir':
        saved.symlink_to(outside)
    else:
        saved.mkdir()
        (saved / 'head').symlink_to(outside / 'secret.txt')
    git('commit', '-q', '--allow-empty', '-m', 'one parent', cwd=memrepo)
    if writer == 'hook':
        proc = agitmem('hook', 'post-commit', cwd=memrepo)
    else:
        proc = agitmem('state', 'set', 'next_intent=go on', cwd=memrepo)
    assert sorted(p.name for p in outside.iterdir()) == ['secret.txt']
    assert (outside / 'secret.txt').read_text() == 'mine\n'
    if link == 'dir':
        # (as any link leaving .git/agitmem: nothing is done there, which
        # a post-* hook says without failing git's command)
        assert proc.returncode == (0 if writer == 'hook' else 2)
        assert 'post-commit-idle is a symlink to outside the repository' in proc.stderr
        return
    assert (proc.returncode, proc.stderr) == (0, '')
    if writer == 'save':
        assert 'go on' in git('show', 'refs/agitmem/heads/main:state.json', cwd=memrepo)
    assert not (saved / 'head').is_symlink()
    assert (saved / 'head').read_text().splitlines()[2] == 'refs/heads/main'


def test_post_commit_shim_in_a_linked_worktree(memrepo: Path, tmp_path: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    env, log = _starts_logged(tmp_path)
    wt = tmp_path / 'wt'
    git('worktree', 'add', '-q', '-b', 'side', str(wt), cwd=memrepo)
    _started(log)
    for _ in range(3):
        assert _commit(wt, env=env).returncode == 0  # type: ignore[arg-type]
    started = log.read_text().split()
    assert started.count('post-commit') == 1, started
    gd = Path(git('rev-parse', '--absolute-git-dir', cwd=wt).strip())
    assert (gd / 'agitmem' / githooks.POST_COMMIT_IDLE / 'head').read_text().splitlines()[2] == 'refs/heads/side'


@pytest.mark.parametrize('break_it', ('symlink', 'no-memory'))
def test_commit_msg_shim_leaves_a_broken_agent_dir_to_the_hook(memrepo: Path, tmp_path: Path, break_it: str) -> None:
    ok('install', 'git', cwd=memrepo)
    assert _commit(memrepo).returncode == 0  # the copy of config.yaml is kept
    memory = memrepo / '.agent' / 'memory'
    if break_it == 'symlink':
        memory.rename(tmp_path / 'elsewhere')
        memory.symlink_to(tmp_path / 'elsewhere')
    else:
        shutil.rmtree(memory)
    # (a merge runs commit-msg and no pre-commit): the hook, not the shim,
    # answers, and says what is wrong
    (memrepo / '.git' / 'COMMIT_EDITMSG').write_text('a message\n')
    proc = run(str(_hooks(memrepo) / 'commit-msg'), '.git/COMMIT_EDITMSG', cwd=memrepo)
    assert proc.returncode == 2
    assert '.agent/memory' in proc.stderr


@pytest.mark.parametrize('hooks_path', ('.githooks', 'ABSOLUTE', '~/hooks'))
def test_install_honours_core_hooks_path(memrepo: Path, tmp_path: Path, hooks_path: str) -> None:
    value = str(tmp_path / 'shared-hooks') if hooks_path == 'ABSOLUTE' else hooks_path
    git('config', 'core.hooksPath', value, cwd=memrepo)
    expected = {
        '.githooks': memrepo / '.githooks',
        'ABSOLUTE': tmp_path / 'shared-hooks',
        '~/hooks': Path(os.environ['HOME']) / 'hooks',
    }[hooks_path]
    ok('install', 'git', cwd=memrepo)
    assert sorted(p.name for p in expected.iterdir()) == sorted(HOOKS)
    assert not (_hooks(memrepo) / 'pre-commit').exists()
    ok('uninstall', 'git', cwd=memrepo)
    assert list(expected.iterdir()) == []


def test_existing_hook_is_chained_and_runs_first_with_args(memrepo: Path) -> None:
    for h in ('pre-commit', 'commit-msg', 'post-commit'):
        _write_hook(_hooks(memrepo) / h, RECORDER)
    out = ok('install', 'git', cwd=memrepo)
    assert (
        'installed .git/hooks/pre-commit (the hook that was there is now '
        'pre-commit.agitmem-chained; it runs first)'
    ) in out.splitlines()
    assert (_hooks(memrepo) / 'pre-commit.agitmem-chained').read_text() == RECORDER
    assert _commit(memrepo).returncode == 0
    # a sh script runs in place: $0 is still the hook's own name
    assert (memrepo / 'ran.log').read_text().splitlines() == [
        'pre-commit  []',
        'commit-msg .git/COMMIT_EDITMSG []',
        'post-commit  []',
    ]


def test_a_chained_hook_in_another_language_is_run_as_it_is(memrepo: Path) -> None:
    recorder = (
        f'#!{sys.executable}\nimport os, sys\n'
        f'open("ran.log", "a").write(os.path.basename(sys.argv[0]) + " " + " ".join(sys.argv[1:]) + "\\n")\n'
    )
    for h in ('pre-commit', 'commit-msg'):
        _write_hook(_hooks(memrepo) / h, recorder)
    _write_hook(_hooks(memrepo) / 'post-commit', '#!/bin/sh -e\necho "$(basename "$0")" >> ran.log\n')
    ok('install', 'git', cwd=memrepo)
    assert _commit(memrepo).returncode == 0
    assert (memrepo / 'ran.log').read_text().splitlines() == [
        'pre-commit.agitmem-chained ',
        'commit-msg.agitmem-chained .git/COMMIT_EDITMSG',
        'post-commit.agitmem-chained',  # a shebang with flags: not sourced
    ]
    assert 'Code-Head: ' in git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=memrepo)


def test_a_chained_script_that_runs_itself_again_runs_once(memrepo: Path) -> None:
    # husky v8's husky.sh: `sh -e "$0" "$@"` with husky_skip_init set
    rerun = (
        '#!/bin/sh\n'
        'if [ -z "$again" ]; then again=1; export again; sh -e "$0" "$@"; exit $?; fi\n'
        'echo "$(basename "$0") ran" >> ran.log\n'
    )
    _write_hook(_hooks(memrepo) / 'post-commit', rerun)
    ok('install', 'git', cwd=memrepo)
    before = count(memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- progress\n')
    assert _commit(memrepo).returncode == 0
    assert (memrepo / 'ran.log').read_text() == 'post-commit ran\n'
    assert count(memrepo) == before + 1  # agitmem's post-commit: once


def test_install_again_after_a_hook_manager_rewrote_its_hook(memrepo: Path) -> None:
    # husky v9 writes its stubs again on every `npm install`, over our shim
    stub = '#!/bin/sh\necho "$(basename "$0")" >> ran.log\n'
    _write_hook(_hooks(memrepo) / 'pre-commit', stub)
    ok('install', 'git', cwd=memrepo)
    _write_hook(_hooks(memrepo) / 'pre-commit', stub)
    out = ok('install', 'git', cwd=memrepo)
    assert out.splitlines() == [
        'installed .git/hooks/pre-commit (the hook that was there is now '
        'pre-commit.agitmem-chained; it runs first)',
    ]
    assert githooks.is_ours((_hooks(memrepo) / 'pre-commit').read_text())
    assert (_hooks(memrepo) / 'pre-commit.agitmem-chained').read_text() == stub


def test_failing_chained_pre_commit_blocks_the_commit(memrepo: Path) -> None:
    _write_hook(_hooks(memrepo) / 'pre-commit', '#!/bin/sh\necho "lint failed" >&2\nexit 3\n')
    ok('install', 'git', cwd=memrepo)
    head = git('rev-parse', 'HEAD', cwd=memrepo)
    proc = _commit(memrepo)
    assert proc.returncode != 0
    assert 'lint failed' in proc.stderr
    assert git('rev-parse', 'HEAD', cwd=memrepo) == head


def test_failing_chained_post_commit_still_records_memory(memrepo: Path) -> None:
    _write_hook(_hooks(memrepo) / 'post-commit', '#!/bin/sh\nexit 1\n')
    ok('install', 'git', cwd=memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- progress\n')
    assert _commit(memrepo).returncode == 0
    head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    assert f'Code-Head: {head}' in git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=memrepo)


def test_chained_pre_push_gets_args_and_stdin(memrepo: Path, tmp_path: Path) -> None:
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    _write_hook(_hooks(memrepo) / 'pre-push', RECORDER)
    ok('install', 'git', cwd=memrepo)
    git('push', '-q', 'origin', 'main', cwd=memrepo)
    head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    logged = (memrepo / 'ran.log').read_text().splitlines()
    assert logged[0] == (
        f'pre-push origin {remote} '
        f'[refs/heads/main {head} refs/heads/main {"0" * 40}]'
    )
    assert git('rev-parse', 'main', cwd=remote).strip() == head


def test_refuses_pre_commits_hooks(memrepo: Path) -> None:
    theirs = '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n# ID: 1\n'
    _write_hook(_hooks(memrepo) / 'commit-msg', theirs)
    line = bad('install', 'git', cwd=memrepo)
    assert line.startswith(
        'agitmem: .git/hooks/commit-msg was installed by pre-commit: add the '
        'agitmem hooks (agitmem-check,',
    )
    assert '.pre-commit-config.yaml' in line
    # nothing written, not even the hooks before it
    assert not (_hooks(memrepo) / 'pre-commit').exists()
    assert (_hooks(memrepo) / 'commit-msg').read_text() == theirs


def test_refuses_a_tracked_hook_in_core_hooks_path(memrepo: Path) -> None:
    _write_hook(memrepo / '.githooks' / 'pre-commit', RECORDER)
    git('add', '.githooks/pre-commit', cwd=memrepo)
    git('commit', '-q', '-m', 'hooks', cwd=memrepo)
    git('config', 'core.hooksPath', '.githooks', cwd=memrepo)
    line = bad('install', 'git', cwd=memrepo)
    assert line == (
        'agitmem: .githooks/pre-commit is tracked in this repository; agitmem '
        'will not move it: add the line `agitmem hook pre-commit "$@"` to it '
        'yourself'
    )
    assert git('status', '--porcelain', cwd=memrepo) == ''


def test_refuses_when_a_chained_hook_is_in_the_way(memrepo: Path) -> None:
    _write_hook(_hooks(memrepo) / 'pre-commit', RECORDER)
    _write_hook(_hooks(memrepo) / 'pre-commit.agitmem-chained', '#!/bin/sh\necho another\n')
    assert 'already exists' in bad('install', 'git', cwd=memrepo)


def test_uninstall_restores_chained_hooks_and_removes_only_ours(memrepo: Path) -> None:
    _write_hook(_hooks(memrepo) / 'pre-commit', RECORDER)
    _write_hook(_hooks(memrepo) / 'pre-rebase', RECORDER)  # not one of ours
    ok('install', 'git', cwd=memrepo)
    out = ok('uninstall', 'git', cwd=memrepo)
    assert out.splitlines() == [
        'removed .git/hooks/pre-commit (the hook it chained is back)',
        *(f'removed .git/hooks/{h}' for h in HOOKS[1:]),
    ]
    names = sorted(p.name for p in _hooks(memrepo).iterdir() if not p.name.endswith('.sample'))
    assert names == ['pre-commit', 'pre-rebase']
    assert (_hooks(memrepo) / 'pre-commit').read_text() == RECORDER
    assert (_hooks(memrepo) / 'pre-commit').stat().st_mode & stat.S_IXUSR
    assert ok('uninstall', 'git', cwd=memrepo) == 'agitmem hooks for git already uninstalled: nothing changed\n'


def test_uninstall_leaves_a_hook_that_replaced_ours(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    _write_hook(_hooks(memrepo) / 'pre-commit', RECORDER)
    ok('uninstall', 'git', cwd=memrepo)
    assert (_hooks(memrepo) / 'pre-commit').read_text() == RECORDER


def test_uninstall_finds_our_shim_where_pre_commit_moved_it(memrepo: Path) -> None:
    """`pre-commit install` after `agitmem install git` keeps ours as
    pre-commit.legacy and runs it."""
    _write_hook(_hooks(memrepo) / 'pre-commit', RECORDER)
    ok('install', 'git', cwd=memrepo)
    os.rename(_hooks(memrepo) / 'pre-commit', _hooks(memrepo) / 'pre-commit.legacy')
    _write_hook(_hooks(memrepo) / 'pre-commit', '#!/bin/sh\n# File generated by pre-commit\n')
    assert 'removed .git/hooks/pre-commit.legacy (the hook it chained is back)' in ok('uninstall', 'git', cwd=memrepo)
    assert (_hooks(memrepo) / 'pre-commit.legacy').read_text() == RECORDER


def test_shims_run_the_hooks_program_beside_the_agitmem_found(memrepo: Path, tmp_path: Path) -> None:
    """pip installs `agitmem-hook` (`agitmem hook` without the console
    script's `import re`) beside `agitmem`: the shims run it, and only the
    one beside the first `agitmem` on PATH, the same install's."""
    ok('install', 'git', cwd=memrepo)
    log = tmp_path / 'started.log'
    real = shlex.join(agitmem_argv())
    first, later, alone = tmp_path / 'first', tmp_path / 'later', tmp_path / 'alone'
    for d in (first, later, alone):
        _write_hook(d / 'agitmem', f'#!/bin/sh\necho "{d.name} agitmem $1 $2" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
        _write_hook(d / 'agitmem-hook', f'#!/bin/sh\necho "{d.name} agitmem-hook $1" >> {shlex.quote(str(log))}\nexec {real} hook "$@"\n')
    (alone / 'agitmem').unlink()

    def started(path: list[Path]) -> list[str]:
        env = {'PATH': os.pathsep.join([*map(str, path), os.environ['PATH']])}
        assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
        lines = log.read_text().splitlines()
        log.unlink()
        return lines

    assert started([alone, first, later]) == [
        'first agitmem-hook pre-commit', 'first agitmem-hook commit-msg', 'first agitmem-hook post-commit',
    ]
    # none beside the first agitmem: that agitmem, not a later install's program
    (first / 'agitmem-hook').unlink()
    assert started([alone, first, later]) == ['first agitmem hook pre-commit']
    # a directory named agitmem-hook is no program
    (first / 'agitmem-hook').mkdir()
    assert started([first, later]) == ['first agitmem hook pre-commit']
    # pre-push's stdin reaches the hooks' program as it reaches `agitmem hook`
    (first / 'agitmem-hook').rmdir()
    _write_hook(first / 'agitmem-hook', f'#!/bin/sh\necho "first agitmem-hook $1 [$(cat)]" >> {shlex.quote(str(log))}\n')
    proc = run(str(_hooks(memrepo) / 'pre-push'), 'origin', 'url', cwd=memrepo, input='a b c d\n',
               env={'PATH': f'{first}{os.pathsep}{os.environ["PATH"]}'})  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr
    assert log.read_text() == 'first agitmem-hook pre-push [a b c d]\n'


def _pip_script(path: Path, python: Path, name: str, log: Path, *, through_sh: bool = False) -> None:
    """An agitmem program as pip writes it for the interpreter `python`
    (`through_sh`: its console script's form for a path the kernel cannot
    start), logging `name` and its arguments, then running agitmem."""
    real = agitmem_argv()
    hook = ['hook'] if path.name == 'agitmem-hook' else []
    body = (
        f'import os, sys\nopen({str(log)!r}, "a").write(" ".join([{name!r}, *sys.argv[1:2]]) + "\\n")\n'
        f'os.execv({real[0]!r}, [*{real!r}, *{hook!r}, *sys.argv[1:]])\n'
    )
    if through_sh:
        head = f'#!/bin/sh\n\'\'\'exec\' {shlex.quote(str(python))} "$0" "$@"\n\' \'\'\'\n'
    else:
        head = f'#!{python}\n'
    _write_hook(path, head + body)


def _venv(where: Path) -> tuple[Path, Path]:
    """(bin directory, its python) of a virtual environment's look-alike:
    the programs' interpreter is this one, by another path."""
    bindir = where / 'bin'
    bindir.mkdir(parents=True)
    (bindir / 'python3').symlink_to(sys.executable)
    return bindir, bindir / 'python3'


@pytest.mark.parametrize('venv', ['my venv', 'v' * 120])
def test_shims_skip_a_hooks_program_the_kernel_cannot_start(memrepo: Path, tmp_path: Path, venv: str) -> None:
    """pip writes `#!python` into the hooks' program as the interpreter's
    path, as it is, but starts its console scripts through /bin/sh when the
    kernel cannot start that line: a venv whose path has a space
    (`/Users/Jane Doe/...`), or a line over 127 bytes.  Every commit failed
    with `agitmem-hook: not found`; the shims run `agitmem hook` then."""
    ok('install', 'git', cwd=memrepo)
    log = tmp_path / 'started.log'
    bindir, python = _venv(tmp_path / venv)
    _pip_script(bindir / 'agitmem', python, 'agitmem', log, through_sh=True)
    _pip_script(bindir / 'agitmem-hook', python, 'agitmem-hook', log)
    env = {'PATH': os.pathsep.join([str(bindir), os.environ['PATH']])}
    proc = _commit(memrepo, env=env)  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr
    started = log.read_text().splitlines()
    assert started[0] == 'agitmem hook'
    assert all(line == 'agitmem hook' for line in started), started


def test_shims_run_only_the_same_installs_hooks_program(memrepo: Path, tmp_path: Path) -> None:
    """`agitmem-hook` beside `agitmem` is run when both start the same
    interpreter (pip's, one install); another install's program left in
    that directory (a tool manager's link over a `pip install --user`) is
    not: that agitmem's `agitmem hook` is, as agent hooks do
    (agents/launcher.py: the same environment)."""
    ok('install', 'git', cwd=memrepo)
    log = tmp_path / 'started.log'
    bindir, python = _venv(tmp_path / 'new')
    _, old_python = _venv(tmp_path / 'old')
    _pip_script(bindir / 'agitmem', python, 'agitmem', log)
    env = {'PATH': os.pathsep.join([str(bindir), os.environ['PATH']])}

    def started() -> list[str]:
        proc = _commit(memrepo, env=env)  # type: ignore[arg-type]
        assert proc.returncode == 0, proc.stderr
        lines = log.read_text().splitlines()
        log.unlink()
        assert lines[0] in ('agitmem-hook pre-commit', 'agitmem hook'), lines
        return sorted({line.split()[0] for line in lines})

    _pip_script(bindir / 'agitmem-hook', python, 'agitmem-hook', log)
    assert started() == ['agitmem-hook']
    _pip_script(bindir / 'agitmem-hook', old_python, 'agitmem-hook', log)
    assert started() == ['agitmem']


def test_shim_falls_back_to_the_python_that_installed_it(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    with open(mem(memrepo, 'tattoo.md'), 'a') as f:
        f.write('- indent: 4 spaces\n')
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- indent: tabs\n')
    path = os.pathsep.join(
        d for d in os.environ['PATH'].split(os.pathsep)
        if d and not os.path.exists(os.path.join(d, 'agitmem'))
    )
    proc = _commit(memrepo, env={'PATH': path})
    assert proc.returncode == 1
    assert 'error tattoo-vs-snapshot' in proc.stdout + proc.stderr


def test_shim_fallback_never_imports_the_projects_agitmem(memrepo: Path, tmp_path: Path) -> None:
    """git runs hooks at the top of the working tree: a project holding an
    `agitmem/` package (a clone of agitmem, or a hostile one) must not have
    it imported by `python -m agitmem`."""
    ok('install', 'git', cwd=memrepo)
    marker = tmp_path / 'imported'
    (memrepo / 'agitmem').mkdir()
    (memrepo / 'agitmem' / '__init__.py').write_text(f'open({str(marker)!r}, "w").close()\n')
    (memrepo / 'agitmem' / '__main__.py').write_text('raise SystemExit(0)\n')
    with open(mem(memrepo, 'tattoo.md'), 'a') as f:
        f.write('- indent: 4 spaces\n')
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- indent: tabs\n')
    path = os.pathsep.join(
        d for d in os.environ['PATH'].split(os.pathsep)
        if d and not os.path.exists(os.path.join(d, 'agitmem'))
    )
    proc = _commit(memrepo, env={'PATH': path})
    assert not marker.exists()
    assert proc.returncode == 1  # the real agitmem ran, and refused
    assert 'error tattoo-vs-snapshot' in proc.stdout + proc.stderr


@pytest.mark.parametrize('relative', ['bin', '', '.', './bin'])
def test_shims_never_run_the_repositorys_programs_from_a_relative_path_entry(
        memrepo: Path, tmp_path: Path, relative: str,
) -> None:
    """A user whose PATH has a relative entry (`bin`, an empty one: the
    directory git runs the hook in, the repository's top) commits in a
    cloned repository that ships `agitmem` and `cmp` there: the shims look
    for agitmem's programs in the absolute entries only."""
    ok('install', 'git', cwd=memrepo)
    marker = tmp_path / 'ran'
    for name in ('agitmem', 'agitmem-hook', 'cmp'):
        for d in (memrepo / 'bin', memrepo):
            _write_hook(d / name, f'#!/bin/sh\necho {name} >> {shlex.quote(str(marker))}\n')
    env = {'PATH': f'{relative}{os.pathsep}{os.environ["PATH"]}'}
    with open(mem(memrepo, 'tattoo.md'), 'a') as f:
        f.write('- indent: 4 spaces\n')
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- indent: tabs\n')
    proc = _commit(memrepo, env=env)
    assert not marker.exists(), marker.read_text()
    assert proc.returncode == 1  # the real agitmem ran, and refused
    assert 'error tattoo-vs-snapshot' in proc.stdout + proc.stderr


@pytest.mark.parametrize('hook', ['pre-commit', 'post-commit'])
@pytest.mark.parametrize('relative', ['bin', '', '.:bin'])
def test_a_shim_run_with_only_relative_path_entries_runs_none_of_the_repositorys_programs(
        memrepo: Path, tmp_path: Path, hook: str, relative: str,
) -> None:
    """git puts its own directory first on PATH; a shim run by something
    else (a tool that calls .git/hooks/<hook> itself) with only relative
    entries had an empty PATH left once they were dropped, which dash,
    bash and busybox sh all search as the current directory: the cloned
    repository's `agitmem`, `git` and `cmp` at its top ran."""
    ok('install', 'git', cwd=memrepo)
    marker = tmp_path / 'ran'
    for name in ('agitmem', 'agitmem-hook', 'git', 'cmp'):
        for d in (memrepo / 'bin', memrepo):
            _write_hook(d / name, f'#!/bin/sh\necho {name} >> {shlex.quote(str(marker))}\n')
    proc = run(str(_hooks(memrepo) / hook), cwd=memrepo, env={'PATH': relative})  # type: ignore[arg-type]
    assert not marker.exists(), marker.read_text()
    assert 'Traceback' not in proc.stderr


def test_a_hooks_path_linked_outside_is_refused(memrepo: Path, tmp_path: Path) -> None:
    outside = tmp_path / 'outside'
    outside.mkdir()
    (memrepo / '.githooks').symlink_to(outside)
    git('config', 'core.hooksPath', '.githooks', cwd=memrepo)
    line = bad('install', 'git', cwd=memrepo)
    assert line == (
        f'agitmem: .githooks leads to {outside} through a symlink, outside the '
        f'repository: agitmem does not write hooks there; nothing was changed'
    )
    _write_hook(outside / 'pre-commit', githooks.shim('pre-commit'))
    assert 'does not write hooks there' in bad('uninstall', 'git', cwd=memrepo)
    assert (outside / 'pre-commit').read_text() == githooks.shim('pre-commit')
    (outside / 'pre-commit').unlink()
    # the git directory is never cloned: its symlinks are the user's
    git('config', '--unset', 'core.hooksPath', cwd=memrepo)
    shutil.rmtree(_hooks(memrepo))
    _hooks(memrepo).symlink_to(outside)
    ok('install', 'git', cwd=memrepo)
    assert sorted(p.name for p in outside.iterdir()) == sorted(HOOKS)
    ok('uninstall', 'git', cwd=memrepo)
    assert list(outside.iterdir()) == []
    # an absolute core.hooksPath is the user's own choice
    git('config', 'core.hooksPath', str(outside), cwd=memrepo)
    ok('install', 'git', cwd=memrepo)
    assert sorted(p.name for p in outside.iterdir()) == sorted(HOOKS)


def test_shim_text_per_hook() -> None:
    blocking = githooks.shim('commit-msg', '/opt/py/bin/python')
    assert '    chain "$@" || exit $?\n' in blocking
    assert 'exec /opt/py/bin/python -P -m agitmem hook commit-msg "$@"' in blocking
    post = githooks.shim('post-merge', '/opt/py/bin/python')
    assert '    chain "$@"\n' in post
    # post-rewrite's list of rewritten ids reaches both hooks
    rewrite = githooks.shim('post-rewrite', '/opt/py/bin/python')
    assert 'printf \'%s\' "$input" | chain "$@"\n' in rewrite
    assert 'printf \'%s\' "$input" | agitmem hook post-rewrite "$@"' in rewrite
    assert "exec '/opt/my py/python' -P -m agitmem" in githooks.shim('pre-commit', '/opt/my py/python')
    # pre-commit's staged diff begun by the shim, piped to the hook
    staged = githooks.shim('pre-commit', '/opt/py/bin/python')
    assert '{ staged & } | { AGITMEM_STAGED_ON_STDIN=1; export AGITMEM_STAGED_ON_STDIN; exec agitmem hook pre-commit "$@"; }; exit $?' in staged
    assert 'staged' not in blocking


_FAKE_STAGED = b':000000 100644 ' + b'0' * 40 + b' e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 A\0fake.py\0'


@pytest.mark.parametrize(('stdin', 'env', 'touched'), [
    # the shim's: the diff it began, its exit code after the last NUL
    (_FAKE_STAGED + b'0\n', {'AGITMEM_STAGED_ON_STDIN': '1'}, 'fake.py'),
    # it failed: the hook runs it itself (and git says what is wrong)
    (b'partial\0' + b'128\n', {'AGITMEM_STAGED_ON_STDIN': '1'}, 'real.py'),
    (_FAKE_STAGED, {'AGITMEM_STAGED_ON_STDIN': '1'}, 'real.py'),  # (no exit code: cut short)
    # not the shim's: stdin is not read
    (_FAKE_STAGED + b'0\n', {}, 'real.py'),
    (None, {'AGITMEM_STAGED_ON_STDIN': '1'}, 'real.py'),  # (/dev/null: no pipe)
])
def test_the_pre_commit_hook_reads_the_staged_diff_the_shim_began(
        memrepo: Path, stdin: bytes | None, env: dict[str, str], touched: str,
) -> None:
    """The shim begins the hook's `git diff-index --cached` beside the
    interpreter's start (at 100,000 files most of the hook's git time) and
    pipes it to the hook: the hook takes it from stdin only when the shim
    says so, stdin is a pipe and git's exit code there is 0."""
    # (progress-not-updated names what is staged: the memory init saved is HEAD's)
    (memrepo / 'real.py').write_text('x = 1\n')
    git('add', 'real.py', cwd=memrepo)
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'pre-commit'], cwd=memrepo, capture_output=True,
        input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert f'the change touches {touched} but' in out, out


def test_a_commit_through_the_shim_with_a_big_staged_diff_read_or_not(memrepo: Path) -> None:
    """A staged diff past a pipe's buffer: read whole by the hook, and,
    with the checks that read it skipped, left unread without holding the
    commit (the shim's git ends on the closed pipe)."""
    ok('install', 'git', cwd=memrepo)
    many = memrepo / 'many'
    many.mkdir()
    for i in range(1500):
        (many / f'file_with_a_longish_name_{i:05d}.py').write_text(f'x = {i}\n')
    git('add', 'many', cwd=memrepo)
    proc = subprocess.run(
        ['git', 'commit', '-q', '-m', 'many'], cwd=memrepo, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'touches 1500 files' in proc.stderr, proc.stderr
    (many / 'file_with_a_longish_name_00000.py').write_text('x = -1\n')
    for i in range(1500, 3000):
        (many / f'file_with_a_longish_name_{i:05d}.py').write_text(f'x = {i}\n')
    git('add', 'many', cwd=memrepo)
    skip = 'progress-not-updated,verification-stale,enforce,state-vs-worktree'
    proc = subprocess.run(
        ['git', 'commit', '-q', '-m', 'more'], cwd=memrepo, capture_output=True, text=True,
        timeout=120, env={**os.environ, 'AGITMEM_SKIP': skip},
    )
    assert proc.returncode == 0, proc.stderr
    assert git('show', '--stat', '--format=', 'HEAD', cwd=memrepo).count('many/') == 1501


@pytest.mark.skipif(
    not sys.platform.startswith('linux') or shutil.which('ps') is None,
    reason='the fsmonitor hook tells its callers apart by their names (ps, Linux)',
)
def test_a_commit_is_not_held_by_the_shims_staged_diff_that_hangs(memrepo: Path, tmp_path: Path) -> None:
    """The shim's own `git diff-index` (begun beside the hook) hangs: an
    fsmonitor hook that does not answer (it runs on the index's read), a
    lazy fetch that stalls.  The hook ends without it (its checks that
    read it skipped here; else it runs its own, bounded): the commit is
    not held until that git ends, as the shell's wait for the whole
    pipeline held it."""
    ok('install', 'git', cwd=memrepo)
    release = tmp_path / 'release'
    fsmonitor = tmp_path / 'fsmonitor'
    # (it hangs for the shim's diff-index alone, whose grandparent is the
    # shim's subshell: git commit's own refresh and the hook's reads answer)
    _write_hook(fsmonitor, (
        '#!/bin/sh\n'
        'gp=$(ps -o ppid= -p "$PPID" | tr -d " ")\n'
        'case "$(ps -o comm= -p "$gp")" in pre-commit)\n'
        f'    while [ ! -e {shlex.quote(str(release))} ]; do sleep 0.1; done ;;\n'
        'esac\n'
        'exit 1\n'  # (no answer: git looks at every path itself)
    ))
    git('config', 'core.fsmonitor', str(fsmonitor), cwd=memrepo)
    skip = 'progress-not-updated,verification-stale,enforce,state-vs-worktree'
    try:
        with open(memrepo / 'src' / 'app.py', 'a') as f:
            f.write('# more\n')
        git('add', 'src/app.py', cwd=memrepo)
        proc = subprocess.run(
            ['git', 'commit', '-q', '-m', 'change'], cwd=memrepo, capture_output=True, text=True,
            timeout=60, env={**os.environ, 'AGITMEM_SKIP': skip},
        )
    except subprocess.TimeoutExpired:
        pytest.fail('the commit waited on the shim\'s hung diff-index')
    finally:
        release.touch()
    assert proc.returncode == 0, proc.stderr
    assert git('log', '-1', '--format=%s', cwd=memrepo).strip() == 'change'


# agitmem hook <git event>, called directly


def test_hook_unknown_event(capsys: pytest.CaptureFixture[str]) -> None:
    assert githook('pre-rebase', [], '') == 2
    assert capsys.readouterr().err.startswith('agitmem: unknown git hook "pre-rebase"')


def test_hook_without_agent_dir_is_quiet(repo: Path) -> None:
    for event, args in (('pre-commit', ()), ('commit-msg', ('msg',)), ('post-commit', ()),
                        ('pre-push', ('origin', 'url')), ('post-merge', ('0',))):
        proc = agitmem('hook', event, *args, cwd=repo)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, '', ''), event


def test_hook_commit_msg_needs_the_file(memrepo: Path) -> None:
    assert bad('hook', 'commit-msg', cwd=memrepo) == (
        'agitmem: hook commit-msg needs the commit message file (git passes it)'
    )


def test_post_hook_never_fails(memrepo: Path) -> None:
    mem(memrepo, 'state.json').write_text('{broken')
    proc = agitmem('hook', 'post-commit', cwd=memrepo)
    assert proc.returncode == 0
    assert proc.stderr.startswith('agitmem: hook post-commit: .agent/memory/state.json:1: not valid JSON')
    assert len(proc.stderr.splitlines()) == 1


def test_post_commit_outside_a_repository(tmp_path: Path) -> None:
    proc = agitmem('hook', 'post-commit', cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr.startswith('agitmem: hook post-commit: not a git repository')


def test_post_commit_subject_and_code_head(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- progress\n')
    assert _commit(memrepo, 'make main better').returncode == 0
    head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    assert git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=memrepo) == (
        'hook post-commit: make main better\n\n'
        'Agitmem-Event: post-commit\nCode-Branch: main\n'
        f'Code-Head: {head}\n\n'
    )


def test_post_commit_with_the_memory_saved_as_it_is_commits_nothing(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    base = memrepo / '.git' / 'agitmem' / 'base'
    n, before = count(memrepo), base.read_bytes()
    proc = _commit(memrepo)
    assert (proc.returncode, proc.stdout) == (0, '')
    assert 'memory saved' not in proc.stderr
    assert (count(memrepo), base.read_bytes()) == (n, before)
    # an edit is saved, a file the ref does not hold as well
    mem(memrepo, 'extra.md').write_text('- more\n')
    assert 'agitmem: memory saved to refs/agitmem/heads/main' in _commit(memrepo).stderr
    assert count(memrepo) == n + 1
    assert git('show', 'refs/agitmem/heads/main:extra.md', cwd=memrepo) == '- more\n'
    # and a file removed
    mem(memrepo, 'extra.md').unlink()
    assert 'agitmem: memory saved to refs/agitmem/heads/main' in _commit(memrepo).stderr
    assert count(memrepo) == n + 2


def test_post_commit_leaves_what_it_cannot_tell_to_the_save(memrepo: Path) -> None:
    ok('install', 'git', cwd=memrepo)
    conflicts = memrepo / '.git' / 'agitmem' / 'conflicts'
    conflicts.write_text('notes.md: both changed\n')
    # the memory is as saved, but a recorded conflict is the save's to clear
    assert _commit(memrepo).returncode == 0
    assert not conflicts.exists()
    # .agent/memory holds another ref's memory (its memory base says so):
    # the save puts it there and switches to this branch's first
    top = git('rev-parse', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    (memrepo / '.git' / 'agitmem' / 'base').write_text(f'{top} refs/agitmem/heads/other\n')
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- made elsewhere\n')
    proc = _commit(memrepo)
    assert proc.returncode == 0
    assert 'agitmem: .agent/memory held the memory of main (refs/agitmem/heads/other)' in proc.stderr
    assert '- made elsewhere' in git('show', 'refs/agitmem/heads/other:notes.md', cwd=memrepo)
    assert (memrepo / '.git' / 'agitmem' / 'base').read_text().endswith(' refs/agitmem/heads/main\n')


def test_pre_push_refuses_memory_with_a_key(memrepo: Path, tmp_path: Path) -> None:
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    ok('install', 'git', cwd=memrepo)
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- key ' + 'AKIA' + 'QYLPMN4RZT7W2XHB' + '\n')
    proc = run('git', 'push', '-q', 'origin', 'main', cwd=memrepo)
    assert proc.returncode != 0
    assert 'error secrets .agent/memory/notes.md:' in proc.stdout + proc.stderr
    assert 'agitmem: push refused: memory holds likely credentials' in proc.stdout + proc.stderr
    assert run('git', 'rev-parse', '-q', '--verify', 'main', cwd=remote).returncode != 0
    # pre-commit's SKIP, agitmem's way
    proc = run('git', 'push', '-q', 'origin', 'main', cwd=memrepo, env={'AGITMEM_SKIP': 'secrets'})
    assert proc.returncode == 0, proc.stderr


def test_pre_push_reads_pre_commits_variables(memrepo: Path) -> None:
    """pre-commit passes the remote in PRE_COMMIT_REMOTE_NAME, not as an
    argument; with nothing to push memory into, the hook passes."""
    proc = agitmem('hook', 'pre-push', cwd=memrepo, env={
        'PRE_COMMIT_REMOTE_NAME': 'nowhere', 'PRE_COMMIT_REMOTE_URL': '/nowhere',
    })
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(('event', 'args', 'env'), (
    ('post-checkout', ('a' * 40, 'b' * 40, '1'), {}),
    ('post-checkout', (), {'PRE_COMMIT_FROM_REF': 'a' * 40, 'PRE_COMMIT_TO_REF': 'b' * 40, 'PRE_COMMIT_CHECKOUT_TYPE': '1'}),
    ('post-merge', ('0',), {}),
    ('post-merge', (), {'PRE_COMMIT_IS_SQUASH_MERGE': '0'}),
    ('post-rewrite', ('amend',), {}),
    ('post-rewrite', ('rebase',), {}),
    ('post-rewrite', (), {'PRE_COMMIT_REWRITE_COMMAND': 'amend'}),
))
def test_branch_hooks_never_fail(memrepo: Path, event: str, args: tuple[str, ...], env: dict[str, str]) -> None:
    proc = agitmem('hook', event, *args, cwd=memrepo, env=env)
    assert proc.returncode == 0


def _hook_gits(trace: Path) -> dict[str, list[str]]:
    """hook -> the git commands (first word after the options) its process
    and theirs started, in order, from git's GIT_TRACE2_EVENT of a commit:
    those started between git's start of the hook and its end."""
    out: dict[str, list[str]] = {}
    hook = None
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get('event') == 'child_start' and event.get('child_class') == 'hook':
            hook = event['hook_name']
            out[hook] = []
        elif event.get('event') == 'child_exit':
            hook = None
        elif event.get('event') == 'start' and hook is not None and '/' in event['sid']:
            words = [w for w in event['argv'][1:] if not w.startswith('-')]
            out[hook].append(words[0] if words else '')
    return out


def test_each_hook_runs_only_the_git_it_needs(memrepo: Path, tmp_path: Path) -> None:
    """A commit of code, with a last verification and a memory saved at
    HEAD (so that every check has something to ask): the index is read
    once by the pre-commit hook (diff-index; HEAD against the verified
    tree needs no index), commit-msg starts no Python, nor post-commit:
    the memory was saved since its last run, and the save kept the
    shim's list (the shim's own two reads: the files' ids, the refs)."""
    ok('install', 'git', cwd=memrepo)
    ok('verify', '--', 'true', cwd=memrepo)
    _commit(memrepo, 'first')
    ok('state', 'set', 'next_intent=count the hooks', cwd=memrepo)
    trace = tmp_path / 'trace'
    proc = _commit(memrepo, 'second', env={'GIT_TRACE2_EVENT': str(trace)})
    assert proc.returncode == 0, proc.stderr
    gits = _hook_gits(trace)
    # (ls-tree: the progress files' ids recorded at HEAD; cat-file: state.json's
    # content there, as its id differs: is it only an observed test run?)
    assert sorted(gits['pre-commit']) == ['cat-file', 'diff-index', 'diff-tree', 'log', 'ls-tree', 'rev-parse'], gits
    assert gits['commit-msg'] == [], gits
    assert sorted(gits['post-commit']) == ['hash-object', 'rev-parse'], gits


@pytest.mark.parametrize('command', (
    ('save', '-m', 'elsewhere'), ('state', 'set', 'next_intent=elsewhere'),
))
def test_post_commit_shim_runs_the_hook_after_a_save_to_another_memory_ref(
        memrepo: Path, tmp_path: Path, command: tuple[str, ...],
) -> None:
    """A save with `--ref` leaves .agent/memory holding that ref's memory
    on a branch whose memory is another: the post-commit hook switches
    back to the branch's, so the save keeps no list that lets the shim
    skip it."""
    ok('install', 'git', cwd=memrepo)
    env, log = _starts_logged(tmp_path)
    base = memrepo / '.git' / 'agitmem' / 'base'
    assert _commit(memrepo, env=env).returncode == 0  # type: ignore[arg-type]
    _started(log)  # (commit-msg's list kept)
    mem(memrepo, 'notes.md').write_text('- for the other ref\n')
    ok(*command, '--ref', 'other', cwd=memrepo)
    assert base.read_text().split()[1] == 'refs/agitmem/heads/other'
    proc = _commit(memrepo, env=env)  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr
    assert _started(log) == ['pre-commit', 'post-commit']
    # the hook put the branch's memory back
    assert base.read_text().split()[1] == 'refs/agitmem/heads/main'
    assert 'for the other ref' in git('show', 'refs/agitmem/heads/other:notes.md', cwd=memrepo)
