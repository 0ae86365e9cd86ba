"""Parse and render each memory layer.  The files live in .agent/memory/."""
from __future__ import annotations

from agitmem.errors import AgitmemError

TATTOO = 'tattoo.md'
SNAPSHOT = 'snapshot.md'
STATE = 'state.json'
NOTES = 'notes.md'
FRAGMENTS = 'fragments.jsonl'
CONFIG = 'config.yaml'  # recorded at the root of every memory commit
ARCHIVE = 'archive'
LAYERS = (TATTOO, SNAPSHOT, STATE, NOTES, FRAGMENTS)


def decode(data: bytes, path: str) -> str:
    """Memory files are UTF-8 text with LF line endings and no BOM: anything
    else is refused with the file and line named, never guessed at."""
    if b'\0' in data:
        line = data[:data.index(b'\0')].count(b'\n') + 1
        raise AgitmemError(
            f'{path}:{line}: binary content (NUL byte); memory files are '
            f'UTF-8 text',
        )
    if data.startswith(b'\xef\xbb\xbf'):
        raise AgitmemError(
            f'{path}:1: starts with a UTF-8 byte order mark; save it without '
            f'the BOM',
        )
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b'\n') + 1
        raise AgitmemError(
            f'{path}:{line}: not UTF-8 (byte 0x{data[e.start]:02x}); save it '
            f'as UTF-8',
        )
    if '\r' in text:
        line = text[:text.index('\r')].count('\n') + 1
        raise AgitmemError(
            f'{path}:{line}: CRLF line ending; memory files use LF '
            f'(e.g. `sed -i "s/\\r$//" {path}`)',
        )
    return text


def bullets(text: str) -> list[tuple[int, str]]:
    """(line number, text) of each "- " line: tattoo rules and notes."""
    ret = []
    for i, line in enumerate(text.split('\n'), 1):
        if line.startswith('- ') and line[2:].strip():
            ret.append((i, line[2:].strip()))
    return ret
