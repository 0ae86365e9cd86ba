from __future__ import annotations

import sys

from agitmem.porcelain import read
from agitmem.porcelain.context import Context


def load(ctx: Context, *, after_compact: bool, as_json: bool) -> int:
    block = read.injection(ctx.repo, ctx.cfg, after_compact=after_compact, ref=ctx.ref)
    for w in block.warnings:
        print(f'agitmem: warning: {w}', file=sys.stderr)
    if as_json:
        import json  # indented: json's encoder (the hooks' `load` prints text)
        print(json.dumps({
            'text': block.text,
            'tokens': block.tokens,
            'chars': len(block.text),
            'budget_tokens': ctx.cfg['budget_tokens'],
            'warnings': list(block.warnings),
            'cut': block.cut,
        }, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(block.text)
    return 0
