"""state.json through agitmem: every update bumps `step`, stamps the time
and the working tree's tree id, under the writers' lock."""
from __future__ import annotations

import os

from agitmem import audit
from agitmem import jsontext
from agitmem import memory
from agitmem import paths
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod
from agitmem.porcelain import read
from agitmem.porcelain import write
from agitmem.porcelain.context import Context

# typing is not imported at run time: `state set` and the hooks import this
# module (mypy takes any name TYPE_CHECKING as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def update(
        ctx: Context,
        changes: dict[str, Any] | Callable[[str], dict[str, Any]],
        *,
        event: str,
        save: bool,
) -> dict[str, Any]:
    """Apply changes to state.json (step +1, stamped with time and the
    working tree's tree id), atomically, then save it to the memory ref.
    `changes` may be made from that tree id (a verification records it)."""
    try:
        if save:
            # while the tree's `git status` runs
            write.begin_save(ctx, text=_scanned_soon(ctx, changes))
        tree = repo_mod.worktree_tree(ctx.repo)
        if callable(changes):
            changes = changes(tree)
        new = _updated(ctx, changes, event=event, save=save, tree=tree)
    finally:
        if save:
            write.end_save(ctx)
    audit.log(ctx.repo.agentdir, f'write {event}', ', '.join(changes))
    return new


_SOON_MAX = 256 * 1024  # characters of each scanned ahead


def _scanned_soon(ctx: Context, changes: dict[str, Any] | Callable[[str], dict[str, Any]]) -> str:
    """Much of the state.json a save of `changes` will scan: the one there
    now, and the values going in (a verification's are made later)."""
    try:
        now = read.read_bytes(os.path.join(ctx.repo.memorydir, memory.STATE), memory.STATE) or b''
        values = '' if callable(changes) else jsontext.dumps(changes)
    except (OSError, AgitmemError, TypeError, ValueError):
        return ''  # (the save says what is wrong)
    # (a bound: it only warms the scanner up)
    return now[:_SOON_MAX].decode('utf-8', 'replace') + values[:_SOON_MAX]


def _updated(ctx: Context, changes: dict[str, Any], *, event: str, save: bool, tree: str) -> dict[str, Any]:
    shown = f'.agent/memory/{memory.STATE}'
    new: dict[str, Any] = {}

    def change(text: str) -> str:
        nonlocal new
        current = state_mod.parse(text, shown) if text else {}
        new = state_mod.update(current, changes, now=state_mod.now_iso(), tree=tree)
        return state_mod.render(new)

    write.edit(
        ctx, memory.STATE, change, save_it=save,
        subject=f'{event}: {", ".join(sorted(changes))}', event=event,
    )
    return new


def set_values(ctx: Context, changes: dict[str, Any], *, save: bool) -> dict[str, Any]:
    """`state set` (the command and the MCP tool): the agent's own keys
    only, onto a state.json that parses."""
    if not changes:
        raise AgitmemError('state set needs at least one KEY=VALUE')
    for key in changes:
        if not key or key.split('.')[0] in state_mod.MANAGED_KEYS:
            raise AgitmemError(
                f'"{key}" is managed by agitmem (step, updated_at and tree '
                f'are set on every update)' if key else 'an empty key',
            )
    read.state(ctx.repo)  # a broken state.json is reported before anything is written
    current = changes.get('current_file')
    if isinstance(current, str) and current:
        # the file as git knows it (`src/über.py` for `Src/Über.py` where
        # the file system folds names): the hooks' observed edits name it so
        changes = {**changes, 'current_file': paths.known(ctx.repo, current)}
    return update(ctx, changes, event='state', save=save)
