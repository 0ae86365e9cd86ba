"""`agitmem review [BASE..HEAD] [--markdown] [--json]` (DESIGN.md section 8):
what changed in the agent's memory over a code range, for a pull request.
Which memory commits and what changed is porcelain/review.py's; the text
and Markdown, porcelain/review_text.py's.  Needs no .agent/: it runs in
CI on the fetched refs."""
from __future__ import annotations

import json

from agitmem import render
from agitmem.porcelain import review as review_mod
from agitmem.porcelain import review_text
from agitmem.porcelain.context import Context


def review(ctx: Context, range_: str | None, markdown: bool, as_json: bool) -> int:
    summary = review_mod.summary(ctx.repo, range_)
    if as_json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    elif markdown:
        print(render.controls(review_text.render_markdown(summary)), end='')
    else:
        print(render.controls(review_text.render_text(summary)), end='')
    return 0
