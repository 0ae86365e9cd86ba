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

from agitmem import platforms
from agitmem.platforms import Child as Child

# typing is not imported ahead of the first git call (mypy takes any name
# TYPE_CHECKING as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import Any

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

# the working tree's status as trees.fast_tree reads it: paths from the top
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
EARLY: dict[EarlyKey, Child | subprocess.Popen[bytes]] = {}
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


def _child(
        argv: tuple[str, ...], cwd: os.PathLike[str] | str, env: Mapping[str, str],
        *, text: bool, stderr: bool, stdin: bool = False,
) -> Child | None:
    """`argv` begun by posix_spawn, where it can be: before `subprocess` is
    imported and in the current directory (posix_spawn has no directory of
    its own to run in); None where Popen is to begin it.  No git on PATH
    raises, as Popen would."""
    if 'subprocess' in sys.modules or os.fspath(cwd) != _here() or not platforms.can_spawn():
        return None
    try:
        return platforms.start(lambda: Child(argv, env, text=text, stderr=stderr, stdin=stdin))
    except FileNotFoundError:
        raise
    except OSError:
        return None  # anything else: Popen, which says it better


def _here() -> str | None:
    """The current directory; None when it is gone (deleted under an agent
    whose hook's payload names the repository: git runs there, by Popen,
    rather than `git is not installed` being said)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def child(
        argv: tuple[str, ...], cwd: os.PathLike[str] | str, env: Mapping[str, str], *, stderr: bool = False,
) -> Child | None:
    """git plumbing fed on its stdin (repo.git_bytes), stdout as bytes,
    stderr read when asked (else to /dev/null), begun as `_child` begins
    the reads; None where Popen is to begin it."""
    return _child(argv, cwd, env, text=False, stderr=stderr, stdin=True)


def spawn(
        args: tuple[str, ...], cwd: os.PathLike[str] | str, env: Mapping[str, str] | None = None,
) -> Child | subprocess.Popen[bytes]:
    """A git read begun (see _child), its output as bytes either way
    (repo.git_each decodes it: Popen's text mode would read a CR in a
    path or a line as a newline, which posix_spawn's Child does not)."""
    argv = ('git', '--no-optional-locks', *args)
    child = _child(argv, cwd, clean_env(env), text=False, stderr=True)
    if child is not None:
        return child
    import subprocess
    return platforms.start(lambda: subprocess.Popen(
        argv, cwd=cwd, env=clean_env(env),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        **platforms.group_kwargs(),  # stopped whole past its bound (repo.git_each)
    ))


def run_status(cwd: os.PathLike[str] | str) -> Child | subprocess.Popen[bytes]:
    """The working tree's status begun (see _child), in a process group of
    its own: with what it runs (an fsmonitor hook), one signal stops it."""
    child = _child(STATUS, cwd, clean_env(), text=False, stderr=False)
    if child is not None:
        return child
    import subprocess
    return platforms.start(lambda: subprocess.Popen(
        STATUS, cwd=cwd, env=clean_env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        **platforms.group_kwargs(),
    ))


def kill(proc: Child | subprocess.Popen[Any]) -> tuple[Any, Any]:
    """Stop a git process and whatever it started (ssh, a remote helper,
    an fsmonitor hook): platforms.stop.  What it wrote until then."""
    return platforms.stop(proc)


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
    no HEAD), `check --staged` what the pre-commit hook does, post-edit,
    prompt and stop where the repository is."""
    if argv[:1] == ['load'] or argv[:2] in (['state', 'set'], ['hook', 'session-start']):
        return FIND_HEAD, True
    if argv[:1] == ['verify'] or argv[:2] in (['hook', 'pre-commit'], ['hook', 'post-commit']) or _check_staged(argv):
        return FIND_HEAD, False
    if argv[:2] in (['hook', 'post-edit'], ['hook', 'stop']) or argv[:2] == ['hook', 'prompt'] and not _gemini(argv):
        # the agent hooks: where the repository is (cli._hook asks for it
        # again in the directory the payload names: begun once when that
        # is this one)
        return FIND, False
    return (FIND if argv[:2] == ['hook', 'commit-msg'] else None), False


# `check`'s flags that take no value: read without argparse (cli._check_call)
CHECK_FLAGS = ('--staged', '--json')


def _check_staged(argv: list[str]) -> bool:
    """`check --staged [--json]`: the pre-commit hook's checks, typed."""
    return argv[:1] == ['check'] and '--staged' in argv and all(a in CHECK_FLAGS for a in argv[1:])


def _gemini(argv: list[str]) -> bool:
    """Gemini CLI's `hook prompt`: its BeforeModel, before every model
    call, nearly always ends without git (porcelain/model_calls.py)."""
    return argv[2:4] == ['--agent', 'gemini'] or argv[2:3] == ['--agent=gemini']


# the pre-commit shim's `STAGED` (githooks._STAGED), begun by the shim and
# given on stdin: set (for the shim's process alone) to say so
STAGED_ON_STDIN = 'AGITMEM_STAGED_ON_STDIN'
# [the index it was read from (as hook_index names it: None for git's
# own)] while it is on stdin, unread (checks/staged.py reads it)
PIPED: list[str | None] = []


def _begin_staged(at: str, *, shim: bool = False) -> None:
    """The pre-commit hook's `STAGED`, with the index git gave the hook
    (as porcelain/checking.hook_index names it): that hook runs it unless
    a check that reads it is skipped, then it is stopped at exit.  Begun
    by the hook's shim (`shim`: the hook's own run), it is on stdin: not
    begun again."""
    index = os.environ.get('GIT_INDEX_FILE')
    env = {'GIT_INDEX_FILE': os.path.abspath(index)} if index else None
    # (never passed on: git's processes, and the hook's, are not the shim's)
    piped = os.environ.pop(STAGED_ON_STDIN, None) == '1'
    if shim and piped and _fifo(0):
        PIPED.append(env['GIT_INDEX_FILE'] if env else None)
        return
    EARLY[early_key(at, STAGED, env)] = spawn(STAGED, at, env)


def _fifo(fd: int) -> bool:
    """Whether fd is a pipe (what the shim gives: a terminal, a file or
    nothing at all is no staged diff)."""
    import stat
    try:
        return not platforms.WINDOWS and stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def staged_for(top: str) -> None:
    """The staged diff _begin_staged began where `check --staged` was
    typed, taken as the one of the repository's top, where the checks ask
    for it: diff-index names paths from the top wherever it runs (typed in
    a subdirectory, or elsewhere with GIT_DIR and GIT_WORK_TREE, the one
    begun was left unread and the index read again)."""
    for key in [k for k in EARLY if k[1] == STAGED and k[0] != top]:
        moved = (top, *key[1:])
        if moved not in EARLY:
            EARLY[moved] = EARLY.pop(key)


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
    platforms.waitable()
    absolute_path()
    honour_user_env(argv)
    find, status = wanted(argv)
    if find is None:
        return
    try:
        at = os.getcwd()
        if status:
            STATUS_AHEAD.append((at, run_status(at)))
        if argv[:2] == ['hook', 'pre-commit'] or _check_staged(argv):
            # the longest read first (the index: 10 ms at 100,000 files),
            # not after the other's start
            _begin_staged(at, shim=argv[:2] == ['hook', 'pre-commit'])
        EARLY[early_key(at, find, None)] = spawn(find, at)
    except OSError:
        pass
    import atexit
    atexit.register(end_early)
    atexit.register(end_ahead)
