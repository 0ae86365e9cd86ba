"""`verify`: run a command, record how it ended as `last_verification`
(the `verify` command and the MCP `verify` tool)."""
from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable
from typing import Any
from typing import NamedTuple

from agitmem import platforms
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod
from agitmem.memory.verification import reason
from agitmem.porcelain import read
from agitmem.porcelain.context import Context


class Verified(NamedTuple):
    result: str  # passed | failed
    exit_code: int
    reason: str
    output: str


def run(
        ctx: Context,
        cmd: list[str],
        *,
        save: bool,
        echo: Callable[[bytes], None] | None = None,
        timeout: float | None = None,
) -> Verified:
    """Run `cmd` in the repository's root (its output given to `echo` as
    it comes), then record the verification in state.json.  Past
    `timeout` seconds the command is stopped and counts as failed."""
    if not cmd:
        raise AgitmemError('verify needs a command: agitmem verify -- CMD...')
    read.state(ctx.repo)  # refuse a broken state.json before running anything
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, cwd=ctx.repo.root,
            # bounded: a group of its own, so what it started is stopped
            # with it (a test runner's children hold the output pipe open)
            **({} if timeout is None else platforms.group_kwargs()),
        )
    except (FileNotFoundError, PermissionError) as e:
        raise AgitmemError(f'cannot run {cmd[0]}: {e.strerror}')
    assert proc.stdout is not None
    chunks: list[bytes] = []
    if timeout is None:
        for chunk in iter(proc.stdout.readline, b''):
            if echo is not None:
                echo(chunk)
            chunks.append(chunk)
        code = proc.wait()
    else:
        # the MCP tool: a command that never ends must not hold the server
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            out, _ = platforms.stop(proc)
            out += f'\nstopped after {timeout:g}s\n'.encode()
        chunks.append(out)
        code = proc.returncode
    output = b''.join(chunks).decode('utf-8', 'replace')
    result = 'passed' if code == 0 else 'failed'
    why = reason(output, code)

    # the tree the command leaves, computed on the other core while the
    # write path (pygit2) is imported
    repo_mod.start_tree(ctx.repo)
    from agitmem.porcelain import state
    tree = repo_mod.worktree_tree(ctx.repo)
    verification: dict[str, Any] = {
        'command': shlex.join(cmd),
        'result': result,
        'exit_code': code,
        'reason': why,
        'at': state_mod.now_iso(),
        'tree': tree,
    }
    state.update(ctx, {'last_verification': verification}, event='verify', save=save, tree=tree)
    return Verified(result, code, why, output)
