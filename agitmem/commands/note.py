"""`agitmem note TEXT`: append a note."""
from __future__ import annotations

from agitmem.porcelain import notes
from agitmem.porcelain.context import Context


def note(ctx: Context, text: str, save: bool) -> int:
    count = notes.add(ctx, text, save=save)
    print(f'noted ({count} notes)')
    return 0
