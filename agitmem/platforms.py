"""Every difference between the platforms agitmem runs on, in one place:
locks, process groups and stopping a process tree, no-follow and
non-blocking opens, spawning, timers, and what a child inherits.  POSIX
(Linux, macOS) and Windows implementations side by side; nothing else in
agitmem/ names a POSIX-only or Windows-only function
(tests/architecture_test.py holds that).

Only os and sys are imported here: agitmem/ahead.py begins its git reads
through this module before the rest of agitmem is imported.

Which implementation runs is decided once, by what the interpreter
offers (`KIND`); the tests run the Windows and macOS implementations on
Linux with the POSIX-only names taken away (testing/platform_sim/)."""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from collections.abc import Mapping
    from typing import Any
    from typing import TypeVar
    _P = TypeVar('_P', bound='Child | Command | subprocess.Popen[Any]')


def _kind() -> str:
    # set only by the tests' simulation (testing/platform_sim/sitecustomize.py)
    simulated = getattr(sys, '_agitmem_simulated_platform', None)
    if simulated in ('windows', 'macos', 'linux'):
        return str(simulated)
    if os.name == 'nt':
        return 'windows'
    return 'macos' if sys.platform == 'darwin' else 'linux'


KIND = _kind()
WINDOWS = KIND == 'windows'
POSIX = not WINDOWS

if TYPE_CHECKING:
    from signal import getsignal
    from signal import SIG_DFL
    from signal import SIG_IGN
    from signal import signal as set_signal
    from signal import SIGCHLD
    from signal import SIGHUP
    from signal import SIGINT
    from signal import SIGKILL
    from signal import SIGPIPE
    from signal import SIGTERM
    from signal import SIGXFSZ
    from signal import pthread_sigmask
    from signal import SIG_BLOCK
    from signal import SIG_SETMASK
    from signal import valid_signals
elif POSIX:
    # the C module signal.py wraps, loaded with the interpreter: signal.py
    # imports enum, which would come before the first git call
    from _signal import getsignal
    from _signal import SIG_DFL
    from _signal import SIG_IGN
    from _signal import signal as set_signal
    from _signal import SIGCHLD
    from _signal import SIGHUP
    from _signal import SIGINT
    from _signal import SIGKILL
    from _signal import SIGPIPE
    from _signal import SIGTERM
    from _signal import SIGXFSZ
    from _signal import pthread_sigmask
    from _signal import SIG_BLOCK
    from _signal import SIG_SETMASK
    from _signal import valid_signals

# open flags: 0 where the platform has none (Windows: no FIFOs to block on,
# no controlling terminal; no-follow is done by refusing reparse points)
O_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)
O_NOCTTY = getattr(os, 'O_NOCTTY', 0)
O_NONBLOCK = 0 if WINDOWS else getattr(os, 'O_NONBLOCK', 0)
O_NOFOLLOW = 0 if WINDOWS else getattr(os, 'O_NOFOLLOW', 0)
O_DIRECTORY = 0 if WINDOWS else getattr(os, 'O_DIRECTORY', 0)
O_BINARY = getattr(os, 'O_BINARY', 0)
# Windows' FILE_ATTRIBUTE_REPARSE_POINT: symlinks and junctions
_REPARSE_POINT = 0x400
# Windows' CREATE_NEW_PROCESS_GROUP (subprocess's constant, without its import)
_NEW_GROUP = 0x200


# -- opening files ----------------------------------------------------------

def linked(path: os.PathLike[str] | str, dir_fd: int | None = None) -> bool:
    """Whether `path` is a symlink or, on Windows, any reparse point (a
    junction is a link git would follow too)."""
    import stat
    try:
        st = os.lstat(path, dir_fd=dir_fd) if dir_fd is not None else os.lstat(path)
    except OSError:
        return False  # missing: the open says so
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, 'st_file_attributes', 0) & _REPARSE_POINT)


def open_nofollow(path: os.PathLike[str] | str, flags: int, mode: int = 0o644, *, dir_fd: int | None = None) -> int:
    """os.open that refuses a symlink as the last component (OSError
    ELOOP, as O_NOFOLLOW does).  Windows has no O_NOFOLLOW: a reparse
    point is refused by lstat just before the open (a swap in between is
    a race POSIX does not have, and the docs say so)."""
    if WINDOWS:
        if linked(path, dir_fd):
            import errno
            raise OSError(errno.ELOOP, 'a symbolic link or junction', os.fspath(path))
        return os.open(path, flags | O_BINARY, mode, dir_fd=dir_fd)
    return os.open(path, flags | O_NOFOLLOW, mode, dir_fd=dir_fd)


def dir_fds() -> bool:
    """Whether directories can be opened and files opened relative to them
    (POSIX's openat); where not, callers check each component instead."""
    return not WINDOWS and os.open in os.supports_dir_fd


class LinkInTheWay(OSError):
    """open_dirs met a link where a directory was to be: `depth` is how
    many of the parts, the link's the last."""

    def __init__(self, depth: int) -> None:
        import errno
        super().__init__(errno.ELOOP, 'a link where a directory was to be')
        self.depth = depth


def open_dirs(root: os.PathLike[str] | str, parts: list[str], *, create: bool, mode: int = 0o777) -> int:
    """A descriptor of root/parts[0]/parts[1]/..., each directory opened
    relative to the last and none followed, so that no swap between a
    check and an open takes what is done there elsewhere; a missing one
    made (`mode`) when `create`.  A link on the way: LinkInTheWay; root
    itself a link: OSError (ELOOP).  Where dir_fds() only."""
    flags = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    fd = os.open(root, flags)
    try:
        for depth, part in enumerate(parts, 1):
            try:
                try:
                    sub = os.open(part, flags, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, mode, dir_fd=fd)
                    except FileExistsError:
                        pass  # made meanwhile: opened, and checked, below
                    sub = os.open(part, flags, dir_fd=fd)
            except OSError:
                if linked(part, fd):
                    raise LinkInTheWay(depth) from None
                raise
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def dup_private(fd: int, lowest: int = 3) -> int:
    """A copy of `fd` at `lowest` or above that no child inherits."""
    if WINDOWS:
        return os.dup(fd)  # not inheritable by default
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)


# -- locks ------------------------------------------------------------------

def try_lock(fd: int) -> bool:
    """Take an exclusive lock on the open file `fd` without waiting: True
    when taken, False when another process holds it (or the file system
    has no locks).  POSIX flock (the lock filelock takes on the same file,
    so the two exclude each other); Windows msvcrt's byte-range lock on
    the first byte (filelock's own choice there)."""
    if WINDOWS:
        import msvcrt
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            return False
        return True
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


# -- processes ----------------------------------------------------------------

def group_kwargs() -> dict[str, Any]:
    """subprocess.Popen's arguments that start a child in a process group
    of its own, so that stop_group stops it and all it started."""
    if WINDOWS:
        return {'creationflags': _NEW_GROUP}
    return {'process_group': 0}


def stop_group(pid: int, *, hard: bool = True) -> None:
    """Stop the process group (POSIX) or process tree (Windows) begun
    with `pid` by group_kwargs; nothing when it is gone already.  Hard:
    SIGKILL / taskkill /F; else SIGTERM (a chance to clean up)."""
    if WINDOWS:
        import subprocess
        argv = ['taskkill', '/T', '/PID', str(pid)]
        if hard:
            argv.insert(1, '/F')
        try:
            subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        return
    try:
        os.killpg(pid, SIGKILL if hard else SIGTERM)
    except OSError:
        pass  # gone meanwhile


def _kill_quietly(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass  # ended meanwhile


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and those they started, as the
    system lists them now: /proc (Linux) or `ps` (macOS and the BSDs);
    [] where neither answers.  POSIX."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children.pop(todo.pop(), [])
        found.extend(kids)
        todo.extend(kids)
    return found


def adopt_orphans() -> None:
    """Linux: what a child of this process leaves running when it ends
    (`cmd &` of a shell that exits, a daemon's `setsid -f`) becomes this
    process's child (PR_SET_CHILD_SUBREAPER), not init's, so that
    descendants(os.getpid()) still finds it.  Elsewhere, or refused:
    nothing (an orphan is found by no parent link)."""
    if not sys.platform.startswith('linux'):
        return
    args = (36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    # refused in any way (a private name gone or changed, an audit hook
    # that refuses ctypes: a sandbox's), nothing: verify's best effort,
    # which never keeps its command from running
    try:
        # ctypes' own C module: `import ctypes` (its classes, struct) is
        # 1.2 ms more, and verify's command waits on it.  The call is the
        # one ctypes.CDLL(None).prctl(*args) makes (ints as C ints); where
        # the private names are gone, ctypes itself
        import _ctypes
        _ctypes.call_function(_ctypes.dlsym(_ctypes.dlopen(None, 0), 'prctl'), args)  # type: ignore[arg-type]
        return
    except Exception:
        pass
    try:
        import ctypes
        ctypes.CDLL(None).prctl(*args)
    except Exception:
        pass


def reap_adopted() -> None:
    """Reap each ended child of this process that it did not begin (those
    it began through `start`, which their own waits reap, are let be):
    what adopt_orphans made its child, a zombie until this process ends
    otherwise (init would have reaped it).  Linux; elsewhere nothing is
    adopted."""
    if not os.path.isfile('/proc/self/stat'):
        return
    ours = {p.pid for p in _LIVE}
    me = os.getpid()
    for pid, state, parent in _proc_stats():
        if state == b'Z' and parent == me and pid not in ours:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _proc_stats() -> list[tuple[int, bytes, int]]:
    """(pid, state, parent pid) of every process /proc lists (Linux)."""
    ret = []
    for name in os.listdir('/proc'):
        try:
            with open(f'/proc/{name}/stat', 'rb') as f:
                # `pid (comm) state ppid ...`: comm may hold spaces and `)`
                state, parent = f.read().rsplit(b')', 1)[1].split()[:2]
            ret.append((int(name), state, int(parent)))
        except (OSError, ValueError, IndexError):
            continue  # not a process, or ended meanwhile
    return ret


def _parents() -> list[tuple[int, int]]:
    """(pid, parent pid) of every process this user can see."""
    if os.path.isfile('/proc/self/stat'):
        return [(pid, parent) for pid, _, parent in _proc_stats()]
    import subprocess
    try:
        out = subprocess.run(
            ['/bin/ps', '-A', '-o', 'pid=,ppid='], stdin=subprocess.DEVNULL,
            capture_output=True, timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    ret = []
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2 and words[0].isdigit() and words[1].isdigit():
            ret.append((int(words[0]), int(words[1])))
    return ret


def alive(pid: int) -> bool:
    """Whether process `pid` may still run (True when it cannot be told:
    another user's).  Windows: os.kill(pid, 0) would end it, so it is
    asked through OpenProcess."""
    if WINDOWS:
        import ctypes
        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # access denied: it exists
        try:
            code = ctypes.c_ulong()
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
            return bool(code.value == 259)  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # another user's: it is there
    return True


def inherited() -> list[int]:
    """This process's descriptors above stderr a child would inherit
    (Linux's /proc/self/fd, macOS's /dev/fd; elsewhere none are known,
    and none are closed)."""
    if WINDOWS:
        return []
    try:
        fds = [int(fd) for fd in os.listdir('/dev/fd' if KIND == 'macos' else '/proc/self/fd')]
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


def waitable() -> None:
    """SIGCHLD back to its default where this process was begun ignoring
    it (a parent's disposition, kept across exec: a supervisor's, a
    harness's that wants no zombies): ignored, the kernel reaps each child
    as it ends, and no wait (git's, verify's command's) learns how it
    ended (ChildProcessError).  Before the first child.  POSIX."""
    if POSIX and getsignal(SIGCHLD) == SIG_IGN:
        set_signal(SIGCHLD, SIG_DFL)


def can_spawn() -> bool:
    """Whether a child can be begun without subprocess (posix_spawn)."""
    return POSIX and hasattr(os, 'posix_spawnp')


def _passable(env: Mapping[str, str]) -> dict[str, str]:
    """env as posix_spawn takes it: without a variable whose name is empty
    (`env '=x' agitmem`, which the environment can hold, and git and Popen
    pass on), which it refuses with a ValueError; no program can ask for
    it by name."""
    return {k: v for k, v in env.items() if k and '=' not in k}


class _Spawned:
    """A process begun by `os.posix_spawnp`: its end, as Popen's."""
    pid: int
    returncode: int | None

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


class Child(_Spawned):
    """A process begun by `os.posix_spawnp`, before `subprocess` is
    imported (its import is a fifth of the time from exec to the first git
    call): what repo.py asks of a `subprocess.Popen` (communicate with a
    bound, poll, kill, wait, pid, returncode), in its own process group,
    stdin from /dev/null, stdout (and stderr when wanted) read through
    pipes.  POSIX only (can_spawn).  stdin=True: what `communicate`
    is given is written to a pipe instead (git's `--stdin` reads)."""

    def __init__(
            self, argv: tuple[str, ...], env: Mapping[str, str], *, text: bool, stderr: bool,
            stdin: bool = False,
    ) -> None:
        self.args = argv
        self.text = text
        self.returncode: int | None = None
        self._fds: dict[int, list[bytes]] = {}
        self._in = -1
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe() if stderr else (-1, -1)
        in_r, in_w = os.pipe() if stdin else (-1, -1)
        self._out, self._err = out_r, err_r
        try:
            if min(out_w, err_w if stderr else 3, in_r if stdin else 3) <= 2:
                # a standard stream was closed and a pipe took its number:
                # dup2 onto itself would leave it close-on-exec
                raise OSError('a standard stream is closed')
            actions: list[tuple[Any, ...]] = [
                (os.POSIX_SPAWN_DUP2, in_r, 0) if stdin else
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2) if stderr else
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                # what Popen's close_fds does: descriptors this process
                # was given to keep (an agent's, a hook manager's) are not
                # git's to hold open
                *((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited()),
            ]
            # (Python ignores SIGPIPE; git gets it back, as from Popen)
            self.pid = os.posix_spawnp(
                argv[0], argv, _passable(env), file_actions=actions, setpgroup=0, setsigdef=(SIGPIPE,),
            )
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w, in_r):
                if fd >= 0:
                    os.close(fd)
        self._in = in_w
        self._fds = {fd: [] for fd in (out_r, err_r) if fd >= 0}
        self._read: dict[int, bytes] = {}

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, SIGKILL)
            except OSError:
                pass  # gone meanwhile

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """(stdout, stderr) once both pipes end and the process has
        exited, `input` written to its stdin (begun with stdin=True) and
        the pipe closed; past `timeout` seconds `subprocess.TimeoutExpired`,
        what was read kept for the next call (as Popen does; what was not
        yet written is not written again)."""
        if self._in >= 0 and not input:
            self._close_in()
        if self._in < 0 and self.poll() is not None:
            self._drain()
        if self._fds or self._in >= 0:
            self._poll_pipes(timeout, input or b'')
        self.wait()
        out = self._read.get(self._out, b'')
        err = self._read.get(self._err) if self._err >= 0 else None
        if self.text:
            return (
                out.decode('utf-8', 'surrogateescape'),
                None if err is None else err.decode('utf-8', 'surrogateescape'),
            )
        return out, err

    def _drain(self) -> None:
        """Read the pipes of a process that has ended (a git read begun
        ahead nearly always has, by the time it is asked for): what it
        wrote is all in them, read without waiting, and without importing
        select.  A pipe a child of its own still holds open is left for
        _poll_pipes, which waits for it within the bound."""
        for fd in list(self._fds):
            os.set_blocking(fd, False)
            try:
                while chunk := os.read(fd, 1 << 16):
                    self._fds[fd].append(chunk)
            except BlockingIOError:
                os.set_blocking(fd, True)
                continue
            self._read[fd] = b''.join(self._fds.pop(fd))
            os.close(fd)

    def _close_in(self) -> None:
        os.close(self._in)
        self._in = -1

    def _write_in(self, data: memoryview) -> memoryview:
        """Write what the pipe takes now of data; the rest.  A process that
        stopped reading (it ended) gets no more, as from Popen."""
        try:
            return data[os.write(self._in, data[:1 << 16]):]
        except BlockingIOError:
            return data
        except BrokenPipeError:
            return data[:0]

    def _poll_pipes(self, timeout: float | None, data: bytes = b'') -> None:
        import select
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, select.POLLIN)
        left_in = memoryview(data)
        if self._in >= 0:
            # (never blocked on a full pipe while the process waits for its
            # stdout to be read: both are served as they are ready)
            os.set_blocking(self._in, False)
            poller.register(self._in, select.POLLOUT)
        while self._fds or self._in >= 0:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                import subprocess
                raise subprocess.TimeoutExpired(list(self.args), timeout or 0)
            for fd, _ in poller.poll(None if left is None else left * 1000):
                if fd == self._in:
                    left_in = self._write_in(left_in)
                    if not left_in:
                        poller.unregister(fd)
                        self._close_in()
                    continue
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    self._fds[fd].append(chunk)
                else:
                    poller.unregister(fd)
                    self._read[fd] = b''.join(self._fds.pop(fd))
                    os.close(fd)


class Command(_Spawned):
    """`verify`'s command begun by `os.posix_spawnp`, before `subprocess`
    is imported (with the locale and re it imports, the most of what
    came before the command could run): in this process's group (a ^C at
    the terminal reaches it), in `cwd`, stdin from /dev/null, stdout and
    stderr into one pipe, read through `stdout`; the descriptors this
    process was given closed, SIGPIPE and SIGXFSZ back to their defaults,
    as Popen does.  What verify asks of a `subprocess.Popen`: pid, args,
    returncode, stdout, poll, wait (with a bound: wait_for).  POSIX only
    (can_spawn)."""

    def __init__(self, argv: list[str], cwd: str) -> None:
        self.args = argv
        self.returncode: int | None = None
        read, write = os.pipe()
        try:
            if write <= 2:
                # a standard stream was closed (see Child): Popen, which
                # moves the pipe, begins it
                raise NotBegun('a standard stream is closed')
            actions: list[tuple[Any, ...]] = [
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, write, 1),
                (os.POSIX_SPAWN_DUP2, write, 2),
                *((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited()),
            ]
            # posix_spawn has no directory to begin in: this process moves
            # there for the spawn (it runs nothing else meanwhile), the
            # signals that stop it held off until it is back (a ^C's
            # KeyboardInterrupt, a handler, run in between, would leave it
            # there); the command is given the mask this process had
            # (only the signals Python takes: a parent that is not glibc's
            # may have blocked glibc's own two, which Python warns of)
            # (a SIGINT held meanwhile is handled by `start`, which begins
            # this: once the command is tracked, and passed on to it)
            mask = pthread_sigmask(SIG_BLOCK, (SIGINT, SIGTERM, SIGHUP)) & valid_signals()
            try:
                back = _enter(cwd)
                try:
                    self.pid = os.posix_spawnp(
                        argv[0], argv, _passable(os.environ), file_actions=actions,
                        setsigdef=(SIGPIPE, SIGXFSZ), setsigmask=mask,
                    )
                finally:
                    if back is not None:
                        os.fchdir(back)
                        os.close(back)
            finally:
                pthread_sigmask(SIG_SETMASK, mask)
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        self.stdout = open(read, 'rb', buffering=0)


class NotBegun(Exception):
    """Command did not begin its command where Popen would have (nothing
    ran): a standard stream of this process is closed, or its directory
    cannot be opened to come back to.  The caller begins it by Popen."""


def _enter(cwd: str) -> int | None:
    """Make cwd this process's directory; the one it leaves, opened (None
    when it is there already).  A directory that cannot be entered raises
    as Popen's `cwd` does; one that cannot be left for good, NotBegun."""
    try:
        if os.path.samefile(os.getcwd(), cwd):
            return None
    except OSError:
        pass  # (the current one deleted: left by a descriptor all the same)
    try:
        here = os.open('.', os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    except OSError as e:
        # a directory this process may not read or search: it could not
        # come back (Popen's child moves instead: the caller's to begin)
        raise NotBegun(str(e)) from e
    try:
        os.chdir(cwd)
    except BaseException:
        os.close(here)
        raise
    return here


def wait_for(proc: Command | subprocess.Popen[Any], seconds: float) -> bool:
    """Whether proc ends within `seconds` (reaped then)."""
    if isinstance(proc, Command):
        import time
        deadline = time.monotonic() + seconds
        delay = 0.0005  # (Popen's wait with a timeout polls so)
        while proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)
        return True
    import subprocess
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


# git processes begun in a group of their own (Child, and Popen with
# group_kwargs) until they are reaped: a SIGTERM or SIGHUP that ends this
# process stops their groups first (see tracked)
_LIVE: list[Child | Command | subprocess.Popen[Any]] = []


def start(spawn: Callable[[], _P], *, group: bool = True) -> _P:
    """`spawn()`'s process, tracked with no gap: the handlers are in place
    before it begins, and a signal that comes before it is tracked is held
    until it is (it ended this process first and left the child running:
    an agent's time limit right after verify began its command).

    Tracked: stop `proc`'s group (git and what it runs: a clean filter, an
    fsmonitor hook) if this process is ended by SIGTERM (`timeout`, an
    agent's hook time limit) or SIGHUP: in a group of its own, no signal
    sent to this one's group reaches it, and it would run on.  Not in a
    group of its own (`verify`'s command, in the terminal's group so that
    ^C reaches it): the signal is passed on to it, which a kill of this
    process alone (an agent's tool time limit) would not.  SIGINT is
    KeyboardInterrupt, which the waits stop it on.  POSIX; the handler is
    installed once, where the signal's action is the default."""
    if WINDOWS:
        return spawn()
    _guard()
    held = _hold_interrupt()
    _HELD.append(True)
    begun = []
    try:
        proc = spawn()
        begun.append(proc)
        _LIVE[:] = [p for p in _LIVE if p.returncode is None]
        _OWN_GROUP.intersection_update(p.pid for p in _LIVE)  # (a pid ended is another's later)
        _LIVE.append(proc)
        if not group:
            _OWN_GROUP.add(proc.pid)
    finally:
        _HELD.pop()
        if not _HELD and _PENDING:
            # (a ^C meanwhile still held: it does not cut this short)
            _stop_live(_PENDING.pop(), None)
        passed = False
        try:
            came = _release_interrupt(held) if held is not None else []
            if came:
                # ^C while it began: its handler run now that it is tracked
                # (Python's raises KeyboardInterrupt, whose handling stops
                # its group), and the SIGINT passed on to one begun in this
                # process's group, which the ^C came before
                if begun and not group:
                    _kill_quietly(begun[0].pid, SIGINT)
                    passed = True
                assert held is not None
                held(SIGINT, came[0])
        except KeyboardInterrupt:
            # one that came as the handler was put back, raised before the
            # caller has the process to pass it on to (verify's command:
            # one sent to agitmem alone would leave it running)
            if begun and not group and not passed:
                _kill_quietly(begun[0].pid, SIGINT)
            raise
    return proc


# the frames SIGINTs came in while a start held them (see _hold_interrupt)
_INTERRUPTS: list[Any] = []


def _hold_interrupt() -> Callable[[int, Any], Any] | None:
    """While a process is begun, a SIGINT is recorded, not handled: raised
    in the middle of Popen (its wait for the exec), KeyboardInterrupt left
    the child untracked, running on after this process (a login shell
    doctor began), and a handler run in verify's spawn left it in the
    command's directory.  The handler held off (Python's, or one of
    agitmem's that ends in it: trees.py's), run once the process is
    tracked; None where SIGINT has no Python handler (ignored, its
    default action), outside the main thread, or held already."""
    try:
        before = getsignal(SIGINT)
        if not callable(before) or before is _record_interrupt:
            return None
        # (one recorded as a handler was put back, and raised there by
        # it before it was read, is not this start's)
        _INTERRUPTS.clear()
        set_signal(SIGINT, _record_interrupt)
    except ValueError:  # not the main thread
        return None
    return before


def _record_interrupt(sig: int, frame: object) -> None:
    _INTERRUPTS.append(frame)


def _release_interrupt(before: Callable[[int, Any], Any]) -> list[Any]:
    """SIGINT's handler back; the frames the SIGINTs that came meanwhile
    came in (the first is what the handler is given, as Python would)."""
    set_signal(SIGINT, before)
    came = _INTERRUPTS[:]
    _INTERRUPTS.clear()
    return came


def _guard() -> None:
    if _GUARDED:
        return
    for sig in (SIGTERM, SIGHUP):
        try:
            if getsignal(sig) == SIG_DFL:
                set_signal(sig, _stop_live)
        except ValueError:  # not the main thread: no handlers (a call there installs them)
            return
    _GUARDED.append(True)


_GUARDED: list[bool] = []
# the pids of children tracked in this process's own group
_OWN_GROUP: set[int] = set()
# a start under way (signals are held), and the signal held
_HELD: list[bool] = []
_PENDING: list[int] = []


def _stop_live(sig: int, frame: object) -> None:
    if _HELD:
        _PENDING[:] = [sig]
        return
    if _OWN_GROUP:
        # a child in this process's group, its children too (a test
        # runner's workers), and what it left running though it has ended
        # (adopted: adopt_orphans): every descendant, all found before any
        # is signalled, while each names its parent
        for pid in descendants(os.getpid()):
            _kill_quietly(pid, sig)
    stop_grouped()
    end_as(sig)


def stop_grouped() -> None:
    """Stop every tracked process still running in a group of its own
    (this process ends on ^C, which reaches none of them)."""
    for proc in _LIVE:
        try:
            if proc.pid not in _OWN_GROUP and proc.poll() is None:
                stop_group(proc.pid)
        except OSError:
            pass  # reaped meanwhile


def interrupt(proc: Command | subprocess.Popen[Any]) -> None:
    """Pass a SIGINT on to `proc`, begun in this process's group, and to
    what it started or left running (every descendant: see _stop_live).
    POSIX; on Windows a console's Ctrl+C reaches the whole console, and
    no other can be sent to one process."""
    if WINDOWS:
        return
    proc.poll()  # (reaped when it has ended)
    for pid in descendants(os.getpid()):
        _kill_quietly(pid, SIGINT)


def stop(proc: Child | subprocess.Popen[Any]) -> tuple[Any, Any]:
    """Stop a process begun in a group of its own and whatever it started
    (ssh, a remote helper, an fsmonitor hook, a test runner's children),
    so no child holds the pipes open after it.  Not once it has been
    reaped (its group's id may be another's by then).  What it wrote
    until then."""
    if proc.poll() is None:
        stop_group(proc.pid)
    return proc.communicate()


# -- signals and timers -------------------------------------------------------

# what stops a command from outside: `timeout` and a hook's time limit send
# SIGTERM; SIGHUP is POSIX's alone
STOPPING = ('SIGTERM', 'SIGINT') if WINDOWS else ('SIGTERM', 'SIGINT', 'SIGHUP')


def end_as(sig: int) -> None:
    """End this process as `sig`'s default action would (the caller sees
    the conventional status); Windows has no default action to re-raise:
    it exits with 128 + the signal's number."""
    if WINDOWS:
        os._exit(128 + sig)
    import signal
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def set_alarm(seconds: float, handler: Any) -> Any:
    """Call `handler` in the main thread after `seconds`; returns what to
    give cancel_alarm, or None where there is no such timer (Windows, a
    thread other than the main one)."""
    if WINDOWS:
        return None
    import signal
    if not hasattr(signal, 'setitimer'):
        return None
    try:
        old = signal.signal(signal.SIGALRM, handler)
    except ValueError:  # not the main thread (nor threading imported to ask)
        return None
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return (old,)


def cancel_alarm(token: Any) -> None:
    if token is None:
        return
    import signal
    signal.setitimer(signal.ITIMER_REAL, 0)
    old = token[0]
    signal.signal(signal.SIGALRM, signal.SIG_DFL if old is None else old)


# -- hooks --------------------------------------------------------------------

def shell() -> str:
    """The shell git and the agent clients run hook scripts with: `sh`
    (Git for Windows ships its own sh.exe, which runs agitmem's POSIX sh
    shims; the clients on Windows run hooks through it too)."""
    return 'sh'


def describe() -> str:
    """One line for doctor: the platform and what agitmem does there."""
    if KIND == 'windows':
        return 'Windows (msvcrt locks, process trees stopped with taskkill, reparse points refused)'
    if KIND == 'macos':
        return 'macOS (POSIX; case-insensitive file systems compared as git does)'
    return 'Linux (POSIX)'


def unchecked() -> list[str]:
    """What doctor cannot check on this platform."""
    if KIND == 'windows':
        return [
            'no-follow opens: a reparse point swapped in between the check and the open is not caught',
            'the regular-expression time limit (no SIGALRM): only the static ReDoS guard applies',
        ]
    return []
