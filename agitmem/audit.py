"""The audit log: one line per memory read or write."""
from __future__ import annotations

import os
import stat
import time
from agitmem import platforms
from agitmem import render

# pathlib is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; repo.Repo)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def log(agent_dir: Path | str, event: str, detail: str = '') -> None:
    """Append "[YYYY-MM-DD HH:MM:SS] event: detail".  Only where .agent/
    exists: a failing command must not create it.  One O_APPEND write, so
    concurrent writers never interleave inside a line."""
    if not os.path.isdir(agent_dir):
        return
    now = time.strftime('%Y-%m-%d %H:%M:%S')
    # one line, and nothing in it a terminal acts on (`cat memory.log`):
    # a detail may name a path or branch from a cloned repository
    detail = render.controls(' '.join(detail.split()))
    line = f'[{now}] {event}: {detail}\n'.encode('utf-8', 'backslashreplace')
    try:
        fd = open_log(agent_dir, 'memory.log', os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        pass  # the log is an aid; never fail a command over it


_FILE = platforms.O_NONBLOCK | platforms.O_NOCTTY | platforms.O_CLOEXEC


def open_log(agent_dir: Path | str, name: str, flags: int) -> int:
    """An fd of .agent/log/<name> as a regular file reached through no
    symlink (.agent/, log/, the file): .agent/ may come from a cloned
    repository's tracked files, and a log/ or a log file linked to
    ~/.bashrc had each line appended there.  log/ is made when O_CREAT.
    O_NONBLOCK on the open: a FIFO does not hang it.  OSError (ELOOP for a
    symlink), or ValueError when it is no regular file."""
    if platforms.dir_fds():
        fd = _open_at(agent_dir, name, flags)
    else:
        fd = _open_checked(agent_dir, name, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError('not a regular file')
    if platforms.O_NONBLOCK:
        os.set_blocking(fd, True)
    return fd


def _open_at(agent_dir: Path | str, name: str, flags: int) -> int:
    """Each component opened relative to the last, none followed: no
    swap between a check and an open."""
    logs = platforms.open_dirs(agent_dir, ['log'], create=bool(flags & os.O_CREAT), mode=0o755)
    try:
        return platforms.open_nofollow(name, flags | _FILE, dir_fd=logs)
    finally:
        os.close(logs)


def _open_checked(agent_dir: Path | str, name: str, flags: int) -> int:
    """Where directories cannot be opened (Windows): each component
    checked to be no link just before the open."""
    import errno
    logs = os.path.join(agent_dir, 'log')
    if flags & os.O_CREAT and not os.path.lexists(logs):
        try:
            os.mkdir(logs, 0o755)
        except FileExistsError:
            pass  # (checked below to be a directory)
    for d in (os.fspath(agent_dir), logs):
        if platforms.linked(d) or not os.path.isdir(d):
            raise OSError(errno.ELOOP, 'a link or no directory', d)
    return platforms.open_nofollow(os.path.join(logs, name), flags | _FILE)
