"""notes.md: scratch notes, one per "- " line, newest last."""
from __future__ import annotations

from agitmem.memory import bullets
from agitmem.memory import is_bullet
from agitmem.memory import last_lines


def parse(text: str) -> list[str]:
    return [t for _, t in bullets(text)]


def newest(text: str, count: int) -> list[str]:
    """parse(text)[-count:], read from the end (the injection shows the
    newest few of what may be thousands)."""
    return [line[2:].strip() for line in last_lines(text, count, is_bullet)]


def render(notes: list[str], header: str = '') -> str:
    return header + ''.join(f'- {n}\n' for n in notes)


def append(text: str, note: str) -> str:
    """The file with one more note at the end; the note is folded onto one
    line so one note stays one "- " line."""
    line = ' '.join(note.split())
    if text and not text.endswith('\n'):
        text += '\n'
    return f'{text}- {line}\n'
