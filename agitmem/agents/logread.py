"""Reading a client's session log: a line at a time, in bounded memory.

A log is untrusted and may be huge: a line longer than MAX_LINE is
skipped (read past in chunks, never held whole), a path that is not a
regular file (a FIFO, a link to /dev/zero) is refused before a byte is
read, and nothing is decoded here (json.loads takes the bytes)."""
from __future__ import annotations

import os
from collections.abc import Iterator

from agitmem import repo as repo_mod

# a Claude Code record holding a whole file's text before an edit runs to
# megabytes; past this a line is not worth its memory
MAX_LINE = 16 << 20
# an older Gemini CLI's whole-session JSON document, at most
MAX_DOCUMENT = 64 << 20
_CHUNK = 1 << 20


class Refused(Exception):
    """The path is no log to read: `str()` says why, in a few words."""


def _open(path: str) -> tuple[int, int]:
    try:
        fd, st = repo_mod.open_regular(path)
    except FileNotFoundError:
        raise Refused('no such file')
    except repo_mod.NotRegularFile as e:
        raise Refused(f'{e.kind}, not a log')
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise Refused(e.strerror if isinstance(e, OSError) and e.strerror else str(e))
    return fd, st.st_size


def lines(path: str, max_line: int = MAX_LINE) -> Iterator[bytes]:
    """The file's lines (without their newline) as the file held them
    when opened; a line over `max_line` bytes is skipped whole."""
    fd, size = _open(path)
    try:
        f = os.fdopen(fd, 'rb', buffering=_CHUNK)
    except OSError as e:
        os.close(fd)
        raise Refused(e.strerror or 'cannot read')
    with f:
        left = size  # a log still being written does not keep us
        while left > 0:
            try:
                line = f.readline(min(max_line + 1, left))
            except OSError as e:
                raise Refused(e.strerror or 'cannot read')
            if not line:
                return
            left -= len(line)
            if line.endswith(b'\n'):
                yield line[:-1]
                continue
            if len(line) <= max_line and left <= 0:
                yield line  # the last line, without its newline (a log cut short)
                return
            # over-long: read past the rest of it a chunk at a time
            while left > 0:
                chunk = f.readline(min(_CHUNK, left))
                if not chunk:
                    return
                left -= len(chunk)
                if chunk.endswith(b'\n'):
                    break


def document(path: str, cap: int = MAX_DOCUMENT) -> bytes:
    """A whole JSON document; b'' when it is over `cap` bytes."""
    fd, size = _open(path)
    try:
        if size > cap:
            return b''
        chunks, left = [], size
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b''.join(chunks)
    except OSError as e:
        raise Refused(e.strerror or 'cannot read')
    finally:
        os.close(fd)
