"""The tree cache (<git dir>/agitmem/tree-cache, repo.py) must never make
a working tree that changed look like the one it remembered: the state's
`tree` (and so STALE, verification-stale, the stop hook) would lie."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from agitmem import trees
from testing.util import git
from testing.util import ok


def _state_tree(repo: Path, goal: str) -> str:
    ok('state', 'set', f'current_goal={goal}', cwd=repo)
    tree = json.loads(ok('state', 'show', '--json', cwd=repo))['tree']
    assert isinstance(tree, str)
    return tree


def _git_add_tree(repo: Path, tmp: Path) -> str:
    """The working tree's tree as `git add -A` sees it, into a copy of
    the index (.agent/ is excluded by init)."""
    index = tmp / 'index'
    shutil.copy2(repo / '.git' / 'index', index)
    env = {'GIT_INDEX_FILE': str(index)}
    git('add', '-A', cwd=repo, env=env)
    return git('write-tree', cwd=repo, env=env).strip()


def test_ignored_gitattributes_changes_the_tree(memrepo: Path, tmp_path: Path) -> None:
    (memrepo / 'crlf.txt').write_bytes(b'a\r\nb\r\n')
    git('add', 'crlf.txt', cwd=memrepo)
    git('commit', '-q', '-m', 'crlf', cwd=memrepo)
    (memrepo / 'crlf.txt').write_bytes(b'a\r\nb\r\nc\r\n')
    time.sleep(trees.RACY_NS / 1e9 + 0.2)  # not racy: remembered
    before = _state_tree(memrepo, 'one')
    assert (memrepo / '.git' / 'agitmem' / 'tree-cache').is_file()
    # an ignored .gitattributes: git status lists nothing new, yet
    # `git add` now stores crlf.txt with LF endings
    with open(memrepo / '.git' / 'info' / 'exclude', 'a') as f:
        f.write('/.gitattributes\n')
    (memrepo / '.gitattributes').write_text('* text eol=lf\n')
    truth = _git_add_tree(memrepo, tmp_path)
    assert truth != before
    assert _state_tree(memrepo, 'two') == truth
