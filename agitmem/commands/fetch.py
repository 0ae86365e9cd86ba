"""`agitmem fetch [REMOTE]`: bring a remote's memory refs into
refs/agitmem/remotes/<remote>/."""
from __future__ import annotations

from agitmem import audit
from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context


def fetch(ctx: Context, remote: str | None) -> int:
    remote = sharing.named(ctx.repo, remote or sharing.default_remote(ctx))
    changes = sharing.fetch_memory(ctx.repo, remote)
    audit.log(ctx.repo.agent_dir, 'read fetch', f'{remote}: {len(changes)} refs changed')
    if not changes:
        print(f'memory refs up to date with {remote}')
    else:
        print(f'fetched memory from {remote}:')
        for c in changes:
            print(c)
    return 0
