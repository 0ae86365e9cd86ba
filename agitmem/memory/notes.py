"""notes.md: scratch notes, one per "- " line, newest last."""
from __future__ import annotations

from agitmem.memory import bullets


def parse(text: str) -> list[str]:
    return [t for _, t in bullets(text)]


def render(notes: list[str], header: str = '') -> str:
    return header + ''.join(f'- {n}\n' for n in notes)


def append(text: str, note: str) -> str:
    """The file with one more note at the end; the note is folded onto one
    line so one note stays one "- " line."""
    line = ' '.join(note.split())
    if text and not text.endswith('\n'):
        text += '\n'
    return f'{text}- {line}\n'
