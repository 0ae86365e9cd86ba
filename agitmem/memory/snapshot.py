"""snapshot.md: the task progress board, in sections."""
from __future__ import annotations

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

GOAL = 'Goal'
DONE = 'Done'
IN_PROGRESS = 'In progress'
TODO = 'Todo'
DECISIONS = 'Decisions'
SECTIONS = (GOAL, DONE, IN_PROGRESS, TODO, DECISIONS)

_ALIASES = {
    'goal': GOAL, '目标': GOAL,
    'done': DONE, '已完成': DONE,
    'in progress': IN_PROGRESS, 'in-progress': IN_PROGRESS,
    '进行中': IN_PROGRESS,
    'todo': TODO, 'to do': TODO, 'to-do': TODO, '待办': TODO,
    'decisions': DECISIONS, 'key decisions': DECISIONS, '关键决策': DECISIONS,
}


def heading_title(line: str) -> str | None:
    """The title of a Markdown heading line (without its newline), None
    when it is not one: what `^(#{1,6})\\s+(.+?)\\s*#*\\s*$` matched as group 2,
    by str's methods (re is not imported on the hooks' paths; agitmem/jsontext.py)."""
    level = len(line) - len(line.lstrip('#'))
    if not 1 <= level <= 6 or not line[level:level + 1].isspace():
        return None
    rest = line[level:]
    title = rest.lstrip()
    if not title:  # only spaces: the pattern's \s+ leaves the last one to the title
        return rest[-1] if len(rest) > 1 else None
    # closing #s and the spaces around them go; a title of #s keeps its first
    return title.rstrip().rstrip('#').rstrip() or title[0]


class Section(NamedTuple):
    heading: str  # the heading line as written
    name: str  # canonical name (one of SECTIONS) or the title as written
    line: int  # line number of the heading
    body: str  # text up to the next heading, trailing newline kept


class Snapshot(NamedTuple):
    preamble: str
    sections: tuple[Section, ...]

    def get(self, name: str) -> Section | None:
        for s in self.sections:
            if s.name == name:
                return s
        return None


def canonical(title: str) -> str:
    return _ALIASES.get(title.strip().rstrip(':：').strip().lower(), title)


def parse(text: str) -> Snapshot:
    preamble: list[str] = []
    sections: list[Section] = []
    heading: tuple[str, str, int] | None = None
    body: list[str] = []
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        # (most lines are no heading: told by their first character)
        title = heading_title(line.rstrip('\n')) if line.startswith('#') else None
        if title is not None:
            if heading is None:
                preamble = body
            else:
                sections.append(Section(*heading, ''.join(body)))
            heading = (line.rstrip('\n'), canonical(title), i)
            body = []
        else:
            body.append(line)
    if heading is None:
        preamble = body
    else:
        sections.append(Section(*heading, ''.join(body)))
    return Snapshot(''.join(preamble), tuple(sections))


def render(snap: Snapshot) -> str:
    parts = [snap.preamble]
    for s in snap.sections:
        parts.append(f'{s.heading}\n{s.body}')
    return ''.join(parts)


def content_lines(section: Section | None) -> list[tuple[int, str]]:
    """Non-blank, non-comment lines of a section with their line numbers."""
    if section is None:
        return []
    ret = []
    in_comment = False
    for i, line in enumerate(section.body.splitlines(), section.line + 1):
        stripped = line.strip()
        if in_comment or stripped.startswith('<!--'):
            in_comment = '-->' not in stripped
            continue
        if stripped:
            ret.append((i, stripped))
    return ret
