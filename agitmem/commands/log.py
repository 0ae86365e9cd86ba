from __future__ import annotations

import json
from agitmem import render
from agitmem.porcelain import commits
from agitmem.porcelain.context import Context


def log(ctx: Context, n: int | None, as_json: bool) -> int:
    rows = commits.log(ctx, n)
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f'no memory history on {render.line(ctx.ref)} yet')
    for r in rows:
        date = str(r['date'])[:19].replace('T', ' ')
        print(f'{r["id"][:12]} {date} {render.line(r["subject"])}')
    return 0
