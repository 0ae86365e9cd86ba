"""Findings of the checks (DESIGN.md section 6), shared by `agitmem check`,
the git hooks and the pre-push scan: one finding a line, `<severity> <id>
<path>:<line>: <what to do>`.  `AGITMEM_SKIP=id1,id2` skips checks by id."""
from __future__ import annotations

import os
import sys


from agitmem import checks
from agitmem import render
from agitmem import repo as repo_mod
from agitmem.checks import Finding
from agitmem.errors import AgitmemError
from agitmem.porcelain.context import Context
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def where(f: Finding) -> str | None:
    if f.path is None:
        return None
    return f.path if f.line is None else f'{f.path}:{f.line}'


def message(f: Finding) -> str:
    """The message without a `path:line: ` it starts with (the line shows
    where on its own)."""
    for prefix in (where(f), f.path):
        if prefix and f.message.startswith(f'{prefix}: '):
            return f.message[len(prefix) + 2:]
    return f.message


def format_line(f: Finding) -> str:
    place = where(f)
    loc = f' {place}:' if place else ''
    return f'{f.severity} {f.id}{loc} {message(f)}'


def as_dict(f: Finding) -> dict[str, object]:
    return {
        'id': f.id, 'severity': f.severity, 'path': f.path, 'line': f.line,
        'message': message(f),
    }


def skipped() -> frozenset[str]:
    """AGITMEM_SKIP, said out loud (on stderr: --json keeps stdout clean)."""
    skip, unknown = checks.parse_skip(os.environ.get('AGITMEM_SKIP', ''))
    if unknown:
        print(
            f'agitmem: AGITMEM_SKIP names no check {", ".join(unknown)} '
            f'(ids: {", ".join(checks.IDS)})',
            file=sys.stderr,
        )
    if skip:
        ordered = [i for i in checks.IDS if i in skip]
        print(
            f'agitmem: skipped (AGITMEM_SKIP): {", ".join(ordered)}',
            file=sys.stderr,
        )
    return skip


def read_message(path: str) -> str:
    try:
        with open(path, 'rb') as f:
            return f.read().decode('utf-8', 'replace')
    except OSError as e:
        raise AgitmemError(
            f'cannot read the commit message file {path}: {e.strerror}',
        )


def hook_index() -> str | None:
    """The index git gave the hook (a temporary one for `commit -a` and
    `commit <paths>`): $GIT_INDEX_FILE, relative to where the hook runs."""
    index = os.environ.get('GIT_INDEX_FILE')
    return os.path.abspath(index) if index else None


def begin_staged(ctx: Context) -> None:
    """Begin the git reads of the checks of what is staged (the diff, the
    comparison with the last verification's tree) now, while the checks
    import: on a big repository each reads the whole index."""
    from agitmem import memory
    from agitmem.checks import staged
    skip, _ = checks.parse_skip(os.environ.get('AGITMEM_SKIP', ''))
    verified = None
    if 'verification-stale' not in skip:
        try:
            fd, _ = repo_mod.open_regular(os.path.join(ctx.repo.memorydir, memory.STATE), follow=False)
        except OSError:
            fd = -1  # the check says what is wrong with it
        if fd >= 0:
            with open(fd, 'rb') as f:
                verified = staged.verified_tree(f.read().decode('utf-8', 'replace'))
    progress = 'progress-not-updated' not in skip and ctx.head is not None
    # the patch only for the lines enforce's rules read
    patch = 'enforce' not in skip and _enforcing(ctx.cfg)
    from agitmem import ahead
    ahead.staged_for(ctx.repo.top)
    staged.start(
        ctx.repo, hook_index(), ctx.head, raw=progress, patch=patch,
        verified=verified, history=ctx.ref if progress else None,
    )


def _enforcing(cfg: dict[str, Any]) -> bool:
    from agitmem.checks.commit_msg import enforce_rules
    rules, _ = enforce_rules(cfg)
    return bool(rules)


def findings(
        ctx: Context,
        *,
        staged: bool,
        commit_msg_file: str | None,
        index: str | None = None,
) -> list[Finding]:
    if commit_msg_file is not None:
        return message_findings(ctx.repo, ctx.cfg, commit_msg_file)
    skip = skipped()
    from agitmem.checks import run  # every check: not for the message's
    if staged and index is None:
        index = hook_index()
    change = run.Change(ctx.repo, ctx.head, staged=staged, index=index)
    return run.run(ctx.repo, ctx.cfg, ctx.ref, ctx.head, change, skip=skip)


def message_findings(repo: Repo, cfg: dict[str, Any], commit_msg_file: str) -> list[Finding]:
    """The commit-msg stage's findings in the message of that file."""
    from agitmem.checks import commit_msg
    skip = skipped()
    return commit_msg.check(repo, cfg, read_message(commit_msg_file), skip=skip)


def report(found: list[Finding], *, as_json: bool, quiet: bool = False) -> int:
    errors = sum(f.severity == 'error' for f in found)
    if as_json:
        import json
        print(json.dumps([as_dict(f) for f in found], indent=2, ensure_ascii=False))
        return 1 if errors else 0
    for f in found:
        # one line each: a value a finding quotes cannot forge another
        print(render.controls_line(format_line(f)))
    warnings = len(found) - errors
    if errors:
        print(
            f'agitmem: {errors} error(s), {warnings} warning(s): fix the '
            f'errors (or skip a check once with AGITMEM_SKIP=<id>)',
        )
    elif not quiet:
        print(
            f'agitmem: no errors ({warnings} warning(s))' if warnings else
            'agitmem: memory checks passed',
        )
    return 1 if errors else 0
