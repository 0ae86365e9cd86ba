from __future__ import annotations

import json
from typing import Any

from agitmem import audit
from agitmem import render
from agitmem import store
from agitmem.porcelain.context import Context


def log(ctx: Context, n: int | None, as_json: bool) -> int:
    pr = store.open_repo(ctx.repo)
    commits = store.history(pr, ctx.ref, n)
    audit.log(ctx.repo.agent_dir, 'read log', f'{ctx.ref} {len(commits)} commits')
    rows: list[dict[str, Any]] = []
    for c in commits:
        t = store.trailers(c)
        rows.append({
            'id': str(c.id),
            'date': store.commit_time(c).isoformat(),
            'event': t.get('Agitmem-Event', ''),
            'subject': c.message.split('\n', 1)[0],
            'code_branch': t.get('Code-Branch', ''),
            'code_head': t.get('Code-Head', ''),
            'parents': [str(p) for p in c.parent_ids],
        })
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f'no memory history on {render.line(ctx.ref)} yet')
    for r in rows:
        date = str(r['date'])[:19].replace('T', ' ')
        print(f'{r["id"][:12]} {date} {render.line(r["subject"])}')
    return 0
