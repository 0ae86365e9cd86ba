"""`merge-conflict`: what a memory merge (DESIGN.md section 8) could not
resolve blocks `check` until somebody does: conflict markers in a memory
file, and the keys it recorded under "merge_conflicts" in state.json."""
from __future__ import annotations

from agitmem.checks import Finding

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ID = 'merge-conflict'
STATE_CONFLICTS = 'merge_conflicts'  # agitmem.merge.STATE_CONFLICTS
# `=======` alone is also a Markdown heading underline: only the two ends
# of a conflict count
_OPEN = '<' * 7
_CLOSE = '>' * 7


def _is_marker(line: str, marker: str) -> bool:
    """What `^<marker>(?: |$)` matched: the marker, then a space or the
    line's end."""
    rest = line[len(marker):]
    # ($ is also before a last newline)
    return line.startswith(marker) and (rest in ('', '\n') or rest[:1] == ' ')


def _markers(path: str, text: str) -> list[Finding]:
    ret = []
    start = None
    for n, line in enumerate(text.splitlines(), 1):
        if _is_marker(line, _OPEN):
            if start is not None:
                ret.append(_finding(path, start, None))
            start = n
        elif _is_marker(line, _CLOSE):
            ret.append(_finding(path, start or n, n))
            start = None
    if start is not None:
        ret.append(_finding(path, start, None))
    return ret


def _finding(path: str, start: int, end: int | None) -> Finding:
    where = f'lines {start}-{end}' if end and end != start else f'line {start}'
    return Finding(
        ID, 'error',
        f'unresolved merge conflict ({where}); keep what is right, delete '
        f'the <<<<<<< ||||||| ======= >>>>>>> lines, then `agitmem save`',
        path=path, line=start,
    )


def check(
        texts: dict[str, str],
        *,
        state: dict[str, Any] | None = None,
        state_path: str = '.agent/memory/state.json',
) -> list[Finding]:
    """texts: shown path -> content of each memory file (archived snapshots
    are history: not checked); state: the parsed state.json."""
    ret = []
    for path, text in texts.items():
        if '/archive/' not in path:
            ret.extend(_markers(path, text))
    recorded = (state or {}).get(STATE_CONFLICTS)
    if isinstance(recorded, dict) and recorded:
        line = None
        for n, text in enumerate(texts.get(state_path, '').splitlines(), 1):
            if f'"{STATE_CONFLICTS}"' in text:
                line = n
                break
        keys = ', '.join(f'"{k}"' for k in recorded)
        ret.append(
            Finding(
                ID, 'error',
                f'a memory merge left {keys} changed on both sides (see '
                f'"{STATE_CONFLICTS}"); set the right value, delete '
                f'"{STATE_CONFLICTS}", then `agitmem save`',
                path=state_path, line=line,
            ),
        )
    return ret
