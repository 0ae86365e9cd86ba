"""state.json: the structured state block."""
from __future__ import annotations

from agitmem import jsontext
from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    import datetime

STRING_KEYS = (
    'current_goal', 'current_file', 'current_symbol', 'last_action',
    'next_intent', 'updated_at', 'tree',
)
# written by agitmem itself on every update
MANAGED_KEYS = ('step', 'updated_at', 'tree')
RESULTS = ('passed', 'failed')


def now_iso() -> str:
    """Now, as state.json and the logs beside it write a time (UTC)."""
    import time
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())


def _no_constant(name: str) -> Any:
    raise AgitmemError(f'state.json: {name} is not valid JSON')


def parse(text: str, path: str = 'state.json') -> dict[str, Any]:
    try:
        state = jsontext.loads(text, parse_constant=_no_constant)
    except ValueError as e:
        at = jsontext.where(e)
        if at is None:  # a number past int's digit limit
            raise AgitmemError(f'{path}: not valid JSON: {e}')
        raise AgitmemError(f'{path}:{at[1]}: not valid JSON: {at[0]}')
    except RecursionError:
        raise AgitmemError(f'{path}: nested too deeply to be a state block')
    if not isinstance(state, dict):
        raise AgitmemError(f'{path}:1: must be a JSON object')
    validate(state, path)
    return state


def validate(state: dict[str, Any], path: str = 'state.json') -> None:
    if jsontext.too_deep(state):
        # read, but too deep for the injection to show (jsontext.MAX_DEPTH)
        raise AgitmemError(f'{path}: nested too deeply to be a state block')
    for key in STRING_KEYS:
        if state.get(key) is not None and not isinstance(state[key], str):
            raise AgitmemError(f'{path}: "{key}" must be a string or null')
    step = state.get('step', 0)
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise AgitmemError(f'{path}: "step" must be a whole number >= 0')
    lv = state.get('last_verification')
    if lv is None:
        return
    if not isinstance(lv, dict):
        raise AgitmemError(f'{path}: "last_verification" must be an object')
    if lv.get('result') not in RESULTS:
        raise AgitmemError(
            f'{path}: "last_verification.result" must be "passed" or '
            f'"failed"',
        )
    code = lv.get('exit_code')
    if code is not None and (not isinstance(code, int) or
                             isinstance(code, bool)):
        raise AgitmemError(
            f'{path}: "last_verification.exit_code" must be a whole number',
        )


def render(state: dict[str, Any]) -> str:
    import json  # indented: json's encoder (what writes state.json, not what reads it)
    return json.dumps(state, indent=2, ensure_ascii=False) + '\n'


def update(
        state: dict[str, Any],
        changes: dict[str, Any],
        *,
        now: str,
        tree: str | None,
) -> dict[str, Any]:
    """A new state with changes applied: step +1, stamped, unknown keys kept."""
    new = dict(state)
    for key, value in changes.items():
        if '.' in key:
            outer, inner = key.split('.', 1)
            sub = new.get(outer)
            sub = dict(sub) if isinstance(sub, dict) else {}
            sub[inner] = value
            new[outer] = sub
        else:
            new[key] = value
    new['step'] = int(state.get('step') or 0) + 1
    new['updated_at'] = now
    new['tree'] = tree
    validate(new)
    return new


def _clock() -> tuple[type[datetime.datetime], datetime.timezone]:
    """datetime's class and UTC, from the C module datetime.py re-exports
    where there is one: datetime.py's own two thousand lines of Python are
    a twentieth of a load (the hooks read state.json without asking its
    age)."""
    try:
        from _datetime import datetime as clock  # type: ignore[import-not-found]
        from _datetime import timezone
    except ImportError:
        from datetime import datetime as clock
        from datetime import timezone
    return clock, timezone.utc


def utc_now() -> datetime.datetime:
    clock, utc = _clock()
    return clock.now(utc)


def age_seconds(stamp: str | None, now: datetime.datetime) -> float | None:
    if not stamp:
        return None
    clock, utc = _clock()
    try:
        then = clock.fromisoformat(stamp.replace('Z', '+00:00'))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=utc)
    return (now - then).total_seconds()


def human_age(seconds: float | None) -> str:
    if seconds is None:
        return 'never updated'
    if seconds < 60:
        return 'less than a minute ago'
    if seconds < 5400:
        return f'{int(seconds // 60)} min ago'
    if seconds < 172800:
        return f'{seconds / 3600:.1f} h ago'
    return f'{int(seconds // 86400)} days ago'


def same_but_observed(before: bytes | None, now: bytes | None) -> bool:
    """Whether state.json `now` differs from `before` only by a test run the
    hooks observed (`last_verification.observed`): a fact, not progress,
    and not an unsaved change."""
    if before is None or now is None or before == now:
        return before == now
    try:
        old, new = jsontext.loads(before), jsontext.loads(now)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply (parse says so)
        return False
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    lv = new.get('last_verification')
    if not (isinstance(lv, dict) and lv.get('observed') is True):
        return False
    new = dict(new)
    if 'last_verification' in old:
        new['last_verification'] = old['last_verification']
    else:
        del new['last_verification']
    return bool(old == new)
