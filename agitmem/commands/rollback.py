"""`agitmem rollback [REV] [--file F]`."""
from __future__ import annotations

from agitmem.porcelain import history
from agitmem.porcelain.context import Context


def rollback(ctx: Context, rev: str | None, file: str | None) -> int:
    for line in history.rollback(ctx, rev, file):
        print(line)
    return 0
