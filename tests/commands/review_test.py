from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok

RULE = 'errors: raise ConfigError from src/errors.py'


def _commit(repo: Path, name: str) -> None:
    (repo / name).write_text(f'{name}\n')
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', f'add {name}', cwd=repo)


def _add_rule(repo: Path, rule: str = RULE) -> None:
    tattoo = mem(repo, 'tattoo.md')
    tattoo.write_text(tattoo.read_text() + f'- {rule}\n')
    ok('save', '-m', 'rule', cwd=repo)


@pytest.fixture
def feature(memrepo: Path) -> Path:
    """feature: a rule, a decision, progress, a fragment, an archived
    snapshot and two code commits; main moved on with its own memory."""
    ok('note', 'main before the fork', cwd=memrepo)
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    _commit(memrepo, 'one.txt')
    _add_rule(memrepo)
    ok('state', 'set', 'current_goal=first goal', cwd=memrepo)
    ok('archive', cwd=memrepo)
    snap = mem(memrepo, 'snapshot.md')
    snap.write_text(snap.read_text().replace(
        '## Decisions\n', '## Decisions\n- loader: one module, src/config/index.ts\n',
    ).replace('## Done\n', '## Done\n- moved loadConfig\n'))
    ok('state', 'set', 'current_goal=move the loader', 'next_intent=fix imports', cwd=memrepo)
    ok('verify', '--', 'true', cwd=memrepo)
    ok('fragment', 'add', '--goal', 'split loader', '--next', 'imports',
       '--result', 'moved', cwd=memrepo)
    _commit(memrepo, 'two.txt')
    git('checkout', '-q', 'main', cwd=memrepo)
    return memrepo


def test_review_markdown_lists_the_rule_added_on_the_feature_branch(feature: Path) -> None:
    out = ok('review', 'main..feature', '--markdown', cwd=feature)
    assert out.startswith('<!-- agitmem-review -->\n### Agent memory: `main..feature`\n')
    rules = out.index('#### Tattoo rules')
    assert f'- **added:** {RULE}\n' in out[rules:]
    assert rules < out.index('#### Decisions') < out.index('#### Progress')
    assert '- **added:** loader: one module, src/config/index.ts\n' in out
    assert '- goal: move the loader\n' in out
    assert '- last verification: passed `true`\n' in out
    assert '- done: moved loadConfig\n' in out
    assert '#### New fragments\n\n- `A-001` split loader; result: moved; next: imports\n' in out
    assert '#### Archived snapshots\n\n- `archive/' in out
    assert '-first-goal.md`' in out
    assert '<details><summary>Memory diff</summary>' in out
    assert '```diff\n' in out
    assert f'+- {RULE}\n' in out
    assert 'main before the fork' not in out.split('```diff')[1].split('+- ')[0]


def test_review_text_and_rule_saved_before_the_first_code_commit(memrepo: Path) -> None:
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    _add_rule(memrepo, 'never call `eval`')  # Code-Head: the fork point
    _commit(memrepo, 'one.txt')
    ok('note', 'after the code commit', cwd=memrepo)
    out = ok('review', 'main..feature', cwd=memrepo)
    assert out.startswith(
        'memory review of main..feature: 2 memory commit(s) for 1 code commit(s)\n',
    )
    assert '\nTattoo rules (they change what the agent does):\n  + never call `eval`\n' in out
    assert '+- never call `eval`\n' in out


def test_review_leaves_out_main_memory_at_the_fork_point(memrepo: Path) -> None:
    git('branch', 'feature', cwd=memrepo)
    _add_rule(memrepo, 'a main rule')  # on main, Code-Head the fork point
    git('checkout', '-q', 'feature', cwd=memrepo)
    ok('save', cwd=memrepo)  # forks feature's memory from main's
    _commit(memrepo, 'one.txt')
    ok('note', 'feature work', cwd=memrepo)
    out = ok('review', 'main..feature', '--json', cwd=memrepo)
    data = json.loads(out)
    assert data['tattoo'] == {'added': [], 'removed': []}
    assert [c['subject'] for c in data['commits']] == ['note: feature work']
    assert data['code_commits'] == 1


def test_review_removed_rule(memrepo: Path) -> None:
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    _commit(memrepo, 'one.txt')
    tattoo = mem(memrepo, 'tattoo.md')
    lines = [x for x in tattoo.read_text().splitlines(keepends=True) if 'Never commit' not in x]
    tattoo.write_text(''.join(lines))
    ok('save', cwd=memrepo)
    data = json.loads(ok('review', 'main..HEAD', '--json', cwd=memrepo))
    assert data['tattoo']['removed'] == [
        'Never commit secrets, tokens or passwords, in code or in memory.',
    ]
    md = ok('review', 'main..HEAD', '--markdown', cwd=memrepo)
    assert '- **removed:** ~~Never commit secrets' in md


def test_review_default_range_is_main(memrepo: Path) -> None:
    git('checkout', '-q', '-b', 'feature', cwd=memrepo)
    _commit(memrepo, 'one.txt')
    _add_rule(memrepo)
    assert ok('review', cwd=memrepo).startswith('memory review of main..HEAD: 1 memory')


def test_review_empty_range(memrepo: Path) -> None:
    out = ok('review', 'main..main', cwd=memrepo)
    assert 'no memory changes in this range' in out
    md = ok('review', 'main..main', '--markdown', cwd=memrepo)
    assert 'No memory changes for the 0 code commit(s)' in md


@pytest.mark.parametrize(
    ('range_', 'expected'),
    (
        ('nope..HEAD', 'unknown revision "nope"'),
        ('main...HEAD', 'use BASE..HEAD (two dots)'),
        ('..HEAD', 'BASE is missing'),
        ('--all', 'unknown revision "--all"'),
    ),
)
def test_review_bad_range(memrepo: Path, range_: str, expected: str) -> None:
    assert expected in bad('review', '--', range_, cwd=memrepo)


def test_review_in_ci_fetches_memory_refs_without_dot_agent(feature: Path, tmp_path: Path) -> None:
    bare = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(bare), cwd=tmp_path)
    git('push', '-q', str(bare), 'main', 'feature',
        'refs/agitmem/heads/*:refs/agitmem/heads/*', cwd=feature)
    ci = tmp_path / 'ci'
    git('clone', '-q', '--branch', 'feature', str(bare), str(ci), cwd=tmp_path)
    git('fetch', '-q', 'origin', '+refs/agitmem/*:refs/agitmem/*', cwd=ci)
    proc = agitmem('review', 'origin/main..HEAD', '--markdown', cwd=ci)
    assert proc.returncode == 0, proc.stderr
    assert f'- **added:** {RULE}\n' in proc.stdout
    assert not (ci / '.agent').exists()
