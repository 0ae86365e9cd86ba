"""`verify`: record how a test command ended as `last_verification`.

The `verify` command runs what the user typed.  The MCP `verify` tool
runs nothing a model names: it records a run the agent reports (marked
`"reported": true`), or runs a command the user's own config lists
(config.user_verify_commands), in a process group of its own stopped
whole at its timeout, its output read with a bound."""
from __future__ import annotations

import os
import sys

from agitmem import config
from agitmem import platforms
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod
from agitmem.memory.verification import reason
from agitmem.porcelain import read
from agitmem.porcelain.context import Context

# typing for mypy only (it takes any name TYPE_CHECKING as true), and shlex
# (with the re it imports) where used: what is imported before the
# command runs delays it, and the tree recorded waits on it
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from typing import Any
    from typing import NamedTuple

    from agitmem.platforms import Command
else:
    from agitmem.tuples import NamedTuple

OUTPUT_MAX = 1024 * 1024  # bytes of a bounded run's output kept (its end)
# seconds a bounded run's output may stay open once its program ended: a
# daemon it left holding the pipe is not waited for
GRACE = 1.0
# seconds of echoing its output (once the program ended) added to GRACE
ECHO_LAG_MAX = 30.0
REPORT_MAX = 64 * 1024  # characters of a reported output tail kept


class Verified(NamedTuple):
    result: str  # passed | failed
    exit_code: int | None  # None: stopped at its timeout
    reason: str
    output: str
    timed_out: bool = False


class Ran(NamedTuple):
    code: int | None  # None: stopped at its timeout
    output: bytes
    timed_out: bool


def _start(cmd: list[str], cwd: str, group: bool) -> Command | subprocess.Popen[bytes]:
    if not group:
        platforms.adopt_orphans()  # what the command leaves is found when verify is killed
    try:
        # tracked: in a group of its own, no signal that ends this process
        # (the MCP server's client ending it) reaches it, so its group is
        # stopped then; in the terminal's group (so that ^C reaches it),
        # killed alone (an agent's tool time limit), the signal is passed on
        if not group and platforms.can_spawn() and cmd[0]:
            # begun before subprocess is imported: the command waits on
            # what comes before it, and the tree recorded on the command
            # (an empty name, which posix_spawn refuses, is Popen's to try)
            try:
                return platforms.start(lambda: platforms.Command(cmd, cwd), group=False)
            except platforms.NotBegun:
                pass  # (a standard stream closed, a directory that cannot be read: Popen's)
        import subprocess
        return platforms.start(lambda: subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, cwd=cwd,
            # a group of its own: what it starts is stopped with it
            **(platforms.group_kwargs() if group else {}),
        ), group=group)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
        raise AgitmemError(f'cannot run {cmd[0]}: {e.strerror}')
    except OSError as e:
        if e.errno is None:
            raise
        # a script without a `#!` line (neither Popen nor posix_spawn hands
        # it to a shell), a symlink loop, a name too long, too many arguments
        raise AgitmemError(f'cannot run {cmd[0]}: {e.strerror}')


def _stop_group(proc: Command | subprocess.Popen[bytes]) -> None:
    # its pid is its group's id, never reused while a member lives
    platforms.stop_group(proc.pid)


def run_bounded(cmd: list[str], cwd: str, timeout: float) -> Ran:
    """Run `cmd` for at most `timeout` seconds (then its whole process
    group is stopped), keeping the last OUTPUT_MAX bytes of its output.
    Answers by `timeout` + GRACE whatever its children do with the pipe:
    once the program ends, its output is read GRACE seconds more."""
    import time
    proc = _start(cmd, cwd, group=True)
    assert proc.stdout is not None
    out = bytearray()
    deadline = time.monotonic() + timeout

    def keep(chunk: bytes) -> None:
        out.extend(chunk)
        if len(out) > OUTPUT_MAX:
            del out[:len(out) - OUTPUT_MAX]
    reader = _reader(proc)
    try:
        _pump(proc, reader, keep, deadline=deadline)
        if proc.poll() is None:
            platforms.wait_for(proc, max(0.0, deadline - time.monotonic()))
        timed_out = proc.poll() is None
    finally:
        _stop_group(proc)
        if not reader.owns:
            proc.stdout.close()
        # reaped, with a bound: a stop refused (taskkill denied) leaves it
        # running, not the server waiting on it
        platforms.wait_for(proc, GRACE)
    return Ran(None if timed_out else proc.returncode, bytes(out), timed_out)


def run(
        ctx: Context,
        cmd: list[str],
        *,
        save: bool,
        echo: Callable[[bytes], None] | None = None,
        timeout: float | None = None,
) -> Verified:
    """Run `cmd` in the repository's root (its output given to `echo` as
    it comes), then record the verification in state.json.  With a
    `timeout`, run_bounded's bounds hold; stopped, it counts as failed."""
    if not cmd:
        raise AgitmemError('verify needs a command: agitmem verify -- CMD...')
    read.state(ctx.repo)  # refuse a broken state.json before running anything
    _refuse_unreadable(ctx)
    if timeout is not None:
        ran = run_bounded(cmd, ctx.repo.top, timeout)
        repo_mod.start_tree(ctx.repo)  # (see below)
        output = ran.output.decode('utf-8', 'replace')
        if ran.timed_out:
            output += f'\nstopped after {timeout:g}s\n'
        return _record(ctx, _shown(cmd), ran.code, output, save=save, timed_out=ran.timed_out)
    proc = _start(cmd, ctx.repo.top, group=False)
    chunks: list[bytes] = []

    def take(chunk: bytes) -> None:
        if echo is not None:
            echo(chunk)
        chunks.append(chunk)
    try:
        if _read(proc, take):
            print(
                f'agitmem: verify: {cmd[0]} has ended, but its output is still open '
                f'(held by what it left running, not waited for)', file=sys.stderr,
            )
        code = proc.wait()
    except KeyboardInterrupt:
        _interrupted(proc)
        raise
    # the tree the command left, begun before anything else is done: the
    # command as recorded (_shown) imports shlex and re, 4 ms
    repo_mod.start_tree(ctx.repo)
    return _record(ctx, _shown(cmd), code, b''.join(chunks).decode('utf-8', 'replace'), save=save)


def _refuse_unreadable(ctx: Context) -> None:
    """A repository the memory's store cannot open (SHA-256, which
    pygit2's libgit2 does not read) refused before the command runs, not
    once it has: the repository's own config names its object format.
    Any config that names the key is opened (libgit2 decides): git reads
    its value however it is spelled (`[extensions] objectformat = sha256`
    on one line, `"sha"256`, a value continued with a backslash), and a
    key's name cannot be split."""
    try:
        with open(os.path.join(ctx.repo.commondir, 'config'), 'rb') as f:
            text = f.read(1 << 20)
    except OSError:
        return
    if b'objectformat' in text.lower():
        from agitmem import store
        store.open_repo(ctx.repo)  # its one line, where libgit2 reads SHA-1 only


def _read(proc: Command | subprocess.Popen[bytes], take: Callable[[bytes], None]) -> bool:
    """Give `take` the command's output as it comes, until every writer
    has closed it or GRACE seconds after the command ended (what it left
    running, `srv &`, a daemon, may hold it open for as long as it runs:
    True then, and it runs on).  What the command leaves and ends meanwhile
    is reaped (platforms.reap_adopted) while it runs, its output closed
    or not."""
    assert proc.stdout is not None
    # (reap_adopted: nothing is adopted but on Linux)
    if _pump(proc, _reader(proc), take, tick=platforms.reap_adopted):
        # every writer closed it (`exec >log 2>&1`): the command may run
        # on, and what it leaves is reaped meanwhile too
        while not platforms.wait_for(proc, 1.0):
            platforms.reap_adopted()
        return False
    return True


class _Reader(NamedTuple):
    """How _pump reads proc's output: `next(seconds)` is a chunk read
    within that time (b'' once every writer has closed it; None: nothing
    yet); `stop()` once nothing more is taken; `owns`: whether the reader
    closes the pipe itself (no one else may)."""
    next: Callable[[float], bytes | None]
    stop: Callable[[], None]
    owns: bool


def _reader(proc: Command | subprocess.Popen[bytes]) -> _Reader:
    """select on the pipe (POSIX); where select cannot wait on a pipe
    (Windows), a thread that reads it."""
    return _threaded(proc) if platforms.WINDOWS else _selected(proc)


def _selected(proc: Command | subprocess.Popen[bytes]) -> _Reader:
    import select
    assert proc.stdout is not None
    fd = proc.stdout.fileno()

    def within(seconds: float) -> bytes | None:
        ready, _, _ = select.select([fd], [], [], seconds)
        return os.read(fd, 65536) if ready else None
    return _Reader(within, lambda: None, owns=False)


def _threaded(proc: Command | subprocess.Popen[bytes]) -> _Reader:
    """A thread reads the pipe, so that a program that has ended is
    waited for GRACE seconds more, not for as long as what it left running
    holds the pipe (`start /b server`); once it is no longer taken, the
    reader is left blocked (a daemon thread, ended with the process).  The
    pipe is the reader's, closed by it once its read ends, by no one else:
    a close under a blocked read waits on that read's lock on Windows (even
    the collection of proc's file, as its caller returns), and elsewhere
    frees the number it reads again, for the next file opened."""
    import queue
    import threading
    assert proc.stdout is not None
    stream = proc.stdout
    fd = stream.fileno()
    chunks: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    # set once nothing is taken: what the reader reads after, until the
    # pipe closes (a daemon left logging), is no one's, dropped rather
    # than queued without bound
    gone: list[bool] = []

    def read() -> None:
        with stream:
            chunk = b'-'
            while chunk:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b''
                if not gone:
                    chunks.put(chunk)
    threading.Thread(target=read, name='agitmem verify output', daemon=True).start()

    def within(seconds: float) -> bytes | None:
        try:
            return chunks.get(timeout=seconds)
        except queue.Empty:
            return None

    def stop() -> None:
        gone.append(True)
        while not chunks.empty():  # (what was queued and not taken: freed now)
            chunks.get_nowait()
    return _Reader(within, stop, owns=True)


def _pump(
        proc: Command | subprocess.Popen[bytes], reader: _Reader, take: Callable[[bytes], None], *,
        deadline: float | None = None, tick: Callable[[], None] | None = None,
) -> bool:
    """Give `take` proc's output as `reader` reads it: True once every
    writer has closed it; False GRACE seconds after proc ended (plus the
    time taking it took since, up to ECHO_LAG_MAX) or at `deadline`.
    `tick` is called about once a second while proc runs."""
    import time
    ended: float | None = None
    lag = 0.0  # seconds taking it took once proc had ended
    ticked = time.monotonic()
    try:
        while True:
            now = time.monotonic()
            if ended is None:
                if tick is not None and now - ticked >= 1.0:
                    tick()
                    ticked = now
                if proc.poll() is not None:
                    ended = now
            until = ended + GRACE + min(lag, ECHO_LAG_MAX) if ended is not None else float('inf')
            if deadline is not None:
                until = min(until, deadline)
            if now >= until:
                return False
            # woken now and then to see whether the program ended
            chunk = reader.next(min(until - now, 0.1))
            if chunk is None:
                continue
            if not chunk:
                return True
            spent = _taken(take, chunk)
            if ended is not None:
                lag += spent
    finally:
        reader.stop()


def _taken(take: Callable[[bytes], None], chunk: bytes) -> float:
    """take(chunk); the seconds that took.  The GRACE after the program
    ended is the pipe's, not that of the output's echo (a console slow to
    scroll, a reader of agitmem's own output that lags): without that
    time added to it (up to ECHO_LAG_MAX, so that a daemon left writing
    for ever is not echoed for ever), a slow echo cut off what the program
    wrote before it ended, and said its output was held by what it left."""
    import time
    began = time.monotonic()
    take(chunk)
    return time.monotonic() - began


def _interrupted(proc: Command | subprocess.Popen[bytes]) -> None:
    """verify was interrupted while its command ran: a ^C at the terminal
    reached the command too (its group is the terminal's), which ends
    within GRACE; a SIGINT sent to agitmem alone (an agent's interrupt,
    `kill -INT`) did not, and is passed on, as SIGTERM's and SIGHUP's
    are, rather than leave the command running."""
    platforms.wait_for(proc, GRACE)
    # what runs after GRACE: the command, or what it left (its output
    # still open: a daemon, `cmd &`), which ran on once the command ended
    platforms.interrupt(proc)


def _shown(cmd: list[str]) -> str:
    """The command as recorded: an argument's bytes that are not UTF-8
    (lone surrogates in argv) written as \\xNN, so the run is recorded."""
    import shlex
    return shlex.join(cmd).encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace')


def confirmed(command: str) -> list[str]:
    """The argv of `command` when the user's own config lists it under
    verify_commands; else an AgitmemError saying how to allow it (a
    repository's config listing it is not enough: a clone writes that)."""
    import shlex
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise AgitmemError(f'verify: the command cannot be parsed ({e})')
    if not argv:
        raise AgitmemError('verify: "command" must not be empty')
    if argv in config.user_verify_commands():
        return argv
    raise AgitmemError(
        f'verify: `{shlex.join(argv)}` is not in verify_commands of '
        f'{config.user_config_shown()}: agitmem runs only the commands you '
        f'listed there; run it yourself and report its exit_code and output, '
        f'or ask the user to add it',
    )


def report(
        ctx: Context, command: str, exit_code: int, output: str, *, save: bool,
) -> Verified:
    """Record a run the agent made and reports (nothing is run): marked
    `"reported": true`, its outcome as reported."""
    read.state(ctx.repo)
    if not command.strip():
        raise AgitmemError('verify: "command" must not be empty')
    return _record(ctx, command, exit_code, output[-REPORT_MAX:], save=save, reported=True)


def _record(
        ctx: Context, command: str, code: int | None, output: str, *,
        save: bool, timed_out: bool = False, reported: bool = False,
) -> Verified:
    # the tree the command leaves (begun already after a run), computed on
    # the other core while the reason is found (re, its patterns) and the
    # write path imported
    repo_mod.start_tree(ctx.repo)
    result = 'passed' if code == 0 and not timed_out else 'failed'
    why = reason(output, 1 if code is None else code)
    if timed_out:
        why = f'timed out: {why}' if why else 'timed out'
    from agitmem.porcelain import state

    def changes(tree: str) -> dict[str, Any]:
        verification: dict[str, Any] = {
            'command': command,
            'result': result,
            'exit_code': code,
            'reason': why,
            'at': state_mod.now_iso(),
            'tree': tree,
        }
        if timed_out:
            verification['timed_out'] = True
        if reported:
            # the agent's word, not a run agitmem saw
            verification['reported'] = True
        return {'last_verification': verification}

    state.update(ctx, changes, event='verify', save=save)
    return Verified(result, code, why, output, timed_out)
