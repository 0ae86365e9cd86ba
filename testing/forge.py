"""A team on GitHub flow, on real repositories: a bare remote, a developer's
clone with agitmem and its git hooks, and a third clone that merges pull
requests and deletes their branches as a forge does (no agitmem there)."""
from __future__ import annotations

import itertools
from pathlib import Path

from testing.util import git
from testing.util import ok

METHODS = ('merge', 'squash', 'rebase')
MAIN = 'refs/agitmem/heads/main'
_clock = itertools.count(1)


def _later() -> dict[str, str]:
    """A fresh committer date: a rebase on the forge makes new commits."""
    stamp = f'{1_800_000_000 + 60 * next(_clock)} +0000'
    return {'GIT_COMMITTER_DATE': stamp, 'GIT_AUTHOR_DATE': stamp}


def setup(tmp: Path) -> tuple[Path, Path, Path]:
    """(remote, dev, forge): dev initialised, hooks installed, main's
    memory pushed."""
    remote = tmp / 'remote.git'
    git('init', '-q', '--bare', '-b', 'main', str(remote), cwd=tmp)
    seed = tmp / 'seed'
    git('init', '-q', '-b', 'main', str(seed), cwd=tmp)
    (seed / 'app.py').write_text('x = 0\n')
    git('add', '.', cwd=seed)
    git('commit', '-q', '-m', 'initial', cwd=seed)
    git('push', '-q', str(remote), 'main', cwd=seed)
    dev = tmp / 'dev'
    git('clone', '-q', str(remote), str(dev), cwd=tmp)
    ok('init', cwd=dev)
    ok('install', 'git', cwd=dev)
    ok('note', 'main starts', cwd=dev)
    ok('push', cwd=dev)
    forge = tmp / 'forge'
    git('clone', '-q', str(remote), str(forge), cwd=tmp)
    return remote, dev, forge


def feature(dev: Path, branch: str, note: str) -> None:
    """A branch with a code commit and a note, pushed with its memory."""
    git('switch', '-q', '-c', branch, 'main', cwd=dev)
    (dev / f'{branch}.py').write_text(f'{branch} = 1\n')
    git('add', '.', cwd=dev)
    git('commit', '-q', '-m', f'{branch}: first', cwd=dev)
    ok('note', note, cwd=dev)
    (dev / f'{branch}.py').write_text(f'{branch} = 2\n')
    git('commit', '-q', '-am', f'{branch}: second', cwd=dev)
    git('push', '-q', '-u', 'origin', branch, cwd=dev)
    git('switch', '-q', 'main', cwd=dev)


def forge_merge(forge: Path, branch: str, method: str, number: int, *, delete: bool = True) -> str:
    """Merge the pull request of branch into main on the server, by
    method, then delete the branch there; the commit it landed as."""
    git('fetch', '-q', '--prune', 'origin', cwd=forge)
    git('checkout', '-q', '-B', 'main', 'origin/main', cwd=forge)
    env = _later()
    if method == 'merge':
        git('merge', '-q', '--no-ff', '-m', f'Merge pull request #{number} from {branch}', f'origin/{branch}', cwd=forge, env=env)
    elif method == 'squash':
        git('merge', '-q', '--squash', f'origin/{branch}', cwd=forge, env=env)
        git('commit', '-q', '-m', f'{branch} (#{number})', cwd=forge, env=env)
    else:
        git('checkout', '-q', '-B', 'pr', f'origin/{branch}', cwd=forge)
        git('rebase', '-q', '--force-rebase', 'main', cwd=forge, env=env)
        git('checkout', '-q', 'main', cwd=forge)
        git('merge', '-q', '--ff-only', 'pr', cwd=forge)
    git('push', '-q', 'origin', 'main', cwd=forge)
    if delete:
        git('push', '-q', 'origin', '--delete', branch, cwd=forge)
    return git('rev-parse', 'main', cwd=forge).strip()


def memory_refs(repo: Path, prefix: str = 'refs/agitmem/heads/') -> list[str]:
    return git('for-each-ref', '--format=%(refname)', prefix, cwd=repo).split()


def notes(repo: Path, ref: str = MAIN) -> list[str]:
    """The notes on a memory ref, stamps cut off."""
    text = git('show', f'{ref}:notes.md', cwd=repo)
    return [line[19:] for line in text.splitlines() if line.startswith('- ')]


def teammate_pushes(forge: Path, branch: str, note: str, *, to: str | None = None) -> str:
    """A teammate's memory commit on top of the remote's memory of branch,
    pushed straight to the remote (this clone never fetches it), to its
    memory ref or to the ref `to`."""
    ref = f'refs/agitmem/heads/{branch}'
    git('fetch', '-q', 'origin', f'+{ref}:refs/mate', cwd=forge)
    text = git('show', 'refs/mate:notes.md', cwd=forge) + f'- 2026-01-01 00:00 {note}\n'
    (forge / '.git' / 'mate-notes.md').write_text(text)
    blob = git('hash-object', '-w', str(forge / '.git' / 'mate-notes.md'), cwd=forge).strip()
    env = {'GIT_INDEX_FILE': str(forge / '.git' / 'mate-index')}
    git('read-tree', 'refs/mate', cwd=forge, env=env)
    git('update-index', '--cacheinfo', f'100644,{blob},notes.md', cwd=forge, env=env)
    tree = git('write-tree', cwd=forge, env=env).strip()
    # saved, as agitmem saves, at the branch's code as the teammate has it
    head = git('ls-remote', 'origin', f'refs/heads/{branch}', cwd=forge).split('\t')[0] or '(unborn)'
    msg = f'note: {note}\n\nCode-Branch: {branch}\nCode-Head: {head}\n'
    sha = git('commit-tree', tree, '-p', 'refs/mate', '-m', msg, cwd=forge).strip()
    git('push', '-q', 'origin', f'{sha}:{to or ref}', cwd=forge)
    return sha
