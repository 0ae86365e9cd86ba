"""fragments.jsonl: self-contained memory fragments, one JSON object a line."""
from __future__ import annotations

import json
import re

from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELDS = ('id', 'at', 'goal', 'basis', 'action', 'result', 'next', 'refs')
_ID = re.compile(r'^([A-Za-z0-9_.]+)-(\d+)$')


def _objects(text: str, path: str) -> list[tuple[int, object]]:
    """(line number, value) of each non-blank line.  All lines at once in
    one JSON array first (one C call, not one a line: fragments.jsonl
    grows to hundreds of lines); line by line only to say which is bad."""
    # only "\n" ends a line: JSON strings may hold U+2028 and friends
    lines = [(i, line) for i, line in enumerate(text.split('\n'), 1) if line.strip()]
    try:
        values = json.loads('[' + ','.join(line for _, line in lines) + ']')
    except (ValueError, RecursionError):
        values = None
    if isinstance(values, list) and len(values) == len(lines):
        return [(i, v) for (i, _), v in zip(lines, values)]
    ret = []
    for i, line in lines:
        try:
            ret.append((i, json.loads(line)))
        except json.JSONDecodeError as e:
            raise AgitmemError(f'{path}:{i}: not valid JSON: {e.msg}')
        except RecursionError:
            raise AgitmemError(f'{path}:{i}: nested too deeply')
    return ret  # each line alone parses (nesting at the limit, one level less)


def parse(text: str, path: str = 'fragments.jsonl') -> list[dict[str, Any]]:
    ret = []
    seen = set()
    for i, obj in _objects(text, path):
        if not isinstance(obj, dict):
            raise AgitmemError(f'{path}:{i}: each line must be a JSON object')
        fid = obj.get('id')
        if not isinstance(fid, str) or not _ID.match(fid):
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


def render_one(fragment: dict[str, Any]) -> str:
    return json.dumps(fragment, ensure_ascii=False, separators=(', ', ': '))


def render(fragments: list[dict[str, Any]]) -> str:
    return ''.join(f'{render_one(f)}\n' for f in fragments)


def next_id(fragments: list[dict[str, Any]], agent: str) -> str:
    seq = 0
    for f in fragments:
        m = _ID.match(f['id'])
        if m and m[1] == agent:
            seq = max(seq, int(m[2]))
    return f'{agent}-{seq + 1:03d}'
