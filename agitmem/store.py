"""The memory ref: the only module that writes git objects.

Plumbing under the commands: read the memory from the working tree, build
trees, commit under a lock with compare-and-swap on the ref, walk history,
check memory out into .agent/memory/."""
from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable
from collections.abc import Generator

from agitmem import errors
from agitmem import memory
from agitmem import platforms
from agitmem import repo as repo_mod
from agitmem import trees
from agitmem.errors import AgitmemError
from agitmem.memory import files as memory_files
from agitmem.repo import Repo

# typing is not imported at run time: every write imports this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    import datetime
    import subprocess

    from agitmem import ahead
    from typing import Any
    from typing import NamedTuple
    from typing import TypeVar

    # pygit2 (60-70 ms of CPU to import) is imported where it is used: a
    # plain save is written by git's plumbing (`plain_commit`) without it
    import pygit2

    _T = TypeVar('_T')
else:
    from agitmem.tuples import NamedTuple

Files = memory_files.Files
ZERO = '0' * 40
_FALLBACK_NAME = 'agitmem'
_FALLBACK_EMAIL = 'agitmem@localhost'
# patterns, compiled (and cached by re) when first used
_TRAILER = r'(?m)^([A-Za-z-]+): (.*)$'
_REV = r'^@(?:~(\d+))?$'
_HEX = r'^[0-9a-fA-F]{4,40}$'
_IDENT = r'^(.*) <(.*)> (\d+) ([+-])(\d{4})$'



class Race(Exception):
    """The ref moved between reading its tip and updating it."""


def open_repo(repo: Repo) -> pygit2.Repository:
    # a working tree whose git dir is elsewhere with no `.git` naming it
    # (GIT_DIR=~/.dotfiles GIT_WORK_TREE=~): opened by the git dir git found
    at = repo.root if os.path.lexists(repo.root / '.git') else repo.git_dir
    import pygit2
    try:
        return pygit2.Repository(str(at))
    except pygit2.GitError as e:
        # libgit2 built without SHA-256 (pygit2's wheels): git made it
        # with --object-format=sha256, a format libgit2 cannot read
        if 'object format' not in str(e):
            raise
        raise AgitmemError(
            f'{at} is a SHA-256 repository (git init --object-format=sha256): '
            f'the libgit2 agitmem reads memory with ({pygit2.LIBGIT2_VERSION}) reads SHA-1 '
            f'repositories only',
        )


# -- the working tree's memory ---------------------------------------------

def same_as(
        pr: pygit2.Repository, commit: pygit2.Commit | None,
) -> Callable[[str, bytes], pygit2.Oid | None]:
    """The blob id of a file that is byte for byte what `commit` holds
    (None for any other): it was checked (layers parsed, credentials
    scanned) when that commit was written, and its blob need not be
    written again.  Each file is hashed once, however often it is asked."""
    if commit is None:
        return lambda name, data: None
    import pygit2
    tree = commit.tree
    seen: dict[str, tuple[bytes, pygit2.Oid | None]] = {}

    def same(name: str, data: bytes) -> pygit2.Oid | None:
        hit = seen.get(name)
        if hit is not None and hit[0] is data:
            return hit[1]
        try:
            entry = tree[name]
        except (KeyError, ValueError):
            oid = None
        else:
            oid = entry.id if entry.type_str == 'blob' and entry.id == pygit2.hash(data) else None
        seen[name] = (data, oid)
        return oid
    return same


def read_memory(
        repo: Repo,
        *,
        max_file_kb: int,
        checked: Callable[[str, bytes], bool] | None = None,
) -> Files:
    """The working tree's memory, checked, as a save commits it: read in
    memory/files.py, which needs no pygit2 (the post-commit hook reads it
    to tell whether there is anything to save)."""
    return memory_files.read_memory(repo, max_file_kb=max_file_kb, checked=checked)


# -- trees -------------------------------------------------------------------

def build_tree(
        pr: pygit2.Repository,
        files: Files,
        known: Callable[[str, bytes], pygit2.Oid | None] | None = None,
) -> pygit2.Oid:
    """A tree from files; unchanged blobs and subtrees are not written again,
    so a one-file change writes one blob and the root tree.  `known` gives
    the blob id of a file the ref already holds (`same_as`)."""
    nested: dict[str, Any] = {}
    for path, data in files.items():
        node = nested
        *dirs, name = path.split('/')
        for d in dirs:
            node = node.setdefault(d, {})
        oid = known(path, data) if known is not None else None
        node[name] = oid if oid is not None else data
    return _write_tree(pr, nested)


def _write_tree(pr: pygit2.Repository, node: dict[str, Any]) -> pygit2.Oid:
    import pygit2
    tb = pr.TreeBuilder()
    for name, value in node.items():
        if isinstance(value, dict):
            tb.insert(name, _write_tree(pr, value), pygit2.GIT_FILEMODE_TREE)
        elif isinstance(value, pygit2.Oid):
            tb.insert(name, value, pygit2.GIT_FILEMODE_BLOB)
        else:
            tb.insert(name, pr.create_blob(value), pygit2.GIT_FILEMODE_BLOB)
    return tb.write()


# git's file modes (pygit2's GIT_FILEMODE_*)
MODE_BLOB = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_TREE = 0o040000
MODE_LINK = 0o120000
MODE_COMMIT = 0o160000
_ENTRY_MODES = (MODE_BLOB, MODE_EXECUTABLE, MODE_TREE)


# What a memory tree from a remote may hold, checked before anything is
# read or written (a clone or a fetch can send anything git can store: a
# 2 GB blob that packs into a few MB, a tree nested 5,000 deep, 100,000
# entries).  agitmem writes files of at most max_file_kb (256 KB) each, at
# most four levels deep (archive/YYYY/MM/file), one archive a day at most:
# these bounds are far past anything it wrote, and keep a read in memory
# and time.
MAX_DEPTH = 16
MAX_ENTRIES = 20_000
MAX_BLOB = 16 * 1024 * 1024


def shown_path(path: str) -> str:
    """A path from a tree, as one line of ASCII (its controls, newlines and
    non-UTF-8 bytes escaped)."""
    return path.encode('unicode_escape', 'backslashreplace').decode('ascii')


def safe_entry(prefix: str, name: str, mode: int) -> str:
    """A tree entry's path inside .agent/memory/, or AgitmemError naming
    it.  A memory commit may come from a remote (a clone, a fetch): an
    entry that could reach outside .agent/memory/ (`..`, an absolute or
    slashed name, `.git`), that is not a file or a directory (a symlink,
    a submodule), or whose name holds a control character (a newline, an
    escape sequence: agitmem never writes one, and it would reach a
    terminal through `ls`) is refused before anything is written."""
    path = f'{prefix}{name}'
    shown = shown_path(path)
    if (
            name in ('', '.', '..') or '/' in name or '\\' in name or
            '\0' in name or name.rstrip('. ').lower() == '.git' or
            (len(name) > 1 and name[1] == ':')
    ):
        raise AgitmemError(
            f'memory commit refused: entry "{shown}" could reach outside '
            f'.agent/memory',
        )
    if mode not in _ENTRY_MODES:
        kind = {
            MODE_LINK: 'a symlink',
            MODE_COMMIT: 'a submodule',
        }.get(mode, f'mode {mode:o}')
        raise AgitmemError(
            f'memory commit refused: entry "{shown}" is {kind}; memory holds '
            f'regular files only',
        )
    if any(c < ' ' or '\x7f' <= c <= '\x9f' for c in name):
        raise AgitmemError(
            f'memory commit refused: entry "{shown}" has a control character '
            f'in its name',
        )
    if any('\udc80' <= c <= '\udcff' for c in name):
        # pygit2 reads a name's bytes with surrogateescape: not UTF-8,
        # which no file system agitmem writes to must take
        raise AgitmemError(
            f'memory commit refused: entry "{shown}" has a name that is not UTF-8',
        )
    if not prefix and (name == memory.ARCHIVE) != (mode == MODE_TREE) and (
            name == memory.ARCHIVE or name in (*memory.LAYERS, memory.CONFIG)
    ):
        # a layer where a directory is (or archive/ where a file is) would
        # meet the working tree's file (directory) half way through a checkout
        want = 'a directory' if name == memory.ARCHIVE else 'a file'
        raise AgitmemError(
            f'memory commit refused: entry "{shown}" is not {want}',
        )
    return path


def _walk(
        pr: pygit2.Repository, tree: pygit2.Tree, prefix: str,
) -> Generator[tuple[str, pygit2.Object]]:
    """(path, object) of every entry under tree, each through safe_entry,
    trees before what they hold; iterative (a 5,000-deep tree is no
    RecursionError) and bounded in depth and entries."""
    import pygit2
    stack: list[tuple[str, pygit2.Tree, int]] = [(prefix, tree, prefix.count('/'))]
    count = 0
    while stack:
        at, node, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise AgitmemError(
                f'memory commit refused: "{shown_path(at.rstrip("/"))}" is over '
                f'{MAX_DEPTH} directories deep',
            )
        for entry in node:
            count += 1
            if count > MAX_ENTRIES:
                raise AgitmemError(
                    f'memory commit refused: its tree holds over {MAX_ENTRIES} '
                    f'entries',
                )
            path = safe_entry(at, entry.name or '', entry.filemode)
            if entry.filemode == MODE_TREE:
                sub = pr[entry.id]
                if isinstance(sub, pygit2.Tree):
                    stack.append((f'{path}/', sub, depth + 1))
                continue
            yield path, entry


def _within_bound(pr: pygit2.Repository, oid: pygit2.Oid, path: str, max_file_kb: int | None = None) -> None:
    _, size = pr.odb.read_header(oid)
    if size > MAX_BLOB:
        raise AgitmemError(
            f'memory commit refused: "{shown_path(path)}" is {size // (1024 * 1024)} MB '
            f'(memory files are at most {MAX_BLOB // (1024 * 1024)} MB)',
        )
    if max_file_kb is not None and size > max_file_kb * 1024:
        # what a save would refuse is not written into .agent/memory either
        raise AgitmemError(
            f'memory commit refused: "{shown_path(path)}" is {size / 1024:.0f} KB, over '
            f'max_file_kb ({max_file_kb} KB); raise max_file_kb in .agent/config.yaml '
            f'to take it',
        )


def blob_data(pr: pygit2.Repository, oid: pygit2.Oid, path: str, max_file_kb: int | None = None) -> bytes:
    """A blob of a memory commit, its size read (from the object's header)
    before it is inflated: one over MAX_BLOB (or max_file_kb) is refused."""
    _within_bound(pr, oid, path, max_file_kb)
    import pygit2
    blob = pr[oid]
    return blob.data if isinstance(blob, pygit2.Blob) else b''


def check_tree(
        pr: pygit2.Repository, tree: pygit2.Tree, prefix: str = '', *, max_file_kb: int | None = None,
) -> None:
    """Every entry of a memory tree through safe_entry and the bounds,
    each blob's size from its header (none is read): a commit from a
    remote is checked before anything moves to it (a fast-forward) or is
    saved for it (the pre-save of a rollback).  max_file_kb: a tree about
    to be written into .agent/memory holds no file a save would refuse."""
    whole(pr, tree, lambda: _check_tree(pr, tree, prefix, max_file_kb))


def _check_tree(pr: pygit2.Repository, tree: pygit2.Tree, prefix: str, max_file_kb: int | None) -> None:
    for path, entry in _walk(pr, tree, prefix):
        _within_bound(pr, entry.id, path, max_file_kb)


def tree_files(
        pr: pygit2.Repository, tree: pygit2.Tree, prefix: str = '', *, max_file_kb: int | None = None,
) -> Files:
    """Every file of a memory tree, each entry checked by safe_entry, the
    tree and each blob within the bounds above (and max_file_kb, given)."""
    return whole(pr, tree, lambda: _tree_files(pr, tree, prefix, max_file_kb))


def _tree_files(pr: pygit2.Repository, tree: pygit2.Tree, prefix: str, max_file_kb: int | None) -> Files:
    return {
        path: blob_data(pr, entry.id, path, max_file_kb)
        for path, entry in sorted(_walk(pr, tree, prefix), key=lambda e: e[0])
    }


# -- partial clones: objects a promisor remote still holds ------------------------

def whole(pr: pygit2.Repository, top: pygit2.Object | pygit2.Commit, read: Callable[[], _T]) -> _T:
    """read(), which reads the objects under `top`; when one is missing (a
    partial clone: `git clone --filter=...` left it on the remote), those
    under `top` are fetched first, then read() again."""
    try:
        return read()
    except KeyError as e:
        fill(pr, [str(top.id)], absent=_missing_id(e))
    try:
        return read()
    except KeyError as e:
        raise AgitmemError(
            f'memory object {_missing_id(e) or "?"} is still missing '
            f'after a fetch (`git fsck` says more)',
        )


def _missing_id(e: KeyError) -> str | None:
    # pygit2 says an Oid, or libgit2's "object not found - no match for id (...)"
    m = re.search(r'[0-9a-f]{40,64}', str(e.args[0])) if e.args else None
    return m[0] if m else None


def promisor(pr: pygit2.Repository) -> str | None:
    """The remote this partial clone fetches missing objects from; None
    when it is not one."""
    import pygit2
    cfg = pr.config
    try:
        name = cfg['extensions.partialclone']
    except (KeyError, ValueError):
        name = None
    if name:
        return str(name)
    for remote in pr.remotes.names():
        try:
            if cfg.get_bool(f'remote.{remote}.promisor'):
                return str(remote)
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return None


def missing(pr: pygit2.Repository, revs: list[str]) -> list[str]:
    """The objects under revs this repository lacks (`--missing=print`
    reads only what is here: git fetches nothing lazily for it)."""
    listed = repo_mod.git(
        'rev-list', '--objects', '--missing=print', *revs, '--',
        cwd=pr.path, check=False,
    ).stdout
    return [line[1:].strip() for line in listed.splitlines() if line.startswith('?')]


def fill(pr: pygit2.Repository, revs: list[str], *, absent: str | None = None) -> None:
    """Fetch what a partial clone lacks under revs (and `absent`, an
    object already known to be missing) from its promisor remote, as git's
    lazy fetch does, but with no filter (memory is small: whole subtrees,
    in one round) and a wall-clock bound.  AgitmemError, one line, when it
    cannot."""
    remote = promisor(pr)
    if remote is None:
        raise AgitmemError(
            f'memory object {absent or revs[0]} is missing from the repository '
            f'(not a partial clone: `git fsck` says more)',
        )
    wanted = sorted({*([absent] if absent else []), *missing(pr, revs)})
    if not wanted:
        return
    bound = repo_mod.network_timeout()
    try:
        proc = repo_mod.git(
            '-c', 'fetch.negotiationAlgorithm=noop', 'fetch', '--quiet',
            '--no-filter', '--no-tags', '--no-write-fetch-head',
            '--recurse-submodules=no', '--stdin', remote,
            stdin=''.join(f'{oid}\n' for oid in wanted), cwd=pr.path,
            check=False, timeout=bound,
        )
        why = repo_mod.error_line(proc.stderr, f'exit {proc.returncode}') if proc.returncode else None
    except repo_mod.Stalled:
        why = f'no answer in {bound:g}s'
    if why is not None:
        raise AgitmemError(
            f'{len(wanted)} memory object(s) are not in this partial clone and '
            f'{remote} did not send them ({why}): run it again once {remote} answers',
        )


def fill_memory(repo: Repo) -> None:
    """After a fetch of memory refs into a partial clone: the objects
    under every memory ref fetched too, so no later read of memory needs
    the network."""
    pr = open_repo(repo)
    if promisor(pr) is not None:
        fill(pr, [f'--glob={repo_mod.MEMORY_ROOT}*'])


# -- refs, commits ------------------------------------------------------------

def tip(pr: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    import pygit2
    try:
        reference = pr.references.get(ref)
    except (pygit2.GitError, UnicodeError):
        # pygit2 decodes libgit2's "not found" message strictly: a missing
        # ref whose name is not UTF-8 (branch `caf\xe9`) raises here
        return None
    if reference is None:
        return None
    obj = pr.get(reference.resolve().target)
    if obj is not None and not isinstance(obj, pygit2.Commit):
        raise AgitmemError(
            f'{ref} points at a {obj.type_str}, not a commit; point it at a '
            f'memory commit (`git reflog {ref}`) or delete it',
        )
    return obj if isinstance(obj, pygit2.Commit) else None


def signatures(repo: Repo) -> tuple[pygit2.Signature, pygit2.Signature]:
    """(author, committer): git's own identities (`git var`: env, config,
    its defaults), asked at once; a fixed one when git has none, so a save
    never fails for want of user.name."""
    import pygit2
    given = repo_mod.env_identities()
    if given is not None:
        try:
            return pygit2.Signature(*given[0]), pygit2.Signature(*given[1])
        except (ValueError, pygit2.GitError):
            pass  # a name git would clean up first: let git say
    author, committer = repo_mod.git_each(*repo_mod.IDENTITY, cwd=repo.top)
    return _signature(author), _signature(committer)


def _signature(proc: repo_mod.Done) -> pygit2.Signature:
    import pygit2
    m = re.match(_IDENT, proc.stdout.strip()) if proc.returncode == 0 else None
    if m is None or not m[1].strip():
        return pygit2.Signature(_FALLBACK_NAME, _FALLBACK_EMAIL)
    sign = -1 if m[4] == '-' else 1
    offset = sign * (int(m[5][:2]) * 60 + int(m[5][2:]))
    return pygit2.Signature(m[1].strip(), m[2], int(m[3]), offset)


def message(
        subject: str,
        *,
        event: str,
        branch: str | None,
        head: str | None,
        body: str = '',
) -> str:
    # names git allows need not be UTF-8: such bytes read \\xNN in a message
    subject = repo_mod.shown(' '.join(subject.split())[:200])
    body = repo_mod.shown(body)
    trailers = (
        f'Agitmem-Event: {event}\n'
        f'Code-Branch: {repo_mod.shown(branch) if branch else "(detached)"}\n'
        f'Code-Head: {head or "(unborn)"}\n'
    )
    body = f'{body.strip()}\n\n' if body.strip() else ''
    return f'{subject}\n\n{body}{trailers}'


def trailers(commit: pygit2.Commit) -> dict[str, str]:
    ret = {}
    for m in re.finditer(_TRAILER, commit.message):
        if m[1] in ('Agitmem-Event', 'Code-Branch', 'Code-Head'):
            ret[m[1]] = m[2].strip()
    return ret


ATTIC_NS = 'refs/agitmem/attic/'


def move_aside(repo: Repo, ref: str, why: str) -> str:
    """Move a memory ref out of the way, into refs/agitmem/attic/ (it stays
    in history there, and in its reflog).  Returns the new name."""
    proc = repo_mod.git('rev-parse', '-q', '--verify', ref, cwd=repo.top, check=False)
    sha = proc.stdout.strip()
    if proc.returncode != 0 or not sha:
        return ''
    import time  # (datetime: only log and show need it)
    stamp = time.strftime('%Y%m%dT%H%M%S')
    name = ref.removeprefix('refs/agitmem/')
    attic = f'{ATTIC_NS}{name}@{stamp}-{sha[:7]}'
    for cmd in (
            ('update-ref', '--create-reflog', '-m', f'agitmem: {why}', attic, sha, ZERO),
            ('update-ref', '-m', f'agitmem: {why}', '-d', ref, sha),
    ):
        done = repo_mod.git(*cmd, cwd=repo.top, check=False)
        if done.returncode != 0:
            raise AgitmemError(
                f'could not move {ref} aside: {repo_mod.error_line(done.stderr, "git update-ref failed")}',
            )
    return attic


def _make_room(repo: Repo, ref: str) -> list[str]:
    """A memory ref left by a deleted branch must not block a new one:
    refs/agitmem/heads/fix blocks refs/agitmem/heads/fix/login (and the
    other way round), as git keeps refs in files and directories.  Code
    branches have the same rule, so the blocking memory belongs to a
    branch that no longer exists: move it to the attic."""
    parts = ref.split('/')
    blocking = []
    for i in range(3, len(parts)):
        parent = '/'.join(parts[:i])
        got = repo_mod.git('rev-parse', '-q', '--verify', f'{parent}^{{commit}}', cwd=repo.top, check=False)
        if got.returncode == 0 and got.stdout.strip():
            blocking.append(parent)
    under = repo_mod.git(
        'for-each-ref', '--format=%(refname)', f'{ref}/', cwd=repo.top, check=False,
    ).stdout.split()
    blocking.extend(under)
    return [move_aside(repo, r, f'moved aside for {ref}') for r in blocking]


def _moved_in_process(
        repo: Repo, pr: pygit2.Repository, ref: str, new: str, old: str, reason: str,
        who: pygit2.Signature,
) -> bool:
    """The compare-and-swap of an existing ref with a reflog, done by
    libgit2 (git_reference_set_target fails when the ref changed since it
    was read): a git process less for every memory commit.  Its reflog
    entry is git's: `who` (the commit's committer) now.  False when it is
    not that case (no reflog yet, a committer date given, which git would
    write), or anything goes wrong: git then does it, and says what went
    wrong."""
    logs = repo.git_dir if ref.startswith('refs/worktree/') else repo.common_dir
    if 'GIT_COMMITTER_DATE' in os.environ or not (logs / 'logs' / ref).is_file():
        return False
    import pygit2
    try:
        reference = pr.references.get(ref)
        if reference is None or str(reference.target) != old:
            return False
        pr.set_ident(who.name, who.email)
        reference.set_target(pygit2.Oid(hex=new), reason)
    except (pygit2.GitError, OSError, ValueError, TypeError, KeyError):
        return False  # libgit2 maps a lock it cannot take to OSError
    return True


def update_ref(
        repo: Repo, ref: str, new: str, old: str | None, reason: str,
        *, pr: pygit2.Repository | None = None, who: pygit2.Signature | None = None,
        env: dict[str, str] | None = None,
) -> None:
    """Compare-and-swap: git moves the ref only if it still points at old."""
    if (
            pr is not None and who is not None and old is not None and
            _moved_in_process(repo, pr, ref, new, old, reason, who)
    ):
        return
    for attempt in range(2):
        proc = repo_mod.git(
            'update-ref', '--create-reflog', '-m', reason, ref, new,
            old or ZERO, cwd=repo.top, env=env, check=False,
        )
        if proc.returncode == 0:
            return
        if old is None and attempt == 0 and not _raced(proc.stderr) and _make_room(repo, ref):
            continue
        raise _not_updated(ref, proc.stderr)


def _raced(said: str) -> bool:
    """Whether git's update-ref refused because the ref moved."""
    return 'but expected' in said or 'already exists' in said


def _not_updated(ref: str, said: str) -> Race | AgitmemError:
    """What update-ref's refusal (`said`, its stderr) means."""
    if _raced(said):
        return Race(ref)
    return AgitmemError(f'could not update {ref}: {repo_mod.error_line(said, "git update-ref failed")}')


_LOCKS: dict[str, Any] = {}  # filelock.FileLock
_HELD: dict[str, list[int]] = {}  # path -> [fd, depth]: taken without filelock


def _lock_dir(path: str) -> None:
    """The lock's directory made, as Path(path).parent.mkdir(exist_ok=True)
    would (places are strings here: a save imports no pathlib)."""
    parent = os.path.dirname(path)
    try:
        os.mkdir(parent)
    except FileExistsError:
        if not os.path.isdir(parent):
            raise


def _flock_now(path: str) -> int | None:
    """The lock's fd when nobody holds it, else None.  The same flock on
    the same file as filelock's, so the two exclude each other; filelock
    (about 16 ms to import) is only loaded to wait for it, or where flock
    does not work and it falls back to a soft lock."""
    try:
        _lock_dir(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | platforms.O_CLOEXEC | platforms.O_BINARY, 0o644)
    except OSError:
        return None
    if not platforms.try_lock(fd):  # held by another writer, or no locks here
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def locked(repo: Repo) -> Generator[None]:
    """Serialize writers of memory refs across processes and worktrees.
    Re-entrant within a process, so a command may nest it (rollback saves
    first) without deadlocking on its own flock."""
    path = os.path.join(repo.commondir, 'agitmem', 'lock')
    held = _HELD.get(path)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    fd = _flock_now(path) if path not in _LOCKS else None
    if fd is not None:
        _HELD[path] = [fd, 1]
        try:
            yield
        finally:
            del _HELD[path]
            os.close(fd)  # closing the only fd releases the flock
        return
    if path not in _LOCKS:
        import filelock  # to wait for another writer
        _LOCKS[path] = filelock.FileLock(path, timeout=120)
    lock = _LOCKS[path]
    try:
        _lock_dir(path)
        lock.acquire()
    except OSError as e:  # (a directory where the lock goes, a file where its directory goes; its timeout too)
        detail = errors.detail(e)
        raise AgitmemError(f'could not take the memory lock {path}: {detail}') from None
    try:
        yield
    finally:
        lock.release()


def commit(
        repo: Repo,
        pr: pygit2.Repository,
        ref: str,
        tree: pygit2.Oid,
        *,
        msg: str,
        extra_parents: tuple[pygit2.Oid, ...] = (),
        force: bool = False,
) -> pygit2.Oid | None:
    """Commit tree on top of ref's tip (or, for a new ref, the worktree's
    memory base: memory forks with the branch).  Caller holds the lock.
    Returns None when the tree is unchanged and there is nothing to add."""
    for _ in range(5):
        current = tip(pr, ref)
        parent = current or base(repo, pr)
        if (
                not force and not extra_parents and parent is not None and
                parent.tree_id == tree
        ):
            if current is None:
                update_ref(
                    repo, ref, str(parent.id), None,
                    f'agitmem: fork from {str(parent.id)[:12]}',
                )
            set_base(repo, parent.id, ref)
            return None
        parents = [parent.id] if parent is not None else []
        parents.extend(extra_parents)
        author, committer = signatures(repo)
        oid = pr.create_commit(None, author, committer, msg, tree, parents)
        subject = msg.split('\n', 1)[0]
        try:
            update_ref(
                repo, ref, str(oid),
                str(current.id) if current is not None else None,
                f'agitmem {subject}', pr=pr, who=committer,
            )
        except Race:
            continue
        set_base(repo, oid, ref)
        return oid
    raise AgitmemError(f'{ref} kept moving; try again')


# -- a save by git's plumbing, without pygit2 (issue 23) -----------------------
# pygit2 costs 60-70 ms of CPU to import, as much as `git status` on 20,000
# files: `state set`, `note`, `verify` and `save` on a ref that holds this
# worktree's memory are written with git's plumbing instead (`git
# hash-object` for each changed file, one `git mktree --batch` for the
# changed directories, `git commit-tree`, `git update-ref <ref> <new>
# <old>`), under the same lock and the same compare-and-swap, into the
# same trees and commits as pygit2's path (tests/store_test.py).

class Plain(NamedTuple):
    """A memory ref's tip as git's plumbing reads it: the commit, its
    tree, and every entry under the tree (path -> (mode, id), the
    directories too, as `git ls-tree -r -t` lists them)."""
    commit: str
    tree: str
    entries: dict[str, tuple[str, str]]


def _tip_words(repo: Repo, ref: str) -> list[str] | None:
    """(commit, type, tree, ref name) of ref's tip; None when it is not a commit."""
    got = repo_mod.git(
        'for-each-ref', '--format=%(objectname) %(objecttype) %(tree) %(refname)',
        '--end-of-options', ref, cwd=repo.top, check=False,
    )
    line = next((x for x in got.stdout.splitlines() if x.endswith(f' {ref}')), '')
    words = line.split(' ', 3)
    if got.returncode != 0 or len(words) != 4 or words[1] != 'commit':
        return None
    return words


def _begin_listing(repo: Repo, tree: str) -> ahead.Child | subprocess.Popen[bytes] | None:
    # a tree a partial clone lacks is not fetched here (git >= 2.44 reads
    # the variable): pygit2's path fetches it with its network bound
    return repo_mod.git_start(
        repo, ('ls-tree', '-r', '-t', '-z', '--full-tree', tree), {'GIT_NO_LAZY_FETCH': '1'},
    )


# plain_tip's reads begun ahead (begin_tip): (top, ref) -> (its tip's
# words, the listing of its tree under way)
_BEGUN: dict[tuple[str, str], tuple[list[str], ahead.Child | subprocess.Popen[bytes] | None]] = {}


def begin_tip(repo: Repo, ref: str) -> None:
    """Begin plain_tip's reads of ref for a save that will ask for them
    once `git status` has ended (state set, verify): they run while it
    does, not after.  A tip read this early is only the base of the
    save's compare-and-swap: moved meanwhile, the save goes pygit2's way."""
    if (repo.top, ref) in _BEGUN:
        return
    words = _tip_words(repo, ref)
    if words is not None:
        _BEGUN[(repo.top, ref)] = (words, _begin_listing(repo, words[2]))


def forget_tip(repo: Repo, ref: str) -> None:
    """Drop what begin_tip began for ref and no save took (a write that
    failed, or went pygit2's way): in a long-running process (the MCP
    server) it would stay, its git process unreaped."""
    begun = _BEGUN.pop((repo.top, ref), None)
    if begun is not None and begun[1] is not None:
        repo_mod._stop(begun[1])


def plain_tip(repo: Repo, ref: str) -> Plain | None:
    """ref's tip, read without pygit2; None when it is not the plain case
    (no such ref, not a commit, a tree git cannot list): pygit2's path
    then reads it, and says what is wrong."""
    begun = _BEGUN.pop((repo.top, ref), None)
    if begun is None:
        words = _tip_words(repo, ref)
        if words is None:
            return None
        proc = _begin_listing(repo, words[2])
    else:
        words, proc = begun
    listed = None if proc is None else repo_mod.git_end(proc, b'')
    if listed is None:
        return None
    entries = {}
    for record in listed.split(b'\0'):
        if record:
            meta, _, path = record.partition(b'\t')
            mode, _, oid = meta.split(b' ')
            entries[path.decode('utf-8', 'surrogateescape')] = (mode.decode(), oid.decode())
    return Plain(words[0], words[2], entries)


def plain_same_as(top: Plain) -> Callable[[str, bytes], str | None]:
    """same_as, for a tip read by plain_tip: the blob id of a file that is
    byte for byte what the tip holds, None for any other."""
    seen: dict[str, tuple[bytes, str | None]] = {}

    def same(name: str, data: bytes) -> str | None:
        hit = seen.get(name)
        if hit is not None and hit[0] is data:
            return hit[1]
        mode, oid = top.entries.get(name, ('', ''))
        ok = mode in ('100644', '100755') and oid == repo_mod.blob_id(data, top.commit)
        seen[name] = (data, oid if ok else None)
        return oid if ok else None
    return same


def plain_changed(top: Plain, ids: dict[str, str]) -> list[str]:
    """The paths a commit of files (`ids`: each one's blob id, as
    plain_tree computed it) changes against the tip (added, removed, or
    another content or mode), as pygit2's tree diff names them."""
    old = {p: e for p, e in top.entries.items() if e[0] != '040000'}
    new = {p: ('100644', oid) for p, oid in ids.items()}
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))


# git processes of a save's that run at once (the first save of a big
# memory has a blob to write for each file)
_AT_ONCE = 8


def plain_tree(
        repo: Repo, top: Plain, files: Files, known: Callable[[str, bytes], str | None],
) -> tuple[str, dict[str, str]]:
    """build_tree by git's plumbing: each file git does not hold yet
    written by `git hash-object -w`, the directories that changed
    (deepest first; every file 100644, as build_tree writes it) by one
    `git mktree --batch`; a directory as the tip has it is not written
    again.  Every id is known beforehand, so the processes begin
    together and run at once: none waits on another's start.  (the
    tree's id, each file's blob id)"""
    like = top.commit
    dirs: dict[str, dict[bytes, tuple[bytes, bytes]]] = {'': {}}
    blobs: list[tuple[str, bytes, str]] = []  # (path, data, id) to write
    ids: dict[str, str] = {}
    for path, data in files.items():
        oid = known(path, data)
        if oid is None:
            oid = repo_mod.blob_id(data, like)
            blobs.append((path, data, oid))
        ids[path] = oid
        parent, _, name = path.rpartition('/')
        dirs.setdefault(parent, {})[name.encode('utf-8', 'surrogateescape')] = (b'100644', oid.encode())
        while parent:
            parent = parent.rpartition('/')[0]
            dirs.setdefault(parent, {})
    batch: list[bytes] = []
    written: list[bytes] = []
    tree_ids: dict[str, str] = {}
    for d in sorted(dirs, key=lambda d: d.count('/') + bool(d), reverse=True):
        body = trees.tree_body(dirs[d])
        oid = repo_mod.object_id(b'tree', body, like)
        tree_ids[d] = oid
        if oid != (top.tree if not d else top.entries.get(d, ('', ''))[1]):
            batch.extend(trees.mktree_lines(dirs[d]))
            batch.append(b'')
            written.append(oid.encode())
        if d:
            parent, _, name = d.rpartition('/')
            dirs[parent][name.encode('utf-8', 'surrogateescape')] = (trees.TREE_MODE, oid.encode())
    # --missing: no lookup of the entries (each is the tip's, or is being
    # written beside it), so none is fetched lazily in a partial clone
    writes = [
        *([(('mktree', '-z', '--batch', '--missing'), b'\0'.join(batch), written, 'the memory tree')]
          if written else []),
        *((('hash-object', '-w', '--stdin'), data, [oid.encode()], shown_path(path)) for path, data, oid in blobs),
    ]
    procs: list[repo_mod.Started | None] = []
    try:
        for i, (args, data, want, what) in enumerate(writes):
            while len(procs) < min(len(writes), i + _AT_ONCE):
                procs.append(repo_mod.git_start(repo, writes[len(procs)][0]))
            proc = procs[i]
            got = None if proc is None else repo_mod.git_end(proc, data)
            if got is None or got.split() != want:
                raise OSError(f'git {args[0]} could not write {what}')
    finally:
        for proc in procs:
            if proc is not None and proc.returncode is None:
                repo_mod._stop(proc)  # (another failed first: not left running)
    return tree_ids[''], ids


def identity_env(repo: Repo) -> dict[str, str]:
    """The author and committer of a memory commit as git's environment
    names them: what `signatures` gives pygit2 (git's identities, the
    fixed one when git has none), for `git commit-tree`."""
    if repo_mod.env_identities() is not None:
        return {}  # the environment names both: git reads them there
    env = {}
    procs = repo_mod.git_each(*repo_mod.IDENTITY, cwd=repo.top)
    for kind, proc in zip(('AUTHOR', 'COMMITTER'), procs):
        m = re.match(_IDENT, proc.stdout.strip()) if proc.returncode == 0 else None
        if m is None or not m[1].strip():
            import time
            now = int(time.time())
            minutes = time.localtime(now).tm_gmtoff // 60
            sign = '-' if minutes < 0 else '+'
            env[f'GIT_{kind}_NAME'] = _FALLBACK_NAME
            env[f'GIT_{kind}_EMAIL'] = _FALLBACK_EMAIL
            env[f'GIT_{kind}_DATE'] = f'{now} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}'
        else:
            env[f'GIT_{kind}_NAME'] = m[1].strip()
            env[f'GIT_{kind}_EMAIL'] = m[2]
            env[f'GIT_{kind}_DATE'] = f'{m[3]} {m[4]}{m[5]}'
    return env


def plain_commit(
        repo: Repo, ref: str, top: Plain, tree: str, *, msg: str, force: bool = False,
) -> str | None:
    """commit(), for a ref whose tip (top) is this worktree's memory
    base: the tree committed on top of it by `git commit-tree`, the ref
    moved by `git update-ref` from top (Race when it moved meanwhile: the
    caller takes pygit2's path, which reads it again).  Caller holds the
    lock.  None when the tree is unchanged."""
    if not force and tree == top.tree:
        set_base(repo, top.commit, ref)
        return None
    env = identity_env(repo)
    # the reflog entry names the committer, as pygit2's path writes it
    who = {k: v for k, v in env.items() if k.startswith('GIT_COMMITTER_') and not k.endswith('DATE')}
    reason = f'agitmem {msg.split(chr(10), 1)[0]}'
    committing = repo_mod.git_start(
        # unsigned, no encoding header: the commit pygit2 would write
        repo, ('-c', 'i18n.commitEncoding=UTF-8', 'commit-tree', '--no-gpg-sign', tree, '-p', top.commit),
        env,
    )
    # begun beside it, so that its start is not waited for after: told
    # the commit once it is written (killed unread if it is not)
    moving = repo_mod.git_start(
        repo, ('update-ref', '--create-reflog', '-m', reason, '--stdin', '-z'), who, stderr=True,
    )
    try:
        got = None if committing is None else repo_mod.git_end(committing, msg.encode())
        oid = got.decode().strip() if got else ''
        if not repo_mod.is_oid(oid):
            raise OSError('git commit-tree could not write the memory commit')
        try:
            if moving is None:
                update_ref(repo, ref, oid, top.commit, reason, env=who)
            else:
                line = b'\0'.join((b'update ' + ref.encode('utf-8', 'surrogateescape'), oid.encode(), top.commit.encode(), b''))
                done = repo_mod.git_finish(moving, line)
                if done is None or done[0] != 0:
                    raise _not_updated(ref, repo_mod._text(done[2] if done else b''))
        except AgitmemError:
            # deleted since top was read (begun ahead of the lock: begin_tip),
            # git says it cannot resolve the ref, not that it moved: a Race all
            # the same, pygit2's path reads it again
            now = _tip_words(repo, ref)
            if now is None or now[0] != top.commit:
                raise Race(ref) from None
            raise
    finally:
        if moving is not None and moving.returncode is None:
            repo_mod._stop(moving)
    set_base(repo, oid, ref)
    return oid


# -- the memory base: which memory commit this worktree's files came from ----

def _base_path(repo: Repo) -> str:
    return repo_mod.memory_base_path(repo)


def _read_base(repo: Repo) -> list[str]:
    return list(filter(None, repo_mod.memory_base(repo)))


def base_id(repo: Repo) -> str | None:
    """The id of the memory commit this worktree's memory came from, as
    recorded (not looked up)."""
    return repo_mod.memory_base(repo)[0]


def base(repo: Repo, pr: pygit2.Repository) -> pygit2.Commit | None:
    words = _read_base(repo)
    import pygit2
    try:
        obj = pr.get(words[0]) if words else None
    except (ValueError, pygit2.GitError):
        return None
    return obj if isinstance(obj, pygit2.Commit) else None


def base_ref(repo: Repo) -> str | None:
    """The memory ref this worktree's memory was last written from or
    saved to (None when not recorded: memory written by an older agitmem)."""
    return repo_mod.memory_base(repo)[1]


def set_base(repo: Repo, oid: pygit2.Oid | str, ref: str) -> None:
    # a ref name may hold any bytes git allows (a branch `caf\xe9`).  Not
    # fsynced (a millisecond and more of every save): after a crash the
    # record may be the one before, or empty; a save then finds the ref
    # past it, or no base, and takes pygit2's way, which catches up
    # (write._catch_up), and a base that names no commit is none (base())
    try:
        repo_mod.atomic_write(
            _base_path(repo), f'{oid} {ref}\n'.encode('utf-8', 'surrogateescape'), durable=False,
        )
    except OSError as e:
        # the commit is on the ref already: say so, not that it was not
        # written (a directory where the record goes, a full disk)
        detail = errors.detail(e)
        raise AgitmemError(
            f'memory commit {str(oid)[:12]} is on {ref}, but this worktree\'s record of it '
            f'could not be written: {detail}',
        ) from None


# -- revisions and history ----------------------------------------------------

def resolve(pr: pygit2.Repository, ref: str, rev: str) -> pygit2.Commit:
    """@ (the tip), @~N, or a full or short memory commit id."""
    import pygit2
    top = tip(pr, ref)
    m = re.match(_REV, rev or '@')
    if m:
        if top is None:
            raise AgitmemError(f'no memory yet on {ref}: run `agitmem save`')
        commit_ = top
        for _ in range(int(m[1] or 0)):
            if not commit_.parents:
                raise AgitmemError(
                    f'{rev}: memory history is only '
                    f'{len(history(pr, ref))} commit(s) deep',
                )
            commit_ = commit_.parents[0]
        return commit_
    if re.match(_HEX, rev):
        try:
            obj = pr.revparse_single(rev)
        except (KeyError, ValueError, pygit2.GitError):
            obj = None
        if isinstance(obj, pygit2.Commit) and 'Agitmem-Event:' in obj.message:
            return obj
    raise AgitmemError(
        f'unknown memory revision "{rev}" (use @, @~N, or an id from '
        f'`agitmem log`)',
    )


def history(
        pr: pygit2.Repository,
        ref: str,
        n: int | None = None,
) -> list[pygit2.Commit]:
    import pygit2
    top = tip(pr, ref)
    if top is None:
        return []
    # a sorted walk reads the whole history first: with a limit, walk in
    # git's own order (newest first) and stop early
    order = (
        pygit2.enums.SortMode.NONE if n is not None else
        pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME
    )

    def walk() -> list[pygit2.Commit]:
        ret: list[pygit2.Commit] = []
        for c in pr.walk(top.id, order):
            if n is not None and len(ret) >= n:
                break
            ret.append(c)
        return ret
    # a parent this repository lacks (a partial clone's, or a fetched
    # commit's that never came): fetched, or one line saying so
    return whole(pr, top, walk)


def commit_time(c: pygit2.Commit) -> datetime.datetime:
    import datetime  # log's and show's: not every write pays for it
    tz = datetime.timezone(datetime.timedelta(minutes=c.commit_time_offset))
    return datetime.datetime.fromtimestamp(c.commit_time, tz)


# -- checkout ----------------------------------------------------------------

def checkout(repo: Repo, files: Files, *, only: set[str] | None = None) -> list[str]:
    """Write files into .agent/memory/ (each atomically) and remove memory
    files that are not in files.  config.yaml is the user's setting and is
    only restored when named in only.  Returns the paths changed."""
    changed = []
    root = repo.memory_dir
    current = {rel for _, rel in memory_files.walk(str(root))} if root.is_dir() else set()
    _check_fits(root, files, only)
    for path, data in sorted(files.items()):
        if only is not None and path not in only:
            continue
        if path == memory.CONFIG:
            if only is None:
                continue
            target = repo.config_path
        else:
            target = _safe(root, path)
        if _holds(target, data):
            continue
        if path == memory.CONFIG:
            repo_mod.atomic_write(target, data)
        else:
            _write_under(root, path, data)
        changed.append(path)
    for path in sorted(current - set(files)):
        if only is not None and path not in only:
            continue
        with _dir_of(root, path, create=False) as (fd, name):
            os.unlink(name, dir_fd=fd)
        changed.append(path)
    _prune_empty_dirs(root)
    return changed


def _check_fits(root: Path, files: Files, only: set[str] | None) -> None:
    """Refuse, before anything is written, a file whose place in
    .agent/memory/ is a directory, or under a file (a memory commit from a
    remote may swap one for the other): the checkout would stop half way."""
    for path in files:
        if (only is not None and path not in only) or path == memory.CONFIG:
            continue
        parts = path.split('/')
        for i in range(1, len(parts) + 1):
            at = root.joinpath(*parts[:i])
            leaf = i == len(parts)
            if at.is_dir() if leaf else (at.exists() and not at.is_dir()):
                raise AgitmemError(
                    f'cannot write "{shown_path(path)}" into .agent/memory: '
                    f'.agent/memory/{shown_path("/".join(parts[:i]))} is '
                    f'{"a directory" if leaf else "a file"} there; move it away first',
                )


def _safe(root: Path, path: str) -> Path:
    """Where `path` is written: its directory resolved and inside root, no
    directory on the way a link (one to .agent/memory itself wrote
    .d/state.json over state.json); its own name not (a symlink there is
    replaced, never written through: one to state.json got the notes, one
    outside refused the rollback)."""
    at = root / path
    parent = at.parent.resolve()
    if not parent.is_relative_to(root.resolve()):
        raise AgitmemError(f'{path}: outside .agent/memory')
    dirs = path.split('/')[:-1]
    for i in range(len(dirs)):
        if platforms.linked(root.joinpath(*dirs[:i + 1])):
            raise _link_in_the_way(path, dirs[:i + 1])
    return parent / at.name


def _link_in_the_way(path: str, dirs: list[str]) -> AgitmemError:
    return AgitmemError(
        f'cannot write "{shown_path(path)}" into .agent/memory: '
        f'.agent/memory/{shown_path("/".join(dirs))} is a link; '
        f'memory is written into real directories only',
    )


@contextlib.contextmanager
def _dir_of(root: Path, path: str, *, create: bool) -> Generator[tuple[int | None, str]]:
    """(a descriptor of `path`'s directory, its name there), each directory
    from root down opened without following a link (made when `create`),
    so that one swapped in while a checkout runs cannot take a write or
    a removal out of .agent/memory (one outside got the memory file, one
    to .agent/memory wrote archive/2026/state.json over state.json): a
    link there is refused.  Where directories cannot be opened
    (platforms.dir_fds), (None, the whole path _safe checked)."""
    if not platforms.dir_fds():
        yield None, os.fspath(_safe(root, path))
        return
    *dirs, name = path.split('/')
    try:
        fd = platforms.open_dirs(root, dirs, create=create)
    except platforms.LinkInTheWay as e:
        raise _link_in_the_way(path, dirs[:e.depth]) from None
    try:
        yield fd, name
    finally:
        os.close(fd)


def _write_under(root: Path, path: str, data: bytes) -> None:
    """repo.atomic_write of `path` under root through _dir_of: a temp file
    beside it, then renamed over it (a link in its own place is
    replaced, never written through)."""
    with _dir_of(root, path, create=True) as (fd, name):
        repo_mod.atomic_write(name, data, dir_fd=fd)


def _holds(target: Path, data: bytes) -> bool:
    """`target` is a regular file (not a link) with exactly `data`: read
    only when its size is data's (a link to a huge file or to /dev/zero
    is not read at all)."""
    try:
        st = target.lstat()
        return stat.S_ISREG(st.st_mode) and st.st_size == len(data) and (
            repo_mod.read_regular(target, len(data), follow=False) == data
        )
    except OSError:
        return False  # (TooLarge: grown since the lstat)


def _prune_empty_dirs(root: Path) -> None:
    for dirpath, _, _ in sorted(os.walk(root), reverse=True):
        if dirpath != str(root) and not os.listdir(dirpath):
            os.rmdir(dirpath)


def memory_path(path: str) -> str:
    """A path inside a memory commit, normalized; anything that could reach
    outside .agent/memory is refused."""
    p = path.strip().replace('\\', '/')
    for prefix in ('.agent/memory/', './'):
        p = p.removeprefix(prefix)
    parts = [x for x in p.split('/') if x not in ('', '.')]
    if not parts or p.startswith('/') or '..' in parts or '\0' in p:
        raise AgitmemError(
            f'"{path}": not a path inside .agent/memory (e.g. state.json)',
        )
    return '/'.join(parts)


def find_archive(pr: pygit2.Repository, commit_: pygit2.Commit, key: str) -> str:
    """archive:<date-or-slug>: the one archived snapshot whose path matches
    (2026-11-30, 2026/11/30, or part of the goal slug)."""
    names = sorted(
        p for p in tree_files(pr, commit_.tree) if p.startswith('archive/')
    )
    k = key.strip().replace('-', '/', 2) if re.match(r'^\d{4}-\d\d', key) else key
    hits = [p for p in names if k and k in p]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise AgitmemError(
            f'no archived snapshot matches "{key}" ({len(names)} archived; '
            f'see `agitmem show @`)',
        )
    raise AgitmemError(
        f'"{key}" matches {len(hits)} archived snapshots: '
        f'{", ".join(hits[:5])}; be more specific',
    )


# -- merge: two memory histories meeting (issue 5) -----------------------------
# agitmem.merge computes the merged files; these write the result.

def merge_base(
        pr: pygit2.Repository, a: pygit2.Oid, b: pygit2.Oid,
) -> pygit2.Commit | None:
    import pygit2
    top = pr[a]
    oid = whole(pr, top, lambda: pr.merge_base(a, b))
    if oid is None:
        return None
    obj = pr.get(oid)
    return obj if isinstance(obj, pygit2.Commit) else None


def contains(pr: pygit2.Repository, tip_: pygit2.Oid, other: pygit2.Oid) -> bool:
    """Is other in tip_'s history (or tip_ itself)?"""
    return tip_ == other or whole(pr, pr[tip_], lambda: bool(pr.descendant_of(tip_, other)))


def commit_merge(
        repo: Repo,
        pr: pygit2.Repository,
        ref: str,
        tree: pygit2.Oid,
        *,
        msg: str,
        parents: list[pygit2.Oid],
        old: pygit2.Oid | None,
) -> pygit2.Oid:
    """Commit tree with exactly these parents and move ref to it from old
    (compare-and-swap, one attempt: a merge computed against an old tip
    must be computed again, so Race is the caller's to handle).  Caller
    holds the lock."""
    author, committer = signatures(repo)
    oid = pr.create_commit(None, author, committer, msg, tree, parents)
    update_ref(
        repo, ref, str(oid), str(old) if old is not None else None,
        f'agitmem {msg.split(chr(10), 1)[0]}',
    )
    return oid
