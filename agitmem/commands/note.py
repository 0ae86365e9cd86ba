from __future__ import annotations

import datetime
import os

from agitmem import audit
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem.commands.save import save_memory
from agitmem.context import Context
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import notes as notes_mod


def _read(ctx: Context, name: str) -> str:
    path = ctx.repo.memory_dir / name
    if not path.exists():
        return ''
    return memory.decode(path.read_bytes(), f'.agent/memory/{name}')


def note(ctx: Context, text: str, save: bool) -> int:
    if not text.strip():
        raise AgitmemError('note needs some text: agitmem note "TEXT"')
    current = _read(ctx, memory.NOTES)
    stamp = datetime.datetime.now().strftime('%Y-%m-%d %H:%M')
    new = notes_mod.append(current, f'{stamp} {text}')
    repo_mod.atomic_write(ctx.repo.memory_dir / memory.NOTES, new.encode())
    audit.log(ctx.repo.agent_dir, 'write note', text)
    if save:
        save_memory(ctx, f'note: {" ".join(text.split())[:60]}', event='note')
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
    agent = os.environ.get('AGITMEM_AGENT') or 'A'
    if not agent.replace('_', '').replace('.', '').isalnum():
        raise AgitmemError(
            f'AGITMEM_AGENT="{agent}": use letters, digits, "_" or "."',
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
    repo_mod.atomic_write(ctx.repo.memory_dir / memory.FRAGMENTS, new.encode())
    fid = str(fragment['id'])
    audit.log(ctx.repo.agent_dir, 'write fragment', fid)
    if save:
        save_memory(ctx, f'fragment: {fid} {goal[:50]}', event='fragment')
    print(f'added fragment {fid}')
    return 0
