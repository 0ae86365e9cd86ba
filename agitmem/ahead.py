"""Git reads begun ahead of need: where the repository is (with HEAD) and
the working tree's `git status`, started as the first thing the process
does for the commands that wait on them, so they run on the other core
while Python imports the rest of agitmem.  Only os and sys here (subprocess
when a spawn cannot do):
agitmem/__main__.py imports this before anything else (repo.py picks the
processes up and owns what they mean)."""
from __future__ import annotations

import os
import sys

# typing is not imported ahead of the first git call (mypy takes any name
# TYPE_CHECKING as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from signal import SIGKILL
    from signal import SIGPIPE
    from typing import Any
else:
    # the C module signal.py wraps, loaded with the interpreter: signal.py
    # imports enum, which would come before the first git call
    from _signal import SIGKILL
    from _signal import SIGPIPE

# Variables git sets for hooks (or a user sets by hand) that would point our
# own git calls at another index or repository.
GIT_LOCAL_ENV = frozenset((
    'GIT_ALTERNATE_OBJECT_DIRECTORIES',
    'GIT_COMMON_DIR',
    'GIT_DIR',
    'GIT_INDEX_FILE',
    'GIT_NAMESPACE',
    'GIT_OBJECT_DIRECTORY',
    'GIT_PREFIX',
    'GIT_WORK_TREE',
    'GIT_QUARANTINE_PATH',
))

FIND = (
    'rev-parse', '--path-format=absolute',
    '--git-dir', '--git-common-dir', '--show-toplevel',
)
# where the repository is, HEAD's commit and the ref HEAD names (`HEAD`
# when detached), in one process (it fails on an unborn HEAD: then they
# are asked apart)
FIND_HEAD = (*FIND, 'HEAD^{commit}', '--symbolic-full-name', 'HEAD')

# what the index git gave the pre-commit hook changes against HEAD, as
# checks/staged.py reads it: on a big repository the hook's one read of the
# whole index, begun with `find` (HEAD by name: its id is not known yet)
STAGED = ('diff-index', '--cached', '-z', '--no-renames', 'HEAD', '--')

# the working tree's status as repo.fast_tree reads it: paths from the top
# whatever the directory it runs in
STATUS = (
    'git', '--no-optional-locks', '-c', 'status.relativePaths=false',
    'status', '--porcelain=v2', '-z', '--branch', '--no-ahead-behind',
    # new directories whole (`? dir/`, listed apart when there are any):
    # what the untracked cache keeps, so it serves this status too
    '--untracked-files=normal', '--no-renames', '--ignore-submodules=none',
)

# GIT_DIR and GIT_WORK_TREE a user set for an agitmem command (`GIT_DIR=~/.dotfiles
# GIT_WORK_TREE=~ agitmem load`): honoured, made absolute, in every git call, as
# git would.  Not for `agitmem hook ...`: git sets them for its hooks itself,
# where the repository is found from the directory git runs them in.
USER_GIT_ENV: dict[str, str] = {}

EarlyKey = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]
# git reads started ahead of need: (cwd, args, env) -> the running process
EARLY: dict[EarlyKey, Child | subprocess.Popen[str]] = {}
# statuses begun before their tree was asked for: (cwd, process)
STATUS_AHEAD: list[tuple[str, Child | subprocess.Popen[bytes]]] = []


def clean_env(
        extra: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    env = dict(os.environ if environ is None else environ)
    for k in GIT_LOCAL_ENV:
        env.pop(k, None)
    env.update(USER_GIT_ENV)
    env['GIT_TERMINAL_PROMPT'] = '0'
    if extra:
        env.update(extra)
    return env


def early_key(cwd: os.PathLike[str] | str, args: tuple[str, ...], env: Mapping[str, str] | None) -> EarlyKey:
    return str(cwd), args, tuple(sorted(env.items())) if env else ()


class Child:
    """A git process begun by `os.posix_spawnp`, before `subprocess` is
    imported (its import is a fifth of the time from exec to the first git
    call): what repo.py asks of a `subprocess.Popen` (communicate with a
    bound, poll, kill, wait, pid, returncode), in its own process group as
    `spawn` starts it, stdin from /dev/null, stdout (and stderr when
    wanted) read through pipes."""

    def __init__(self, argv: tuple[str, ...], env: Mapping[str, str], *, text: bool, stderr: bool) -> None:
        self.args = argv
        self.text = text
        self.returncode: int | None = None
        self._fds: dict[int, list[bytes]] = {}
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe() if stderr else (-1, -1)
        self._out, self._err = out_r, err_r
        try:
            if min(out_w, err_w if stderr else 3) <= 2:
                # a standard stream was closed and a pipe took its number:
                # dup2 onto itself would leave it close-on-exec
                raise OSError('a standard stream is closed')
            actions: list[tuple[Any, ...]] = [
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2) if stderr else
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                # what Popen's close_fds does: descriptors this process
                # was given to keep (an agent's, a hook manager's) are not
                # git's to hold open
                *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited()),
            ]
            # (Python ignores SIGPIPE; git gets it back, as from Popen)
            self.pid = os.posix_spawnp(
                argv[0], argv, dict(env), file_actions=actions, setpgroup=0, setsigdef=(SIGPIPE,),
            )
        except BaseException:
            for fd in (out_r, err_r):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w):
                if fd >= 0:
                    os.close(fd)
        self._fds = {fd: [] for fd in (out_r, err_r) if fd >= 0}
        self._read: dict[int, bytes] = {}

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, SIGKILL)
            except OSError:
                pass  # gone meanwhile

    def communicate(self, input: None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """(stdout, stderr) once both pipes end and the process has
        exited; past `timeout` seconds `subprocess.TimeoutExpired`, what
        was read kept for the next call (as Popen does)."""
        import select
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, select.POLLIN)
        while self._fds:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                import subprocess
                raise subprocess.TimeoutExpired(list(self.args), timeout or 0)
            for fd, _ in poller.poll(None if left is None else left * 1000):
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    self._fds[fd].append(chunk)
                else:
                    poller.unregister(fd)
                    self._read[fd] = b''.join(self._fds.pop(fd))
                    os.close(fd)
        self.wait()
        out = self._read.get(self._out, b'')
        err = self._read.get(self._err) if self._err >= 0 else None
        if self.text:
            return (
                out.decode('utf-8', 'surrogateescape'),
                None if err is None else err.decode('utf-8', 'surrogateescape'),
            )
        return out, err


def _inherited() -> list[int]:
    """This process's descriptors above stderr a child would inherit
    (Linux's /proc; elsewhere none are known, and none are closed)."""
    try:
        fds = [int(fd) for fd in os.listdir('/proc/self/fd')]
    except (OSError, ValueError):
        return []
    ret = []
    for fd in fds:
        try:
            if fd > 2 and os.get_inheritable(fd):
                ret.append(fd)
        except OSError:
            pass  # listdir's own, closed since
    return ret


def _child(
        argv: tuple[str, ...], cwd: os.PathLike[str] | str, env: Mapping[str, str],
        *, text: bool, stderr: bool,
) -> Child | None:
    """`argv` begun by posix_spawn, where it can be: before `subprocess` is
    imported and in the current directory (posix_spawn has no directory of
    its own to run in); None where Popen is to begin it.  No git on PATH
    raises, as Popen would."""
    if 'subprocess' in sys.modules or os.fspath(cwd) != os.getcwd():
        return None
    try:
        return Child(argv, env, text=text, stderr=stderr)
    except FileNotFoundError:
        raise
    except OSError:
        return None  # anything else: Popen, which says it better


def spawn(
        args: tuple[str, ...], cwd: os.PathLike[str] | str, env: Mapping[str, str] | None = None,
) -> Child | subprocess.Popen[str]:
    """A git read begun (see _child)."""
    argv = ('git', '--no-optional-locks', *args)
    child = _child(argv, cwd, clean_env(env), text=True, stderr=True)
    if child is not None:
        return child
    import subprocess
    return subprocess.Popen(
        argv, cwd=cwd, env=clean_env(env),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, encoding='utf-8', errors='surrogateescape',
        process_group=0,  # stopped whole past its bound (repo.git_each)
    )


def run_status(cwd: os.PathLike[str] | str) -> Child | subprocess.Popen[bytes]:
    """The working tree's status begun (see _child), in a process group of
    its own: with what it runs (an fsmonitor hook), one signal stops it."""
    child = _child(STATUS, cwd, clean_env(), text=False, stderr=False)
    if child is not None:
        return child
    import subprocess
    return subprocess.Popen(
        STATUS, cwd=cwd, env=clean_env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        process_group=0,
    )


def kill(proc: Child | subprocess.Popen[Any]) -> tuple[Any, Any]:
    """Stop a git process and whatever it started (ssh, a remote helper,
    an fsmonitor hook): its own process group, so no child holds the pipes
    open after it.  Not once it has been reaped (its group's id may be
    another's by then).  What it wrote until then."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, SIGKILL)
        except OSError:
            pass  # gone meanwhile
    return proc.communicate()


def end_early() -> None:
    """Reads begun and never picked up (a command that failed, or asked
    elsewhere): stopped at exit rather than waited for."""
    for p in EARLY.values():
        p.kill()
        p.wait()
    EARLY.clear()


def end_ahead() -> None:
    """A status begun and never asked for (a load whose state has none, a
    command that failed): stopped rather than waited for."""
    while STATUS_AHEAD:
        kill(STATUS_AHEAD.pop()[1])


def wanted(argv: list[str]) -> tuple[tuple[str, ...] | None, bool]:
    """(the `find` read, whether the working tree's status) the command in
    argv waits for, read from its first words only: `load`, `state set`
    and `hook session-start` want both, `verify` where the repository is
    with HEAD (its tree is the one its command leaves, begun once that has
    ended), the commit hooks what cli._hook asks (commit-msg's rules need
    no HEAD)."""
    if argv[:1] == ['load'] or argv[:2] in (['state', 'set'], ['hook', 'session-start']):
        return FIND_HEAD, True
    if argv[:1] == ['verify'] or argv[:2] in (['hook', 'pre-commit'], ['hook', 'post-commit']):
        return FIND_HEAD, False
    return (FIND if argv[:2] == ['hook', 'commit-msg'] else None), False


def _begin_staged(at: str) -> None:
    """The pre-commit hook's `STAGED`, with the index git gave the hook
    (as porcelain/checking.hook_index names it): that hook runs it unless
    a check that reads it is skipped, then it is stopped at exit."""
    index = os.environ.get('GIT_INDEX_FILE')
    env = {'GIT_INDEX_FILE': os.path.abspath(index)} if index else None
    EARLY[early_key(at, STAGED, env)] = spawn(STAGED, at, env)


def absolute_path() -> None:
    """Keep only PATH's absolute entries: a relative one (`bin`, or an
    empty one, which means the current directory) would let a cloned
    repository's own `git` or `sh` run in place of the real one in every
    git call agitmem makes (the git shims drop them too).  Done before
    the first git process, which begin starts."""
    path = os.environ.get('PATH')
    if path is None:
        return
    kept = os.pathsep.join(p for p in path.split(os.pathsep) if os.path.isabs(p))
    if kept != path:
        # an empty PATH would mean the current directory again
        os.environ['PATH'] = kept or os.defpath


def honour_user_env(argv: list[str]) -> None:
    """Keep the GIT_DIR and GIT_WORK_TREE of a command the user ran (see
    USER_GIT_ENV); relative ones mean from here, as for git."""
    if argv[:1] == ['hook']:
        return
    for k in ('GIT_DIR', 'GIT_WORK_TREE'):
        if os.environ.get(k):
            USER_GIT_ENV[k] = os.path.abspath(os.environ[k])


def begin(argv: list[str]) -> None:
    """Start what the command in argv will wait for, in the current
    directory (session-start: where the agent runs its hooks, which its
    payload names; another directory there costs one unused process).
    Anything that fails here is left to the real call, which says so."""
    absolute_path()
    honour_user_env(argv)
    find, status = wanted(argv)
    if find is None:
        return
    try:
        at = os.getcwd()
        if status:
            STATUS_AHEAD.append((at, run_status(at)))
        EARLY[early_key(at, find, None)] = spawn(find, at)
        if argv[:2] == ['hook', 'pre-commit']:
            _begin_staged(at)
    except OSError:
        pass
    import atexit
    atexit.register(end_early)
    atexit.register(end_ahead)
