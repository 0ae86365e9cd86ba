from __future__ import annotations

import dataclasses

from agitmem import audit
from agitmem import render
from agitmem.porcelain import recall as recall_mod
from agitmem.porcelain.context import Context

# a hit's text on screen: a huge note is shown in part (--json has it whole)
SHOWN_CHARS = 400
SNAPSHOT_LINES = 8


def _text(text: str) -> str:
    if len(text) <= SHOWN_CHARS:
        return render.line(text)
    return f'{render.line(text[:SHOWN_CHARS])}... [{len(text) - SHOWN_CHARS:,} more characters]'


def _lines(h: recall_mod.Hit) -> list[str]:
    """What is shown of a hit: the item on one line; an archived
    snapshot's first lines (`agitmem show` has it whole)."""
    if h.kind != 'snapshot':
        return [_text(h.text)]
    text = h.text
    if text.startswith('---\n') and '\n---\n' in text:
        text = text.split('\n---\n', 1)[1]  # the state as front matter: the goal says it
    lines = [t for t in text.split('\n') if t.strip()]
    more = [f'... [{len(lines) - SNAPSHOT_LINES} more lines]'] if len(lines) > SNAPSHOT_LINES else []
    return [_text(t) for t in lines[:SNAPSHOT_LINES]] + more


def recall(ctx: Context, query: str, n: int, all_branches: bool, as_json: bool) -> int:
    hits = recall_mod.search(ctx, query, limit=n, all_branches=all_branches)
    audit.log(ctx.repo.agent_dir, 'read recall', f'{len(hits)} hits')
    if as_json:
        import json
        # render.controls: the text is kept as it is, only what a terminal
        # would act on is escaped (json.dumps already escapes C0)
        print(render.controls(json.dumps(
            [dataclasses.asdict(h) for h in hits], indent=2, ensure_ascii=False,
        )))
        return 0
    if not hits:
        print(f'nothing in the memory history of {render.line(ctx.ref)} matches "{render.line(query)}"')
        return 0
    for h in hits:
        what = f'{h.kind} {render.line(h.id)}' if h.id else h.kind
        where = f'{h.commit[:12]} {h.date[:10]} {render.line(h.file)} on {render.line(h.ref)}'
        print(f'{what} (current: {where})' if h.current else f'{what} (removed; last in {where})')
        for line in _lines(h):
            print(f'    {line}')
    return 0
