"""Parse and render each memory layer.  The files live in .agent/memory/."""
from __future__ import annotations

from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

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


def decode_shown(data: bytes, path: str) -> tuple[str, str | None]:
    """A memory file's text to show (the injection, `load`): one from a
    cloned memory ref may hold anything, and one bad byte must not keep
    the rest of the memory from the agent.  Bytes that are not UTF-8 are
    kept as surrogates and NUL bytes as they are (render shows each
    escaped: \\udcXX, the byte in its last two digits; \\u0000); a byte
    order mark and CRs before LF are left out.  The second value names
    the file and what is odd in it in one line; None when nothing is."""
    said = []
    if data.startswith(b'\xef\xbb\xbf'):
        data = data[3:]
        said.append('a byte order mark (left out)')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        text = data.decode('utf-8', 'surrogateescape')
        n = sum(1 for c in text if '\udc80' <= c <= '\udcff')
        line = data[:e.start].count(b'\n') + 1
        said.append(
            f'{n} byte(s) not UTF-8 (the first on line {line}), shown as '
            f'\\udc{data[e.start]:02x}',
        )
    if '\0' in text:
        line = text[:text.index('\0')].count('\n') + 1
        said.append(f'{text.count(chr(0))} NUL byte(s) (the first on line {line}), shown as \\u0000')
    if '\r\n' in text:
        text = text.replace('\r\n', '\n')  # an editor's line endings: nothing lost
    return text, f'{path}: {"; ".join(said)}' if said else None


def last_lines(text: str, count: int, keep: Callable[[str], object]) -> list[str]:
    """The last `count` of text's lines (as `text.split('\n')` makes them)
    that `keep` takes, in order, read from the end: a file of thousands of
    notes or fragments is shown by its newest few, found without reading
    the rest."""
    found: list[str] = []
    end = len(text)
    while end >= 0 and len(found) < count:
        start = text.rfind('\n', 0, end) + 1
        line = text[start:end]
        if keep(line):
            found.append(line)
        end = start - 1
    return found[::-1]


def is_bullet(line: str) -> bool:
    """A "- " line with text: a tattoo rule or a note."""
    return line.startswith('- ') and bool(line[2:].strip())


def bullets(text: str) -> list[tuple[int, str]]:
    """(line number, text) of each "- " line: tattoo rules and notes."""
    ret = []
    for i, line in enumerate(text.split('\n'), 1):
        if is_bullet(line):
            ret.append((i, line[2:].strip()))
    return ret
