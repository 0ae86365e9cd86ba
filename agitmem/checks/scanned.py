"""Memory texts the secret scanner found clean, remembered per worktree in
<git dir>/agitmem/scanned, so the pre-commit hook does not scan again the
files a save (or the last check) scanned already: scanning compiles the
scanner's rules, most of a pre-commit hook's own time.

One digest (SHA-1 of the text) a line, under a first line that names the
scanner: its source files' sizes and mtimes, so a changed scanner (an
upgrade, new rules) finds nothing remembered.  The scan depends on the text
alone (not on its path, nor on config.yaml).  Only clean texts are
remembered; a text with a finding is scanned every time, and says so every
time.  The file is a cache: unreadable or malformed, it remembers nothing."""
from __future__ import annotations

import os

from agitmem import repo as repo_mod
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from collections.abc import Mapping

KEEP = 256  # digests kept, newest last: a memory's files and a few states
_HEX = frozenset('0123456789abcdef')


def _path(repo: Repo) -> str:
    return os.path.join(repo.gitdir, 'agitmem', 'scanned')


def scanner_key() -> str:
    """What names this scanner: agitmem/secrets.py and any secret_rules*
    beside it, by size and mtime (read without importing them); '' when
    they cannot be told."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = []
    try:
        for path in sorted(p for n in os.listdir(pkg) if n.startswith('secret') for p in _files(pkg, n)):
            st = os.stat(path)
            parts.append(f'{os.path.relpath(path, pkg)}:{st.st_size}:{st.st_mtime_ns}')
    except OSError:
        return ''
    return repo_mod.sha1('\n'.join(parts).encode()) if parts else ''


def _files(pkg: str, name: str) -> list[str]:
    top = os.path.join(pkg, name)
    if not os.path.isdir(top):
        return [top]
    return [
        os.path.join(d, f) for d, dirs, files in os.walk(top)
        for f in files if '__pycache__' not in d.split(os.sep)
    ]


def digest(text: str) -> str:
    return repo_mod.sha1(text.encode('utf-8', 'surrogatepass'))


def _is_digest(line: str) -> bool:
    return len(line) == 40 and _HEX.issuperset(line)


def clean(repo: Repo, key: str) -> list[str]:
    """The digests remembered clean by the scanner `key` names, oldest
    first."""
    if not key:
        return []
    from agitmem import caches
    data = caches.own(_path(repo))  # never a FIFO's hang, nor a link
    try:
        lines = (data or b'').decode('ascii').split('\n')
    except ValueError:
        return []
    if lines[0] != key:
        return []
    return [ln for ln in lines[1:] if _is_digest(ln)]


def remember(repo: Repo, key: str, known: list[str], new: Iterable[str]) -> None:
    """Add the digests of texts just scanned clean to those `clean` gave."""
    add = [d for d in dict.fromkeys(new) if d not in known]
    if not key or not add:
        return
    kept = [d for d in known if d not in add] + add
    data = '\n'.join([key, *kept[-KEEP:]]) + '\n'
    try:
        # a new temp file renamed over it (readers see the old or the new
        # one), never a name a link could be waiting at; no fsync: a cache
        # lost in a crash is only scanned again
        repo_mod.atomic_write(_path(repo), data.encode(), durable=False)
    except OSError:
        pass  # not remembered: the next hook scans again


def remember_files(repo: Repo, files: Mapping[str, bytes]) -> None:
    """Memory files (as a save commits them) just scanned clean."""
    key = scanner_key()
    texts = [data.decode('utf-8', 'replace') for data in files.values()]
    remember(repo, key, clean(repo, key), [digest(t) for t in texts])

