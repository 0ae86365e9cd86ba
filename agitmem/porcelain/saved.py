"""Whether a save would commit nothing: the working tree's memory is, file
for file, what the memory ref's tip holds, and this worktree's memory base
is that tip (so a save has nothing to catch up with, nothing to switch and
nothing to record).  Told by two git reads run at once and the blob ids of
the files, without pygit2: the post-commit hook runs on every commit and
mostly finds that nothing changed."""
from __future__ import annotations

import os
import re

from agitmem import repo as repo_mod
from agitmem.memory import files as memory_files
from agitmem.porcelain.context import Context
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# post-commit hook imports this module
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

_OID = re.compile(r'[0-9a-f]{40}(?:[0-9a-f]{24})?')


def conflicts_path(repo: Repo) -> str:
    """<git dir>/agitmem/conflicts: the conflicts a merge left unresolved
    (a string: a save imports no pathlib)."""
    return os.path.join(repo.gitdir, 'agitmem', 'conflicts')


class Saved(NamedTuple):
    unchanged: bool  # a save would commit and change nothing
    head_parents: int | None  # HEAD's parents, when asked on the way
    # unchanged: the tip, and the blob id of each file read (path inside a
    # memory commit -> id), which the tip holds
    tip: str | None = None
    ids: dict[str, str] | None = None


def saved(ctx: Context) -> Saved:
    """Whether the memory is saved as it is (see above); anything unsure
    (no memory base, a conflict recorded, a tip that moved, a file that is
    not a plain blob) is `unchanged=False`: the save itself decides.  A
    memory file a save would refuse raises as the save would."""
    repo = ctx.repo
    base, held = repo_mod.memory_base(repo)
    if base is None or held != ctx.ref or not _OID.fullmatch(base) or os.path.lexists(conflicts_path(repo)):
        return Saved(False, None)
    tip_proc, tree_proc = repo_mod.git_each(
        # the tip, and HEAD's parents (a merge commit is the post-commit
        # hook's to merge memory for)
        ('rev-parse', f'{ctx.ref}^{{commit}}', 'HEAD^@'),
        ('ls-tree', '-r', '-z', '--full-tree', base),
        cwd=repo.top,
    )
    if tip_proc.returncode != 0:
        return Saved(False, None)
    tip, *parents = tip_proc.stdout.split()
    if tip != base or tree_proc.returncode != 0:
        return Saved(False, len(parents))
    held_ids: dict[str, str] = {}
    for entry in tree_proc.stdout.split('\0'):
        info, _, path = entry.partition('\t')
        if not path:
            continue
        mode, kind, oid = info.split()
        if mode != '100644' or kind != 'blob':
            return Saved(False, len(parents))
        held_ids[path] = oid

    found: dict[str, bool] = {}

    def same(name: str, data: bytes) -> bool:
        if name not in found:
            found[name] = held_ids.get(name) == repo_mod.blob_id(data, base)
        return found[name]

    # what a save reads, as it reads it (the files the tip holds are not
    # parsed again: they were when it was committed)
    files = memory_files.read_memory(repo, max_file_kb=ctx.cfg['max_file_kb'], checked=same)
    unchanged = files.keys() == held_ids.keys() and all(same(n, d) for n, d in files.items())
    if not unchanged:
        return Saved(False, len(parents))
    return Saved(True, len(parents), tip, held_ids)
