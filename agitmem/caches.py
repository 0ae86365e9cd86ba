"""Reading agitmem's own small files in the git dir (observed facts, hook
state per session): a cache is never worth a hang, so what is not a
regular file (a FIFO, a symlink to /dev/zero) or is larger than any file
agitmem writes there reads as nothing, and nothing blocks on it."""
from __future__ import annotations

import os
import stat
from agitmem import platforms

# pathlib is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; repo.Repo)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

LIMIT = 4_000_000  # bytes: far above what agitmem writes to a cache file


def read(path: Path | str, limit: int = LIMIT, *, follow: bool = True) -> bytes | None:
    """The file's bytes; None when it is missing, not a regular file,
    unreadable or over `limit` bytes; not `follow`: when it is a symlink
    or has another name (a hard link)."""
    flags = os.O_RDONLY | platforms.O_NONBLOCK | platforms.O_CLOEXEC | platforms.O_BINARY
    try:
        fd = os.open(path, flags) if follow else platforms.open_nofollow(path, flags)
    except OSError:
        return None
    try:
        # looked at before a file object is made of it: open() refuses a
        # directory (one made where a cache file goes) with an exception
        st = os.fstat(fd)
        # not `follow` (agitmem's own, replaced whole): a second name for
        # it, a hard link, is none of its own either
        if not stat.S_ISREG(st.st_mode) or not follow and st.st_nlink > 1:
            os.close(fd)
            return None
    except OSError:
        os.close(fd)
        return None
    with open(fd, 'rb') as f:
        try:
            data = f.read(limit + 1)
        except OSError:
            return None
    return data if len(data) <= limit else None


def own(path: Path | str, limit: int = LIMIT) -> bytes | None:
    """A file of agitmem's own under <git dir>/agitmem/ (a cache, hook
    state, the memory base): read as `read` does, and None when it is a
    symlink or a hard link: agitmem replaces these files whole
    (repo.atomic_write), so a link is none of its own, and what it points
    at (a device, a file outside the repository) is never read.  Every read of that
    directory's files goes through here."""
    return read(path, limit, follow=False)


def read_json(path: Path | str, limit: int = LIMIT) -> object:
    """The file's JSON, read as `own` does; None when it is not there,
    not JSON (cut short by a crash: no cache is fsynced), nested too deep
    to parse, or a symlink (what it points at, maybe outside the
    repository, is never read into the agent's context)."""
    from agitmem import jsontext
    data = own(path, limit)
    if data is None:
        return None
    try:
        return jsontext.loads(data)
    except (ValueError, RecursionError):
        return None


def leaving(git_dir: Path | str, common_dir: Path | str) -> str | None:
    """What, in agitmem's directories of the git dir (its caches, hook
    state, memory base, locks), is a symlink to outside the repository's
    git dirs that agitmem would write through: the directory itself, one
    in it (sessions, recall), the lock (its open truncates the target).
    None when nothing is.  A cache file linked out is not written
    through: it is replaced whole (repo.atomic_write), and read as
    nothing when it is no regular file (read above)."""
    inside = (os.path.realpath(git_dir), os.path.realpath(common_dir))

    def outside(path: str) -> bool:
        to = os.path.realpath(path)
        return not any(to == d or to.startswith(d + os.sep) for d in inside)

    for where in dict.fromkeys((os.path.join(git_dir, 'agitmem'), os.path.join(common_dir, 'agitmem'))):
        if os.path.islink(where):
            if outside(where):
                return where
            continue
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue  # not there yet: agitmem makes it a directory
        for e in entries:
            through = e.name == 'lock' or os.path.isdir(e.path)
            if e.is_symlink() and through and outside(e.path):
                return e.path
    return None
