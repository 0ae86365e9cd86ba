"""`agitmem push [REMOTE]`: send every memory ref, never forced."""
from __future__ import annotations

from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context


def push(ctx: Context, remote: str | None) -> int:
    remote = remote or sharing.default_remote(ctx)
    sharing.named(ctx.repo, remote)
    if sharing.refused_by_secrets(ctx):
        return 1
    rows = sharing.push_memory(ctx, remote)
    if not rows:
        print('no memory refs to push')
    elif all(r.flag == '=' for r in rows):
        print(f'memory up to date on {remote}')
    else:
        print(f'pushed memory to {remote}:')
        for r in rows:
            if r.flag != '=':
                print(f'  {r.summary:12} {r.ref}')
    return 0
