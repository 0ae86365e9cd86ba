"""`agitmem promote [N | TEXT]`: recurring notes as tattoo candidates;
move one into tattoo.md.  Never automatic."""
from __future__ import annotations

import json

from agitmem import audit
from agitmem import render
from agitmem.porcelain import promote as promote_mod
from agitmem.porcelain.context import Context


def _dates(dates: list[str]) -> str:
    shown = sorted(set(dates))
    if len(shown) > 4:
        return f'{shown[0]} .. {shown[-1]}'
    return ', '.join(shown)


def promote(ctx: Context, what: str | None, as_json: bool) -> int:
    if what is None:
        listed = promote_mod.candidates(ctx)
        audit.log(ctx.repo.agent_dir, 'read promote', f'{len(listed)} candidates')
        if as_json:
            print(json.dumps([
                {'n': i, 'text': c.text, 'count': c.count, 'dates': c.dates}
                for i, c in enumerate(listed, 1)
            ], indent=2, ensure_ascii=False))
            return 0
        if not listed:
            print(
                f'no note seen {promote_mod.THRESHOLD} times or more in the '
                f'notes history of {render.line(ctx.ref)}',
            )
            return 0
        print(f'notes seen {promote_mod.THRESHOLD}+ times (tattoo candidates):')
        for i, c in enumerate(listed, 1):
            # exactly the text `promote N` writes, escaped as the injection shows it
            print(f'{i:3}. {c.count}x  {render.line(c.text)}  ({_dates(c.dates)})')
        print('move one into tattoo.md: `agitmem promote N`')
        return 0
    chosen = promote_mod.pick(ctx, what)
    oid, removed = promote_mod.promote(ctx, chosen)
    short = f' ({str(oid)[:12]})' if oid is not None else ''
    print(
        f'promoted to tattoo.md: - {render.line(chosen.text)}{short}; removed {removed} '
        f'note(s) from notes.md',
    )
    return 0
