"""`agitmem archive`: move the finished snapshot into archive/."""
from __future__ import annotations

from agitmem.porcelain import history
from agitmem.porcelain.context import Context


def archive(ctx: Context) -> int:
    for line in history.archive(ctx):
        print(line)
    return 0
