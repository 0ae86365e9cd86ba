"""The issue's "done when" scenarios, run for real: git commits and pushes
in scratch repositories, through the pre-commit framework (this checkout as
a hook repository) and through `agitmem install git` (plain shims, also
chained to a hook the user had, and under core.hooksPath)."""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / '.pre-commit-hooks.yaml'
AWS_KEY = 'AKIA' + 'QYLPMN4RZT7W2XHB'  # built at run time, never a literal
ALL_HOOK_TYPES = ('pre-commit', 'commit-msg', 'post-commit', 'pre-push', 'post-checkout', 'post-merge', 'post-rewrite')
TABS_RULE = 'indent with 4 spaces, never tabs'
TICKET_RULE = 'commit messages start with a ticket id'
DEPS_RULE = 'no new dependencies without approval'
ENFORCE = f'''\
enforce:
- rule: {TABS_RULE}
  forbid: "\\t"
  files: ["*.py"]
- rule: {TICKET_RULE}
  commit_msg: "^[A-Z]+-[0-9]+ "
- rule: {DEPS_RULE}
  dependencies: [requests]
'''
# a pre-commit hook the user had before agitmem: must keep running
USERS_HOOK = '#!/bin/sh\necho ran >> "$(git rev-parse --git-dir)/users-hook.log"\n'


def _pre_commit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, '-m', 'pre_commit', *args, cwd=cwd)


@dataclass(frozen=True)
class Hooked:
    path: Path
    installer: str

    def _users_hook_runs(self) -> int:
        log = self.path / '.git' / 'users-hook.log'
        return len(log.read_text().splitlines()) if log.exists() else 0

    def commit(self, msg: str = 'CFG-1 change', *extra: str) -> subprocess.CompletedProcess[str]:
        before = self._users_hook_runs()
        proc = run('git', 'commit', '-m', msg, *extra, cwd=self.path)
        if self.installer == 'git-chained' and '--no-verify' not in extra:
            assert self._users_hook_runs() == before + 1, 'the user\'s own hook did not run'
        return proc

    def head(self) -> str:
        return git('rev-parse', 'HEAD', cwd=self.path).strip()


@pytest.fixture(params=('pre-commit', 'git', 'git-chained', 'git-hooks-path'))
def hooked(request: pytest.FixtureRequest, memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> Hooked:
    installer = request.param
    if installer == 'pre-commit':
        hook_path, sha = request.getfixturevalue('hook_repo')
        monkeypatch.setenv('PRE_COMMIT_HOME', str(request.getfixturevalue('pre_commit_home')))
        config = {
            'default_install_hook_types': list(ALL_HOOK_TYPES),
            'repos': [{
                'repo': str(hook_path), 'rev': sha,
                'hooks': [{'id': i} for i in (
                    'agitmem-check', 'agitmem-commit-msg', 'agitmem-record',
                    'agitmem-branch', 'agitmem-merge', 'agitmem-push',
                    'agitmem-rewrite',
                )],
            }],
        }
        (memrepo / '.pre-commit-config.yaml').write_text(yaml.safe_dump(config))
        git('add', '.pre-commit-config.yaml', cwd=memrepo)
        git('commit', '-q', '-m', 'pre-commit config', cwd=memrepo)
        proc = _pre_commit('install', cwd=memrepo)
        assert proc.returncode == 0, proc.stderr
        proc = _pre_commit('install-hooks', cwd=memrepo)  # the env, once
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        if installer == 'git-chained':
            hook = memrepo / '.git' / 'hooks' / 'pre-commit'
            hook.write_text(USERS_HOOK)
            hook.chmod(0o755)
        if installer == 'git-hooks-path':
            git('config', 'core.hooksPath', '.githooks', cwd=memrepo)
        ok('install', 'git', cwd=memrepo)
        if installer == 'git-hooks-path':
            assert (memrepo / '.githooks' / 'pre-commit').exists()
            assert not (memrepo / '.git' / 'hooks' / 'pre-commit').exists()
    # the code change every scenario commits
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 2\n')
    git('add', 'src/app.py', cwd=memrepo)
    return Hooked(memrepo, installer)


def _append(path: Path, text: str) -> int:
    """Append a line; returns its line number."""
    with open(path, 'a') as f:
        f.write(text)
    return len(path.read_text().splitlines())


def _enforce(repo: Path) -> None:
    _append(mem(repo, 'tattoo.md'), f'- {TABS_RULE}\n- {TICKET_RULE}\n- {DEPS_RULE}\n')
    (repo / '.agent' / 'config.yaml').write_text(ENFORCE)


def _output(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def test_manifest_is_valid() -> None:
    proc = _pre_commit('validate-manifest', str(MANIFEST), cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_manifest_hooks() -> None:
    hooks = {h['id']: h for h in yaml.safe_load(MANIFEST.read_text())}
    assert {i: (h['stages'], h['entry']) for i, h in hooks.items()} == {
        'agitmem-check': (['pre-commit'], 'agitmem hook pre-commit'),
        'agitmem-commit-msg': (['commit-msg'], 'agitmem hook commit-msg'),
        'agitmem-record': (['post-commit'], 'agitmem hook post-commit'),
        'agitmem-branch': (['post-checkout'], 'agitmem hook post-checkout'),
        'agitmem-merge': (['post-merge'], 'agitmem hook post-merge'),
        'agitmem-rewrite': (['post-rewrite'], 'agitmem hook post-rewrite'),
        'agitmem-push': (['pre-push'], 'agitmem hook pre-push'),
    }
    for i, h in hooks.items():
        assert h['language'] == 'python'
        if i != 'agitmem-commit-msg':  # that one is given the message file
            assert (h['always_run'], h['pass_filenames']) == (True, False), i


def test_try_repo(memrepo: Path, hook_repo: tuple[Path, str]) -> None:
    """`pre-commit try-repo <this checkout>`: the contradiction is caught."""
    tattoo_line = _append(mem(memrepo, 'tattoo.md'), '- indent: 4 spaces\n')
    snap_line = _append(mem(memrepo, 'snapshot.md'), '- indent: tabs\n')
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 2\n')
    git('add', 'src/app.py', cwd=memrepo)
    proc = _pre_commit('try-repo', str(hook_repo[0]), 'agitmem-check', cwd=memrepo)
    assert proc.returncode == 1, _output(proc)
    assert 'Failed' in proc.stdout
    assert (
        f'error tattoo-vs-snapshot .agent/memory/snapshot.md:{snap_line}: decision '
        f'"indent: tabs" contradicts tattoo rule "indent: 4 spaces" '
        f'(.agent/memory/tattoo.md:{tattoo_line})'
    ) in proc.stdout


# the scenarios, for each way of installing the hooks


def test_clean_memory_commits_and_is_recorded(hooked: Hooked) -> None:
    _append(mem(hooked.path, 'snapshot.md'), '- main returns 2\n')
    proc = hooked.commit('CFG-1 main returns 2')
    assert proc.returncode == 0, _output(proc)
    head = hooked.head()
    msg = git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=hooked.path)
    assert msg.startswith('hook post-commit: CFG-1 main returns 2\n\n')
    assert f'Agitmem-Event: post-commit\nCode-Branch: main\nCode-Head: {head}\n' in msg
    shown = git('show', 'refs/agitmem/heads/main:snapshot.md', cwd=hooked.path)
    assert shown.endswith('- main returns 2\n')


def test_amend_is_recorded_for_the_memory_saved_at_the_old_commit(hooked: Hooked) -> None:
    """post-rewrite: git's shims pass the old -> new list on stdin;
    pre-commit passes none, and the amend is read from HEAD's reflog."""
    _append(mem(hooked.path, 'snapshot.md'), '- main returns 2\n')
    assert hooked.commit('CFG-1 main returns 2').returncode == 0
    old = hooked.head()
    proc = hooked.commit('CFG-1 main returns 2, amended', '--amend')
    assert proc.returncode == 0, _output(proc)
    new = hooked.head()
    msg = git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=hooked.path)
    assert f'Code-Rewritten: {old} {new}\n' in msg, msg + _output(proc)
    assert f'Agitmem-Event: post-rewrite\nCode-Branch: main\nCode-Head: {new}\n' in msg


def test_rebase_is_recorded_for_the_memory_saved_at_the_old_commits(hooked: Hooked) -> None:
    """A rebase under pre-commit (no list on stdin either): git's own list,
    still in the rebase's state directory, maps picks and a fixup."""
    repo = hooked.path
    assert hooked.commit('CFG-1 main returns 2').returncode == 0
    git('checkout', '-q', '-b', 'feature', cwd=repo)
    olds = []
    for i in range(3):
        _append(mem(repo, 'notes.md'), f'- feature work {i}\n')
        (repo / f'f{i}.py').write_text(f'{i}\n')
        git('add', f'f{i}.py', cwd=repo)
        assert hooked.commit(f'CFG-{i} feature work').returncode == 0
        olds.append(hooked.head())
    git('checkout', '-q', 'main', cwd=repo)
    (repo / 'm.py').write_text('m\n')
    git('add', 'm.py', cwd=repo)
    assert hooked.commit('CFG-9 main work').returncode == 0
    git('checkout', '-q', 'feature', cwd=repo)
    env = {'GIT_SEQUENCE_EDITOR': "sed -i -e '3s/^pick/fixup/'"}  # the third into the second
    proc = run('git', 'rebase', '-i', 'main', cwd=repo, env=env)
    assert proc.returncode == 0, _output(proc)
    news = git('rev-list', '--reverse', 'main..feature', cwd=repo).split()
    assert len(news) == 2
    log = git('log', '--format=%B', 'refs/agitmem/heads/feature', cwd=repo)
    pairs = set(re.findall(r'^Code-Rewritten: (\S+) (\S+)$', log, re.MULTILINE))
    assert pairs == {(olds[0], news[0]), (olds[1], news[1]), (olds[2], news[1])}, _output(proc)


def test_snapshot_contradicting_the_tattoo_blocks(hooked: Hooked) -> None:
    tattoo_line = _append(mem(hooked.path, 'tattoo.md'), '- indent: 4 spaces\n')
    snap_line = _append(mem(hooked.path, 'snapshot.md'), '- indent: tabs\n')
    head = hooked.head()
    proc = hooked.commit()
    assert proc.returncode != 0
    assert hooked.head() == head
    assert (
        f'error tattoo-vs-snapshot .agent/memory/snapshot.md:{snap_line}: decision '
        f'"indent: tabs" contradicts tattoo rule "indent: 4 spaces" '
        f'(.agent/memory/tattoo.md:{tattoo_line})'
    ) in _output(proc)
    path = mem(hooked.path, 'snapshot.md')
    path.write_text(path.read_text().replace('- indent: tabs', '- indent: 4 spaces'))
    proc = hooked.commit()
    assert proc.returncode == 0, _output(proc)


def test_missing_current_file_blocks(hooked: Hooked) -> None:
    ok('state', 'set', 'current_file=src/loader.ts', cwd=hooked.path)
    proc = hooked.commit()
    assert proc.returncode != 0
    assert (
        'error state-vs-worktree .agent/memory/state.json:3: current_file '
        '"src/loader.ts" does not exist'
    ) in _output(proc)


def test_staged_tab_under_a_forbid_rule_blocks(hooked: Hooked) -> None:
    _enforce(hooked.path)
    (hooked.path / 'src' / 'app.py').write_text('def main():\n\treturn 2\n')
    git('add', 'src/app.py', cwd=hooked.path)
    proc = hooked.commit()
    assert proc.returncode != 0
    assert (
        f'error enforce src/app.py:2: added line breaks tattoo rule "{TABS_RULE}"'
    ) in _output(proc)


def test_bad_commit_message_blocks(hooked: Hooked) -> None:
    _enforce(hooked.path)
    head = hooked.head()
    proc = hooked.commit('fix things')
    assert proc.returncode != 0
    assert hooked.head() == head
    assert (
        f'error enforce commit message breaks tattoo rule "{TICKET_RULE}"'
    ) in _output(proc)
    proc = hooked.commit('CFG-7 fix things')
    assert proc.returncode == 0, _output(proc)


def test_new_dependency_not_allowed_blocks(hooked: Hooked) -> None:
    _enforce(hooked.path)
    (hooked.path / 'requirements.txt').write_text('requests\nleft-pad==1.0\n')
    git('add', 'requirements.txt', cwd=hooked.path)
    proc = hooked.commit()
    assert proc.returncode != 0
    out = _output(proc)
    assert 'error enforce requirements.txt:2: new dependency "left-pad"' in out
    assert '"requests"' not in out


def test_aws_key_in_notes_blocks_commit_and_push(hooked: Hooked, tmp_path: Path) -> None:
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=hooked.path)
    line = _append(mem(hooked.path, 'notes.md'), f'- deploy key {AWS_KEY}\n')
    proc = hooked.commit()
    assert proc.returncode != 0
    out = _output(proc)
    assert f'error secrets .agent/memory/notes.md:{line}: possible AWS access key' in out
    assert AWS_KEY not in out
    # committed anyway (--no-verify): the push is refused
    proc = hooked.commit('CFG-2 anyway', '--no-verify')
    assert proc.returncode == 0, _output(proc)
    proc = run('git', 'push', 'origin', 'main', cwd=hooked.path)
    assert proc.returncode != 0
    assert f'error secrets .agent/memory/notes.md:{line}: possible AWS access key' in _output(proc)
    assert AWS_KEY not in _output(proc)
    assert run('git', 'rev-parse', '-q', '--verify', 'refs/heads/main', cwd=remote).returncode != 0
    # once the key is gone from memory, the push goes through
    notes = mem(hooked.path, 'notes.md')
    notes.write_text(notes.read_text().replace(AWS_KEY, '<revoked>'))
    ok('save', cwd=hooked.path)  # in case the post-commit hook saved it
    proc = run('git', 'push', 'origin', 'main', cwd=hooked.path)
    assert proc.returncode == 0, _output(proc)
    assert git('rev-parse', 'refs/heads/main', cwd=remote).strip() == hooked.head()


@pytest.mark.parametrize('how', ('-a', 'src/app.py'))
def test_commit_a_and_commit_paths_are_checked_as_committed(hooked: Hooked, how: str) -> None:
    """git gives the hook a temporary index for these: the tab is in it,
    not in .git/index."""
    _enforce(hooked.path)
    git('reset', '-q', cwd=hooked.path)
    (hooked.path / 'src' / 'app.py').write_text('def main():\n\treturn 2\n')
    proc = hooked.commit('CFG-3 tabs', how)
    assert proc.returncode != 0
    assert 'error enforce src/app.py:2: added line breaks tattoo rule' in _output(proc)
