from __future__ import annotations

import json

from agitmem import audit
from agitmem import render
from agitmem import store
from agitmem.diffs import unified
from agitmem.porcelain.context import Context


def diff(ctx: Context, revs: list[str], as_json: bool) -> int:
    pr = store.open_repo(ctx.repo)
    if len(revs) == 2:
        old_c = store.resolve(pr, ctx.ref, revs[0])
        new = store.tree_files(pr, store.resolve(pr, ctx.ref, revs[1]).tree)
    else:
        if revs:
            old_c = store.resolve(pr, ctx.ref, revs[0])
        else:
            old_c = store.base(ctx.repo, pr) or store.resolve(pr, ctx.ref, '@')
        new = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
    old = store.tree_files(pr, old_c.tree)
    changes = unified(old, new)
    audit.log(ctx.repo.agent_dir, 'read diff', f'{" ".join(revs) or "worktree"}: {len(changes)} files')
    if as_json:
        print(json.dumps(
            [{'path': p, 'status': s, 'diff': d} for p, s, d in changes],
            indent=2, ensure_ascii=False,
        ))
    else:
        # file content as it is, unsafe characters escaped (JSON stays JSON)
        print(render.controls(''.join(d for _, _, d in changes)), end='')
    return 0
