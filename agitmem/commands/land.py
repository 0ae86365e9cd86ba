"""`agitmem land BRANCH --into BASE --pr N --commit SHA`: the forge's
step when a pull request is merged on the server (merge commit, squash or
rebase): merge the branch's memory into the base's, in one memory commit
naming the pull request and the code commit, and push it."""
from __future__ import annotations

from agitmem.porcelain import forge
from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError


def land(
        ctx: Context, branch: str, base: str, pull_request: str, commit: str,
        remote: str | None,
) -> int:
    if not branch.strip() or not base.strip():
        raise AgitmemError('land needs a branch and a base: agitmem land BRANCH --into BASE')
    remote = sharing.named(ctx.repo, remote or 'origin')
    print(forge.land(ctx, remote, branch, base, pull_request, commit))
    return 0
