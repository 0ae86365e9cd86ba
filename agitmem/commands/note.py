from __future__ import annotations

import datetime
import os

from agitmem import audit
from agitmem import memory
from agitmem import store
from agitmem.commands.load import read_text
from agitmem.commands.save import write_and_save
from agitmem.context import Context
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import notes as notes_mod


def _read(ctx: Context, name: str) -> str:
    return read_text(ctx.repo.memory_dir / name, f'.agent/memory/{name}') or ''


def note(ctx: Context, text: str, save: bool) -> int:
    if not text.strip():
        raise AgitmemError('note needs some text: agitmem note "TEXT"')
    # read, append, write back under the writers' lock: two notes at once
    # must not overwrite each other
    with store.locked(ctx.repo):
        current = _read(ctx, memory.NOTES)
        stamp = datetime.datetime.now().strftime('%Y-%m-%d %H:%M')
        new = notes_mod.append(current, f'{stamp} {text}')
        write_and_save(
            ctx, memory.NOTES, new.encode(), save=save,
            subject=f'note: {" ".join(text.split())[:60]}', event='note',
        )
        audit.log(ctx.repo.agent_dir, 'write note', text)
    print(f'noted ({len(notes_mod.parse(new))} notes)')
    return 0


def fragment_add(
        ctx: Context,
        *,
        goal: str,
        next_: str,
        basis: str | None,
        action: str | None,
        result: str | None,
        refs: list[str],
        save: bool,
) -> int:
    agent = os.environ.get('AGITMEM_AGENT') or 'A'
    if not agent.replace('_', '').replace('.', '').isalnum():
        raise AgitmemError(
            f'AGITMEM_AGENT="{agent}": use letters, digits, "_" or "."',
        )
    # the next id is read and the file written back under the writers'
    # lock: two fragments at once must not get one id or overwrite each other
    with store.locked(ctx.repo):
        shown = f'.agent/memory/{memory.FRAGMENTS}'
        current = _read(ctx, memory.FRAGMENTS)
        existing = fragments_mod.parse(current, shown)
        ids = {f['id'] for f in existing}
        unknown = [r for r in refs if r not in ids]
        if unknown:
            raise AgitmemError(
                f'--refs: no fragment {", ".join(unknown)} (see '
                f'.agent/memory/{memory.FRAGMENTS})',
            )
        fragment: dict[str, str | list[str]] = {
            'id': fragments_mod.next_id(existing, agent),
            'at': datetime.datetime.now(datetime.timezone.utc).strftime(
                '%Y-%m-%dT%H:%M:%SZ',
            ),
            'goal': goal,
            'basis': basis or '',
            'action': action or '',
            'result': result or '',
            'next': next_,
            'refs': refs,
        }
        if current and not current.endswith('\n'):
            current += '\n'
        new = current + fragments_mod.render([fragment])
        fid = str(fragment['id'])
        write_and_save(
            ctx, memory.FRAGMENTS, new.encode(), save=save,
            subject=f'fragment: {fid} {goal[:50]}', event='fragment',
        )
        audit.log(ctx.repo.agent_dir, 'write fragment', fid)
    print(f'added fragment {fid}')
    return 0
