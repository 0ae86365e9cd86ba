"""Hook state per agent session: the prompt counter, the session's last
context size, a pending compaction, the compactions already handled.

One small JSON file per session under <git dir>/agitmem/sessions/, so two
agent sessions in one checkout never see each other's sizes or
compactions.  Files of sessions idle for a week are pruned.  Standard
library only: the hot hooks read and write it on every prompt."""
from __future__ import annotations

import os
import time

from agitmem import caches
from agitmem import jsontext
from agitmem import repo as repo_mod
from agitmem.repo import Repo

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KEEP_SECONDS = 7 * 24 * 3600
KEEP_FILES = 200


# characters of a session id kept as they are: the clients' ids are UUIDs
# (36) or file names; a longer one (a payload's) is kept in part and digested
ID_CHARS = 128


def session_key(agent: str, session_id: str | None, environ: dict[str, str] | None = None) -> str:
    """The agent's own session id; for shell shims $AGITMEM_SESSION, else
    one session per agent.  An id over ID_CHARS is its first 64
    characters, `#` and the SHA-256 of all of it: every cache that names
    the session (its hook state, each observed edit and request) stays
    small, and two ids still never share a key (a digested one is longer
    than any id kept whole)."""
    env = os.environ if environ is None else environ
    sid = session_id or (env.get('AGITMEM_SESSION') if agent == 'shell' else None) or '-'
    if len(sid) > ID_CHARS:
        import hashlib
        digest = hashlib.sha256(sid.encode('utf-8', 'surrogatepass')).hexdigest()
        sid = f'{sid[:64]}#{digest}'
    return f'{agent}\0{sid}'


def _dir(repo: Repo) -> str:
    return os.path.join(repo.gitdir, 'agitmem', 'sessions')


def _path(repo: Repo, key: str) -> str:
    # hashed: a session id from a payload never becomes a path (any lone
    # surrogate its JSON holds, too)
    return os.path.join(_dir(repo), f'{repo_mod.sha1(key.encode("utf-8", "surrogatepass"))[:20]}.json')


def read(repo: Repo, key: str) -> dict[str, Any]:
    data = caches.read_json(_path(repo, key))
    # our own file, but a damaged one must not break every prompt
    return data if isinstance(data, dict) and data.get('key') == key else {}


def write(repo: Repo, key: str, data: dict[str, Any]) -> None:
    data = {**data, 'key': key}
    path = _path(repo, key)
    fresh = not os.path.exists(path)
    # no fsync (a few ms on every prompt): a crash of the machine may leave
    # it old or empty, which `read` takes for a new session
    try:
        repo_mod.atomic_write(path, (jsontext.dumps(data, sort_keys=True) + '\n').encode(), durable=False)
    except OSError:
        # (a directory where the file goes, a read-only git dir): the hook
        # goes on, its session state not kept, as after a crash
        return
    if fresh:
        prune(repo)


def prune(repo: Repo, *, now: float | None = None) -> int:
    """Drop the state of sessions idle for KEEP_SECONDS, and the oldest
    beyond KEEP_FILES.  Returns how many went."""
    now = time.time() if now is None else now
    try:
        entries = sorted(
            ((e.stat().st_mtime, e.path) for e in os.scandir(_dir(repo)) if e.name.endswith('.json')),
            reverse=True,
        )
    except OSError:
        return 0
    gone = 0
    for i, (mtime, path) in enumerate(entries):
        if i >= KEEP_FILES or now - mtime > KEEP_SECONDS:
            try:
                os.unlink(path)
                gone += 1
            except OSError:
                pass
    return gone


def int_of(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
