"""`agitmem fragment add --goal ... --next ...`: append a self-contained
memory fragment."""
from __future__ import annotations

from agitmem.porcelain import fragments
from agitmem.porcelain.context import Context


def fragment_add(
        ctx: Context,
        *,
        goal: str,
        next_: str,
        basis: str | None,
        action: str | None,
        result: str | None,
        refs: list[str],
        save: bool,
) -> int:
    fid = fragments.add(
        ctx, goal=goal, next_=next_, basis=basis, action=action,
        result=result, refs=refs, save=save,
    )
    print(f'added fragment {fid}')
    return 0
