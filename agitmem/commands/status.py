from __future__ import annotations

import datetime
import json
from typing import Any

from agitmem import audit
from agitmem import memory
from agitmem import render
from agitmem.porcelain import commits
from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context
from agitmem.memory import state as state_mod
from agitmem.memory.state import age_seconds
from agitmem.memory.state import human_age


def status(ctx: Context, as_json: bool) -> int:
    memory_now = commits.unsaved(ctx)
    files, changes = memory_now.files, memory_now.changes
    now = datetime.datetime.now(datetime.timezone.utc)
    state: dict[str, Any] = {}
    if memory.STATE in files:
        state = state_mod.parse(files[memory.STATE].decode())
    age = age_seconds(state.get('updated_at'), now)
    stale = age is None or age > ctx.cfg['stale_minutes'] * 60
    snap = ctx.repo.memory_dir / memory.SNAPSHOT
    snap_age = (
        now.timestamp() - snap.stat().st_mtime if snap.exists() else None
    )
    behind = memory_now.moved
    far = sharing.push_remote(ctx.repo, ctx.branch)
    ahead = sharing.unpushed(ctx.repo, far) if far is not None else {}
    audit.log(ctx.repo.agent_dir, 'read status', f'{len(changes)} changed')
    if as_json:
        print(json.dumps({
            'ref': ctx.ref,
            'branch': ctx.branch,
            'tip': memory_now.tip,
            'base': memory_now.base,
            'changed': [{'path': p, 'status': s} for p, s in changes],
            'state': {
                'step': state.get('step', 0),
                'updated_at': state.get('updated_at'),
                'age_seconds': age,
                'stale': stale,
            },
            'snapshot_age_seconds': snap_age,
            'ref_moved': behind,
            'unpushed': None if far is None else {
                'remote': far,
                'commits': sum(ahead.values()),
                'refs': ahead,
            },
        }, indent=2))
        return 0
    where = ctx.branch or 'detached HEAD'
    print(f'memory ref {render.line(ctx.ref)} ({render.line(where)})')
    if memory_now.tip is None:
        print('  no memory commits yet: run `agitmem save`')
    else:
        print(f'  tip {memory_now.tip[:12]} {render.line(memory_now.subject or "")}')
    if behind:
        print(
            f'  the ref moved since this worktree last wrote its memory '
            f'(base {(memory_now.base or "")[:12]})',
        )
    if ahead and far is not None:
        print(sharing.unpushed_line(ahead, far))
    if changes:
        print('unsaved changes (run `agitmem save`):')
        for p, s in changes:
            print(f'  {s:9} {render.line(p)}')
    else:
        print('no unsaved changes')
    mark = ' (STALE: update it with `agitmem state set ...`)' if stale else ''
    print(f'state: step {state.get("step", 0)}, updated {human_age(age)}{mark}')
    if snap_age is not None:
        print(f'snapshot: edited {human_age(snap_age)}')
    return 0
