"""A warm agitmem for a test that starts the CLI thousands of times (the
recovery episodes: about 13 runs each, 450 episodes).

A server process imports every agitmem module once; each run is a fork
of it that takes the run's working directory, environment and stdin,
calls the console script's `main` with the run's arguments, and ends as
the program does.  What a run skips is the interpreter's start and the
imports (under coverage, also coverage's start): 100-300 ms a run.  What
it keeps is everything agitmem does, git and its subprocesses included.
tests/memory/episodes_test.py plays episodes both ways and compares
what the recovery log says.

The server is started as a subprocess, so coverage measures it as it
measures the console script (the `fork` patch in pyproject.toml gives
each run its own data file).  POSIX only (fork)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

_SERVER = r'''
import atexit, importlib, io, json, os, pkgutil, sys
import agitmem, agitmem.__main__
# every module a run could import, imported once here
for m in pkgutil.walk_packages(agitmem.__path__, 'agitmem.'):
    if not m.name.endswith('__main__'):
        importlib.import_module(m.name)
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
            os.dup2(os.open(os.path.join(req['dir'], name), flags), fd)
        # the streams a started interpreter makes on those fds
        sys.stdin = io.open(0, 'r', closefd=False, encoding='utf-8', errors='strict')
        sys.stdout = io.open(1, 'w', closefd=False, encoding='utf-8', errors='strict')
        sys.stderr = io.open(2, 'w', closefd=False, encoding='utf-8', errors='backslashreplace', buffering=1)
        sys.argv = ['agitmem', *req['argv']]
        rc = 1
        try:
            rc = agitmem.__main__.main()
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
        try:
            sys.stdout.flush(); sys.stderr.flush()
        finally:
            atexit._run_exitfuncs()  # what the program's exit runs (coverage saves here)
            os._exit(rc)
    _, status = os.waitpid(pid, 0)
    replies.write(json.dumps(os.waitstatus_to_exitcode(status)) + '\n'); replies.flush()
'''


class Zygote:
    """`run` is `testing.util.agitmem`'s twin: same arguments, same result."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix='zygote-'))
        req_r, self._req = os.pipe()
        self._rep, rep_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, '-P', '-c', _SERVER, str(req_r), str(rep_w)], pass_fds=(req_r, rep_w),
            stdin=subprocess.DEVNULL,
        )
        os.close(req_r)
        os.close(rep_w)
        self._requests = os.fdopen(self._req, 'w')
        self._replies = os.fdopen(self._rep, 'r')

    def run(self, *argv: str, cwd: Path | str, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        with self._lock:
            for name, text in (('in', input or ''), ('out', ''), ('err', '')):
                (self._dir / name).write_text(text, encoding='utf-8')
            req = {
                'argv': list(argv), 'cwd': str(cwd), 'dir': str(self._dir),
                'env': {**os.environ, **(env or {})},
            }
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

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
