"""The working tree's tree: what `git add -A` would commit, .agent/ and
agitmem's install files left out, the user's index never touched.  From
`git status` where that is exact (fast_tree), else from a copy of the
index (chain_tree); the last one computed is remembered by what it was
computed from.  What asks for it (load's freshness, state set, verify, the
checks) imports this module; the agent hooks on every edit, prompt and
turn never load it (repo.py, which finds the repository, stays small)."""
from __future__ import annotations

import os

from agitmem import ahead
from agitmem import platforms
from agitmem.ahead import kill as _kill
from agitmem.errors import AgitmemError
from agitmem.repo import _COPY
from agitmem.repo import _FOUND
from agitmem.repo import git_end
from agitmem.repo import git_start
from agitmem.repo import _OWNED
from agitmem.repo import _own
from agitmem.repo import _release
from agitmem.repo import _run_status
from agitmem.repo import _STATUS_AHEAD
from agitmem.repo import _stop
from agitmem.repo import _timed_out
from agitmem.repo import atomic_write
from agitmem.repo import clean_env
from agitmem.repo import error_line
from agitmem.repo import git_bytes
from agitmem.repo import is_code
from agitmem.repo import is_oid
from agitmem.repo import local_timeout
from agitmem.repo import NOT_CODE
from agitmem.repo import NOT_CODE_PATHSPECS
from agitmem.repo import Repo
from agitmem.repo import sha1

# typing is not imported at run time (mypy takes any name TYPE_CHECKING
# as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    import subprocess
    from pathlib import Path
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple


def _quoted(words: tuple[str, ...]) -> str:
    # for the shell, without importing shlex: none of them holds a quote
    return ' '.join(f"'{w}'" for w in words)


# The working tree's tree: `git add -A` into a copy of the index (the
# user's is never touched), agitmem's own files taken out, `git write-tree`.
# The way when `git status` cannot say (fast_tree).  $1: the copy to
# use.  $2: 1 when the index may hold agitmem's install files (taken out
# of the tree too).  Stopped by a signal, the chain removes its copy (git
# removes its own lock) and exits as a shell does.  `rm -f`: without it
# git refuses a file staged with content unlike both HEAD's and the
# file's (any staged-then-edited install file, any at all on an unborn
# HEAD) and, refusing, takes none of them out; `--sparse`: nor one marked
# skip-worktree (sparse checkout, or by hand), which `git status` and
# `git add -A` pass over alike.
_TREE_SH = f"""
tmp=$1
trap 'rm -f -- "$tmp" "$tmp.lock"; exit 129' HUP
trap 'rm -f -- "$tmp" "$tmp.lock"; exit 130' INT
trap 'rm -f -- "$tmp" "$tmp.lock"; exit 143' TERM
export GIT_INDEX_FILE="$tmp"
git --no-optional-locks add -A --ignore-errors -- . {_quoted(NOT_CODE_PATHSPECS)} >/dev/null 2>&1
if [ "$2" = 1 ]; then
  git --no-optional-locks rm --cached --sparse -f -q -r --ignore-unmatch -- {_quoted(NOT_CODE[1:])} >/dev/null 2>&1
fi
exec git --no-optional-locks write-tree
"""


class _Tree(NamedTuple):
    """A tree chain under way: the process and its copy of the index."""
    proc: subprocess.Popen[str]
    copy: str


# every chain not yet ended (a signal stops them)
_CHAINS: list[_Tree] = []


def _tree_chain(at: Repo) -> _Tree:
    _guard()
    try:
        # a copy that keeps the mtime, as shutil.copy2 makes (git's
        # racy-clean check depends on it), without importing shutil
        with open(os.path.join(at.gitdir, 'index'), 'rb') as src:
            data: bytes | None = src.read()
            st = os.fstat(src.fileno())
    except FileNotFoundError:
        data = None
    try:
        fd, tmp = _new_copy(at.gitdir)
    except OSError as e:
        raise AgitmemError(f'cannot copy the index into {at.gitdir}: {e.strerror}')
    try:
        with open(fd, 'wb') as out:
            if data is not None:
                out.write(data)
        if data is None:
            os.unlink(tmp)  # no index yet: git starts an empty one
        else:
            os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        # may the index hold agitmem's install files?  v2/v3 indexes hold
        # whole paths; v4 compresses their prefixes, so there it cannot be told
        tracked = data is not None and (
            data[4:8] not in (b'\0\0\0\x02', b'\0\0\0\x03') or
            any(p.encode() in data for p in NOT_CODE[1:])
        )
        proc = _run_chain(tmp, '1' if tracked else '0', cwd=at.top)
    except BaseException:
        _release(tmp)
        raise
    chain = _Tree(proc, tmp)
    _CHAINS.append(chain)
    return chain


def _new_copy(git_dir: str) -> tuple[int, str]:
    """(fd, path) of a new, empty index copy in git_dir, its owner file
    taken first (see _COPY)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, 'O_CLOEXEC', 0)
    for _ in range(100):
        copy = os.path.join(os.path.abspath(git_dir), f'{_COPY}{os.urandom(6).hex()}')
        if not _own(copy):
            continue
        try:
            return os.open(copy, flags, 0o600), copy
        except FileExistsError:
            _release(copy)  # another's: it is not removed, only our owner file
    raise FileExistsError(f'no free temporary name in {git_dir}')


def _run_chain(*args: str, cwd: Path | str) -> subprocess.Popen[str]:
    import subprocess
    try:
        return subprocess.Popen(
            ('sh', '-c', _TREE_SH, 'agitmem-tree', *args), cwd=cwd, env=clean_env(),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding='utf-8', errors='surrogateescape',
            # a group of its own, so one signal stops the shell and its git
            **platforms.group_kwargs(),
        )
    except FileNotFoundError as e:
        raise AgitmemError(f'cannot run sh in {cwd}: {e.strerror}')


# -- signals: a command stopped while it computes a tree removes its copies

_STOPPING = platforms.STOPPING
# the handlers ours replaced, by signal (empty: none installed yet)
_BEFORE: dict[int, object] = {}


def _guard() -> None:
    """Install the handlers (once) that remove this process's index copies
    on SIGTERM (what `timeout` and a hook's time limit send), SIGINT and
    SIGHUP, then end as the signal would have."""
    if _BEFORE:
        return
    import signal
    for name in _STOPPING:
        sig = getattr(signal, name)
        before = signal.getsignal(sig)
        if before is signal.SIG_IGN or before is None:
            continue  # ignored (nohup): it stops nothing
        try:
            signal.signal(sig, _stopped)
        except ValueError:  # not the main thread: no handlers at all
            return
        _BEFORE[sig] = before


def _stopped(sig: int, frame: object) -> None:
    import signal
    _stop_chains()
    before = _BEFORE.get(sig, signal.SIG_DFL)
    if callable(before):  # SIGINT: Python's KeyboardInterrupt, as before
        before(sig, frame)
        return
    # the default action, so the caller sees the conventional status
    # (128 + the signal's number in a shell)
    platforms.end_as(sig)


def _stop_chains() -> None:
    """Stop every chain (each removes its own copy as it goes) and remove
    the copies this process owns."""
    import subprocess
    for chain in _CHAINS:
        platforms.stop_group(chain.proc.pid, hard=False)
    for chain in _CHAINS:
        try:
            chain.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    _CHAINS.clear()
    for copy in list(_OWNED):
        _release(copy)


def worktree_tree(repo: Repo) -> str:
    """The tree id of the working tree now (.agent/ and agitmem's install
    files left out; tracked files under .agent/ as the index has them),
    the user's index never touched: from `git status` where that is
    exact (fast_tree), else from a copy of the index (chain_tree)."""
    tree = fast_tree(repo)
    return tree if tree is not None else chain_tree(repo)


def chain_tree(repo: Repo) -> str:
    """`worktree_tree` by `git add -A` into a copy of the index and
    `git write-tree`."""
    tree, code, err = _finish(_tree_chain(repo))
    if code != 0 or not tree:
        raise AgitmemError(f'git write-tree failed: {error_line(err, f"exit {code}")}')
    return tree


def _finish(chain: _Tree) -> tuple[str, int, str]:
    """(the tree, the exit code, stderr) of a chain, once it has ended;
    its copy of the index removed."""
    import subprocess
    bound = local_timeout()
    try:
        out, err = chain.proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        out, err = _stop(chain.proc)
        err += f'\nfatal: no answer in {bound:g}s: stopped'
    if chain in _CHAINS:
        _CHAINS.remove(chain)
    _release(chain.copy)
    return out.strip(), chain.proc.returncode, err


# -- the working tree's tree from `git status` -------------------------------
# What `git status` already knows (the index's stat data, the untracked
# cache, fsmonitor, a split or sparse index) gives the paths that differ
# from HEAD; only those are hashed (as `git add` would: filters apply) and
# only their directories' trees rewritten on HEAD's.  The same tree id as
# the chain's (tests/repo_test.py proves it on many working trees);
# anything it cannot do exactly (an unmerged or intent-to-add entry, a
# submodule with changes, an embedded repository, SHA-256) falls back to
# the chain.  Paths from the top whatever the directory it runs in.
EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
_GONE = b'000000'
TREE_MODE = b'40000'
# a path's new (mode, id), or None when it leaves the tree
_Entry = tuple[bytes, bytes] | None
# HEAD's directories: path -> (tree id, {name: (mode, id)})
_Listings = dict[bytes, tuple[bytes, dict[bytes, tuple[bytes, bytes]]]]


def _status_out(repo: Repo) -> bytes | None:
    """What the status begun ahead printed, when it ran on `repo`, else
    one begun now; None when it failed."""
    while _STATUS_AHEAD:
        cwd, proc = _STATUS_AHEAD.pop()
        if cwd == repo.top or _FOUND.get(cwd) == repo:
            out = _ended(proc)
            if out is not None:
                return out
        else:
            _kill(proc)  # another repository's
    return _ended(_run_status(repo.top))


def _ended(proc: ahead.Child | subprocess.Popen[bytes]) -> bytes | None:
    try:
        out, _ = proc.communicate(timeout=local_timeout())
    except BaseException as e:
        # past the bound, or Ctrl-C: it has left STATUS_AHEAD, so nothing
        # at exit would stop it (and a clean filter or fsmonitor hook it runs)
        _kill(proc)
        if not _timed_out(e):
            raise
        return None
    return out if proc.returncode == 0 else None


def fast_tree(repo: Repo) -> str | None:
    """The working tree's tree as `chain_tree` computes it, from `git
    status`; None when it cannot be computed exactly this way."""
    out = _status_out(repo)
    if out is None:
        return None
    parsed = _changes(repo, out)
    if parsed is None:
        return None
    commit, changed, to_hash, in_index = parsed
    key = _tree_key(repo, commit, changed, to_hash, in_index)
    cached = _cached_tree(repo, key)
    if cached is not None:
        return cached  # computed from the same: _index_decides said no then
    if _index_decides(repo, in_index):
        return None
    tree = _fast_tree(repo, commit, changed, to_hash)
    if tree is not None and key is not None:
        _remember_tree(repo, key, tree)
    return tree


def _fast_tree(
        repo: Repo, commit: bytes | None, changed: dict[bytes, _Entry], to_hash: dict[bytes, bytes],
) -> str | None:
    dirs = _dirs([*changed, *to_hash])
    if any(p.startswith(b'"') for p in to_hash):
        # hash-object --stdin-paths reads such a line as a C-quoted name:
        # `"a.py"` would be hashed as a.py (asked before any git is begun)
        return None
    # HEAD's trees read and the files hashed by two processes at once
    listing = asks = None
    if commit is not None:
        if any(b'\n' in d for d in dirs):
            return None  # cat-file --batch reads names a line each
        asks = [commit + b'^{tree}' if not d else commit + b':' + d for d in dirs]
        listing = git_start(repo, ('cat-file', '--batch'))
    hashing = git_start(repo, ('hash-object', '-w', '--stdin-paths')) if to_hash else None
    old: _Listings | None = {}
    if listing is not None and asks is not None:
        got = git_end(listing, b''.join(a + b'\n' for a in asks))
        old = None if got is None else _listings(got, dirs, asks)
    if hashing is not None:
        paths = list(to_hash)
        got = git_end(hashing, b''.join(p + b'\n' for p in paths))
        oids = None if got is None else got.split()
        if oids is None or len(oids) != len(paths):
            return None
        for path, oid in zip(paths, oids):
            changed[path] = (to_hash[path], oid)
    if old is None or (commit is not None and listing is None):
        return None
    return _rewrite(repo, dirs, old, changed)


# -- the last tree fast_tree computed, by what it was computed from ---------
# Most commands in a row see the same working tree (load, state set, verify,
# the session-start hook): the same status, the same files to hash with
# the same stat data.  Then the tree is the one computed last time, and
# neither HEAD's trees nor the files are read again.  A file whose mtime or
# ctime is within RACY_NS of the computation could be edited again within
# the same timestamp, its stat data unchanged: no tree is remembered then
# (git's own "racily clean" rule).  The settings that change how a file is
# hashed (config, info/attributes, the global config and attributes, and
# the .gitattributes beside each hashed file and above it, which an ignored
# one keeps out of the status) are part of what it was computed from.
_TREE_CACHE = 'tree-cache'
RACY_NS = 2_000_000_000


def _tree_key(
        repo: Repo, commit: bytes | None, changed: dict[bytes, _Entry], to_hash: dict[bytes, bytes],
        in_index: dict[bytes, bytes],
) -> bytes | None:
    """What the tree is computed from, as a digest; None when it cannot
    be remembered (a racy file, one gone meanwhile)."""
    import time
    now = time.time_ns()
    parts = [commit or b'(initial)']
    for path in sorted(changed):
        entry = changed[path]
        parts.append(path + b'\0' + (b'-' if entry is None else b' '.join(entry)))
    for path in sorted(to_hash):
        try:
            st = os.lstat(os.path.join(repo.top, os.fsdecode(path)))
        except OSError:
            return None
        if max(st.st_mtime_ns, st.st_ctime_ns) >= now - RACY_NS:
            return None
        parts.append(b'%s\0%s %d %d %d %d %d %s' % (
            path, to_hash[path], st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode,
            in_index.get(path, b'-'),  # the blob _index_decides reads
        ))
    xdg = os.environ.get('XDG_CONFIG_HOME') or os.path.join(os.path.expanduser('~'), '.config')
    settings = [
        os.path.join(repo.commondir, 'config'), os.path.join(repo.gitdir, 'config.worktree'),
        os.path.join(repo.commondir, 'info', 'attributes'), os.path.expanduser('~/.gitconfig'),
        os.path.join(xdg, 'git', 'config'), os.path.join(xdg, 'git', 'attributes'),
    ]
    settings.extend(os.path.join(repo.top, os.fsdecode(d), '.gitattributes') for d in sorted(_ancestors(to_hash)))
    for setting in settings:
        try:
            st = os.stat(setting)
            parts.append(b'%d %d %d' % (st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            parts.append(b'-')
    return sha1(b'\n'.join(parts)).encode()


def _ancestors(paths: Iterable[bytes]) -> set[bytes]:
    """Every directory above paths, the root (b'') included."""
    ret = {b''}
    for path in paths:
        parts = path.split(b'/')[:-1]
        ret.update(b'/'.join(parts[:i]) for i in range(1, len(parts) + 1))
    return ret


def _cached_tree(repo: Repo, key: bytes | None) -> str | None:
    """The tree remembered for key, while git has it as a loose object."""
    if key is None:
        return None
    from agitmem import caches
    data = caches.own(os.path.join(repo.gitdir, 'agitmem', _TREE_CACHE))  # never a FIFO's hang, nor a link
    if data is None:
        return None
    got, _, tree = data.strip().partition(b' ')
    if got != key or not is_oid(tree.decode('ascii', 'replace')) or not _all_loose(repo, [tree]):
        return None
    return tree.decode()


def _remember_tree(repo: Repo, key: bytes, tree: str) -> None:
    # a new temp file (O_EXCL), never one a name guessed from the pid could
    # have linked out of the repository; no fsync: a cache lost in a crash
    # is only computed again
    try:
        atomic_write(os.path.join(repo.gitdir, 'agitmem', _TREE_CACHE), key + b' ' + tree.encode() + b'\n', durable=False)
    except OSError:
        pass


def _changes(
        repo: Repo, out: bytes,
) -> tuple[bytes | None, dict[bytes, _Entry], dict[bytes, bytes], dict[bytes, bytes]] | None:
    """(HEAD's commit, each differing path's new entry, the paths to hash
    as `git add` would with their modes, the index's blob of those it
    holds) from status -z output."""
    commit: bytes | None = None
    changed: dict[bytes, _Entry] = {p.encode(): None for p in NOT_CODE[1:]}
    to_hash: dict[bytes, bytes] = {}  # path -> mode, hashed as `git add` would
    in_index: dict[bytes, bytes] = {}  # those of to_hash the index holds: path -> blob
    links: list[bytes] = []
    new_files: list[bytes] = []
    new_dirs: list[bytes] = []
    for rec in out.split(b'\0'):
        kind = rec[:2]
        if kind == b'# ':
            if rec.startswith(b'# branch.oid '):
                oid = rec[13:]
                commit = None if oid == b'(initial)' else oid
                if commit is not None and len(commit) != 40:
                    return None  # SHA-256: not hashed here
        elif kind == b'1 ':
            fields = rec.split(b' ', 8)
            if len(fields) != 9:
                return None
            _, xy, sub, _, m_index, m_work, _, h_index, path = fields
            if sub != b'N...' or xy[1:] not in b'.MTD' or b'\n' in path:
                return None  # a submodule, intent-to-add
            name = os.fsdecode(path)
            if not is_code(name):
                if name == '.agent' or name.startswith('.agent/'):  # the index's, as `add` leaves it
                    changed[path] = None if m_index == _GONE else (m_index, h_index)
                continue
            if xy[1:] == b'.':
                changed[path] = None if m_index == _GONE else (m_index, h_index)
            elif xy[1:] == b'D' or m_work == _GONE:
                changed[path] = None
                if os.path.isdir(os.path.join(repo.top, name)) and not os.path.islink(os.path.join(repo.top, name)):
                    new_dirs.append(path + b'/')  # a file become a directory: status names neither
            elif m_work == b'120000':
                links.append(path)
            elif m_work in (b'100644', b'100755'):
                to_hash[path] = m_work
                if m_index != _GONE:
                    in_index[path] = h_index
            else:
                return None
        elif kind == b'? ':
            path = rec[2:]
            if not is_code(os.fsdecode(path)):
                continue
            if b'\n' in path:
                return None
            (new_dirs if path.endswith(b'/') else new_files).append(path)
        elif rec:
            return None  # unmerged, or anything else
    if new_dirs:
        # a new directory, whole: its files, as -uall would have listed them
        # (a repository embedded in it shows as `dir/`: not hashed here)
        got = git_bytes(repo, (
            'ls-files', '-z', '--others', '--exclude-standard', '--',
            *(f':(literal){os.fsdecode(d)}' for d in new_dirs),
        ), b'')
        if got is None:
            return None
        for path in got.split(b'\0'):
            if path.endswith(b'/') or b'\n' in path:
                return None
            if path and is_code(os.fsdecode(path)):
                new_files.append(path)
    if new_files and not _new_modes(repo, new_files, to_hash, links):
        return None
    for path in links:
        blob = _link_blob(repo, path)
        if blob is None:
            return None
        changed[path] = (b'120000', blob)
    return commit, changed, to_hash, in_index


def _index_decides(repo: Repo, in_index: dict[bytes, bytes]) -> bool:
    """Whether `git add` might store one of these files other than
    `hash-object` would.  Under git's "auto" end-of-line action (text=auto,
    or core.autocrlf and no text, crlf or eol attribute) git keeps a file's
    CRLFs when its blob in the index has a CR ("safer autocrlf"), which
    hash-object, reading no index, cannot know.  Only a file with a CR in
    it is converted at all, so attributes and the index are read only for
    those (and a git that cannot answer means yes: the chain decides)."""
    with_cr = [path for path in in_index if _has_cr(os.path.join(repo.top, os.fsdecode(path)))]
    if not with_cr:
        return False
    auto = _auto_eol(repo, with_cr)
    if auto is None:
        return True
    if not auto:
        return False
    got = git_bytes(repo, ('cat-file', '--batch'), b''.join(in_index[p] + b'\n' for p in auto))
    return got is None or b'\r' in got


def _auto_eol(repo: Repo, paths: list[bytes]) -> list[bytes] | None:
    """Those of paths git converts with its "auto" end-of-line action."""
    got = git_bytes(repo, ('check-attr', '-z', '--stdin', 'text', 'crlf', 'eol'), b''.join(p + b'\0' for p in paths))
    if got is None:
        return None
    items = got.split(b'\0')
    attrs: dict[tuple[bytes, bytes], bytes] = {
        (items[i], items[i + 1]): items[i + 2] for i in range(0, len(items) - 2, 3)
    }
    autocrlf: bytes | None = None
    ret = []
    for path in paths:
        text, crlf, eol = (attrs.get((path, a), b'unspecified') for a in (b'text', b'crlf', b'eol'))
        if text == b'auto' or text == b'unspecified' and crlf == b'auto':
            ret.append(path)
        elif (text, crlf, eol) == (b'unspecified',) * 3:
            if autocrlf is None:
                got = git_bytes(repo, ('config', '-z', '--get-regexp', r'^core\.autocrlf$'), b'', ok=(0, 1))
                if got is None:
                    return None
                # the last one counts; a key with no `=` is true
                *_, last = [b'core.autocrlf\nfalse', *filter(None, got.split(b'\0'))]
                _, has_value, value = last.partition(b'\n')
                autocrlf = value.lower() if has_value else b'true'
            if autocrlf in (b'true', b'yes', b'on', b'1', b'input'):
                ret.append(path)
    return ret


def _has_cr(path: str) -> bool:
    try:
        with open(path, 'rb') as f:
            while chunk := f.read(1 << 20):
                if b'\r' in chunk:
                    return True
    except OSError:
        return True  # unreadable now: the chain will say
    return False


def _new_modes(repo: Repo, paths: list[bytes], to_hash: dict[bytes, bytes], links: list[bytes]) -> bool:
    """The modes `git add` gives new files (core.fileMode, core.symlinks)."""
    import stat as st
    modes = []
    for path in paths:
        try:
            modes.append(os.lstat(os.path.join(repo.top, os.fsdecode(path))).st_mode)
        except OSError:
            return False
    config = {b'core.filemode': b'true', b'core.symlinks': b'true'}
    if any(st.S_ISLNK(m) or m & 0o111 for m in modes):
        got = git_bytes(repo, ('config', '-z', '--type=bool', '--get-regexp', r'^core\.(filemode|symlinks)$'), b'', ok=(0, 1))
        if got is None:
            return False
        for item in got.split(b'\0'):
            key, _, value = item.partition(b'\n')
            config[key.lower()] = value
    for path, mode in zip(paths, modes):
        if st.S_ISLNK(mode):
            if config[b'core.symlinks'] != b'true':
                return False
            links.append(path)
        elif st.S_ISREG(mode):
            exe = mode & 0o100 and config[b'core.filemode'] == b'true'
            to_hash[path] = b'100755' if exe else b'100644'
        else:
            return False
    return True


def _link_blob(repo: Repo, path: bytes) -> bytes | None:
    try:
        target = os.readlink(os.path.join(repo.top, os.fsdecode(path)))
    except OSError:
        return None
    got = git_bytes(repo, ('hash-object', '-w', '--no-filters', '--stdin'), os.fsencode(target))
    return None if got is None else got.strip()


def _dirs(paths: list[bytes]) -> list[bytes]:
    """Every directory holding one of paths (the top as b''), each once."""
    dirs = dict.fromkeys([b''])
    for path in paths:
        parent = path.rpartition(b'/')[0]
        while parent and parent not in dirs:
            dirs[parent] = None
            parent = parent.rpartition(b'/')[0]
    return list(dirs)


def _rewrite(repo: Repo, names: list[bytes], old: _Listings, changed: dict[bytes, _Entry]) -> str | None:
    """HEAD's tree (`old`: its directories `names`) with the changed
    entries put in, its changed directories rewritten (deepest first),
    the new trees written by one `git mktree` (none when all are there
    already: the same working tree as last time)."""
    dirs: dict[bytes, dict[bytes, _Entry]] = {d: {} for d in names}  # dir -> its changed children
    for path, entry in changed.items():
        parent, _, name = path.rpartition(b'/')
        dirs[parent][name] = entry
    ids: dict[bytes, bytes | None] = {}
    batch: list[bytes] = []
    new: list[bytes] = []
    for d in sorted(dirs, key=lambda d: d.count(b'/') + bool(d), reverse=True):
        old_id, entries = old.get(d, (None, {}))
        entries = dict(entries)
        for name, entry in dirs[d].items():
            if entry is None:
                entries.pop(name, None)
            else:
                entries[name] = entry
        ids[d] = None
        if entries:
            body = tree_body(entries)
            oid = sha1(b'tree %d\0' % len(body) + body).encode()
            ids[d] = oid
            if oid != old_id:
                batch.extend(mktree_lines(entries))
                batch.append(b'')
                new.append(oid)
        if d:
            parent, _, name = d.rpartition(b'/')
            sub = ids[d]
            if sub is not None:
                dirs[parent][name] = (TREE_MODE, sub)
            elif name not in dirs[parent] and _was_tree(old, parent, name):
                dirs[parent][name] = None  # emptied: git keeps no empty tree
    if new and not _all_loose(repo, new):
        got = git_bytes(repo, ('mktree', '-z', '--batch', '--missing'), b'\0'.join(batch))
        if got is None or got.split() != new:
            return None  # not what git makes of it: the chain says
    root = ids[b'']
    return EMPTY_TREE if root is None else root.decode()


def _all_loose(repo: Repo, oids: list[bytes]) -> bool:
    """Whether each object is in the repository as a loose object (as
    mktree wrote it last time); False sends them to mktree, which is right
    either way."""
    objects = os.path.join(repo.commondir, 'objects')
    return all(os.path.exists(os.path.join(objects, o[:2].decode(), o[2:].decode())) for o in oids)


def _was_tree(old: _Listings, d: bytes, name: bytes) -> bool:
    entry = old[d][1].get(name) if d in old else None
    return entry is not None and entry[0] == TREE_MODE


def tree_body(entries: dict[bytes, tuple[bytes, bytes]]) -> bytes:
    def key(name: bytes) -> bytes:
        return name + b'/' if entries[name][0] == TREE_MODE else name
    return b''.join(
        entries[n][0] + b' ' + n + b'\0' + bytes.fromhex(entries[n][1].decode())
        for n in sorted(entries, key=key)
    )


def mktree_lines(entries: dict[bytes, tuple[bytes, bytes]]) -> list[bytes]:
    kinds = {TREE_MODE: b'tree', b'160000': b'commit'}
    return [b'%s %s %s\t%s' % (m, kinds.get(m, b'blob'), o, n) for n, (m, o) in entries.items()]


def _listings(got: bytes, dirs: list[bytes], asks: list[bytes]) -> _Listings | None:
    """Each directory's (tree id, entries) in HEAD (where it is a tree),
    from what `git cat-file --batch` answered to asks."""
    found = {}
    at = 0
    for d, ask in zip(dirs, asks):
        end = got.find(b'\n', at)
        header = got[at:end]
        at = end + 1
        if header == ask + b' missing':
            continue
        words = header.split(b' ')
        if len(words) != 3 or not words[2].isdigit():
            return None
        size = int(words[2])
        body = got[at:at + size]
        at += size + 1
        if words[1] == b'tree':
            entries = _entries(body)
            if entries is None:
                return None
            found[d] = (words[0], entries)
    return found


def _entries(body: bytes) -> dict[bytes, tuple[bytes, bytes]] | None:
    """A tree object's entries, their modes as the index has them."""
    entries = {}
    at = 0
    while at < len(body):
        space = body.index(b' ', at)
        nul = body.index(b'\0', space)
        mode, name = body[at:space], body[space + 1:nul]
        oid = body[nul + 1:nul + 21].hex().encode()
        at = nul + 21
        if mode not in (TREE_MODE, b'120000', b'160000'):
            bits = int(mode, 8)
            if bits & 0o170000 != 0o100000:
                return None
            mode = b'100755' if bits & 0o100 else b'100644'
        entries[name] = (mode, oid)
    return entries
