"""A warm agitmem: the suite's way to start the CLI without starting an
interpreter for each of its thousands of runs.

A server process imports every agitmem module once; each run is a fork
of it that takes the run's working directory, environment and stdin,
calls the console script's `main` with the run's arguments, and ends as
the program does (threads joined, atexit functions run, the exit code
`sys.exit(main())` would give).  What a run skips is the interpreter's
start and the imports (under coverage, also coverage's start): 100-300 ms
a run.  What it keeps is everything agitmem does, git and its
subprocesses included.

`testing.util.agitmem` runs through one per test process when the run
would start the same interpreter the server started with (`fits`: the
same variables that shape a start, a working directory that exists);
otherwise, whenever another thread holds it (two agents at once stay two
processes), and under the platform simulation, it starts the console
script.  Tests about the program's start (imports, signals) start it
themselves.  AGITMEM_TEST_COLD=1 turns the
warm path off; tests/memory/episodes_test.py plays episodes both ways
and compares what the recovery log says.

The server is started as a subprocess, so coverage measures it as it
measures the console script (the `fork` patch in pyproject.toml gives
each run its own data file).  POSIX only (fork)."""
from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO

_SERVER = r'''
import atexit, importlib, io, json, os, pkgutil, sys, threading
import agitmem, agitmem.__main__
# every module a run could import, imported once here
for m in pkgutil.walk_packages(agitmem.__path__, 'agitmem.'):
    if not m.name.endswith('__main__'):
        importlib.import_module(m.name)
if sys.argv[4] == 'mcp':
    try:  # what `agitmem mcp` imports (the mcp extra): a second and more
        import anyio, mcp_types, mcp.server.lowlevel, mcp.server.stdio
    except ImportError:
        pass
# what agitmem imports as it runs (the parsers, a hash) rather than at
# import: a run would import them again in every fork
import argparse, shutil, textwrap, _sha1, encodings.unicode_escape
# the streams this interpreter's start made, as a run's start would make them
STREAMS = [(s.encoding, s.errors) for s in (sys.__stdin__, sys.__stdout__, sys.__stderr__)]
SCRIPT = sys.argv[3]
requests, replies = os.fdopen(int(sys.argv[1]), 'r'), os.fdopen(int(sys.argv[2]), 'w')
for line in requests:
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        rc = 1
        try:  # whatever happens here, this process ends here
            requests.close(); replies.close()
            # stdin first: the caller's feeder waits on the pipe's reader
            for fd, name, flags in ((0, 'in', os.O_RDONLY), (1, 'out', os.O_WRONLY), (2, 'err', os.O_WRONLY)):
                opened = os.open(os.path.join(req['dir'], name), flags)
                os.dup2(opened, fd)
                os.close(opened)
            (ie, ir), (oe, orr), (ee, er) = STREAMS
            sys.stdin = io.open(0, 'r', closefd=False, encoding=ie, errors=ir)
            sys.stdout = io.open(1, 'w', closefd=False, encoding=oe, errors=orr)
            sys.stderr = io.open(2, 'w', closefd=False, encoding=ee, errors=er, buffering=1)
            os.chdir(req['cwd'])
            os.environ.clear(); os.environ.update(req['env'])
            sys.argv = [SCRIPT, *req['argv']]
            try:
                sys.exit(agitmem.__main__.main())
            except SystemExit as e:
                # what the interpreter makes of sys.exit's argument
                if e.code is None:
                    rc = 0
                elif isinstance(e.code, int):
                    rc = e.code & 0xff
                else:
                    print(e.code, file=sys.stderr)
            threading._shutdown()  # the interpreter's exit joins threads first
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                atexit._run_exitfuncs()  # what exit runs next (coverage saves here)
                os._exit(rc)
    replies.write(f'{pid}\n'); replies.flush()  # for a caller's timeout to stop
    _, status = os.waitpid(pid, 0)
    replies.write(json.dumps(os.waitstatus_to_exitcode(status)) + '\n'); replies.flush()
'''

# what decides how an interpreter starts (its streams, its flags, its
# path) rather than what agitmem does: a run that sets one of these
# differently from the server's start needs an interpreter of its own
_STARTUP = re.compile(r'PYTHON\w*|LC_\w+|LANG|LANGUAGE|COVERAGE\w*|AGITMEM_TEST_\w+|AGITMEM_SIMULATE')


def _startup(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if _STARTUP.fullmatch(k)}


def _bytes(text: str | None) -> bytes:
    # what subprocess.run(text=True, errors='surrogateescape') would send
    return (text or '').encode('utf-8', 'surrogateescape')


def _feed(fifo: Path, data: bytes) -> None:
    """Write a run's stdin into its pipe; what it does not read is
    dropped when it exits, as subprocess.run drops it."""
    try:
        with open(fifo, 'wb') as pipe:
            pipe.write(data)
    except BrokenPipeError:
        pass


def _text(done: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(
        done.args, done.returncode,
        done.stdout.decode('utf-8', 'surrogateescape'), done.stderr.decode('utf-8', 'surrogateescape'),
    )


class Zygote:
    """`run` is `testing.util.agitmem`'s twin: same arguments, same result."""

    def __init__(self, script: str = 'agitmem', *, measured: bool = True, mcp: bool = False) -> None:
        """measured=False: coverage does not follow the server or its runs
        (the labelled sets' plays: they measure the judge, and coverage's
        save in each of their thousands of runs was most of their time).
        mcp=True: the server has the MCP SDK imported too, for `agitmem
        mcp` runs.  Only then: it doubles the server's memory, and each
        fork's cost grows with it (7 against 2.6 ms of CPU a fork)."""
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix='zygote-'))
        os.mkfifo(self._dir / 'in')
        env = dict(os.environ)
        if not measured:
            env = {k: v for k, v in env.items() if k not in ('COVERAGE_PROCESS_CONFIG', 'COVERAGE_PROCESS_START')}
        self.started = _startup(env)
        req_r, self._req = os.pipe()
        self._rep, rep_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, '-P', '-c', _SERVER, str(req_r), str(rep_w), script, 'mcp' if mcp else ''],
            pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL, env=env,
        )
        os.close(req_r)
        os.close(rep_w)
        self._requests = os.fdopen(self._req, 'w')
        self._pending = b''

    def fits(self, env: dict[str, str], cwd: Path | str) -> bool:
        """Would a console script started with `env` in `cwd` start as
        the server did?"""
        return _startup(env) == self.started and os.path.isdir(cwd)

    def run(self, *argv: str, cwd: Path | str, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        with self._lock:
            return _text(self._run(argv, cwd, _bytes(input), {**os.environ, **(env or {})}))

    def try_run(self, *argv: str, cwd: Path | str, input: str | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str] | None:
        """`run`, or None when the run would not start as the server did
        or another thread is running through this zygote."""
        done = self.try_run_bytes(list(argv), cwd=cwd, stdin=_bytes(input), env=env)
        return None if done is None else _text(done)

    def try_run_bytes(self, argv: list[str], *, cwd: Path | str, stdin: bytes = b'',
                      env: dict[str, str] | None = None,
                      timeout: float | None = None) -> subprocess.CompletedProcess[bytes] | None:
        """`try_run` with stdin and output as bytes and, as
        subprocess.run's, a timeout that kills the run and raises
        TimeoutExpired."""
        full = {**os.environ, **(env or {})}
        if not self.fits(full, cwd) or not self._lock.acquire(blocking=False):
            return None
        try:
            return self._run(tuple(argv), cwd, stdin, full, timeout)
        finally:
            self._lock.release()

    def try_popen(self, argv: list[str], *, cwd: Path | str,
                  env: dict[str, str] | None = None) -> Warm | None:
        """A run to talk to as subprocess.Popen(..., stdin=PIPE,
        stdout=PIPE, stderr=PIPE, text=True) gives one (an MCP server),
        or None as try_run's.  The zygote is this run's until it ends.
        `env` is the whole environment, as Popen's is."""
        full = dict(os.environ if env is None else env)
        if not self.fits(full, cwd) or not self._lock.acquire(blocking=False):
            return None
        try:
            streams = Path(tempfile.mkdtemp(dir=self._dir))
            for name in ('in', 'out', 'err'):
                os.mkfifo(streams / name)
            req = {'argv': list(argv), 'cwd': str(cwd), 'dir': str(streams), 'env': full}
            self._requests.write(json.dumps(req) + '\n')
            self._requests.flush()
            # opened in the order the run opens them (each open waits for the other end)
            stdin = open(streams / 'in', 'w', encoding='utf-8')
            stdout = open(streams / 'out', encoding='utf-8')
            stderr = open(streams / 'err', encoding='utf-8')
            return Warm(self, int(self._line(None)), ['agitmem', *argv], stdin, stdout, stderr)
        except BaseException:
            self._lock.release()
            raise

    def _run(self, argv: tuple[str, ...], cwd: Path | str, stdin: bytes,
             env: dict[str, str], timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
        (self._dir / 'out').write_bytes(b'')
        (self._dir / 'err').write_bytes(b'')
        req = {'argv': list(argv), 'cwd': str(cwd), 'dir': str(self._dir), 'env': env}
        self._requests.write(json.dumps(req) + '\n')
        self._requests.flush()
        # stdin is a pipe, as subprocess.run's input is (a run may look:
        # /dev/stdin as a transcript path is not a regular file)
        feeder = threading.Thread(target=_feed, args=(self._dir / 'in', stdin), daemon=True)
        feeder.start()
        pid = int(self._line(None))
        try:
            code = json.loads(self._line(timeout))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)  # as subprocess.run does at its timeout
            self._line(None)
            raise subprocess.TimeoutExpired(['agitmem', *argv], timeout or 0) from None
        feeder.join()
        out = (self._dir / 'out').read_bytes()
        err = (self._dir / 'err').read_bytes()
        return subprocess.CompletedProcess(['agitmem', *argv], code, out, err)

    def _line(self, timeout: float | None) -> str:
        """The server's next reply line, read from the pipe as it comes
        (a buffered reader would hide a line select cannot see)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b'\n' not in self._pending:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and (left <= 0 or not select.select([self._rep], [], [], left)[0]):
                raise subprocess.TimeoutExpired('agitmem', timeout or 0)
            chunk = os.read(self._rep, 4096)
            assert chunk, f'the zygote died (exit {self.proc.wait()})'
            self._pending += chunk
        line, self._pending = self._pending.split(b'\n', 1)
        return line.decode()

    def close(self) -> None:
        self._requests.close()
        self.proc.wait(timeout=30)
        os.close(self._rep)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class Warm:
    """What a test uses of a subprocess.Popen, for a run of a zygote."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str],
                 stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> None:
        self._zygote = zygote
        self.pid = pid
        self.args = args
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self._ended(self._zygote._line(0))
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._ended(self._zygote._line(timeout))
        assert self.returncode is not None
        return self.returncode

    def _ended(self, line: str) -> None:
        self.returncode = int(json.loads(line))
        self._zygote._lock.release()

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)


# this test process's, by pid (a fork gets its own) and by whether it
# serves `agitmem mcp`
_MINE: dict[tuple[int, bool], Zygote] = {}
_STARTING = threading.Lock()


def warm(script: str, *, mcp: bool = False) -> Zygote | None:
    """This process's zygote, started on first use; None where there is
    no fork or the suite asked for cold starts.  mcp=True: the one for
    `agitmem mcp` runs (the SDK imported)."""
    if (not hasattr(os, 'fork') or os.environ.get('AGITMEM_TEST_COLD') == '1'
            # the platform simulation patches the interpreter as it starts
            or os.environ.get('AGITMEM_TEST_PLATFORM')):
        return None
    with _STARTING:
        key = (os.getpid(), mcp)
        if key not in _MINE:
            _MINE[key] = z = Zygote(script, mcp=mcp)
            atexit.register(z.close)
        return _MINE[key]
