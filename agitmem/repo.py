"""Find the repository and worktree, map the branch to its memory ref, and
run git with a clean environment.  No pygit2 here: the hot hook paths use it.
The working tree's tree (computing it from a status or a copy of the
index) is trees.py's: the agent hooks, which import this module on every
edit, prompt and turn, never load it."""
from __future__ import annotations

import os
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
    from typing import TypeAlias
    # a git process git_start began
    Started: TypeAlias = ahead.Child | subprocess.Popen[bytes]
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
    def configfile(self) -> str:
        return os.path.join(self.top, '.agent', 'config.yaml')

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
        return _path(self.configfile)


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


def _stop(proc: ahead.Child | subprocess.Popen[bytes] | subprocess.Popen[str]) -> tuple[str, str]:
    """Kill a git process and whatever it started (ssh, a remote helper,
    the local end of a file:// transport; ahead.kill): what it wrote."""
    out, err = _kill(proc)
    return _text(out), _text(err)


def _text(data: bytes | str | None) -> str:
    """git's output as text: bytes that are not UTF-8 kept as surrogate
    escapes (see `shown`), and a CR kept as a CR.  Popen's text mode reads
    a lone CR, and CRLF, as a newline: a file name or a line of a diff
    that holds one read otherwise there than from posix_spawn's Child (a
    forbidden added line after a CR went unseen)."""
    if data is None:
        return ''
    return data if isinstance(data, str) else data.decode('utf-8', 'surrogateescape')


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
) -> Done:
    """Run git, bounded by `timeout` seconds (None: the bound of a local
    call); past it, the process and its children are killed: Stalled."""
    if stdin is None and timeout is None:
        # a local read: begun as the reads ahead are (posix_spawn, where
        # nothing has imported subprocess: a write's plumbing needs none)
        [done] = git_each(args, cwd=cwd, env=env)
        return _checked(done, args, check)
    import subprocess
    cmd = ('git', '--no-optional-locks', *args)
    bound = local_timeout() if timeout is None else timeout
    try:
        proc = platforms.start(lambda: subprocess.Popen(
            cmd, cwd=cwd, env=clean_env(env),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            # bytes, decoded by _text: no newline translation either way
            **platforms.group_kwargs(),  # its own group: a stalled call is stopped whole
        ))
    except FileNotFoundError as e:
        raise _not_run(e, cwd)
    try:
        out, err = proc.communicate(
            None if stdin is None else stdin.encode('utf-8', 'surrogateescape'), timeout=bound,
        )
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise Stalled(f'git {_verb(args)} gave no answer in {bound:g}s and was stopped')
    except BaseException:
        _stop(proc)
        raise
    return _checked(Done(cmd, proc.returncode, _text(out), _text(err)), args, check)


def _checked(done: Done, args: tuple[str, ...], check: bool) -> Done:
    if check and done.returncode != 0:
        detail = error_line(done.stderr, f'exit {done.returncode}')
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
        except BaseException as e:
            # past the bound, or Ctrl-C: each in a group of its own (the
            # terminal's SIGINT does not reach it), so none is left running
            # with what it started (a clean filter, an fsmonitor hook)
            for _, q in procs:
                _stop(q)
            if not _timed_out(e):
                raise
            raise Stalled(f'git {_verb(args)} gave no answer in {bound:g}s and was stopped')
        assert p.returncode is not None  # (communicate waits)
        done.append(Done(('git', '--no-optional-locks', *args), p.returncode, _text(out), _text(err)))
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
    import re  # a detached worktree's memory only
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


# git check-ref-format's rules, by str's methods: `re` is not imported on
# the hooks' paths (agitmem/jsontext.py says what it costs)
_BAD_REF_PARTS = ('..', '@{', '//', '/.', '.lock/')
_BAD_REF_CHARS = frozenset('~^:?*[\\\x7f' + ''.join(map(chr, range(0x21))))


def _valid_ref(ref: str) -> bool:
    """git check-ref-format's rules, without a process on the hot path."""
    return not (
        any(part in ref for part in _BAD_REF_PARTS) or
        ref.endswith(('/', '.', '.lock')) or
        not _BAD_REF_CHARS.isdisjoint(ref)
    )


# .agent/ and the files `agitmem install` writes: never code changes (for
# STALE, the stop hook and the progress checks)
NOT_CODE = (
    '.agent', '.claude/settings.json', '.claude/settings.local.json',
    '.codex/hooks.json', '.gemini/settings.json',
)
NOT_CODE_PATHSPECS = tuple(f':(exclude,literal){p}' for p in NOT_CODE)


def is_code(path: str) -> bool:
    return not any(path == p or path.startswith(f'{p}/') for p in NOT_CODE)
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


def worktree_tree(repo: Repo) -> str:
    """The tree id of the working tree now (trees.worktree_tree)."""
    from agitmem import trees
    return trees.worktree_tree(repo)


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
# statuses begun before their tree was asked for (start_tree): (cwd, process)
_STATUS_AHEAD = ahead.STATUS_AHEAD
# the repository `find` found from each directory (which a status begun
# there ahead reports on)
_FOUND: dict[str, Repo] = {}
# HEAD as a `find` begun with it read it, by the repository's top, until
# `head` takes it (once: a long-lived process asks again)
_HEADS: dict[str, tuple[str | None, str | None]] = {}


def _run_status(cwd: Path | str) -> ahead.Child | subprocess.Popen[bytes]:
    try:
        return ahead.run_status(cwd)
    except FileNotFoundError as e:
        raise _not_run(e, cwd)


def git_bytes(
        repo: Repo, args: tuple[str, ...], data: bytes, ok: tuple[int, ...] = (0,),
        env: Mapping[str, str] | None = None,
) -> bytes | None:
    """git's stdout as bytes, fed `data` on stdin; None when it failed
    (an exit code not in `ok`) or ran past its bound."""
    proc = git_start(repo, args, env)
    return None if proc is None else git_end(proc, data, ok)


def git_start(
        repo: Repo, args: tuple[str, ...], env: Mapping[str, str] | None = None, *, stderr: bool = False,
) -> Started | None:
    """git begun with a pipe to its stdin: by posix_spawn where ahead.py
    would (a save's plumbing and the tree of the working tree import no
    subprocess, which is 3-4 ms of a hook's run), else by Popen.  Its
    stderr read when asked (git_end's second answer), else dropped."""
    argv = ('git', '--no-optional-locks', *args)
    try:
        child = ahead.child(argv, repo.top, clean_env(env), stderr=stderr)
    except OSError:
        return None
    if child is not None:
        return child
    import subprocess
    try:
        return platforms.start(lambda: subprocess.Popen(
            argv, cwd=repo.top, env=clean_env(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
            **platforms.group_kwargs(),  # as a Child is: stopped whole (git_end)
        ))
    except OSError:
        return None


def git_end(
        proc: ahead.Child | subprocess.Popen[bytes], data: bytes, ok: tuple[int, ...] = (0,),
) -> bytes | None:
    """git_start's process fed data: its stdout, or None when it failed
    (an exit code not in `ok`) or ran past its bound."""
    done = git_finish(proc, data)
    return done[1] if done is not None and done[0] in ok else None


def git_finish(
        proc: ahead.Child | subprocess.Popen[bytes], data: bytes,
) -> tuple[int, bytes, bytes] | None:
    """git_start's process fed data: (its exit code, stdout, stderr: b''
    when not read); None when it ended before it read all of its input,
    or ran past its bound (then stopped)."""
    try:
        out, err = proc.communicate(data, timeout=local_timeout())
    except OSError:  # it ended before it read all of its input
        _kill(proc)
        return None
    except BaseException as e:
        # past the bound, or Ctrl-C: git and what it runs (a clean filter
        # of hash-object) stopped, not left running after this process
        _kill(proc)
        if not _timed_out(e):
            raise
        return None
    return proc.wait(), out, err or b''


_HEX = '0123456789abcdef'


def is_oid(value: object) -> bool:
    """Whether value is an object id as agitmem records one (SHA-1's 40
    or SHA-256's 64 lowercase hex digits).  An id read from state.json or a
    fetched memory commit is anyone's to edit: nothing else is handed to
    git, where `--output=FILE` would be an option."""
    return isinstance(value, str) and len(value) in (40, 64) and not value.strip(_HEX)


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
    same), all at once, and not at all when that pair was diffed before
    (known_diffs).  A tree that is no id, or that git cannot diff, has no
    entry."""
    olds = [t for t in dict.fromkeys(old_trees) if is_oid(t)] if is_oid(new_tree) else []
    if not olds:
        return {}
    known = known_diffs(repo)
    asks = [old for old in olds if (old, new_tree) not in known]
    if asks:
        # the trees as their ids name them: no `git replace` stands in for
        # one (what is kept must not change when refs/replace/ does)
        env = {**(trees_only(repo) or {}), 'GIT_NO_REPLACE_OBJECTS': '1'}
        done = git_each(*(
            ('diff-tree', '-r', '-z', '--name-only', '--no-renames', old, new_tree) for old in asks
        ), cwd=repo.top, env=env)
        for old, proc in zip(asks, done):
            if proc.returncode == 0:
                known[(old, new_tree)] = [p for p in proc.stdout.split('\0') if p]
        _remember_diffs(repo, known, [(old, new_tree) for old in olds])
    return {
        old: [p for p in known[(old, new_tree)] if is_code(p)]
        for old in olds if (old, new_tree) in known
    }


# -- the paths between two trees, as diffed last -------------------------------
# Two trees' ids name their contents, so the paths that differ between
# them never change: the load and the session-start hooks that show what
# changed since the state was recorded (the same two trees until the state
# or the working tree changes) run no `git diff-tree` after the status has
# ended.  <git dir>/agitmem/tree-diffs holds the last few pairs, each
# `OLD NEW` and its paths, NUL-separated, the pairs separated by two NULs,
# then the SHA-1 of what comes before (a file cut short is none).
_DIFFS = 'tree-diffs'
_DIFFS_KEPT = 8
_DIFFS_MAX = 1_000_000  # bytes: a diff of more paths is not kept


def known_diffs(repo: Repo) -> dict[tuple[str, str], list[str]]:
    """The pairs of trees diffed last and their paths, oldest first."""
    from agitmem import caches
    data = caches.own(os.path.join(repo.gitdir, 'agitmem', _DIFFS))  # never a FIFO's hang, nor a link
    known: dict[tuple[str, str], list[str]] = {}
    body, _, check = (data or b'').rpartition(b'\0\0')
    if check.decode('ascii', 'replace') != sha1(body):
        return known
    for record in body.split(b'\0\0'):
        head, *paths = _text(record).split('\0')
        pair = head.split(' ')
        if len(pair) == 2 and all(map(is_oid, pair)) and all(paths):
            known[(pair[0], pair[1])] = paths
    return known


def _remember_diffs(
        repo: Repo, known: dict[tuple[str, str], list[str]], used: list[tuple[str, str]],
) -> None:
    """Keep the pairs just used last, and the newest of the rest."""
    order = [k for k in known if k not in used] + [k for k in used if k in known]
    records = [
        ' '.join(k).encode() + b''.join(b'\0' + p.encode('utf-8', 'surrogateescape') for p in known[k])
        for k in order[-_DIFFS_KEPT:]
    ]
    while records and sum(map(len, records)) > _DIFFS_MAX:
        records.pop(0)
    body = b'\0\0'.join(records)
    # a new temp file (O_EXCL); no fsync: a cache lost in a crash is only
    # diffed again
    try:
        atomic_write(
            os.path.join(repo.gitdir, 'agitmem', _DIFFS), body + b'\0\0' + sha1(body).encode(), durable=False,
        )
    except OSError:
        pass


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


def read_regular(path: Path | str, limit: int, *, follow: bool = True) -> bytes:
    """The bytes of a file a clone may control (an agent's settings, an
    MCP config, .pre-commit-config.yaml, a memory file): a regular file
    only, opened without waiting on a FIFO, never a device (/dev/zero,
    /dev/stdin, a tty), and at most `limit` bytes (TooLarge past it, grown
    so since a stat or not).  Not `follow`: a symlink is refused (ELOOP).
    FileNotFoundError and NotRegularFile as open_regular raises them."""
    fd, _ = open_regular(path, follow=follow)
    with os.fdopen(fd, 'rb') as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


def _mkstemp(directory: str, prefix: str, dir_fd: int | None = None) -> tuple[int, str]:
    """tempfile.mkstemp's new file (O_EXCL, mode 0600) without importing
    tempfile (random, shutil, weakref: a noticeable part of a hook's run
    time).  With `dir_fd`, a name in that directory."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, 'O_CLOEXEC', 0)
    for _ in range(100):
        name = f'{prefix}{os.urandom(6).hex()}'
        if dir_fd is None:
            name = os.path.join(os.path.abspath(directory), name)
        try:
            return os.open(name, flags, 0o600, dir_fd=dir_fd), name
        except FileExistsError:
            continue
    raise FileExistsError(f'no free temporary name in {directory}')


def _mode_of(path: Path | str, dir_fd: int | None = None) -> int:
    """The permissions a file replacing `path` keeps: its own when it is a
    regular file, but set-user-id, set-group-id and sticky (a file of
    ours must not become a program that runs as us); a symlink's target
    (/dev/null, a file outside the repository) lends none."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return 0o644
    return stat.S_IMODE(st.st_mode) & 0o777 if stat.S_ISREG(st.st_mode) else 0o644


def atomic_write(
        path: Path | str, data: bytes, *, mode: int | None = None, durable: bool = True,
        dir_fd: int | None = None,
) -> None:
    """temp file in the same directory + rename: readers see old or new,
    never half a file.  Not `durable`: no fsync, for what is made again
    from the memory when lost (a view, a cache): after a crash it may be
    old or empty, so what reads it checks it (the config cache's key) or
    writes it again (the injection's view).  With `dir_fd`, `path` is a
    name in that directory (one opened without following a link)."""
    parent, name = os.path.split(os.fspath(path))
    if parent and dir_fd is None:
        os.makedirs(parent, exist_ok=True)
    fd, tmp = _mkstemp(parent or '.', f'.{name}.', dir_fd)
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, _mode_of(path, dir_fd) if mode is None else mode, dir_fd=dir_fd)
        os.replace(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass  # never made, or gone
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
