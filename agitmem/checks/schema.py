"""`schema`: memory files that agitmem cannot read: not UTF-8/LF text, or
state.json, fragments.jsonl or config.yaml (and its `enforce:` rules)
malformed.  `agitmem save` refuses each of these."""
from __future__ import annotations

from agitmem import config
from agitmem import memory
from agitmem.checks import Finding
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import state as state_mod

ID = 'schema'
STATE = f'.agent/memory/{memory.STATE}'
FRAGMENTS = f'.agent/memory/{memory.FRAGMENTS}'
CONFIG = f'.agent/{memory.CONFIG}'

SAVE_REFUSES = 'fix the file (agitmem save refuses it as it is)'


def _line_at(problem: str, start: int) -> tuple[int | None, int] | None:
    """What `(?::(\\d+))?: ` matched at start: (the line number if one is
    given, where the match ends); None when it does not match."""
    if problem.startswith(':', start):
        end = start + 1
        while end < len(problem) and problem[end].isdecimal():
            end += 1
        if end > start + 1 and problem.startswith(': ', end):
            return int(problem[start + 1:end]), end + 2
    return (None, start + 2) if problem.startswith(': ', start) else None


def finding(path: str, problem: str, todo: str = SAVE_REFUSES) -> Finding:
    """A schema error from a parser's message (`<path>[:<line>]: ...`)."""
    line = None
    rest = problem
    if problem.startswith(path):
        at = _line_at(problem, len(path))
        if at is not None:
            line, end = at
            rest = problem[end:]
    return Finding(
        ID, 'error',
        f'{rest}; {todo}',
        path=path, line=line,
    )


def _parse(path: str, text: str) -> list[Finding]:
    if path == STATE:
        state_mod.parse(text, path)
    elif path == FRAGMENTS:
        fragments_mod.parse(text, path)
    elif path == CONFIG:
        config.parse(text, path)  # validates the enforce rules too
    return []


def check(files: dict[str, bytes]) -> list[Finding]:
    """files: shown path (`.agent/memory/state.json`) -> content."""
    ret = []
    for path, data in files.items():
        try:
            ret.extend(_parse(path, memory.decode(data, path)))
        except AgitmemError as e:
            ret.append(finding(path, str(e)))
    return ret
