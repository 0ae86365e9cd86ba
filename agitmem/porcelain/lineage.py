"""Which memory a branch should have: its own memory ref, unless that was
left by a deleted branch of the same name (or an old detached session);
else a remote's copy; else none yet (it forks from the memory it came
from).  Read-only but for moving an abandoned ref to the attic."""
from __future__ import annotations

import os
import re

from agitmem import repo as repo_mod
from agitmem import store
from agitmem.porcelain.context import Context
from agitmem.repo import MEMORY_NS
from agitmem.repo import Repo
from agitmem.repo import REMOTES_NS

# typing is not imported at run time: every write imports this module
TYPE_CHECKING = False
if TYPE_CHECKING:
    import pygit2  # its objects, from store's calls: a save need not import it

_REFLOG_TIME = re.compile(r'@\{(\d+)\}')
_CREATED = re.compile(r'^branch: Created from (\S+)$')


def pinned(ctx: Context) -> bool:
    """--ref, $AGITMEM_REF or `ref:` pin one memory ref for every branch."""
    return ctx.ref != repo_mod.memory_ref(ctx.repo, ctx.branch)


def _reflog(repo: Repo, ref: str) -> list[tuple[int, str]]:
    """(unix time, subject) of ref's reflog entries, newest first."""
    out = repo_mod.git_out(repo, 'log', '-g', '-z', '--date=unix', '--format=%gd %gs', ref)
    ret = []
    for line in out.split('\0'):
        selector, _, subject = line.partition(' ')
        m = _REFLOG_TIME.search(selector)
        if m:
            ret.append((int(m[1]), subject))
    return ret


def born(repo: Repo, branch: str | None) -> tuple[int, str | None] | None:
    """When the code branch (or this detached HEAD) began, and the branch
    it was created from; None when git kept no record of its creation (a
    reflog expired or never kept: then nothing is judged abandoned)."""
    if branch is None:
        for when, subject in _reflog(repo, 'HEAD'):
            if subject.startswith('checkout: moving from '):
                return when, subject.split()[3]
        return None
    entries = _reflog(repo, f'refs/heads/{branch}')
    if not entries:
        return None
    when, subject = entries[-1]
    m = _CREATED.match(subject)
    return (when, m[1]) if m else None


def head_moved(repo: Repo) -> int | None:
    """When HEAD last moved to another branch or commit (a checkout, a
    switch, the end of a rebase); None when git kept no record."""
    for when, subject in _reflog(repo, 'HEAD'):
        if subject.startswith('checkout: moving from ') or subject.startswith('rebase'):
            return when
    return None


def _updated(repo: Repo, ref: str) -> int | None:
    entries = _reflog(repo, ref)
    return entries[0][0] if entries else None


def _log_mtime(repo: Repo, ref: str) -> int | None:
    """When ref's reflog file last changed, in nanoseconds; None where git
    keeps none (another ref backend).  Per-worktree refs log in the git dir."""
    base = repo.git_dir if ref.startswith('refs/worktree/') else repo.common_dir
    try:
        return os.stat(base / 'logs' / ref).st_mtime_ns
    except OSError:
        return None


def _written_before_birth(repo: Repo, ref: str, branch: str) -> bool:
    """Within the one second reflogs count to, was ref's memory last
    written before the branch was made?  Told by the reflog files' own
    times while the branch's log holds its creation only (then its file
    changed last when the branch was made); else not known: no."""
    if len(_reflog(repo, f'refs/heads/{branch}')) != 1:
        return False
    memory, birth = _log_mtime(repo, ref), _log_mtime(repo, f'refs/heads/{branch}')
    return memory is not None and birth is not None and memory < birth


def _remote_memory(repo: Repo, pr: pygit2.Repository, name: str | None) -> pygit2.Commit | None:
    """The memory of the remote-tracking branch a branch was created from
    (`git checkout x` in a clone: `Created from origin/x`)."""
    if not name:
        return None
    name = name.removeprefix('refs/remotes/')  # `git checkout x` names it so
    if not repo_mod.ref_exists(repo, f'refs/remotes/{name}'):
        return None
    return store.tip(pr, REMOTES_NS + name)


def abandoned(ctx: Context, pr: pygit2.Repository, top: pygit2.Commit) -> bool:
    """Is ctx.ref's memory older than the branch it is named after, and so
    not its memory: left by a deleted branch of that name (merged or not),
    by a renamed one, or by an earlier detached session?  Memory written
    since the branch began is its own.  Memory from before is its own only
    when it is the memory of the remote branch this one was created from
    (a clone: init fetched it before `git checkout x` made the branch)."""
    birth = born(ctx.repo, ctx.branch)
    updated = _updated(ctx.repo, ctx.ref)
    if birth is None or updated is None or updated > birth[0]:
        return False
    # the same second (a branch deleted and made again at once)
    if updated == birth[0] and not (
            ctx.branch and _written_before_birth(ctx.repo, ctx.ref, ctx.branch)
    ):
        return False
    remote = _remote_memory(ctx.repo, pr, birth[1]) if ctx.branch else None
    return remote is None or not (
        store.contains(pr, remote.id, top.id) or store.contains(pr, top.id, remote.id)
    )


def from_remote(ctx: Context, pr: pygit2.Repository) -> pygit2.Commit | None:
    """A branch with no memory here whose memory a remote has (a branch
    checked out from origin): start its memory from the remote's copy."""
    if ctx.branch is None or not ctx.ref.startswith(MEMORY_NS):
        return None
    name = ctx.ref.removeprefix(MEMORY_NS)
    upstream = repo_mod.upstream_remote(ctx.repo, ctx.branch)
    candidates = [upstream] if upstream else repo_mod.remotes(ctx.repo)
    found = [
        c for c in (store.tip(pr, f'{REMOTES_NS}{r}/{name}') for r in candidates)
        if c is not None
    ]
    if len(found) != 1:
        return None
    store.update_ref(
        ctx.repo, ctx.ref, str(found[0].id), None,
        'agitmem: memory from the remote',
    )
    return found[0]


def memory_for(ctx: Context, pr: pygit2.Repository) -> tuple[pygit2.Commit | None, list[str]]:
    """The memory ctx's branch has (None: none yet, it forks), and what to
    tell the user about it.  Caller holds the lock."""
    said = []
    top = store.tip(pr, ctx.ref)
    if top is not None and abandoned(ctx, pr, top):
        attic = store.move_aside(ctx.repo, ctx.ref, 'abandoned memory of an earlier branch')
        said.append(
            f'the memory on {ctx.ref} is older than {ctx.branch or "this detached HEAD"} '
            f'and not its own (a deleted branch of that name?): moved to {attic}',
        )
        top = None
    if top is None:
        top = from_remote(ctx, pr)
    return top, said
