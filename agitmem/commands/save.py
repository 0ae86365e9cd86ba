"""`agitmem save [-m MSG]`: commit .agent/memory to the memory ref."""
from __future__ import annotations

from agitmem.porcelain import write
from agitmem.porcelain.context import Context


def save(ctx: Context, message: str | None) -> int:
    subject = f'save: {message}' if message else None
    oid = write.save(ctx, subject)
    if oid is None:
        print(f'nothing to save: memory matches {ctx.ref}')
    else:
        print(f'saved {str(oid)[:12]} to {ctx.ref}')
    return 0
