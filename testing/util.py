"""Shared test helpers: real git repositories, the real CLI."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from testing import zygote

_AGITMEM = shutil.which('agitmem', path=os.path.dirname(sys.executable)) or shutil.which('agitmem')


def run(*cmd: str, cwd: Path | str, input: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = None if env is None else {**os.environ, **env}
    # surrogateescape: git prints ref names as bytes (a branch `caf\xe9`)
    return subprocess.run(
        cmd, cwd=cwd, input=input, capture_output=True, text=True,
        errors='surrogateescape', env=full_env,
    )


def git(*args: str, cwd: Path | str, env: dict[str, str] | None = None) -> str:
    proc = run('git', *args, cwd=cwd, env=env)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


def agitmem_argv() -> list[str]:
    """How to run the installed console script."""
    return [_AGITMEM] if _AGITMEM else [sys.executable, '-m', 'agitmem']


def agitmem(*args: str, cwd: Path | str, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it: through this
    process's warm agitmem (testing/zygote.py) when the run would start
    as it did, else started afresh."""
    z = zygote.warm(_AGITMEM, mcp=args[:1] == ('mcp',)) if _AGITMEM else None
    done = z.try_run(*args, cwd=cwd, input=input, env=env) if z else None
    return done or started(*args, cwd=cwd, input=input, env=env)


def started(*args: str, cwd: Path | str, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The console script in an interpreter of its own, always."""
    return run(*agitmem_argv(), *args, cwd=cwd, input=input, env=env)


def ok(*args: str, cwd: Path | str, input: str | None = None,
       env: dict[str, str] | None = None,
       cli: Callable[..., subprocess.CompletedProcess[str]] | None = None) -> str:
    """A command that must succeed (through `cli`, a runner with
    `agitmem`'s arguments: a zygote's `run`); its stdout."""
    proc = (cli or agitmem)(*args, cwd=cwd, input=input, env=env)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def bad(*args: str, cwd: Path | str, code: int = 2, input: str | None = None,
        env: dict[str, str] | None = None) -> str:
    """Run a command expected to refuse: the exit code, one line on stderr,
    no traceback.  Returns that line."""
    proc = agitmem(*args, cwd=cwd, input=input, env=env)
    assert proc.returncode == code, (args, proc.returncode, proc.stdout, proc.stderr)
    assert 'Traceback' not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def tip(repo: Path, ref: str = 'refs/agitmem/heads/main') -> str | None:
    proc = run('git', 'rev-parse', '-q', '--verify', ref, cwd=repo)
    return proc.stdout.strip() if proc.returncode == 0 else None


def message(repo: Path, rev: str = 'refs/agitmem/heads/main') -> str:
    return git('log', '-1', '--format=%B', rev, cwd=repo)


def count(repo: Path, ref: str = 'refs/agitmem/heads/main') -> int:
    return int(git('rev-list', '--count', ref, cwd=repo))


def git_state(repo: Path) -> tuple[str, bytes, str, str]:
    """What a user sees of their repo: status, the index bytes, HEAD and
    the code branches.  Must be byte-identical around every agitmem call."""
    gd = Path(git('rev-parse', '--absolute-git-dir', cwd=repo).strip())
    index = gd / 'index'
    return (
        git('status', '--porcelain=v2', '--branch', '--untracked-files=all', cwd=repo),
        index.read_bytes() if index.exists() else b'',
        (gd / 'HEAD').read_text(errors='surrogateescape'),
        git('for-each-ref', 'refs/heads', 'refs/tags', cwd=repo),
    )


def mem(repo: Path, name: str) -> Path:
    return repo / '.agent' / 'memory' / name


def pid_from(path: Path, timeout: float = 30) -> int:
    """The pid a process under test writes to `path`, once it has."""
    import time
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f'no pid in {path} after {timeout}s'
        time.sleep(0.05)
    return int(path.read_text())


def ended(pid: int, timeout: float = 30) -> bool:
    """Whether process `pid` ends within `timeout` (ended but not yet
    reaped by its new parent counts); killed if not, so that a failing
    test leaves nothing running."""
    import signal
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f'/proc/{pid}/stat') as f:
                if f.read().split(') ')[1].startswith('Z'):
                    return True
        except (OSError, IndexError):
            pass  # (no /proc: macOS) its new parent reaps it soon
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return False
