from __future__ import annotations

import re
import shlex
import subprocess
import sys

from agitmem import repo as repo_mod
from agitmem.porcelain import read
from agitmem.porcelain import state
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError

_ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
# most specific first: a named failing test with its error, then the error
# line itself, then anything that says error or failed
_FAILURE_PATTERNS = (
    re.compile(r'^(?:FAILED|ERROR) (\S+::\S+.*)$'),  # pytest summary
    re.compile(r'^(\S+\.\w+:\d+(?::\d+)?:? .*(?:[Ee]rror|[Ff]ail).*)$'),
    re.compile(r'^E\s+(\S.*)$'),  # pytest assertion detail
    re.compile(r'^\s*●\s+(.+)$'),  # jest
    re.compile(r'^--- FAIL: (.+)$'),  # go test
    re.compile(r'^(\w*(?:Error|Exception)\b.*)$'),
    re.compile(r'^(.*\b(?:error|failed|failure|FAIL)\b.*)$', re.IGNORECASE),
)
_MAX_REASON = 240


def reason(output: str, exit_code: int) -> str:
    """The most specific line of the output that says why it failed (or,
    when it passed, its last summary line)."""
    lines = [_ANSI.sub('', ln).rstrip() for ln in output.splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    if exit_code == 0:
        found = lines[-1].strip(' =') if lines else 'exit 0'
        return found[:_MAX_REASON]
    for pattern in _FAILURE_PATTERNS:
        hits = [m[1].strip() for ln in lines if (m := pattern.match(ln))]
        if hits:
            found = hits[0]
            # a pytest FAILED line says which test; its "E" line says why
            if pattern is _FAILURE_PATTERNS[0]:
                detail = [
                    m[1].strip() for ln in lines
                    if (m := _FAILURE_PATTERNS[2].match(ln))
                ]
                if detail and detail[0] not in found:
                    found = f'{found} ({detail[0]})'
            return found[:_MAX_REASON]
    tail = lines[-1].strip() if lines else ''
    return (tail or f'exit code {exit_code}')[:_MAX_REASON]


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

    tree = repo_mod.worktree_tree(ctx.repo)
    verification = {
        'command': shlex.join(cmd),
        'result': result,
        'exit_code': code,
        'reason': why,
        'at': state.now_iso(),
        'tree': tree,
    }
    state.update(ctx, {'last_verification': verification}, event='verify', save=save, tree=tree)
    print(f'agitmem: verification {result} (exit {code}): {why}')
    return 0 if code == 0 else 1
