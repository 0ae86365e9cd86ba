"""The working tree's memory as a save commits it: every file under
.agent/memory/ and .agent/config.yaml, checked.  Without pygit2 (store.py
commits what this reads), so that a hook can tell whether there is
anything to save before it imports pygit2."""
from __future__ import annotations

import os
import stat
from collections.abc import Callable
from collections.abc import Iterator

from agitmem import memory
from agitmem.errors import AgitmemError

# typing is not imported at run time: every write imports this module
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agitmem.repo import Repo

Files = dict[str, bytes]  # path inside a memory commit -> content


def read_memory(
        repo: Repo,
        *,
        max_file_kb: int,
        checked: Callable[[str, bytes], bool] | None = None,
) -> Files:
    """Every file under .agent/memory/ (and .agent/config.yaml), checked:
    regular files only, UTF-8/LF text, within the size limit, and the
    structured layers well formed (those `checked` says were, skipped).
    Anything wrong raises before a write."""
    files: Files = {}
    # places as strings: pathlib (with fnmatch, ntpath, urllib.parse) is
    # not imported for a save an agent makes at every step
    root = repo.memorydir
    limit = max_file_kb * 1024
    for path, rel in walk(root):
        files[rel] = _read_checked(path, f'.agent/memory/{rel}', limit)
    for rel, data in files.items():
        # a file as the ref holds it goes back as it was, whatever its
        # bytes (a cloned memory ref's): refused, it would stop every save
        if checked is None or not checked(rel, data):
            memory.decode(data, f'.agent/memory/{rel}')
    _check_shape(files)
    config = repo.configfile
    if os.path.islink(config):
        raise AgitmemError(
            '.agent/config.yaml: is a symlink; memory files must be '
            'regular files inside the repository',
        )
    if os.path.isfile(config):
        files[memory.CONFIG] = _read_checked(config, '.agent/config.yaml', limit)
        if checked is None or not checked(memory.CONFIG, files[memory.CONFIG]):
            memory.decode(files[memory.CONFIG], '.agent/config.yaml')
    check_layers({k: v for k, v in files.items() if checked is None or not checked(k, v)})
    return files


def _check_shape(files: Files) -> None:
    """The layers are files and archive/ a directory, as every reader of a
    memory commit expects (store.safe_entry refuses a tree where they are
    not): such a tree is not committed."""
    for path in files:
        top, _, rest = path.partition('/')
        if (top == memory.ARCHIVE) == (not rest) or (rest and top in memory.LAYERS):
            what = 'a file, not a directory' if top == memory.ARCHIVE else 'a directory, not a file'
            raise AgitmemError(f'.agent/memory/{top}: is {what}')


def walk(root: str) -> Iterator[tuple[str, str]]:
    """(path, path under root with `/`) of the memory files under root, in
    order (dot-names are not memory)."""
    if os.path.islink(root):
        raise AgitmemError(
            '.agent/memory: is a symlink; it must be a directory inside the '
            'repository',
        )
    for dirpath, dirnames, filenames in os.walk(root):
        # dot-names are our atomic-write temp files and editor droppings
        dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
        for d in dirnames:
            if os.path.islink(os.path.join(dirpath, d)):
                raise AgitmemError(
                    f'.agent/memory/{_under(root, os.path.join(dirpath, d))}: is a symlink; memory must be '
                    f'regular files',
                )
        for name in sorted(filenames):
            if not name.startswith('.'):
                path = os.path.join(dirpath, name)
                yield path, _under(root, path)


def _under(root: str, path: str) -> str:
    """`path` under `root`, with `/` (what Path.relative_to().as_posix() gave)."""
    return os.path.relpath(path, root).replace(os.sep, '/')


def _read_checked(path: str, shown: str, limit: int) -> bytes:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise AgitmemError(
            f'{shown}: is a symlink; memory files must be regular files',
        )
    if not stat.S_ISREG(st.st_mode):
        raise AgitmemError(f'{shown}: not a regular file')
    if st.st_size > limit:
        raise AgitmemError(
            f'{shown}: {st.st_size / 1024:.0f} KB is over max_file_kb '
            f'({limit // 1024} KB); trim it (or `agitmem archive`) or raise '
            f'max_file_kb in .agent/config.yaml',
        )
    return _read_regular(path, shown, limit)


def _read_regular(path: str, shown: str, limit: int) -> bytes:
    """What lstat found a regular file, read as one: swapped meanwhile for
    a link, a FIFO or a device, refused (never followed, never waited on);
    grown past the limit meanwhile, the limit read and refused."""
    from agitmem import repo
    try:
        return repo.read_regular(path, limit, follow=False)
    except repo.NotRegularFile:
        raise AgitmemError(f'{shown}: not a regular file') from None
    except repo.TooLarge:
        raise AgitmemError(f'{shown}: over max_file_kb ({limit // 1024} KB)') from None


def check_layers(files: Files) -> None:
    """The structured layers must parse: state.json, fragments.jsonl
    (their parsers, json with them, imported only for a layer to check:
    the post-commit hook mostly finds both as saved)."""
    if memory.STATE in files:
        from agitmem.memory import state as state_mod
        state_mod.parse(
            files[memory.STATE].decode(), f'.agent/memory/{memory.STATE}',
        )
    if memory.FRAGMENTS in files:
        from agitmem.memory import fragments as fragments_mod
        fragments_mod.parse(
            files[memory.FRAGMENTS].decode(),
            f'.agent/memory/{memory.FRAGMENTS}',
        )
