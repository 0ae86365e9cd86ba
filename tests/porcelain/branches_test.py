"""Memory follows the branch through every route git has to a branch
(issue 10, items 5 and 6): rebase (plain, interactive, --autostash,
`pull --rebase`), cherry-pick, bisect, switch and checkout; with the git
hooks installed and with the agent hooks only.  It follows the branch, or
what the agent is shown says whose memory it is; never one branch's memory
on another's ref, silently."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
FEAT = 'refs/agitmem/heads/feat'
DETACHED_NS = 'refs/agitmem/detached/'


def goal_on(repo: Path, ref: str) -> str:
    state = json.loads(git('show', f'{ref}:state.json', cwd=repo))
    return str(state.get('current_goal'))


def goal_here(repo: Path) -> str:
    return str(json.loads(mem(repo, 'state.json').read_text()).get('current_goal'))


def commit(repo: Path, name: str) -> str:
    (repo / name).write_text(f'{name}\n')
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', name, cwd=repo)
    return git('rev-parse', 'HEAD', cwd=repo).strip()


@pytest.fixture(params=['git-hooks', 'agent-hooks-only'])
def two(memrepo: Path, request: pytest.FixtureRequest) -> Path:
    """main and feat, each with its own goal and code commits, on main."""
    if request.param == 'git-hooks':
        ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    commit(memrepo, 'feat1.txt')
    commit(memrepo, 'feat2.txt')
    git('checkout', '-q', 'main', cwd=memrepo)
    ok('save', cwd=memrepo)  # agent hooks only: the save switches the memory
    commit(memrepo, 'main1.txt')
    assert goal_here(memrepo) == 'main goal'
    assert goal_on(memrepo, MAIN) == 'main goal'
    assert goal_on(memrepo, FEAT) == 'feat goal'
    return memrepo


def _both_intact(repo: Path) -> None:
    assert goal_on(repo, MAIN) == 'main goal'
    assert goal_on(repo, FEAT) == 'feat goal'


def _shown_honestly(repo: Path, branch: str, goal: str) -> None:
    """What the agent is shown is this branch's memory, or says whose it is."""
    out = ok('load', cwd=repo)
    if goal_here(repo) == goal:
        assert 'NOTE: this is the memory of' not in out, out
    else:
        assert f'NOTE: this is the memory of {"main" if branch == "feat" else "feat"}' in out, out


def _then_a_save_follows(repo: Path, goal: str) -> None:
    proc = agitmem('note', 'after the route', cwd=repo)
    assert proc.returncode == 0, proc.stderr
    _both_intact(repo)
    assert goal_here(repo) == goal


ROUTES: dict[str, Callable[[Path], object]] = {
    'rebase': lambda r: git('rebase', '-q', 'main', 'feat', cwd=r),
    'rebase-interactive': lambda r: git(
        'rebase', '-q', '-i', 'main', 'feat', cwd=r, env={'GIT_SEQUENCE_EDITOR': 'true'},
    ),
    'rebase-autostash': lambda r: (
        (r / 'README').write_text('dirty\n'),
        git('rebase', '-q', '--autostash', 'main', 'feat', cwd=r),
    ),
    'pull-rebase': lambda r: (
        git('branch', '-q', '-u', 'main', 'feat', cwd=r),
        git('switch', '-q', 'feat', cwd=r),
        git('pull', '-q', '--rebase', cwd=r),
    ),
    'switch': lambda r: git('switch', '-q', 'feat', cwd=r),
    'checkout': lambda r: git('checkout', '-q', 'feat', cwd=r),
}


@pytest.mark.parametrize('route', sorted(ROUTES))
def test_routes_to_feat_never_cross_memory(two: Path, route: str) -> None:
    ROUTES[route](two)
    assert git('symbolic-ref', '--short', 'HEAD', cwd=two).strip() == 'feat'
    _both_intact(two)
    _shown_honestly(two, 'feat', 'feat goal')
    _then_a_save_follows(two, 'feat goal')
    assert 'after the route' in git('show', f'{FEAT}:notes.md', cwd=two)
    assert 'after the route' not in git('show', f'{MAIN}:notes.md', cwd=two)


def test_a_rebase_that_stops_keeps_the_branchs_memory(two: Path) -> None:
    """A rebase of feat stopped on a conflict (HEAD detached): a write goes
    to feat's memory, not main's and not the detached ref."""
    git('switch', '-q', 'feat', cwd=two)
    ok('save', cwd=two)
    (two / 'main1.txt').write_text('feat side\n')
    git('add', 'main1.txt', cwd=two)
    git('commit', '-q', '-m', 'conflicting', cwd=two)
    assert run('git', 'rebase', 'main', cwd=two).returncode != 0
    ok('note', 'while rebasing', cwd=two)
    assert 'while rebasing' in git('show', f'{FEAT}:notes.md', cwd=two)
    assert 'while rebasing' not in git('show', f'{MAIN}:notes.md', cwd=two)
    assert git('for-each-ref', DETACHED_NS, cwd=two) == ''
    _both_intact(two)


def test_cherry_pick_keeps_mains_memory(two: Path) -> None:
    feat_commit = git('rev-parse', 'feat~1', cwd=two).strip()
    git('cherry-pick', feat_commit, cwd=two)
    _both_intact(two)
    _shown_honestly(two, 'main', 'main goal')
    _then_a_save_follows(two, 'main goal')


@pytest.mark.parametrize('start', ['main', 'feat'])
def test_bisect_keeps_the_bisected_branchs_memory(two: Path, start: str) -> None:
    """Under bisect HEAD is detached on commits of either branch: memory
    stays that of the branch bisect returns to, and writes go there."""
    goal = f'{start} goal'
    if start == 'feat':
        git('switch', '-q', 'feat', cwd=two)
        ok('save', cwd=two)
    first = git('rev-list', '--max-parents=0', 'HEAD', cwd=two).strip()
    git('bisect', 'start', 'feat', first, cwd=two)
    assert git('rev-parse', '--abbrev-ref', 'HEAD', cwd=two).strip() == 'HEAD'
    ok('note', 'bisecting', cwd=two)
    git('bisect', 'good', cwd=two)
    ok('load', cwd=two)
    git('bisect', 'reset', cwd=two)
    assert git('symbolic-ref', '--short', 'HEAD', cwd=two).strip() == start
    _both_intact(two)
    ref = MAIN if start == 'main' else FEAT
    other = FEAT if start == 'main' else MAIN
    assert 'bisecting' in git('show', f'{ref}:notes.md', cwd=two)
    assert 'bisecting' not in git('show', f'{other}:notes.md', cwd=two)
    assert git('for-each-ref', DETACHED_NS, cwd=two) == ''
    _shown_honestly(two, start, goal)
    _then_a_save_follows(two, goal)


# -- item 6: agent hooks only, every writer after a hookless switch ---------------

def _edit(repo: Path) -> int:
    return mem(repo, 'snapshot.md').write_text('# Goal\nedited on main\n')


WRITERS: dict[str, Callable[[Path], object]] = {
    'save': lambda r: (_edit(r), ok('save', cwd=r)),
    'save-m': lambda r: (_edit(r), ok('save', '-m', 'on main', cwd=r)),
    'note': lambda r: ok('note', 'on main', cwd=r),
    'state set': lambda r: ok('state', 'set', 'next_intent=on main', cwd=r),
    'verify': lambda r: agitmem('verify', '--', 'true', cwd=r),
    'archive': lambda r: ok('archive', cwd=r),
    'rollback': lambda r: ok('rollback', cwd=r),
    'hook post-edit': lambda r: (_edit(r), ok(
        'hook', 'post-edit', '--agent', 'claude', cwd=r, input=json.dumps({
            'hook_event_name': 'PostToolUse', 'session_id': 's', 'cwd': str(r),
            'tool_name': 'Write',
            'tool_input': {'file_path': str(mem(r, 'snapshot.md'))},
        }),
    )),
    'hook pre-compact': lambda r: (_edit(r), ok(
        'hook', 'pre-compact', '--agent', 'claude', cwd=r, input=json.dumps({
            'hook_event_name': 'PreCompact', 'trigger': 'auto', 'session_id': 's',
            'cwd': str(r),
        }),
    )),
}


@pytest.mark.parametrize('writer', sorted(WRITERS))
def test_no_writer_puts_feats_memory_on_main(memrepo: Path, writer: str) -> None:
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    ok('note', 'a main note', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    ok('note', 'a feat note', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    feat_tip = tip(memrepo, FEAT)
    WRITERS[writer](memrepo)
    # nothing of feat's on main's ref, at the tip or in any commit since
    for rev in git('rev-list', MAIN, cwd=memrepo).split():
        for text in ('feat goal', 'a feat note'):  # in any file (an archive too)
            assert run('git', 'grep', '-q', text, rev, cwd=memrepo).returncode == 1, (rev, text)
    assert goal_on(memrepo, FEAT) == 'feat goal'
    # feat's memory is kept (at most saved once more), main's in the files
    assert git('merge-base', '--is-ancestor', str(feat_tip), FEAT, cwd=memrepo) == ''
    assert goal_here(memrepo) == ('' if writer == 'archive' else 'main goal')


def test_load_and_session_start_say_whose_memory_they_show(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=main goal', cwd=memrepo)
    git('checkout', '-q', '-b', 'feat', cwd=memrepo)
    ok('state', 'set', 'current_goal=feat goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=memrepo)
    before = (tip(memrepo, MAIN), tip(memrepo, FEAT))
    out = ok('load', cwd=memrepo)
    assert 'NOTE: this is the memory of feat' in out and 'not of main' in out
    start = ok('hook', 'session-start', '--agent', 'claude', cwd=memrepo, input=json.dumps({
        'hook_event_name': 'SessionStart', 'source': 'startup', 'session_id': 's',
        'cwd': str(memrepo),
    }))
    assert 'NOTE: this is the memory of feat' in start
    assert (tip(memrepo, MAIN), tip(memrepo, FEAT)) == before  # reading writes no memory
    # once the memory is main's again, no note
    ok('save', cwd=memrepo)
    assert 'NOTE: this is the memory of' not in ok('load', cwd=memrepo)
