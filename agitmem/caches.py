"""Reading agitmem's own small files in the git dir (observed facts, hook
state per session): a cache is never worth a hang, so what is not a
regular file (a FIFO, a symlink to /dev/zero) or is larger than any file
agitmem writes there reads as nothing, and nothing blocks on it."""
from __future__ import annotations

import os
import stat
from pathlib import Path

LIMIT = 4_000_000  # bytes: far above what agitmem writes to a cache file


def read(path: Path, limit: int = LIMIT) -> bytes | None:
    """The file's bytes; None when it is missing, not a regular file,
    unreadable or over `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
    except OSError:
        return None
    with open(fd, 'rb') as f:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = f.read(limit + 1)
        except OSError:
            return None
    return data if len(data) <= limit else None
