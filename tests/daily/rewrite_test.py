"""Commits rewritten in a day's work (`commit --amend`, `rebase`, `rebase
-i` with fixups, an aborted rebase): memory saved at the old ids follows
them (a post-rewrite record that `review` reads), and a rebase onto a
branch brings that branch's memory, as a merge does."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from testing.daily import commit
from testing.daily import head
from testing.daily import settled
from testing.util import agitmem
from testing.util import count
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
FEATURE = 'refs/agitmem/heads/feature'
PAIR = re.compile(r'^Code-Rewritten: ([0-9a-f]{40}) ([0-9a-f]{40})$', re.MULTILINE)


def _pairs(repo: Path, ref: str) -> list[tuple[str, str]]:
    """The old -> new ids the memory of ref records, over its history."""
    return PAIR.findall(git('log', '--format=%B', ref, cwd=repo))


def _reviewed(repo: Path, range_: str) -> list[str]:
    """The subjects of the memory commits `review` gives for range_."""
    out = json.loads(ok('review', range_, '--json', cwd=repo))
    return [c['subject'] for c in out['commits'] + out['elsewhere']]


def _amend(repo: Path, *extra: str) -> str:
    proc = run('git', 'commit', '-q', '--amend', '-m', 'amended', *extra, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return head(repo)


def _settled(repo: Path) -> None:
    ok('state', 'set', 'current_goal=rewrite goal', cwd=repo)  # after the code moved
    settled(repo, 'rewrite goal')


@pytest.fixture
def feature(memrepo: Path) -> Path:
    """memrepo with the git hooks, on branch feature off main."""
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=rewrite goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    return memrepo


# -- commit --amend ---------------------------------------------------------------------

def test_memory_saved_at_an_amended_commit_is_still_in_its_review(feature: Path) -> None:
    old = commit(feature, 'f.py', 'the amended work')
    assert f'Code-Head: {old}' in git('log', '-1', '--format=%B', FEATURE, cwd=feature)
    new = _amend(feature)
    assert _pairs(feature, FEATURE) == [(old, new)]
    assert f'Code-Head: {new}' in git('log', '-1', '--format=%B', FEATURE, cwd=feature)
    # the memory commit itself keeps its id (published history is never rewritten)
    assert f'Code-Head: {old}' in git('log', '-1', '--format=%B', f'{FEATURE}~1', cwd=feature)
    assert 'hook post-commit: f.py' in _reviewed(feature, 'main..feature')
    # amended twice: the mappings are followed one after the other
    newer = _amend(feature, '-m', 'amended again')
    assert _pairs(feature, FEATURE) == [(new, newer), (old, new)]
    assert 'hook post-commit: f.py' in _reviewed(feature, 'main..feature')
    _settled(feature)


def test_an_amend_with_no_memory_saved_at_the_commit_records_nothing(feature: Path) -> None:
    commit(feature, 'f.py')  # memory as saved: post-commit writes none
    before = tip(feature, FEATURE)
    _amend(feature)
    assert tip(feature, FEATURE) == before
    assert _pairs(feature, FEATURE) == []


def test_an_amend_without_agitmem_in_use(repo: Path) -> None:
    """Hooks installed, no .agent/: nothing to do, quietly."""
    ok('install', 'git', cwd=repo)
    commit(repo, 'f.py')
    proc = run('git', 'commit', '--amend', '-m', 'amended', cwd=repo)
    assert proc.returncode == 0 and 'agitmem' not in proc.stdout + proc.stderr
    assert git('for-each-ref', 'refs/agitmem/', cwd=repo) == ''


def test_a_users_own_post_rewrite_hook_still_gets_the_list(memrepo: Path) -> None:
    hook = memrepo / '.git' / 'hooks' / 'post-rewrite'
    hook.write_text('#!/bin/sh\necho "$0 $*" >> ran.log\ncat >> ran.log\n')
    hook.chmod(0o755)
    out = ok('install', 'git', cwd=memrepo)
    assert 'post-rewrite.agitmem-chained; it runs first)' in out
    old = commit(memrepo, 'f.py', 'before amend')
    new = _amend(memrepo)
    assert (memrepo / 'ran.log').read_text() == f'.git/hooks/post-rewrite amend\n{old} {new}\n'
    assert _pairs(memrepo, MAIN) == [(old, new)]
    ok('uninstall', 'git', cwd=memrepo)
    assert hook.read_text().startswith('#!/bin/sh\necho "$0 $*"')
    assert not (memrepo / '.git' / 'hooks' / 'post-rewrite.agitmem-chained').exists()


def test_husky_hooks_path_gets_post_rewrite_too(memrepo: Path) -> None:
    """husky v9: core.hooksPath .husky/_, each hook a stub running `h`,
    which runs .husky/<name> when the project has one."""
    husky = memrepo / '.husky'
    (husky / '_').mkdir(parents=True)
    (husky / '_' / 'h').write_text(
        '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n'
        '[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n',
    )
    (husky / '_' / 'h').chmod(0o755)
    for name in ('pre-commit', 'post-rewrite'):
        stub = husky / '_' / name
        stub.write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
        stub.chmod(0o755)
    (husky / 'post-rewrite').write_text('echo "husky $1" >> husky.log\n')
    git('config', 'core.hooksPath', '.husky/_', cwd=memrepo)
    ok('install', 'git', cwd=memrepo)
    assert (husky / '_' / 'post-rewrite.agitmem-chained').exists()
    old = commit(memrepo, 'f.py', 'under husky')
    new = _amend(memrepo)
    assert (memrepo / 'husky.log').read_text() == 'husky amend\n'
    assert _pairs(memrepo, MAIN) == [(old, new)]


# -- rebase -----------------------------------------------------------------------------

def test_interactive_rebase_squashing_three_commits_into_one(feature: Path) -> None:
    olds = [commit(feature, f'f{i}.py', f'work {i}') for i in range(3)]
    saved = count(feature, FEATURE)
    # keep the first, fixup the other two into it
    env = {'GIT_SEQUENCE_EDITOR': "sed -i -e '2,$s/^pick/fixup/'"}
    proc = run('git', 'rebase', '-q', '-i', 'main', cwd=feature, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new = head(feature)
    assert git('rev-list', '--count', 'main..feature', cwd=feature).strip() == '1'
    # one record, three old ids to the one new (the fixups' own amends are not recorded apart)
    assert sorted(_pairs(feature, FEATURE)) == sorted((o, new) for o in olds)
    assert count(feature, FEATURE) == saved + 1
    reviewed = _reviewed(feature, 'main..feature')
    for i in range(3):
        assert f'hook post-commit: f{i}.py' in reviewed
    _settled(feature)


@pytest.mark.parametrize('action', (None, 'sync'))
def test_rebase_onto_main_merges_mains_memory(feature: Path, action: str | None) -> None:
    """`action`: a tool that runs the rebase names it in $GIT_REFLOG_ACTION
    (`sync (start): checkout main` in the reflogs, not `rebase ...`)."""
    old = commit(feature, 'f.py', 'feature work')
    git('checkout', '-q', 'main', cwd=feature)
    commit(feature, 'm.py', 'main work')
    git('checkout', '-q', 'feature', cwd=feature)
    notes = mem(feature, 'notes.md').read_text()
    assert 'main work' not in notes and 'feature work' in notes
    proc = run('git', 'rebase', 'main', cwd=feature, env={'GIT_REFLOG_ACTION': action} if action else None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'merged the memory of main' in proc.stdout + proc.stderr
    new = head(feature)
    for where in (mem(feature, 'notes.md').read_text(), git('show', f'{FEATURE}:notes.md', cwd=feature)):
        assert 'main work' in where and 'feature work' in where
    assert _pairs(feature, FEATURE) == [(old, new)]
    assert 'hook post-commit: f.py' in _reviewed(feature, 'main..feature')
    _settled(feature)


def test_a_rebase_onto_its_own_commits_merges_nothing(feature: Path) -> None:
    """`git rebase -i HEAD~2` (a reword): no other branch's memory."""
    commit(feature, 'a.py', 'a')
    commit(feature, 'b.py', 'b')
    env = {'GIT_SEQUENCE_EDITOR': "sed -i -e '1s/^pick/reword/'", 'GIT_EDITOR': "sed -i -e '1s/.*/reworded/'"}
    proc = run('git', 'rebase', '-i', 'HEAD~2', cwd=feature, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'merged the memory' not in proc.stdout + proc.stderr
    assert len(_pairs(feature, FEATURE)) == 2
    assert git('log', '-1', '--format=%P', FEATURE, cwd=feature).count(' ') == 0  # no merge commit


def test_an_aborted_rebase_leaves_memory_as_it_was(feature: Path) -> None:
    (feature / 'src' / 'app.py').write_text('feature\n')
    git('commit', '-q', '-am', 'feature side', cwd=feature)
    git('checkout', '-q', 'main', cwd=feature)
    (feature / 'src' / 'app.py').write_text('main\n')
    git('commit', '-q', '-am', 'main side', cwd=feature)
    git('checkout', '-q', 'feature', cwd=feature)
    with open(mem(feature, 'notes.md'), 'a') as f:
        f.write('- unsaved during the rebase\n')
    refs = git('for-each-ref', 'refs/agitmem/heads/', cwd=feature)
    proc = run('git', 'rebase', 'main', cwd=feature)
    assert proc.returncode != 0  # the conflict
    assert run('git', 'rebase', '--abort', cwd=feature).returncode == 0
    assert git('for-each-ref', 'refs/agitmem/heads/', cwd=feature) == refs
    assert '- unsaved during the rebase' in mem(feature, 'notes.md').read_text()
    assert _pairs(feature, FEATURE) == []
    ok('save', cwd=feature)
    _settled(feature)


def test_an_amend_over_a_gap_in_the_memory_history(feature: Path) -> None:
    """A commit of the memory's history is gone (pruned, a broken copy):
    the amend still records what the history git can read names, and one
    line says the rest is not followed; no traceback, memory kept."""
    old = commit(feature, 'f.py', 'the amended work')
    parent = git('rev-parse', f'{FEATURE}~1', cwd=feature).strip()
    loose = feature / '.git' / 'objects' / parent[:2] / parent[2:]
    assert loose.is_file()  # a fresh repository's objects are loose
    loose.unlink()
    proc = run('git', 'commit', '-q', '--amend', '-m', 'amended', cwd=feature)
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr
    gap = [x for x in proc.stderr.splitlines() if 'is incomplete' in x]
    assert len(gap) == 1 and gap[0].startswith('agitmem: the history of '), proc.stderr
    new = head(feature)
    tip_msg = git('cat-file', 'commit', FEATURE, cwd=feature)
    assert f'Code-Rewritten: {old} {new}' in tip_msg
    assert 'the amended work' in mem(feature, 'notes.md').read_text()


def test_post_rewrite_given_nonsense_never_fails(feature: Path) -> None:
    for args, stdin in ((('rebase',), 'not ids\n\n'), (('amend',), 'x' * 40 + ' ' + 'y' * 40), (('other',), ''), ((), '')):
        proc = agitmem('hook', 'post-rewrite', *args, cwd=feature, input=stdin)
        assert proc.returncode == 0, proc.stderr
    assert _pairs(feature, FEATURE) == []



def test_a_rebase_hook_run_after_gits_state_is_gone_pairs_by_patch_id(memrepo: Path) -> None:
    """A hook runner that runs post-rewrite with no list once the rebase's
    state directory is removed: the branch's reflog and patch ids pair the
    picks (the commit dropped as already in main pairs with nothing)."""
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    olds = []
    for name in ('a.py', 'b.py'):
        olds.append(commit(memrepo, name, f'{name} work'))
        ok('save', '-m', name, cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    commit(memrepo, 'm.py')
    git('cherry-pick', olds[1], cwd=memrepo)  # main has b already: the rebase drops it
    git('checkout', '-q', 'feature', cwd=memrepo)
    proc = run('git', 'rebase', 'main', cwd=memrepo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new = head(memrepo)
    assert git('rev-list', '--count', 'main..feature', cwd=memrepo).strip() == '1'
    proc = agitmem('hook', 'post-rewrite', 'rebase', cwd=memrepo, input='')
    assert proc.returncode == 0, proc.stderr
    assert 'memory follows the rewritten commits' in proc.stdout
    assert _pairs(memrepo, FEATURE) == [(olds[0], new)]
    assert 'save: a.py' in _reviewed(memrepo, 'main..feature')
    # run again: the mapping is recorded once
    agitmem('hook', 'post-rewrite', 'rebase', cwd=memrepo, input='')
    assert _pairs(memrepo, FEATURE) == [(olds[0], new)]


def test_a_late_rebase_hook_after_something_else_records_nothing(memrepo: Path) -> None:
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    commit(memrepo, 'a.py', 'a work')
    ok('save', cwd=memrepo)
    before = tip(memrepo, FEATURE)
    for env in ({}, {'GIT_DIR': str(memrepo / '.git')}):
        proc = agitmem('hook', 'post-rewrite', 'rebase', cwd=memrepo, input='', env=env)
        assert proc.returncode == 0, proc.stderr
    git('checkout', '-q', '--detach', cwd=memrepo)
    assert agitmem('hook', 'post-rewrite', 'rebase', cwd=memrepo, input='').returncode == 0
    assert tip(memrepo, FEATURE) == before


@pytest.mark.parametrize('how', ('id', 'autosquash', 'tag', 'onto-id'))
def test_a_rebase_onto_a_commit_id_merges_no_branchs_memory(feature: Path, how: str) -> None:
    """`git rebase -i --autosquash <id>` (or a tag, `--onto <id>`) names no
    branch: the memory of a branch that happens to point at that commit
    (main, an unrelated `other`) is not merged in."""
    commit(feature, 'f.py', 'feature work')
    base = head(feature)
    git('branch', 'other', base, cwd=feature)
    git('checkout', '-q', 'other', cwd=feature)
    ok('note', 'other: unrelated secret plan', cwd=feature)
    git('checkout', '-q', 'feature', cwd=feature)
    commit(feature, 'g.py', 'more feature work')
    git('tag', 'v1', base, cwd=feature)
    args = {
        'id': [base], 'autosquash': ['-i', '--autosquash', base], 'tag': ['v1'],
        'onto-id': ['--onto', base, base],
    }[how]
    proc = run('git', 'rebase', '--force-rebase', *args, cwd=feature, env={'GIT_SEQUENCE_EDITOR': 'true'})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'merged the memory' not in proc.stdout + proc.stderr
    for where in (mem(feature, 'notes.md').read_text(), git('show', f'{FEATURE}:notes.md', cwd=feature)):
        assert 'unrelated secret plan' not in where and 'feature work' in where
