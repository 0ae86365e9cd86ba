"""`agitmem push [REMOTE]`: send every memory ref, never forced."""
from __future__ import annotations

import sys

from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context


def push(ctx: Context, remote: str | None) -> int:
    remote = remote or sharing.default_remote(ctx)
    sharing.named(ctx.repo, remote)
    if sharing.refused_by_secrets(ctx, remote):
        return 1
    try:
        rows = sharing.push_memory(ctx, remote)
    except sharing.PushFailed as e:
        # the memory stays here (status counts it); the next push carries it
        print(f'agitmem: {e}', file=sys.stderr)
        return 1
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
