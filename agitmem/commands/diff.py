from __future__ import annotations

import json

from agitmem import render
from agitmem.porcelain import commits
from agitmem.porcelain.context import Context


def diff(ctx: Context, revs: list[str], as_json: bool) -> int:
    changes = commits.diff(ctx, revs)
    if as_json:
        print(json.dumps(
            [{'path': p, 'status': s, 'diff': d} for p, s, d in changes],
            indent=2, ensure_ascii=False,
        ))
    else:
        # file content as it is, unsafe characters escaped (JSON stays JSON)
        print(render.controls(''.join(d for _, _, d in changes)), end='')
    return 0
