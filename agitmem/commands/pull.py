"""`agitmem pull [REMOTE]`: fetch, then merge the remote's memory of this
branch into ours."""
from __future__ import annotations

from agitmem import repo as repo_mod
from agitmem.porcelain import merging
from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context


def pull(ctx: Context, remote: str | None) -> int:
    remote = sharing.named(ctx.repo, remote or sharing.default_remote(ctx))
    label, outcome = sharing.pull(ctx, remote)
    if outcome is None:
        name = ctx.ref.removeprefix(repo_mod.MEMORY_NS)
        print(f'{remote} has no memory for {name}; nothing to pull')
        code = 0
    else:
        code = merging.report(outcome, ctx, label)
    from agitmem.porcelain import forge
    forge.tidy(ctx, remote)
    return code
