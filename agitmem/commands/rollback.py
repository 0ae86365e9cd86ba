from __future__ import annotations

import re

import pygit2

from agitmem import audit
from agitmem import memory
from agitmem import store
from agitmem.commands.save import save_memory
from agitmem.context import Context
from agitmem.errors import AgitmemError

_RELATIVE = re.compile(r'^@(?:~(\d+))?$')


def _check_rev(ctx: Context, pr: pygit2.Repository, rev: str, pending: bool) -> None:
    """Refuse a revision that will not resolve before anything is saved:
    a rollback that fails must not have committed the unsaved edits.  @~N
    counts from the tip as it will be once the pending edits are saved."""
    m = _RELATIVE.match(rev)
    if m is None:
        store.resolve(pr, ctx.ref, rev)  # an id: the pre-save does not move it
        return
    top = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
    if top is None and not pending:
        raise AgitmemError(f'no memory yet on {ctx.ref}: run `agitmem save`')
    need = int(m[1] or 0) + 1 - int(pending)  # commits the chain needs now
    have = 0
    while top is not None and have < need:  # walks N commits, not the history
        have += 1
        top = top.parents[0] if top.parents else None
    if have < need:
        raise AgitmemError(
            f'{rev}: memory history is only {have + int(pending)} commit(s) deep',
        )


def _restore(ctx: Context, files: store.Files, only: set[str] | None) -> None:
    try:
        store.checkout(ctx.repo, files, only=only)
    except (OSError, AgitmemError):
        pass  # the error that brought us here is the one to report


def rollback(ctx: Context, rev: str | None, file: str | None) -> int:
    pr = store.open_repo(ctx.repo)
    path = store.memory_path(file) if file is not None else None
    rev = rev or '@~1'
    with store.locked(ctx.repo):
        files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
        parent = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
        pending = parent is None or store.tree_files(pr, parent.tree) != files
        _check_rev(ctx, pr, rev, pending)
        # unsaved edits become a commit first: a rollback never loses them
        pre = save_memory(ctx, 'save: before rollback', files=files)
        if pre is not None:
            print(f'saved unsaved edits as {str(pre)[:12]}')
        target = store.resolve(pr, ctx.ref, rev)
        top = store.resolve(pr, ctx.ref, '@')
        current = store.tree_files(pr, top.tree)
        wanted = store.tree_files(pr, target.tree)
        if path is not None:
            new = dict(current)
            if path in wanted:
                new[path] = wanted[path]
            else:
                new.pop(path, None)
        else:
            new = dict(wanted)
            # settings are not memory: keep the config in force
            new.pop(memory.CONFIG, None)
            if memory.CONFIG in current:
                new[memory.CONFIG] = current[memory.CONFIG]
        short = str(target.id)[:12]
        if new == current:
            print(f'memory already matches {short}; nothing to roll back')
            return 0
        only = {path} if path else None
        what = f' {path}' if path else ''
        try:
            store.checkout(ctx.repo, new, only=only)
            oid = save_memory(
                ctx,
                f'rollback:{what} to {short} ({target.message.splitlines()[0]})',
                event='rollback', files=new,
            )
        except BaseException as e:
            # memory goes back to the tip it was rolled back from
            _restore(ctx, current, only)
            if isinstance(e, OSError):
                raise AgitmemError(f'could not write .agent/memory: {e}')
            raise
    audit.log(ctx.repo.agent_dir, 'write rollback', f'{what.strip() or "all"} to {short}')
    print(f'rolled back{what} to {short}; recorded as {str(oid)[:12]}')
    return 0
