"""`agitmem check`: the consistency checks of DESIGN.md section 6.

One finding a line, `<severity> <id> <path>:<line>: <what to do>`; exit 1
when any is an error.  `AGITMEM_SKIP=id1,id2` skips checks by id."""
from __future__ import annotations

from agitmem import audit
from agitmem.porcelain import checking
from agitmem.porcelain.context import Context


def check(
        ctx: Context,
        *,
        staged: bool,
        commit_msg_file: str | None,
        as_json: bool,
) -> int:
    if staged and commit_msg_file is None:
        # the index's reads begun while the checks import, as the hook does
        checking.begin_staged(ctx)
    found = checking.findings(ctx, staged=staged, commit_msg_file=commit_msg_file)
    errors = sum(f.severity == 'error' for f in found)
    audit.log(
        ctx.repo.agentdir, 'read check',
        f'{"staged" if staged else "worktree"}: {errors} errors, '
        f'{len(found) - errors} warnings',
    )
    return checking.report(found, as_json=as_json)
