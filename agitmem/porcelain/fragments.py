"""Fragments through agitmem: the next id taken under the writers' lock,
refs checked, on the one write path (the `fragment add` command and the
MCP `fragment_add` tool)."""
from __future__ import annotations

import os

from agitmem import audit
from agitmem import memory
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import state as state_mod
from agitmem.porcelain import write
from agitmem.porcelain.context import Context


def agent_name() -> str:
    """The id prefix: $AGITMEM_AGENT, default `A`."""
    agent = os.environ.get('AGITMEM_AGENT') or 'A'
    if not agent.replace('_', '').replace('.', '').isalnum():
        raise AgitmemError(
            f'AGITMEM_AGENT="{agent}": use letters, digits, "_" or "."',
        )
    return agent


def add(
        ctx: Context,
        *,
        goal: str,
        next_: str,
        basis: str | None = None,
        action: str | None = None,
        result: str | None = None,
        refs: list[str] | None = None,
        save: bool = True,
) -> str:
    """Append a fragment; its id."""
    agent = agent_name()
    refs = list(refs or ())
    shown = f'.agent/memory/{memory.FRAGMENTS}'
    fid = ''

    def add_one(current: str) -> str:
        # the next id is taken under the writers' lock (write.edit holds
        # it): two fragments at once never get one id
        nonlocal fid
        existing = fragments_mod.parse(current, shown)
        ids = {f['id'] for f in existing}
        unknown = [r for r in refs if r not in ids]
        if unknown:
            raise AgitmemError(
                f'--refs: no fragment {", ".join(unknown)} (see {shown})',
            )
        fid = fragments_mod.next_id(existing, agent)
        fragment: dict[str, str | list[str]] = {
            'id': fid,
            'at': state_mod.now_iso(),
            'goal': goal,
            'basis': basis or '',
            'action': action or '',
            'result': result or '',
            'next': next_,
            'refs': refs,
        }
        if current and not current.endswith('\n'):
            current += '\n'
        return current + fragments_mod.render([fragment])

    # the subject names the id, known only once the lock is held
    write.edit(
        ctx, memory.FRAGMENTS, add_one, save_it=save,
        subject=lambda: f'fragment: {fid} {goal[:50]}', event='fragment',
        parses=True,
    )
    audit.log(ctx.repo.agent_dir, 'write fragment', fid)
    return fid
