"""The post-commit shim's record that the memory is saved as it is: kept
by the post-commit hook when it finds nothing to save, and by every save
of this worktree's memory, which leaves it so (porcelain/write.py); the
shim checks it against the files, the refs and HEAD at each commit and
starts no Python while all is the same (githooks._SAVED).  os and the
memory's names only: a save imports this."""
from __future__ import annotations

import os

from agitmem import caches
from agitmem import memory as memory_mod
from agitmem import repo as repo_mod
from agitmem.repo import Repo

# a copy of the memory the post-commit hook last found saved as it is, and
# where (`head`: the worktree, its git dir, HEAD's branch, the memory ref
# and its tip), in the worktree's git dir: the shim compares it with what
# is there now and does not start Python while all is the same (see `idle`)
POST_COMMIT_IDLE = 'post-commit-idle'
_HOOK_MAX = 4 * 1024 * 1024  # bytes of a copy read


def saved_idle_path(repo: Repo) -> str:
    return os.path.join(repo.gitdir, 'agitmem', POST_COMMIT_IDLE)


def record_saved(repo: Repo, branch: str, ref: str, tip: str, ids: dict[str, str]) -> None:
    """Keep what tells the post-commit shim that the memory is saved as it
    is: the post-commit hook found the files it reads (`ids`: path inside
    the memory commit -> blob id) the same as `ref`'s tip, which is this
    worktree's memory base, with HEAD on `branch`.  Two files: `head`
    (the worktree, its git dir, HEAD's ref, the memory ref, its tip) and
    `files` (the tip, the paths of the files as the shim lists them, their ids
    as `git hash-object` prints them).  Not rewritten while the same; a
    copy that cannot be written only costs the next commit a Python start."""
    names = [n for n in ids if n != memory_mod.CONFIG]
    # the order the shim lists them in: a directory's entries sorted by
    # their bytes, each directory's files where its name sorts
    names.sort(key=lambda n: n.encode('utf-8', 'surrogateescape').split(b'/'))
    paths = [f'.agent/memory/{n}' for n in names]
    if memory_mod.CONFIG in ids:
        paths.append('.agent/config.yaml')
        names.append(memory_mod.CONFIG)
    head = [repo.top, repo.gitdir, f'refs/heads/{branch}', ref, tip]
    # a name with a newline, or a CR (`git hash-object --stdin-paths` reads
    # `a.md<CR>` as `a.md`: it would hash another file), a memory file
    # named as config.yaml: never idle (a list kept before goes)
    if any('\n' in line or '\r' in line for line in head + paths) or os.path.lexists(
            os.path.join(repo.memorydir, memory_mod.CONFIG),
    ):
        forget_saved(repo)
        return
    idle = saved_idle_path(repo)
    # the tip first in both: the two files of two hooks at once (two agents
    # committing in one worktree), one's `head` with the other's `files`,
    # are never taken for one list
    files = f'{tip}\n' + ''.join(f'{p}\n' for p in paths) + ''.join(f'{ids[n]}\n' for n in names)
    wanted = {
        'files': files.encode('utf-8', 'surrogateescape'),
        'head': ''.join(f'{line}\n' for line in head).encode('utf-8', 'surrogateescape'),
    }
    try:
        if all(caches.own(os.path.join(idle, k), _HOOK_MAX) == v for k, v in wanted.items()):
            return
        _remove(idle)
        os.makedirs(idle)
        for name, data in wanted.items():  # head last: without it the shim reads nothing
            repo_mod.atomic_write(os.path.join(idle, name), data, durable=False)
    except (OSError, UnicodeError):
        forget_saved(repo)


def forget_saved(repo: Repo) -> None:
    """The post-commit shim starts the hook from now on (until it keeps
    a copy again)."""
    try:
        _remove(saved_idle_path(repo))
    except OSError:
        pass


def _remove(path: str) -> None:
    """A directory of ours and all in it (a symlink there: the link only);
    `head` first, so that what is left of it is never read."""
    if not os.path.isdir(path) or os.path.islink(path):
        if os.path.lexists(path):
            os.unlink(path)
        return
    if os.path.lexists(os.path.join(path, 'head')):
        os.unlink(os.path.join(path, 'head'))
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for name in filenames:
            os.unlink(os.path.join(dirpath, name))
        for name in dirnames:
            d = os.path.join(dirpath, name)
            if os.path.islink(d):
                os.unlink(d)
            else:
                os.rmdir(d)
    os.rmdir(path)
