"""The audit log: one line per memory read or write."""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from agitmem import render


def log(agent_dir: Path, event: str, detail: str = '') -> None:
    """Append "[YYYY-MM-DD HH:MM:SS] event: detail".  Only where .agent/
    exists: a failing command must not create it.  One O_APPEND write, so
    concurrent writers never interleave inside a line."""
    if not agent_dir.is_dir():
        return
    now = time.strftime('%Y-%m-%d %H:%M:%S')
    # one line, and nothing in it a terminal acts on (`cat memory.log`):
    # a detail may name a path or branch from a cloned repository
    detail = render.controls(' '.join(detail.split()))
    line = f'[{now}] {event}: {detail}\n'.encode('utf-8', 'backslashreplace')
    path = agent_dir / 'log' / 'memory.log'
    try:
        path.parent.mkdir(exist_ok=True)
        # O_NONBLOCK: a FIFO put there must not hang every command
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass  # the log is an aid; never fail a command over it
