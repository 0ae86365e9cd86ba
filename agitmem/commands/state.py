"""`agitmem state show` / `agitmem state set KEY=VALUE...`."""
from __future__ import annotations

from agitmem import audit
from agitmem import jsontext
from agitmem import render
from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod
from agitmem.porcelain import read
from agitmem.porcelain.context import Context

# typing for mypy only (it takes any name TYPE_CHECKING as true): `state
# set` is run at every step of an agent's work
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _not_json(name: str) -> Any:
    # Python reads NaN and Infinity; state.json is strict JSON
    raise ValueError(f'{name} is not JSON')


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
        if raw:
            try:
                changes[key] = jsontext.loads(value, parse_constant=_not_json)
            except ValueError as e:  # JSONDecodeError; NaN; a number past int's digit limit
                at = jsontext.where(e)
                raise AgitmemError(f'"{key}": not valid JSON: {at[0] if at else e}')
            except RecursionError:
                raise AgitmemError(f'"{key}": not valid JSON: nested too deeply')
        else:
            changes[key] = value
    return changes


def state_set(ctx: Context, pairs: list[str], save: bool) -> int:
    changes = parse_assignments(pairs)
    # writes only: `state show` needs neither pygit2 nor the scanner
    from agitmem.porcelain import state as state_porcelain
    new = state_porcelain.set_values(ctx, changes, save=save)
    print(f'state updated (step {new["step"]})')
    return 0


def _shown(value: Any) -> str:
    return '' if value is None else render.line(str(value))


def state_show(ctx: Context, as_json: bool) -> int:
    state = read.state(ctx.repo)
    audit.log(ctx.repo.agent_dir, 'read state', f'step {state.get("step", 0)}')
    if as_json:
        print(state_mod.render(state), end='')
        return 0
    for key, value in state.items():
        if isinstance(value, dict):
            print(f'{key}:')
            for k, v in value.items():
                print(f'  {render.line(str(k))}: {_shown(v)}')
        else:
            print(f'{render.line(str(key))}: {_shown(value)}')
    return 0
