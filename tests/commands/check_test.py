from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import git_state
from testing.util import mem
from testing.util import ok

TABS_RULE = 'indent with 4 spaces, never tabs'
TICKET_RULE = 'commit messages start with a ticket id'
DEPS_RULE = 'no new dependencies without approval'
ENFORCE = f'''\
enforce:
- rule: {TABS_RULE}
  forbid: "\\t"
  files: "*.py"
- rule: {TICKET_RULE}
  commit_msg: "^[A-Z]+-[0-9]+ "
- rule: {DEPS_RULE}
  dependencies: [requests]
'''


def _enforced(repo: Path) -> Path:
    with open(mem(repo, 'tattoo.md'), 'a') as f:
        f.write(f'- {TABS_RULE}\n- {TICKET_RULE}\n- {DEPS_RULE}\n')
    (repo / '.agent' / 'config.yaml').write_text(ENFORCE)
    return repo


def _contradict(repo: Path) -> None:
    with open(mem(repo, 'tattoo.md'), 'a') as f:
        f.write('- indent: 4 spaces\n')
    with open(mem(repo, 'snapshot.md'), 'a') as f:
        f.write('- indent: tabs\n')


def test_clean_memory_passes(memrepo: Path) -> None:
    proc = agitmem('check', cwd=memrepo)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, 'agitmem: memory checks passed\n', '')
    assert ok('check', '--staged', cwd=memrepo) == 'agitmem: memory checks passed\n'


def test_findings_one_per_line_then_a_summary(memrepo: Path) -> None:
    _contradict(memrepo)
    ok('state', 'set', 'current_file=gone.py', cwd=memrepo)
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert [ln.split()[:2] for ln in lines[:-1]] == [
        ['error', 'tattoo-vs-snapshot'], ['error', 'state-vs-worktree'],
    ]
    assert lines[0].startswith('error tattoo-vs-snapshot .agent/memory/snapshot.md:')
    assert lines[-1].startswith('agitmem: 2 error(s), 0 warning(s)')


def test_json(memrepo: Path) -> None:
    _contradict(memrepo)
    proc = agitmem('check', '--json', cwd=memrepo)
    assert proc.returncode == 1
    found, = json.loads(proc.stdout)
    assert sorted(found) == ['id', 'line', 'message', 'path', 'severity']
    assert (found['id'], found['severity'], found['path']) == (
        'tattoo-vs-snapshot', 'error', '.agent/memory/snapshot.md',
    )
    assert found['message'].startswith('decision "indent: tabs" contradicts')
    assert json.loads(ok('check', '--json', cwd=memrepo.parent / 'repo' / 'src', env={'AGITMEM_SKIP': 'tattoo-vs-snapshot'})) == []


def test_json_clean(memrepo: Path) -> None:
    assert json.loads(ok('check', '--json', cwd=memrepo)) == []


def test_agitmem_skip_skips_and_says_so(memrepo: Path) -> None:
    _contradict(memrepo)
    proc = agitmem('check', cwd=memrepo, env={'AGITMEM_SKIP': 'secrets, tattoo-vs-snapshot,nope'})
    assert proc.returncode == 0
    assert 'tattoo-vs-snapshot' not in proc.stdout
    assert proc.stderr.splitlines() == [
        'agitmem: AGITMEM_SKIP names no check nope (ids: tattoo-size, '
        'tattoo-vs-snapshot, state-vs-worktree, verification-stale, '
        'progress-not-updated, enforce, secrets, size, schema, merge-conflict)',
        'agitmem: skipped (AGITMEM_SKIP): tattoo-vs-snapshot, secrets',
    ]


def test_needs_agitmem_init(repo: Path) -> None:
    assert 'run `agitmem init` first' in bad('check', cwd=repo)


def test_broken_config_is_bad_input(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text('max_rules: many\n')
    assert bad('check', cwd=memrepo).startswith('agitmem: .agent/config.yaml:1: "max_rules" must be int')


def test_leaves_the_users_repo_untouched(memrepo: Path) -> None:
    _enforced(memrepo)
    (memrepo / 'src' / 'app.py').write_text('def main():\n\treturn 2\n')
    git('add', 'src/app.py', cwd=memrepo)
    (memrepo / 'untracked.py').write_text('x = 1\n')
    ok('verify', '--', 'true', cwd=memrepo)
    before = git_state(memrepo)
    for args in (('check',), ('check', '--staged'), ('check', '--json')):
        agitmem(*args, cwd=memrepo)
        assert git_state(memrepo) == before, args


# enforce, through the staged diff


def test_forbid_blocks_a_staged_tab(memrepo: Path) -> None:
    _enforced(memrepo)
    (memrepo / 'src' / 'app.py').write_text('def main():\n\treturn 2\n')
    assert ok('check', '--staged', cwd=memrepo) == 'agitmem: memory checks passed\n'  # not staged yet
    git('add', 'src/app.py', cwd=memrepo)
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1
    tattoo_line = mem(memrepo, 'tattoo.md').read_text().splitlines().index(f'- {TABS_RULE}') + 1
    assert (
        f'error enforce src/app.py:2: added line breaks tattoo rule "{TABS_RULE}" '
        f'(tattoo.md:{tattoo_line}); remove the match of /\\t/'
    ) in proc.stdout.splitlines()


def test_forbid_sees_a_tab_after_a_lone_cr_wherever_check_runs(memrepo: Path) -> None:
    """git's output read as Popen's text mode reads it turned a lone CR
    into a newline: the diff's added line `x = 1\r\tbad = 2` became a
    truncated hunk and a stray line, and the tab went unseen.  That was the
    reading wherever git was begun by Popen (a command run from a
    subdirectory, one that had imported subprocess, the suite's warm
    runs); posix_spawn's Child keeps the CR.  Both read alike now."""
    _enforced(memrepo)
    (memrepo / 'src' / 'app.py').write_text('x = 1\r\tbad = 2\n', newline='')
    git('add', 'src/app.py', cwd=memrepo)
    for args in (('check',), ('check', '--staged')):
        for cwd in (memrepo, memrepo / 'src'):
            proc = agitmem(*args, cwd=cwd)
            assert proc.returncode == 1, (args, cwd, proc.stdout)
            assert 'error enforce src/app.py:1: added line breaks tattoo rule' in proc.stdout, (args, cwd)


def test_forbid_ignores_other_files_and_existing_lines(memrepo: Path) -> None:
    _enforced(memrepo)
    (memrepo / 'Makefile').write_text('all:\n\techo hi\n')
    git('add', 'Makefile', cwd=memrepo)
    assert agitmem('check', '--staged', cwd=memrepo).returncode == 0


def test_staged_check_reads_the_hooks_index(memrepo: Path) -> None:
    """`git commit -a` and `git commit <path>` give the hook a temporary
    index in GIT_INDEX_FILE: that is what is being committed."""
    _enforced(memrepo)
    gd = memrepo / '.git'
    other = gd / 'next-index.lock'
    shutil.copyfile(gd / 'index', other)
    (memrepo / 'src' / 'app.py').write_text('def main():\n\treturn 2\n')
    git('add', 'src/app.py', cwd=memrepo, env={'GIT_INDEX_FILE': str(other)})
    assert agitmem('check', '--staged', cwd=memrepo).returncode == 0
    env = {'GIT_INDEX_FILE': os.path.relpath(other, memrepo)}
    proc = agitmem('check', '--staged', cwd=memrepo, env=env)
    assert proc.returncode == 1
    assert 'error enforce src/app.py:2:' in proc.stdout


def test_worktree_mode_sees_unstaged_and_untracked(memrepo: Path) -> None:
    _enforced(memrepo)
    (memrepo / 'new.py').write_text('if x:\n\tpass\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert 'error enforce new.py:2:' in proc.stdout


def test_new_dependency_not_allowed(memrepo: Path) -> None:
    _enforced(memrepo)
    (memrepo / 'requirements.txt').write_text('requests==2.31\n')
    git('add', 'requirements.txt', cwd=memrepo)
    git('commit', '-q', '-m', 'deps', cwd=memrepo)
    (memrepo / 'requirements.txt').write_text('requests==2.32\nleft-pad\n')
    git('add', 'requirements.txt', cwd=memrepo)
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1
    assert (
        f'error enforce requirements.txt:2: new dependency "left-pad" breaks '
        f'tattoo rule "{DEPS_RULE}"'
    ) in proc.stdout
    assert '"requests"' not in proc.stdout


def test_new_dependency_in_package_json_worktree(memrepo: Path) -> None:
    _enforced(memrepo)
    (memrepo / 'package.json').write_text('{"dependencies": {"left-pad": "1"}}\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert 'error enforce package.json:1: new dependency "left-pad"' in proc.stdout


def test_enforce_rule_without_tattoo_line(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text(ENFORCE)
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert f'error enforce enforce rule "{TABS_RULE}" matches no tattoo line;' in proc.stdout


# the commit-msg stage


def test_commit_msg(memrepo: Path) -> None:
    _enforced(memrepo)
    msg = memrepo / '.git' / 'COMMIT_EDITMSG'
    msg.write_text('fix the loader\n# Please enter the commit message\n')
    proc = agitmem('check', '--staged', '--commit-msg', str(msg), cwd=memrepo)
    assert proc.returncode == 1
    assert proc.stdout.startswith(
        f'error enforce commit message breaks tattoo rule "{TICKET_RULE}"',
    )
    msg.write_text('CFG-12 fix the loader\n')
    assert ok('check', '--commit-msg', '.git/COMMIT_EDITMSG', cwd=memrepo) == 'agitmem: memory checks passed\n'


def test_commit_msg_runs_only_the_commit_msg_rules(memrepo: Path) -> None:
    _enforced(memrepo)
    _contradict(memrepo)
    (memrepo / 'src' / 'app.py').write_text('def main():\n\treturn 2\n')
    git('add', 'src/app.py', cwd=memrepo)
    msg = memrepo / 'msg'
    msg.write_text('CFG-1 ok\n')
    ok('check', '--commit-msg', str(msg), cwd=memrepo)


def test_commit_msg_file_missing(memrepo: Path) -> None:
    line = bad('check', '--commit-msg', 'nope.txt', cwd=memrepo)
    assert line.startswith('agitmem: cannot read the commit message file nope.txt')


def test_user_tattoo_counts_unless_turned_off(memrepo: Path) -> None:
    user = Path(os.environ['AGITMEM_HOME']) / 'memory' / 'tattoo.md'
    user.parent.mkdir(parents=True)
    user.write_text('- indent: 4 spaces\n')
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- indent: tabs\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert 'contradicts tattoo rule "indent: 4 spaces" (~/.agent/memory/tattoo.md:1)' in proc.stdout
    (memrepo / '.agent' / 'config.yaml').write_text('user_tattoo: false\n')
    ok('check', cwd=memrepo)
