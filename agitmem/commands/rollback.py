from __future__ import annotations

from agitmem import audit
from agitmem import memory
from agitmem import store
from agitmem.commands.save import save_memory
from agitmem.context import Context


def rollback(ctx: Context, rev: str | None, file: str | None) -> int:
    pr = store.open_repo(ctx.repo)
    path = store.memory_path(file) if file is not None else None
    with store.locked(ctx.repo):
        # unsaved edits become a commit first: a rollback never loses them
        pre = save_memory(ctx, 'save: before rollback')
        if pre is not None:
            print(f'saved unsaved edits as {str(pre)[:12]}')
        target = store.resolve(pr, ctx.ref, rev or '@~1')
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
        store.checkout(ctx.repo, new, only={path} if path else None)
        what = f' {path}' if path else ''
        oid = save_memory(
            ctx,
            f'rollback:{what} to {short} ({target.message.splitlines()[0]})',
            event='rollback', files=new,
        )
    audit.log(ctx.repo.agent_dir, 'write rollback', f'{what.strip() or "all"} to {short}')
    print(f'rolled back{what} to {short}; recorded as {str(oid)[:12]}')
    return 0
