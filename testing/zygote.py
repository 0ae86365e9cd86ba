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
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

_SERVER = r'''
import atexit, importlib, io, json, os, pkgutil, sys, threading
import agitmem, agitmem.__main__
# every module a run could import, imported once here
for m in pkgutil.walk_packages(agitmem.__path__, 'agitmem.'):
    if not m.name.endswith('__main__'):
        importlib.import_module(m.name)
# the streams this interpreter's start made, as a run's start would make them
STREAMS = [(s.encoding, s.errors) for s in (sys.__stdin__, sys.__stdout__, sys.__stderr__)]
SCRIPT = sys.argv[3]
requests, replies = os.fdopen(int(sys.argv[1]), 'r'), os.fdopen(int(sys.argv[2]), 'w')
for line in requests:
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        requests.close(); replies.close()
        os.chdir(req['cwd'])
        os.environ.clear(); os.environ.update(req['env'])
        for fd, name, flags in ((0, 'in', os.O_RDONLY), (1, 'out', os.O_WRONLY), (2, 'err', os.O_WRONLY)):
            opened = os.open(os.path.join(req['dir'], name), flags)
            os.dup2(opened, fd)
            os.close(opened)
        (ie, ir), (oe, orr), (ee, er) = STREAMS
        sys.stdin = io.open(0, 'r', closefd=False, encoding=ie, errors=ir)
        sys.stdout = io.open(1, 'w', closefd=False, encoding=oe, errors=orr)
        sys.stderr = io.open(2, 'w', closefd=False, encoding=ee, errors=er, buffering=1)
        sys.argv = [SCRIPT, *req['argv']]
        rc = 1
        try:
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
                    rc = 1
        except BaseException:
            import traceback
            traceback.print_exc()
        try:
            threading._shutdown()  # the interpreter's exit joins threads first
        finally:
            try:
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                atexit._run_exitfuncs()  # what exit runs next (coverage saves here)
                os._exit(rc)
    _, status = os.waitpid(pid, 0)
    replies.write(json.dumps(os.waitstatus_to_exitcode(status)) + '\n'); replies.flush()
'''

# what decides how an interpreter starts (its streams, its flags, its
# path) rather than what agitmem does: a run that sets one of these
# differently from the server's start needs an interpreter of its own
_STARTUP = re.compile(r'PYTHON\w*|LC_\w+|LANG|LANGUAGE|COVERAGE\w*|AGITMEM_TEST_\w+|AGITMEM_SIMULATE')


def _startup(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if _STARTUP.fullmatch(k)}


class Zygote:
    """`run` is `testing.util.agitmem`'s twin: same arguments, same result."""

    def __init__(self, script: str = 'agitmem') -> None:
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix='zygote-'))
        self.started = _startup(dict(os.environ))
        req_r, self._req = os.pipe()
        self._rep, rep_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, '-P', '-c', _SERVER, str(req_r), str(rep_w), script],
            pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL,
        )
        os.close(req_r)
        os.close(rep_w)
        self._requests = os.fdopen(self._req, 'w')
        self._replies = os.fdopen(self._rep, 'r')

    def fits(self, env: dict[str, str], cwd: Path | str) -> bool:
        """Would a console script started with `env` in `cwd` start as
        the server did?"""
        return _startup(env) == self.started and os.path.isdir(cwd)

    def run(self, *argv: str, cwd: Path | str, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        with self._lock:
            return self._run(argv, cwd, input, {**os.environ, **(env or {})})

    def try_run(self, *argv: str, cwd: Path | str, input: str | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str] | None:
        """`run`, or None when the run would not start as the server did
        or another thread is running through this zygote."""
        full = {**os.environ, **(env or {})}
        if not self.fits(full, cwd) or not self._lock.acquire(blocking=False):
            return None
        try:
            return self._run(argv, cwd, input, full)
        finally:
            self._lock.release()

    def _run(self, argv: tuple[str, ...], cwd: Path | str, input: str | None,
             env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        # the bytes subprocess.run(text=True, errors='surrogateescape') would send
        for name, text in (('in', input or ''), ('out', ''), ('err', '')):
            (self._dir / name).write_text(text, encoding='utf-8', errors='surrogateescape')
        req = {'argv': list(argv), 'cwd': str(cwd), 'dir': str(self._dir), 'env': env}
        self._requests.write(json.dumps(req) + '\n')
        self._requests.flush()
        reply = self._replies.readline()
        assert reply, f'the zygote died (exit {self.proc.wait()})'
        out = (self._dir / 'out').read_text(encoding='utf-8', errors='surrogateescape')
        err = (self._dir / 'err').read_text(encoding='utf-8', errors='surrogateescape')
        return subprocess.CompletedProcess(['agitmem', *argv], json.loads(reply), out, err)

    def close(self) -> None:
        self._requests.close()
        self.proc.wait(timeout=30)
        self._replies.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


_MINE: dict[int, Zygote] = {}  # this test process's, by pid (a fork gets its own)
_STARTING = threading.Lock()


def warm(script: str) -> Zygote | None:
    """This process's zygote, started on first use; None where there is
    no fork or the suite asked for cold starts."""
    if (not hasattr(os, 'fork') or os.environ.get('AGITMEM_TEST_COLD') == '1'
            # the platform simulation patches the interpreter as it starts
            or os.environ.get('AGITMEM_TEST_PLATFORM')):
        return None
    with _STARTING:
        if os.getpid() not in _MINE:
            _MINE[os.getpid()] = z = Zygote(script)
            atexit.register(z.close)
        return _MINE[os.getpid()]
