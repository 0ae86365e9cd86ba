"""`agitmem prune [REMOTE]`: retire the memory of branches gone from the
remote: merged into the base's memory when their code landed there, then
moved to the attic here and deleted on the remote.  Memory nobody merged
stays."""
from __future__ import annotations

from agitmem.porcelain import forge
from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context


def prune(ctx: Context, remote: str | None) -> int:
    remote = sharing.named(ctx.repo, remote or sharing.default_remote(ctx))
    sharing.fetch_memory(ctx.repo, remote)
    state = forge.remote_state(ctx.repo, remote)
    report = forge.settle(ctx, remote, state, push=True)
    lines = report.lines(remote, state.base)
    for line in lines:
        print(line)
    if not lines:
        print(f'nothing to prune: every memory ref on {remote} has its branch')
    return 0
