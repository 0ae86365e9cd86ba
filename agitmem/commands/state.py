from __future__ import annotations

import datetime
import json
from typing import Any

from agitmem import audit
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.commands.load import read_text
from agitmem.commands.save import write_and_save
from agitmem.context import Context
from agitmem.errors import AgitmemError
from agitmem.repo import Repo
from agitmem.memory import state as state_mod


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ',
    )


def read(repo: Repo) -> dict[str, Any]:
    shown = f'.agent/memory/{memory.STATE}'
    text = read_text(repo.memory_dir / memory.STATE, shown)
    if text is None:
        return {}
    return state_mod.parse(text, shown)


def write(
        ctx: Context,
        changes: dict[str, Any],
        *,
        event: str,
        save: bool,
        tree: str | None = None,
) -> dict[str, Any]:
    """Apply changes to state.json (step +1, stamped with time and the
    working tree's tree id, computed here unless the caller has it),
    atomically, then save it to the memory ref."""
    if tree is None:
        tree = repo_mod.worktree_tree(ctx.repo)
    # read, update, write back under the writers' lock: two updates at once
    # must not lose one (or count one step for both)
    with store.locked(ctx.repo):
        state = read(ctx.repo)
        new = state_mod.update(state, changes, now=now_iso(), tree=tree)
        write_and_save(
            ctx, memory.STATE, state_mod.render(new).encode(), save=save,
            subject=f'{event}: {", ".join(sorted(changes))}', event=event,
        )
        audit.log(ctx.repo.agent_dir, f'write {event}', ', '.join(changes))
    return new


def _not_json(name: str) -> Any:
    # Python reads NaN and Infinity; state.json is strict JSON
    raise json.JSONDecodeError(f'{name} is not JSON', name, 0)


def parse_assignments(pairs: list[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition('=')
        raw = key.endswith(':')
        key = key.removesuffix(':').strip()
        if not sep or not key:
            raise AgitmemError(
                f'"{pair}": expected KEY=VALUE (or KEY:=JSON)',
            )
        if key.split('.')[0] in state_mod.MANAGED_KEYS:
            raise AgitmemError(
                f'"{key}" is managed by agitmem (step, updated_at and tree '
                f'are set on every update)',
            )
        if raw:
            try:
                changes[key] = json.loads(value, parse_constant=_not_json)
            except json.JSONDecodeError as e:
                raise AgitmemError(f'"{key}": not valid JSON: {e.msg}')
            except RecursionError:
                raise AgitmemError(f'"{key}": not valid JSON: nested too deeply')
        else:
            changes[key] = value
    return changes


def state_set(ctx: Context, pairs: list[str], save: bool) -> int:
    changes = parse_assignments(pairs)
    read(ctx.repo)  # a broken state.json is reported before anything runs
    new = write(ctx, changes, event='state', save=save)
    print(f'state updated (step {new["step"]})')
    return 0


def state_show(ctx: Context, as_json: bool) -> int:
    state = read(ctx.repo)
    audit.log(ctx.repo.agent_dir, 'read state', f'step {state.get("step", 0)}')
    if as_json:
        print(state_mod.render(state), end='')
        return 0
    for key, value in state.items():
        if isinstance(value, dict):
            print(f'{key}:')
            for k, v in value.items():
                print(f'  {k}: {v if v is not None else ""}')
        else:
            print(f'{key}: {value if value is not None else ""}')
    return 0
