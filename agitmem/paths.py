"""Paths compared as the repository's file system compares them.

git records what it found when it made the repository: `core.ignorecase`
(the file system folds case: macOS, Windows) and `core.precomposeUnicode`
(macOS, whose file systems may hand back decomposed names, NFD; git keeps
the composed form, NFC).  There an agent's `Src/Über.py`, decomposed, is
the file git knows as `src/über.py`.  Case is folded as the file system
folds it, for all of Unicode (APFS and NTFS do; git's own index lookups
fold ASCII only, but the file opened is the one the file system picks).

With neither setting (Linux's defaults) a path is compared as it is
spelled, and nothing here runs a process: the repository's config file
is read once a process to tell.  Standard library only, and os.path, not
pathlib (its import is a tenth of a hook's run): the post-edit hook uses
it."""
from __future__ import annotations

import os

from agitmem import caches
from agitmem import repo as repo_mod
from agitmem.repo import Repo

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

# a config file past this is asked of git, not read
_CONFIG_MAX = 1 << 20
# names a directory lists that are compared, at most: a path is resolved
# within a bound however big a directory is
_LIST_MAX = 100_000


class Folding(NamedTuple):
    ignorecase: bool = False
    precompose: bool = False


PLAIN = Folding()
_FOLDINGS: dict[str, Folding] = {}


def key(path: str, fold: Folding) -> str:
    """What `path` is compared by under `fold`: composed (NFC) when the
    file system may decompose it, case folded when it ignores case."""
    if fold.precompose:
        # (imported here: a shared library's load, on every hook, for what
        # only a precomposing file system asks)
        import unicodedata
        path = unicodedata.normalize('NFC', path)
    if fold.ignorecase:
        path = path.casefold()
    return path


def _read_bool(value: bytes) -> bool:
    return value.strip().lower() in (b'true', b'yes', b'on', b'1')


def folding(repo: Repo) -> Folding:
    """The repository's two settings, once a process.  git writes them
    into the repository's own config when it creates one on such a file
    system; a config that names neither (nor includes another file) is
    not asked of git."""
    at = repo.commondir
    if at in _FOLDINGS:
        return _FOLDINGS[at]
    text = b''
    for path in (os.path.join(at, 'config'), os.path.join(repo.gitdir, 'config.worktree')):
        text += (caches.read(path, _CONFIG_MAX) or b'').lower()
    fold = PLAIN
    if any(word in text for word in (b'ignorecase', b'precompose', b'include')):
        got = repo_mod.git_bytes(
            repo, ('config', '-z', '--get-regexp', r'^core\.(ignorecase|precomposeunicode)$'), b'', ok=(0, 1),
        )
        values = {}
        for item in (got or b'').split(b'\0'):
            name, _, value = item.partition(b'\n')
            values[name.lower()] = _read_bool(value)  # the last one wins, as in git
        fold = Folding(values.get(b'core.ignorecase', False), values.get(b'core.precomposeunicode', False))
    _FOLDINGS[at] = fold
    return fold


def on_disk(root: Path | str, rel: str, fold: Folding) -> str | None:
    """The spelling the working tree has for `rel` (relative to `root`,
    `/`-separated) compared by `key`: each name as its directory lists it
    (composed when `fold.precompose`, as git reads it); None when a name
    is not there.  A name spelled exactly as listed wins over another
    that only folds to it (a case-sensitive directory may hold both)."""
    at = root
    found: list[str] = []
    for part in rel.split('/'):
        if part in ('', '.'):
            continue
        if part == '..':
            return None
        try:
            with os.scandir(at) as it:
                names = [e.name for _, e in zip(range(_LIST_MAX), it)]
        except (OSError, ValueError):
            return None
        if part not in names:
            want = key(part, fold)
            matches = sorted(n for n in names if key(n, fold) == want)
            if not matches:
                return None
            part = matches[0]
        at = os.path.join(at, part)
        found.append(key(part, Folding(precompose=True)) if fold.precompose else part)
    return '/'.join(found)


def known(repo: Repo, rel: str) -> str:
    """`rel` (relative to the worktree top) spelled as the working tree
    spells it when the repository folds names; as given when it does
    not, or when no file there has it."""
    fold = folding(repo)
    if fold == PLAIN:
        return rel
    return on_disk(repo.top, rel, fold) or key(rel, Folding(precompose=fold.precompose))


def relative(repo: Repo, path: str, cwd: str | None) -> str | None:
    """An agent's `path` (absolute, or relative to `cwd`), relative to the
    worktree top and spelled as the working tree spells it; None when it
    is outside the worktree.  The top itself is compared by `key` too:
    an agent may have been started in `~/Repo` of `~/repo`."""
    try:
        p = parts(resolved(path, cwd or repo.top))
        top = parts(resolved(repo.top))
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a symlink loop
        return None
    fold = folding(repo)
    n = len(top)
    if p[:n] == top:
        rel = '/'.join(p[n:]) or '.'
    elif fold != PLAIN and [key(x, fold) for x in p[:n]] == [key(x, fold) for x in top]:
        rel = '/'.join(p[n:]) or '.'
    else:
        return None
    return known(repo, rel)


# Windows' ERROR_CANT_RESOLVE_FILENAME: its symlink loop
_CANT_RESOLVE = 1921


def resolved(path: str, cwd: str | None = None) -> str:
    """Path(cwd, path).resolve(), as pathlib does it, without pathlib:
    the real path (what is missing kept as spelled), and a symlink loop
    raised (RuntimeError), which realpath alone does not."""
    import errno
    real = os.path.realpath(os.path.join(cwd, path) if cwd and not os.path.isabs(path) else path)
    try:
        os.stat(real)
    except OSError as e:
        if e.errno == errno.ELOOP or getattr(e, 'winerror', 0) == _CANT_RESOLVE:
            raise RuntimeError(f'Symlink loop from {e.filename!r}')
    return real


def parts(real: str) -> list[str]:
    """The names of a path `resolved` gave, its drive and root first
    (Path.parts)."""
    drive, rest = os.path.splitdrive(real)
    return [drive + os.sep, *(x for x in rest.split(os.sep) if x)]
