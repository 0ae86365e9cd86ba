from __future__ import annotations

import shlex
import subprocess
import sys

from agitmem import repo as repo_mod
from agitmem.porcelain import read
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError
from agitmem.memory import state as state_mod
from agitmem.memory.verification import reason


def verify(ctx: Context, cmd: list[str], save: bool) -> int:
    if not cmd:
        raise AgitmemError('verify needs a command: agitmem verify -- CMD...')
    read.state(ctx.repo)  # refuse a broken state.json before running anything
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=ctx.repo.root,
        )
    except (FileNotFoundError, PermissionError) as e:
        raise AgitmemError(f'cannot run {cmd[0]}: {e.strerror}')
    assert proc.stdout is not None
    chunks = []
    for chunk in iter(lambda: proc.stdout.readline(), b''):  # type: ignore[union-attr]
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        chunks.append(chunk)
    code = proc.wait()
    output = b''.join(chunks).decode('utf-8', 'replace')
    result = 'passed' if code == 0 else 'failed'
    why = reason(output, code)

    # the tree the command leaves, computed on the other core while the
    # write path (pygit2) is imported
    repo_mod.start_tree(ctx.repo)
    from agitmem.porcelain import state
    tree = repo_mod.worktree_tree(ctx.repo)
    verification = {
        'command': shlex.join(cmd),
        'result': result,
        'exit_code': code,
        'reason': why,
        'at': state_mod.now_iso(),
        'tree': tree,
    }
    state.update(ctx, {'last_verification': verification}, event='verify', save=save, tree=tree)
    print(f'agitmem: verification {result} (exit {code}): {why}')
    return 0 if code == 0 else 1
