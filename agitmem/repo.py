"""Find the repository and worktree, map the branch to its memory ref, and
run git with a clean environment.  No pygit2 here: the hot hook paths use it."""
from __future__ import annotations

import os
import re
import stat
import sys

from agitmem import ahead
from agitmem import platforms
from agitmem.ahead import FIND as _FIND
from agitmem.ahead import FIND_HEAD as _FIND_HEAD
from agitmem.ahead import clean_env as clean_env  # callers know it as repo's
from agitmem.ahead import early_key as _early_key
from agitmem.ahead import end_ahead as _end_ahead
from agitmem.ahead import end_early as _end_early
from agitmem.ahead import kill as _kill
from agitmem.ahead import spawn as _spawn
from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from collections.abc import Mapping
    import subprocess
    from pathlib import Path
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

MEMORY_ROOT = 'refs/agitmem/'
MEMORY_NS = 'refs/agitmem/heads/'
REMOTES_NS = 'refs/agitmem/remotes/'
# A detached HEAD's memory, one ref per worktree, named as git names the
# worktrees' own refs (main-worktree/, worktrees/<id>/).  Shared refs, not
# refs/worktree/*: git counts only the current worktree's per-worktree
# refs as reachable, so a gc in one worktree deleted another's memory.
DETACHED_NS = 'refs/agitmem/detached/'
# where it lived before; moved to this worktree's DETACHED_NS ref on use
LEGACY_DETACHED_REF = 'refs/worktree/agitmem/detached'


class Repo(NamedTuple):
    """Where the repository is, as strings (git's own names for them): the
    agent hooks join them with os.path, without pathlib (its import, with
    urllib.parse and ipaddress, is a tenth of a hook's run); the rest of
    agitmem takes the same places as `Path`s (root, git_dir, ...)."""
    top: str  # top of this worktree
    gitdir: str  # this worktree's git dir (per-worktree state lives here)
    commondir: str  # shared objects and refs

    @property
    def agentdir(self) -> str:
        return os.path.join(self.top, '.agent')

    @property
    def memorydir(self) -> str:
        return os.path.join(self.top, '.agent', 'memory')

    @property
    def root(self) -> Path:
        return _path(self.top)

    @property
    def git_dir(self) -> Path:
        return _path(self.gitdir)

    @property
    def common_dir(self) -> Path:
        return _path(self.commondir)

    @property
    def agent_dir(self) -> Path:
        return _path(self.agentdir)

    @property
    def memory_dir(self) -> Path:
        return _path(self.memorydir)

    @property
    def config_path(self) -> Path:
        return _path(os.path.join(self.top, '.agent', 'config.yaml'))


def _path(at: str) -> Path:
    """`at` as a Path, pathlib imported on first use (see Repo)."""
    from pathlib import Path
    return Path(at)


# Wall-clock bounds on git processes, in seconds.  A network call (fetch,
# push, a fetch of missing objects) gets `network_timeout` (config.yaml, or
# $AGITMEM_NETWORK_TIMEOUT, which wins); any other call LOCAL_FACTOR times
# that, LOCAL_MIN at least: in a partial clone git may fetch a missing
# object from the promisor remote lazily, inside a `diff` or a `rev-list`,
# and that fetch may stall.
NETWORK_TIMEOUT = 30.0
LOCAL_FACTOR = 10
LOCAL_MIN = 60.0
TIMEOUT_ENV = 'AGITMEM_NETWORK_TIMEOUT'
_configured: list[float] = []


def set_network_timeout(seconds: float) -> None:
    """The `network_timeout` of the config just read (context.make)."""
    _configured[:] = [float(seconds)]


def network_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, '')
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value > 0 and value != float('inf'):
        return value
    return _configured[0] if _configured else NETWORK_TIMEOUT


class Stalled(AgitmemError):
    """A git process ran past its wall-clock bound and was stopped."""


def _stop(proc: ahead.Child | subprocess.Popen[str]) -> tuple[str, str]:
    """Kill a git process and whatever it started (ssh, a remote helper,
    the local end of a file:// transport; ahead.kill): what it wrote."""
    out, err = _kill(proc)
    return out or '', err or ''


def local_timeout() -> float:
    """The bound of a git call that does not mean to use the network (a
    minute at least: a small network bound does not cut a slow local call)."""
    return max(network_timeout() * LOCAL_FACTOR, LOCAL_MIN)


def _verb(args: tuple[str, ...]) -> str:
    """The git command in args (`fetch` of `-c x=y fetch ...`)."""
    words = iter(args)
    for word in words:
        if word == '-c':
            next(words, None)
        elif not word.startswith('-'):
            return word
    return 'git'


def git(
        *args: str,
        cwd: Path | str,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        check: bool = True,
        timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run git, bounded by `timeout` seconds (None: the bound of a local
    call); past it, the process and its children are killed: Stalled."""
    import subprocess
    cmd = ('git', '--no-optional-locks', *args)
    bound = local_timeout() if timeout is None else timeout
    try:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=clean_env(env),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding='utf-8', errors='surrogateescape',
            # a group of its own, so a stalled call is stopped whole
            **platforms.group_kwargs(),
        )
    except FileNotFoundError as e:
        raise _not_run(e, cwd)
    try:
        out, err = proc.communicate(stdin, timeout=bound)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise Stalled(f'git {_verb(args)} gave no answer in {bound:g}s and was stopped')
    except BaseException:
        _stop(proc)
        raise
    done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if check and done.returncode != 0:
        detail = error_line(err, f'exit {done.returncode}')
        raise AgitmemError(f'git {_verb(args)} failed: {detail}')
    return done


def _not_run(e: FileNotFoundError, cwd: Path | str) -> AgitmemError:
    """What a FileNotFoundError from starting git means: the directory it
    was to run in is gone (it names it), or git is."""
    if e.filename is not None and os.fsdecode(e.filename) == os.fsdecode(cwd):
        return AgitmemError(f'{shown(os.fsdecode(cwd))}: no such directory')
    return AgitmemError('git is not installed or not on PATH')


IDENTITY = (('var', 'GIT_AUTHOR_IDENT'), ('var', 'GIT_COMMITTER_IDENT'))
# git reads started ahead of need: (cwd, args, env) -> the running process
_EARLY = ahead.EARLY


_CRUD = ''.join(map(chr, range(33))) + ',:;<>"\\\''


def env_identities() -> tuple[tuple[str, str], tuple[str, str]] | None:
    """(author, committer) as (name, email) when the environment names
    both whole, which git takes before any config (git-var(1)): no git
    process is needed then.  None when git decides more (a date given, a
    part from config)."""
    ret = []
    for kind in ('AUTHOR', 'COMMITTER'):
        name = os.environ.get(f'GIT_{kind}_NAME', '')
        email = os.environ.get(f'GIT_{kind}_EMAIL', '')
        # git trims "crud" off both ends (ident.c): only a value it would
        # keep as it is is taken here
        if (
                f'GIT_{kind}_DATE' in os.environ or
                not name or name.strip(_CRUD) != name or
                not email or email.strip(_CRUD) != email
        ):
            return None
        ret.append((name, email))
    return ret[0], ret[1]


def here() -> str:
    """The current directory, or one line saying it is gone (a shell left
    in a directory since deleted)."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        raise AgitmemError(
            'the current directory no longer exists (deleted?): cd into the '
            'repository and run it again',
        )


def plain(cwd: os.PathLike[str] | str) -> str:
    """`cwd` as str(Path(cwd)) spells it (without `.` parts, doubled or
    trailing slashes; `..` kept: a symlink's parent is not the textual
    one), without importing pathlib on POSIX."""
    cwd = os.fspath(cwd)
    if platforms.WINDOWS:
        return str(_path(cwd))  # drives, UNC shares, both separators
    lead = '//' if cwd.startswith('//') and not cwd.startswith('///') else '/' if cwd.startswith('/') else ''
    return lead + '/'.join(p for p in cwd.split('/') if p and p != '.') or '.'


def start_early(*, identity: bool) -> None:
    """Start the git reads a memory write makes first in the current
    directory (where the repository is, HEAD, and with `identity` the
    commit identities), so they run while Python imports pygit2: a second
    core does them for free.  `git_each` picks them up; any left over are
    ended at exit."""
    wanted = identity and env_identities() is None
    _start(None, _FIND_HEAD, *(IDENTITY if wanted else ()))


def start_session(cwd: str | None) -> None:
    """What the session-start hook waits for, started before it imports:
    `find` with HEAD in one process, and the working tree's status for the
    injection's freshness (start_tree)."""
    _start(cwd, _FIND_HEAD)
    try:
        _start_status(here() if cwd is None else plain(cwd))
    except AgitmemError:
        return  # the real call says so


def start_find(cwd: str | None) -> None:
    """Start `find`'s git process for cwd (None: the current directory)
    now, while the hooks import what they need (see start_early)."""
    _start(cwd, _FIND)


def _start(cwd: str | None, *calls: tuple[str, ...]) -> None:
    try:
        at = here() if cwd is None else plain(cwd)
    except AgitmemError:
        return  # the real call says so
    try:
        for args in calls:
            key = _early_key(at, args, None)
            if key not in _EARLY:  # begun already (cli.main): not twice
                _EARLY[key] = _spawn(args, at)
    except OSError:
        return  # git missing or cwd gone: the real call says so
    import atexit
    atexit.register(_end_early)


def start(
        *args: str, cwd: Path | str, env: Mapping[str, str] | None = None,
) -> None:
    """Start a git read now, so that it runs while Python imports what
    will use it; `git_each` with the same args, cwd and env picks it up
    (see start_early)."""
    key = _early_key(cwd, args, env)
    if key in _EARLY:
        return
    try:
        _EARLY[key] = _spawn(args, cwd, env)
    except OSError:
        return  # the real call says so
    import atexit
    atexit.register(_end_early)


class Done(NamedTuple):
    """A finished git read of git_each's: what `subprocess.CompletedProcess`
    holds, without importing subprocess (its processes may have been begun
    by posix_spawn, ahead of the imports: the agent hooks' `find`)."""
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def _timed_out(e: BaseException) -> bool:
    """Whether e is `subprocess.TimeoutExpired` (what a Child raises,
    having imported subprocess to raise it), asked without importing it."""
    module = sys.modules.get('subprocess')
    return module is not None and isinstance(e, module.TimeoutExpired)


def git_each(
        *calls: tuple[str, ...],
        cwd: Path | str,
        env: Mapping[str, str] | None = None,
) -> list[Done]:
    """Several independent git reads at once (each as `git(...,
    check=False)`): their run times overlap instead of adding up."""
    procs = []
    try:
        for args in calls:
            early = _EARLY.pop(_early_key(cwd, args, env), None)
            procs.append((args, early or _spawn(args, cwd, env)))
    except FileNotFoundError as e:
        for _, p in procs:
            p.kill()
            p.wait()
        raise _not_run(e, cwd)
    done = []
    bound = local_timeout()
    for args, p in procs:
        try:
            out, err = p.communicate(timeout=bound)
        except Exception as e:
            if not _timed_out(e):
                raise
            for _, q in procs:
                _stop(q)
            raise Stalled(f'git {_verb(args)} gave no answer in {bound:g}s and was stopped')
        assert p.returncode is not None  # (communicate waits)
        done.append(Done(('git', '--no-optional-locks', *args), p.returncode, out, err))
    return done


def error_line(stderr: str, default: str) -> str:
    """The line of git's stderr that says what went wrong: its `fatal:` or
    `error:` line, not the advice git prints after it."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip()]
    for prefix in ('fatal: ', 'error: '):
        for line in lines:
            if line.startswith(prefix):
                return line.removeprefix(prefix)
    return lines[-1] if lines else default


_BRANCH = ('symbolic-ref', '-q', 'HEAD')
_HEAD = ('rev-parse', '-q', '--verify', 'HEAD^{commit}')


def find(cwd: Path | str | None = None) -> Repo:
    cwd = here() if cwd is None else plain(cwd)
    if _early_key(cwd, _FIND_HEAD, None) in _EARLY:
        # begun with HEAD (start_session): HEAD is kept for `head`
        repo, at_head = find_with_head(cwd)
        _HEADS[repo.top] = at_head
        return repo
    return _found(git_each(_FIND, cwd=cwd)[0], cwd)


def find_with_head(
        cwd: Path | str | None = None,
) -> tuple[Repo, tuple[str | None, str | None]]:
    """`find` and `head` of the repository there, asked at once."""
    cwd = here() if cwd is None else plain(cwd)
    [all_of] = git_each(_FIND_HEAD, cwd=cwd)
    if all_of.returncode == 0:
        # the id and the ref name (which hold no newline) end it
        paths, sha, named = all_of.stdout[:-1].rsplit('\n', 2)
        branch = None if named == 'HEAD' else named.removeprefix('refs/heads/')
        return _found(all_of, cwd, paths), (branch, sha or None)
    found, sym = git_each(_FIND, _BRANCH, cwd=cwd)
    return _found(found, cwd), (_branch(sym), None)


def _found(
        proc: Done,
        cwd: str,
        paths: str | None = None,
) -> Repo:
    """The repository `git rev-parse` (`_FIND`) found, from `paths`, the
    part of its output that holds them (all of it when None)."""
    if proc.returncode != 0:
        err = proc.stderr.lower()
        if 'must be run in a work tree' in err:
            raise AgitmemError(
                'this is a bare repository (or a git dir): agitmem needs a '
                'working tree; run it inside a checkout',
            )
        raise AgitmemError(
            f'not a git repository: {cwd} (run `git init` first)',
        )
    git_dir, common_dir, root = _three_paths(
        proc.stdout[:-1] if paths is None else paths, cwd,
    )
    repo = Repo(plain(root), plain(git_dir), plain(common_dir))
    # agitmem writes its caches, hook state and locks there: never through
    # a symlink that leaves the repository
    from agitmem import caches
    link = caches.leaving(repo.gitdir, repo.commondir)
    if link is not None:
        raise AgitmemError(
            f'{shown(link)} is a symlink to outside the repository: agitmem '
            'writes nothing through it; remove it (agitmem makes a directory)',
        )
    _FOUND[cwd] = repo
    _sweep(repo.gitdir)
    return repo


def _three_paths(out: str, cwd: str) -> tuple[str, str, str]:
    """The git dir, common dir and top of the working tree that `git
    rev-parse` printed one a line (it has no -z for them): a path may
    hold a newline itself, so when there are more than two, the split is
    the one whose parts are directories that hold `cwd`."""
    parts = out.split('\n')
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    here_real = os.path.realpath(cwd)
    at = [i for i, c in enumerate(out) if c == '\n']
    for n, i in enumerate(at):
        for j in at[n + 1:]:
            gd, cd, top = out[:i], out[i + 1:j], out[j + 1:]
            if (
                    (here_real == top or here_real.startswith(top.rstrip('/') + '/')) and
                    os.path.isdir(gd) and os.path.isdir(cd) and os.path.isdir(top)
            ):
                return gd, cd, top
    raise AgitmemError(f'cannot tell where the repository is from: {out!r}')


def head(repo: Repo) -> tuple[str | None, str | None]:
    """(branch name or None when detached, HEAD's sha or None when unborn)"""
    if repo.top in _HEADS:
        return _HEADS.pop(repo.top)  # asked with `find`, once
    return _head(*git_each(_BRANCH, _HEAD, cwd=repo.top))


def _head(
        sym: Done,
        sha_proc: Done,
) -> tuple[str | None, str | None]:
    sha = sha_proc.stdout.strip() if sha_proc.returncode == 0 else None
    return _branch(sym), sha


def _branch(sym: Done) -> str | None:
    """The branch `git symbolic-ref -q HEAD` names; None when detached."""
    return sym.stdout.strip().removeprefix('refs/heads/') if sym.returncode == 0 else None


def memory_ref(
        repo: Repo,
        branch: str | None,
        *,
        override: str | None = None,
) -> str:
    if override:
        ref = override if override.startswith('refs/') else MEMORY_NS + override
        # never a code branch or tag: memory commits there would replace
        # the user's code
        if not ref.startswith((MEMORY_NS, DETACHED_NS, 'refs/worktree/agitmem/')) or not _valid_ref(ref):
            raise AgitmemError(
                f'"{override}": not a memory ref; use a name (memory of '
                f'{MEMORY_NS}<name>) or a ref under {MEMORY_NS}',
            )
        return ref
    if branch is None:
        return detached_ref(repo)
    return MEMORY_NS + branch


def worktree_id(repo: Repo) -> str | None:
    """A linked worktree's name (its git dir under the common dir's
    worktrees/), as git names it in worktrees/<id>/HEAD; None for the main
    worktree."""
    git_dir = repo.gitdir
    if git_dir != repo.commondir and os.path.basename(os.path.dirname(git_dir)) == 'worktrees':
        return os.path.basename(git_dir)
    return None


def detached_ref(repo: Repo) -> str:
    """This worktree's memory while HEAD is detached."""
    wid = worktree_id(repo)
    if wid is None:
        return DETACHED_NS + 'main-worktree'
    ref = f'{DETACHED_NS}worktrees/{wid}'
    if _valid_ref(ref):
        return ref
    # a name older gits allowed (git sanitizes new ones): hex, apart from
    # any name that is valid as it is
    return f'{DETACHED_NS}worktrees-hex/{wid.encode("utf-8", "surrogateescape").hex()}'


def from_a_removed_worktree(repo: Repo, ref: str) -> bool:
    """Was ref, this linked worktree's detached memory, begun before the
    worktree was made?  Then a removed worktree git gave the same name left
    it, and it is not this one's.  Told by its reflog's first entry (the
    memory refs are written with one) and the worktree's `commondir`, which
    `git worktree add` writes once: a stat and a line, no git process."""
    if worktree_id(repo) is None or not ref.startswith(DETACHED_NS):
        return False
    try:
        made = int(os.stat(os.path.join(repo.gitdir, 'commondir')).st_mtime)
        with open(os.path.join(repo.commondir, 'logs', ref), 'rb') as log:
            first = log.readline()
    except OSError:
        return False
    m = re.search(rb'> (\d+) [+-]\d{4}\t', first)
    return m is not None and int(m[1]) < made


def adopt_legacy_detached(repo: Repo, ref: str) -> None:
    """Move the memory an older agitmem kept on this worktree's
    refs/worktree/agitmem/detached to ref (this worktree's detached ref),
    once: there gc in another worktree would delete it.  Cheap when there
    is none: git never packs per-worktree refs, so the file tells."""
    if ref != detached_ref(repo) or not os.path.isfile(os.path.join(repo.gitdir, LEGACY_DETACHED_REF)):
        return
    sha = git_out(repo, 'rev-parse', '-q', '--verify', f'{LEGACY_DETACHED_REF}^{{commit}}')
    if not sha:
        return
    # created only where there is none yet (the zero old value), and the
    # old one deleted only while it still holds what was moved
    zero = '0' * len(sha)
    made = git(
        'update-ref', '--create-reflog', '-m', f'agitmem: moved from {LEGACY_DETACHED_REF}',
        ref, sha, zero, cwd=repo.top, check=False,
    )
    if made.returncode == 0 or git_out(repo, 'rev-parse', '-q', '--verify', ref) == sha:
        git('update-ref', '-d', LEGACY_DETACHED_REF, sha, cwd=repo.top, check=False)


def shown(name: str) -> str:
    """A ref or branch name as text: git allows any bytes in one (a branch
    `caf\\xe9`), which git's output gives us as surrogate escapes (see
    `git`); those read `\\xe9` here, as in a commit message or on a
    terminal."""
    try:
        raw = name.encode('utf-8', 'surrogateescape')
    except UnicodeEncodeError:  # a lone surrogate git cannot have given
        return name.encode('utf-8', 'backslashreplace').decode()
    return raw.decode('utf-8', 'backslashreplace')


_BAD_REF = r'(?:\.\.|@\{|//|/\.|\.lock(?:/|$)|[\x00-\x20~^:?*\[\\\x7f])'


def _valid_ref(ref: str) -> bool:
    """git check-ref-format's rules, without a process on the hot path."""
    return not (re.search(_BAD_REF, ref) or ref.endswith(('/', '.')))


# .agent/ and the files `agitmem install` writes: never code changes (for
# STALE, the stop hook and the progress checks)
NOT_CODE = (
    '.agent', '.claude/settings.json', '.claude/settings.local.json',
    '.codex/hooks.json', '.gemini/settings.json',
)
NOT_CODE_PATHSPECS = tuple(f':(exclude,literal){p}' for p in NOT_CODE)


def is_code(path: str) -> bool:
    return not any(path == p or path.startswith(f'{p}/') for p in NOT_CODE)


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
# An index copy is `<git dir>/agitmem-index-<random>`; git's lock beside it
# is `<copy>.lock`.  Its owner (the command that made it, or began the
# chain that makes it) holds an flock on `<copy>.owner` while it lives: the
# kernel lets go of it however the owner ends, SIGKILL included, in any
# pid namespace (a repository shared with a container), and no pid can be
# reused into it.  Any command sweeps copies whose owner file it can lock.
_COPY = 'agitmem-index-'
_OWNER = '.owner'
# A copy with no owner file is one an older agitmem left (one whose chain
# began before the repository was found: the copy's name ends in the
# chain's pid).  It is swept once its chain has ended (no such process
# here), or in any case once this old (seconds): a pid is only a hint (it
# may be reused, or be another pid namespace's).
_UNOWNED_AGE = 60.0
# owner files this process holds: the copy's path -> the locked fd
_OWNED: dict[str, int] = {}


class _Tree(NamedTuple):
    """A tree chain under way: the process and its copy of the index."""
    proc: subprocess.Popen[str]
    copy: str


# every chain not yet ended (a signal stops them)
_CHAINS: list[_Tree] = []


def _own(copy: str) -> bool:
    """Take the owner file of `copy` (see _COPY), new and locked; False
    when the name is taken."""
    path = copy + _OWNER
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, 'O_CLOEXEC', 0), 0o600)
    except FileExistsError:
        return False
    try:
        if not platforms.try_lock(fd):
            raise OSError('held')
        # a sweeper that locked it first (between our open and lock) took
        # it for a dead owner's and removed it
        st, now = os.fstat(fd), os.stat(path)
        if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino):
            _OWNED[copy] = fd
            return True
    except OSError:
        pass
    os.close(fd)
    return False


def _release(copy: str) -> None:
    """Remove a copy this process made or owns, then its owner file."""
    _unlink(copy)
    fd = _OWNED.pop(copy, None)
    if fd is not None:
        _remove(copy + _OWNER)  # still locked: no sweeper races
        os.close(fd)


def _sweep(git_dir: str) -> None:
    """Remove the index copies in git_dir whose owner is gone (a command
    stopped by SIGKILL, or by a signal before its handler ran)."""
    try:
        with os.scandir(git_dir) as it:
            bases = {e.name.split('.', 1)[0] for e in it if e.name.startswith(_COPY)}
    except OSError:
        return
    for base in bases:
        copy = os.path.join(git_dir, base)
        if copy not in _OWNED:
            try:
                _sweep_one(copy)
            except OSError:
                pass  # not ours to remove after all (permissions): left as it is


def _sweep_one(copy: str) -> None:
    try:
        fd = os.open(copy + _OWNER, os.O_RDWR | getattr(os, 'O_CLOEXEC', 0))
    except FileNotFoundError:
        import time
        ages = []
        for p in (copy, f'{copy}.lock'):
            try:
                ages.append(time.time() - os.lstat(p).st_ctime)
            except FileNotFoundError:
                pass
        if ages and (min(ages) > _UNOWNED_AGE or not _alive(copy)):
            _unlink(copy)
        return
    try:
        if not platforms.try_lock(fd):
            return  # its owner lives
        _unlink(copy)
        _remove(copy + _OWNER)
    finally:
        os.close(fd)


def _alive(copy: str) -> bool:
    """Whether the chain whose pid ends an unowned copy's name may still
    run (True when the name has none)."""
    pid = copy.rpartition('-')[2]
    if not (pid.isascii() and pid.isdigit()):
        return True
    return platforms.alive(int(pid))


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


def _unlink(path: str) -> None:
    # the copy, and the lock git leaves beside it when stopped mid-write
    for p in (path, f'{path}.lock'):
        _remove(p)


def _remove(path: str) -> None:
    """Path.unlink(missing_ok=True), without pathlib."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


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


def start_tree(at: Repo | None) -> None:
    """Begin `worktree_tree` of a repository (None: the one the current
    directory is in) for a command that will ask for it (state set, load,
    verify): its `git status` runs on the other core while Python imports
    and reads, instead of after.  It is what the working tree holds now."""
    try:
        _start_status(at.top if at is not None else here())
    except AgitmemError:
        return  # asked for again when needed: the error is said then


def _start_status(cwd: str) -> None:
    if _STATUS_AHEAD:
        return  # one is under way already (load: begun by the cli)
    try:
        _STATUS_AHEAD.append((cwd, _run_status(cwd)))
    except (OSError, AgitmemError):
        return  # asked for again when needed: the error is said then
    if len(_STATUS_AHEAD) == 1:
        import atexit
        atexit.register(_end_ahead)


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
# statuses begun before their tree was asked for (start_tree): (cwd, process)
_STATUS_AHEAD = ahead.STATUS_AHEAD
# the repository `find` found from each directory (which a status begun
# there ahead reports on)
_FOUND: dict[str, Repo] = {}
# HEAD as a `find` begun with it read it, by the repository's top, until
# `head` takes it (once: a long-lived process asks again)
_HEADS: dict[str, tuple[str | None, str | None]] = {}
# a path's new (mode, id), or None when it leaves the tree
_Entry = tuple[bytes, bytes] | None
# HEAD's directories: path -> (tree id, {name: (mode, id)})
_Listings = dict[bytes, tuple[bytes, dict[bytes, tuple[bytes, bytes]]]]


def _run_status(cwd: Path | str) -> ahead.Child | subprocess.Popen[bytes]:
    try:
        return ahead.run_status(cwd)
    except FileNotFoundError as e:
        raise _not_run(e, cwd)


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
    except Exception as e:
        if not _timed_out(e):
            raise
        _kill(proc)
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
    # HEAD's trees read and the files hashed by two processes at once
    listing = asks = None
    if commit is not None:
        if any(b'\n' in d for d in dirs):
            return None  # cat-file --batch reads names a line each
        asks = [commit + b'^{tree}' if not d else commit + b':' + d for d in dirs]
        listing = _git_start(repo, ('cat-file', '--batch'))
    hashing = _git_start(repo, ('hash-object', '-w', '--stdin-paths')) if to_hash else None
    old: _Listings | None = {}
    if listing is not None and asks is not None:
        got = _git_end(listing, b''.join(a + b'\n' for a in asks))
        old = None if got is None else _listings(got, dirs, asks)
    if hashing is not None:
        paths = list(to_hash)
        got = _git_end(hashing, b''.join(p + b'\n' for p in paths))
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


def git_bytes(
        repo: Repo, args: tuple[str, ...], data: bytes, ok: tuple[int, ...] = (0,),
        env: Mapping[str, str] | None = None,
) -> bytes | None:
    """git's stdout as bytes, fed `data` on stdin; None when it failed
    (an exit code not in `ok`) or ran past its bound."""
    proc = _git_start(repo, args, env)
    return None if proc is None else _git_end(proc, data, ok)


def _git_start(
        repo: Repo, args: tuple[str, ...], env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes] | None:
    import subprocess
    try:
        return subprocess.Popen(
            ('git', '--no-optional-locks', *args), cwd=repo.top, env=clean_env(env),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _git_end(proc: subprocess.Popen[bytes], data: bytes, ok: tuple[int, ...] = (0,)) -> bytes | None:
    import subprocess
    try:
        out, _ = proc.communicate(data, timeout=local_timeout())
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    except OSError:  # it ended before it read all of its input
        proc.kill()
        proc.wait()
        return None
    return out if proc.returncode in ok else None


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


# a pattern, compiled on first use by re's own cache: not at import, on
# every hook's path
_OID = r'[0-9a-f]{40}(?:[0-9a-f]{24})?'


def is_oid(value: object) -> bool:
    """Whether value is an object id as agitmem records one.  An id read
    from state.json or a fetched memory commit is anyone's to edit: nothing
    else is handed to git, where `--output=FILE` would be an option."""
    return isinstance(value, str) and re.fullmatch(_OID, value) is not None


# where a tree-only read's index would be: nothing makes it (see trees_only)
NO_INDEX = 'agitmem/no-index'


def trees_only(repo: Repo) -> dict[str, str] | None:
    """The env of a git read that compares trees alone (`diff-tree` with
    raw or name-only output): since git 2.37 diff-tree reads the whole index
    first (recent git), for attributes such output never uses (25 ms on a
    100,000-file repository); pointed at an index that does not exist, it
    reads none.  None (the real index, as before) when something is there."""
    path = os.path.join(repo.gitdir, NO_INDEX)
    return None if os.path.lexists(path) else {'GIT_INDEX_FILE': path}


def changed_paths(repo: Repo, old_tree: str, new_tree: str) -> list[str]:
    return changed_paths_from(repo, [old_tree], new_tree).get(old_tree, [])


def changed_paths_from(repo: Repo, old_trees: Iterable[str], new_tree: str) -> dict[str, list[str]]:
    """`changed_paths` from each of several trees to new_tree: each tree
    diffed once (the state's and the last verification's are mostly the
    same), all at once.  A tree that is no id, or that git cannot diff,
    has no entry."""
    olds = [t for t in dict.fromkeys(old_trees) if is_oid(t)] if is_oid(new_tree) else []
    if not olds:
        return {}
    done = git_each(*(
        ('diff-tree', '-r', '-z', '--name-only', '--no-renames', old, new_tree) for old in olds
    ), cwd=repo.top, env=trees_only(repo))
    return {
        old: [p for p in proc.stdout.split('\0') if p and is_code(p)]
        for old, proc in zip(olds, done) if proc.returncode == 0
    }


def exclude_agent_dir(repo: Repo) -> bool:
    """Add /.agent/ to info/exclude; True when it was added."""
    return exclude(repo, '/.agent/')


def _exclude_file(repo: Repo) -> Path:
    return repo.common_dir / 'info' / 'exclude'


def exclude(repo: Repo, line: str) -> bool:
    """Add a pattern line to info/exclude; True when it was added."""
    path = _exclude_file(repo)
    text = path.read_text() if path.exists() else ''
    if line in text.splitlines():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    if text and not text.endswith('\n'):
        text += '\n'
    atomic_write(path, (text + line + '\n').encode())
    return True


def unexclude(repo: Repo, line: str) -> bool:
    """Remove a pattern line from info/exclude; True when it was there."""
    path = _exclude_file(repo)
    if not path.exists():
        return False
    lines = path.read_text().splitlines(keepends=True)
    kept = [ln for ln in lines if ln.rstrip('\n') != line]
    if len(kept) == len(lines):
        return False
    atomic_write(path, ''.join(kept).encode())
    return True


def tracked(repo: Repo, rel: str) -> bool:
    """Whether git tracks the file at rel (relative to the worktree top)."""
    return bool(git_out(repo, 'ls-files', '-z', '--full-name', '--', f':(literal){rel}'))


class NotRegularFile(OSError):
    """open_regular found something else there: `kind` says what."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def open_regular(path: Path | str, flags: int = os.O_RDONLY, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """(fd, stat) of `path` opened as a regular file, or NotRegularFile
    ('a directory', 'not a regular file').  O_NONBLOCK: opening a FIFO
    does not wait for its other end (the fd blocks again once it is known
    to be a file); the kind is checked on the open fd, so a swap after a
    stat cannot slip a device in."""
    flags |= platforms.O_NONBLOCK | platforms.O_NOCTTY | platforms.O_CLOEXEC | platforms.O_BINARY
    fd = os.open(path, flags, 0o644) if follow else platforms.open_nofollow(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile('a directory' if stat.S_ISDIR(st.st_mode) else 'not a regular file')
        if platforms.O_NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


class TooLarge(OSError):
    """read_regular found a file over its bound."""

    def __init__(self, limit: int) -> None:
        super().__init__(f'over {limit // 1024:,} KB')
        self.limit = limit


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of a file a clone may control (an agent's settings, an
    MCP config, .pre-commit-config.yaml): a regular file only, opened
    without waiting on a FIFO, never a device (/dev/zero, /dev/stdin, a
    tty), and at most `limit` bytes (TooLarge past it).  FileNotFoundError
    and NotRegularFile as open_regular raises them."""
    fd, _ = open_regular(path)
    with os.fdopen(fd, 'rb') as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


def _mkstemp(directory: str, prefix: str) -> tuple[int, str]:
    """tempfile.mkstemp's new file (O_EXCL, mode 0600) without importing
    tempfile (random, shutil, weakref: a noticeable part of a hook's run
    time)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, 'O_CLOEXEC', 0)
    for _ in range(100):
        name = os.path.join(os.path.abspath(directory), f'{prefix}{os.urandom(6).hex()}')
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f'no free temporary name in {directory}')


def _mode_of(path: Path | str) -> int:
    """The permissions a file replacing `path` keeps: its own when it is a
    regular file; a symlink's target (/dev/null, a file outside the
    repository) lends none."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0o644
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o644


def atomic_write(path: Path | str, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """temp file in the same directory + rename: readers see old or new,
    never half a file.  Not `durable`: no fsync, for what is made again
    from the memory when lost (a view, a cache): after a crash it may be
    old or empty, so what reads it checks it (the config cache's key) or
    writes it again (the injection's view)."""
    parent, name = os.path.split(os.fspath(path))
    if parent:
        os.makedirs(parent, exist_ok=True)
    fd, tmp = _mkstemp(parent or '.', f'.{name}.')
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, _mode_of(path) if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# -- git facts the porcelain asks about ------------------------------------

def sha1(data: bytes) -> str:
    """SHA-1 of data, in hex: with the interpreter's own SHA-1 where it has
    one (hashlib loads OpenSSL, a noticeable part of a hook's or a
    check's run time)."""
    try:
        from _sha1 import sha1 as impl  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1 as impl
    return str(impl(data).hexdigest())


def blob_id(data: bytes, like: str) -> str:
    """git's id of a blob of data, in the object format of the id `like`
    (SHA-256 repositories have 64-digit ids)."""
    return object_id(b'blob', data, like)


def object_id(kind: bytes, data: bytes, like: str) -> str:
    """git's id of an object of that kind (b'blob', b'tree') holding data,
    in the object format of the id `like`."""
    header = b'%s %d\0' % (kind, len(data))
    if len(like) == 64:
        import hashlib
        return hashlib.sha256(header + data).hexdigest()
    return sha1(header + data)


def git_out(repo: Repo, *args: str) -> str:
    proc = git(*args, cwd=repo.top, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ''


def stash_holding(repo: Repo, rel: str) -> str | None:
    """The newest stash entry (`stash@{N}`) whose untracked files hold
    `rel`: `git stash --all` takes the ignored .agent/ with them, and
    `git stash pop` fails when it is there again."""
    entries = git_out(repo, 'reflog', 'show', '--format=%H', 'refs/stash').split()
    if not entries:
        return None
    out = git(
        'cat-file', '--batch-check=%(objecttype)', cwd=repo.top, check=False,
        stdin=''.join(f'{oid}^3:{rel}\n' for oid in entries),
    ).stdout.splitlines()
    for n, kind in enumerate(out):
        if kind == 'tree':
            return f'stash@{{{n}}}'
    return None


def ref_exists(repo: Repo, ref: str) -> bool:
    return bool(git_out(repo, 'rev-parse', '-q', '--verify', f'{ref}^{{commit}}'))


def head_reflog(repo: Repo) -> str:
    """The subject of HEAD's newest reflog entry (what git just did)."""
    return git_out(repo, 'log', '-g', '-1', '--format=%gs', 'HEAD')


def remotes(repo: Repo) -> list[str]:
    return git_out(repo, 'remote').split()


def upstream_remote(repo: Repo, branch: str | None) -> str | None:
    if branch is None:
        return None
    name = git_out(repo, 'config', '--get', f'branch.{branch}.remote')
    return name if name and name != '.' else None


def short_ref(ref: str) -> str:
    """refs/agitmem/heads/x -> x, refs/agitmem/remotes/origin/x -> origin/x"""
    for ns in (MEMORY_NS, REMOTES_NS):
        if ref.startswith(ns):
            return ref[len(ns):]
    return ref


def is_memory_ref(ref: str) -> bool:
    return ref.startswith((MEMORY_NS, DETACHED_NS)) or ref == LEGACY_DETACHED_REF


def operation_branch(repo: Repo) -> str | None:
    """The branch a rebase or a bisect in progress will return to, while
    HEAD is detached under it: its memory is the one being worked on."""
    for name in ('rebase-merge/head-name', 'rebase-apply/head-name'):
        try:
            with open(os.path.join(repo.gitdir, name)) as f:
                ref = f.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if ref.startswith('refs/heads/'):
            return ref.removeprefix('refs/heads/')
    try:
        with open(os.path.join(repo.gitdir, 'BISECT_START')) as f:
            start = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if start and ref_exists(repo, f'refs/heads/{start}'):
        return start
    return None


def memory_base_path(repo: Repo) -> str:
    return os.path.join(repo.gitdir, 'agitmem', 'base')


def memory_base(repo: Repo) -> tuple[str | None, str | None]:
    """(commit, memory ref) this worktree's memory was last written from
    or saved to, as recorded in its git dir; plain text, so the hot hooks
    read it without pygit2."""
    from agitmem import caches
    data = caches.own(memory_base_path(repo))  # never a FIFO's hang, nor a link
    if data is None:
        return None, None
    words = data.decode('utf-8', 'surrogateescape').split()
    return (words[0] if words else None), (words[1] if len(words) > 1 else None)
