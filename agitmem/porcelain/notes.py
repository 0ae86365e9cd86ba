"""Notes through agitmem: one appended line, stamped, on the one write
path (the `note` command and the MCP `note` tool)."""
from __future__ import annotations

import time

from agitmem import audit
from agitmem import memory
from agitmem.errors import AgitmemError
from agitmem.memory import notes as notes_mod
from agitmem.porcelain import write
from agitmem.porcelain.context import Context


def add(ctx: Context, text: str, *, save: bool) -> int:
    """Append a note stamped with the time; the number of notes after it."""
    if not text.strip():
        raise AgitmemError('note needs some text: agitmem note "TEXT"')
    stamp = time.strftime('%Y-%m-%d %H:%M')
    new = write.edit(
        ctx, memory.NOTES, lambda current: notes_mod.append(current, f'{stamp} {text}'),
        save_it=save, subject=f'note: {" ".join(text.split())[:60]}', event='note',
    )
    audit.log(ctx.repo.agent_dir, 'write note', text)
    return len(notes_mod.parse(new))
