"""`agitmem merge BRANCH`: merge another branch's memory into this one."""
from __future__ import annotations

from agitmem.errors import AgitmemError
from agitmem.porcelain import merging
from agitmem.porcelain.context import Context


def merge(ctx: Context, branch: str) -> int:
    if not branch.strip():
        raise AgitmemError('merge needs a branch: agitmem merge BRANCH')
    ref = merging.memory_of(ctx, branch)
    outcome = merging.merge_into_worktree(ctx, ref, branch, subject=f'merge: {branch}')
    return merging.report(outcome, ctx, branch)
