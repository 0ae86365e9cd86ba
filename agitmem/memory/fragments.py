"""fragments.jsonl: self-contained memory fragments, one JSON object a line."""
from __future__ import annotations

from agitmem import jsontext
from agitmem.errors import AgitmemError
from agitmem.memory import last_lines

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELDS = ('id', 'at', 'goal', 'basis', 'action', 'result', 'next', 'refs')
# an id is <agent>-<number>: what `^([A-Za-z0-9_.]+)-(\d+)$` matched, by
# str's methods (re is not imported on load's path; agitmem/jsontext.py)
_AGENT_CHARS = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.')


def id_parts(fid: str) -> tuple[str, str] | None:
    """(agent, number) of a fragment id; None when it is not one."""
    agent, dash, number = (fid[:-1] if fid.endswith('\n') else fid).partition('-')
    if dash and agent and number.isdecimal() and _AGENT_CHARS.issuperset(agent):
        return agent, number
    return None


def _objects(text: str, path: str) -> list[tuple[int, object]]:
    """(line number, value) of each non-blank line, each line alone: one
    scanner for them all (fragments.jsonl grows to hundreds of lines),
    never one JSON array of them, where a line `{...}, {...}` and two that
    halve one object would make up the count."""
    # only "\n" ends a line: JSON strings may hold U+2028 and friends
    decode = jsontext.decoder()
    ret = []
    for i, line in enumerate(text.split('\n'), 1):
        if not line.strip():
            continue
        try:
            ret.append((i, decode(line)))
        except ValueError as e:  # JSONDecodeError, or a number past int's digit limit
            at = jsontext.where(e)
            raise AgitmemError(f'{path}:{i}: not valid JSON: {at[0] if at else e}')
        except RecursionError:
            raise AgitmemError(f'{path}:{i}: nested too deeply')
    return ret


def parse(text: str, path: str = 'fragments.jsonl') -> list[dict[str, Any]]:
    ret = []
    seen = set()
    for i, obj in _objects(text, path):
        if not isinstance(obj, dict):
            raise AgitmemError(f'{path}:{i}: each line must be a JSON object')
        if jsontext.too_deep(obj):  # read, but too deep to show (jsontext.MAX_DEPTH)
            raise AgitmemError(f'{path}:{i}: nested too deeply')
        fid = obj.get('id')
        if not isinstance(fid, str) or id_parts(fid) is None:
            raise AgitmemError(
                f'{path}:{i}: "id" must look like <agent>-<number>, e.g. A-042',
            )
        if fid in seen:
            raise AgitmemError(f'{path}:{i}: duplicate id {fid}')
        seen.add(fid)
        refs = obj.get('refs', [])
        if not isinstance(refs, list) or not all(
                isinstance(r, str) for r in refs
        ):
            raise AgitmemError(f'{path}:{i}: "refs" must be a list of ids')
        ret.append(obj)
    return ret


def newest_lines(text: str, count: int) -> str:
    """The last `count` lines of text that are not blank, as parse takes
    them, one a line: a file parse found valid whole holds its newest
    fragments there."""
    return '\n'.join(last_lines(text, count, str.strip))


def render_one(fragment: dict[str, Any]) -> str:
    return jsontext.dumps(fragment, ensure_ascii=False, separators=(', ', ': '))


def render(fragments: list[dict[str, Any]]) -> str:
    return ''.join(f'{render_one(f)}\n' for f in fragments)


# an id's number longer than this is no count agitmem made (a cloned
# memory's `A-999...9`): int() refuses 4,300 digits and more
SEQ_DIGITS = 18


def seq_of(number: str) -> int | None:
    """An id's number as a count; None when it is longer than any
    agitmem counts to (ids are compared whole, so it is never reused)."""
    return int(number) if len(number) <= SEQ_DIGITS else None


def next_id(fragments: list[dict[str, Any]], agent: str) -> str:
    seq = 0
    for f in fragments:
        parts = id_parts(f['id'])
        if parts and parts[0] == agent:
            seq = max(seq, seq_of(parts[1]) or 0)
    return f'{agent}-{seq + 1:03d}'
