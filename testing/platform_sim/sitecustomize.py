"""Run agitmem as Windows or macOS would, on Linux (the tests' simulation).

Loaded by Python at start-up when this directory is on PYTHONPATH and
AGITMEM_SIMULATE is `windows` or `macos`.  For Windows it takes away what
Windows does not have (fcntl, process groups by id, posix_spawn, O_NOFOLLOW,
O_NONBLOCK, O_DIRECTORY, setitimer, SIGALRM/SIGHUP) and puts
in stand-ins for what agitmem's Windows implementation calls (msvcrt's
byte-range lock, CREATE_NEW_PROCESS_GROUP, taskkill, kernel32's
OpenProcess), each built on the Linux call that behaves the same way.  A
call agitmem makes outside agitmem/platforms.py to a removed name fails
here as it would on Windows.  For macOS it only tells agitmem.platforms so
(/dev/fd rather than /proc); the file system's case and Unicode folding is
simulated with git's own settings by the tests.

What this cannot show: the real Win32 calls, NTFS's reparse points, Git for
Windows' sh.  docs/platforms.md says which is which."""
from __future__ import annotations

import os
import sys

_KIND = os.environ.get('AGITMEM_SIMULATE', '')


def _windows() -> None:
    import fcntl as _fcntl
    import signal
    import subprocess
    import types

    sys._agitmem_simulated_platform = 'windows'  # type: ignore[attr-defined]

    # msvcrt.locking on the first byte: flock on the whole file excludes
    # the same way between processes
    msvcrt = types.ModuleType('msvcrt')
    msvcrt.LK_NBLCK = 2  # type: ignore[attr-defined]
    msvcrt.LK_UNLCK = 0  # type: ignore[attr-defined]
    msvcrt.LK_LOCK = 1  # type: ignore[attr-defined]

    def locking(fd: int, mode: int, nbytes: int) -> None:
        if mode == 0:
            _fcntl.flock(fd, _fcntl.LOCK_UN)
        elif mode == 1:
            _fcntl.flock(fd, _fcntl.LOCK_EX)
        else:
            try:
                _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
            except BlockingIOError:
                raise PermissionError(13, 'Permission denied')  # what msvcrt raises

    msvcrt.locking = locking  # type: ignore[attr-defined]
    sys.modules['msvcrt'] = msvcrt
    # filelock picks WindowsFileLock on win32: a lock that waits on the
    # same msvcrt byte lock is its stand-in
    import filelock
    import time

    class _WindowsFileLock:
        def __init__(self, path: str, timeout: float = -1) -> None:
            self.path, self.timeout, self.fd, self.depth = path, timeout, -1, 0

        def __enter__(self) -> _WindowsFileLock:
            return self.acquire()

        def __exit__(self, *exc: object) -> None:
            self.release()

        # filelock's own API, which agitmem calls (store.locked)
        def acquire(self) -> _WindowsFileLock:
            self.depth += 1  # re-entrant, as filelock's locks are
            if self.depth > 1:
                return self
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            deadline = time.monotonic() + (self.timeout if self.timeout >= 0 else 1e9)
            while True:
                try:
                    locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        self.depth -= 1
                        os.close(fd)
                        raise filelock.Timeout(self.path) from None
                    time.sleep(0.01)
            self.fd = fd
            return self

        def release(self) -> None:
            self.depth -= 1
            if self.depth == 0:
                os.close(self.fd)  # closing releases it
                self.fd = -1

    filelock.FileLock = _WindowsFileLock  # type: ignore[misc,assignment]
    sys.modules['fcntl'] = None  # type: ignore[assignment]  # ImportError, as on Windows

    # (what Linux's own subprocess needs inside, WNOHANG and SIGKILL, stays:
    # on Windows it is not asked for; tests/platforms_test.py's AST check
    # keeps agitmem from naming them)
    for name in (
            'killpg', 'getpgid', 'setpgid', 'setsid', 'posix_spawn', 'posix_spawnp', 'fork',
            'O_NOFOLLOW', 'O_NONBLOCK', 'O_DIRECTORY', 'O_NOCTTY',
    ):
        if hasattr(os, name):
            delattr(os, name)
    for name in ('setitimer', 'ITIMER_REAL', 'SIGALRM', 'SIGHUP', 'alarm'):
        if hasattr(signal, name):
            delattr(signal, name)

    # CREATE_NEW_PROCESS_GROUP: the child leads a group of its own
    popen_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
        if 'process_group' in kwargs or 'start_new_session' in kwargs or 'preexec_fn' in kwargs:
            raise ValueError('POSIX-only argument to Popen under the Windows simulation')
        flags = kwargs.pop('creationflags', 0)
        if isinstance(flags, int) and flags & 0x200:
            kwargs['process_group'] = 0
        popen_init(self, *args, **kwargs)  # type: ignore[arg-type]

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]
    subprocess.CREATE_NEW_PROCESS_GROUP = 0x200  # type: ignore[attr-defined]

    # kernel32's OpenProcess / GetExitCodeProcess, for platforms.alive
    import ctypes

    class _Kernel32:
        def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return 0
            except OSError:
                self._error = 5
                return 0
            return pid

        def GetLastError(self) -> int:
            return getattr(self, '_error', 87)

        def GetExitCodeProcess(self, handle: int, code: object) -> int:
            code._obj.value = 259  # type: ignore[attr-defined]  # byref's object
            return 1

        def CloseHandle(self, handle: int) -> int:
            return 1

    ctypes.windll = types.SimpleNamespace(kernel32=_Kernel32())  # type: ignore[attr-defined]

    # taskkill /F /T /PID n: the tree is the group the child leads here
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ['PATH'] = os.path.join(here, 'bin') + os.pathsep + os.environ.get('PATH', '')


if _KIND == 'windows':
    _windows()
elif _KIND == 'macos':
    sys._agitmem_simulated_platform = 'macos'  # type: ignore[attr-defined]
