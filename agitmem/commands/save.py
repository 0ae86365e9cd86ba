from __future__ import annotations

import pygit2

from agitmem import audit
from agitmem import store
from agitmem.context import Context


def changed(pr: pygit2.Repository, old: pygit2.Commit | None, tree: pygit2.Oid) -> list[str]:
    if old is None:
        return sorted(store.tree_files(pr, pr[tree]))  # type: ignore[arg-type]
    new = pr.get(tree)
    assert isinstance(new, pygit2.Tree)
    diff = old.tree.diff_to_tree(new)
    return sorted({d.delta.new_file.path for d in diff if d is not None})


def save_memory(
        ctx: Context,
        subject: str | None = None,
        *,
        event: str = 'save',
        files: store.Files | None = None,
        body: str = '',
) -> pygit2.Oid | None:
    """Commit the memory (the working tree's, or files) to the memory ref.
    Returns the new commit, or None when nothing changed."""
    pr = store.open_repo(ctx.repo)
    with store.locked(ctx.repo):
        if files is None:
            files = store.read_memory(
                ctx.repo, max_file_kb=ctx.cfg['max_file_kb'],
            )
        tree = store.build_tree(pr, files)
        parent = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
        if subject is None:
            names = changed(pr, parent, tree)
            subject = f'{event}: {", ".join(names) or "no change"}'
        msg = store.message(
            subject, event=event, branch=ctx.branch, head=ctx.head, body=body,
        )
        oid = store.commit(ctx.repo, pr, ctx.ref, tree, msg=msg)
    if oid is not None:
        audit.log(ctx.repo.agent_dir, f'write {event}', f'{str(oid)[:12]} {subject}')
    return oid


def save(ctx: Context, message: str | None) -> int:
    subject = f'save: {message}' if message else None
    oid = save_memory(ctx, subject)
    if oid is None:
        print(f'nothing to save: memory matches {ctx.ref}')
    else:
        print(f'saved {str(oid)[:12]} to {ctx.ref}')
    return 0
