from __future__ import annotations

import sys

import pygit2

from agitmem import audit
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.checks.secrets import blocking
from agitmem.context import Context
from agitmem.errors import AgitmemError


def changed(pr: pygit2.Repository, old: pygit2.Commit | None, tree: pygit2.Oid) -> list[str]:
    if old is None:
        return sorted(store.tree_files(pr, pr[tree]))  # type: ignore[arg-type]
    new = pr.get(tree)
    assert isinstance(new, pygit2.Tree)
    diff = old.tree.diff_to_tree(new)
    return sorted({d.delta.new_file.path for d in diff if d is not None})


def _catch_up(ctx: Context, pr: pygit2.Repository, files: store.Files) -> store.Files:
    """The ref moved past the memory this worktree was written from (a
    merge done elsewhere, another worktree): merge the working tree's edits
    into the tip rather than commit them over it.  A conflict keeps the
    working tree's files as they are, and says so."""
    from agitmem import merge
    base = store.base(ctx.repo, pr)
    top = store.tip(pr, ctx.ref)
    if base is None or top is None or base.id == top.id:
        return files
    if not pr.descendant_of(top.id, base.id):
        return files
    theirs = store.tree_files(pr, top.tree)
    result = merge.merge(store.tree_files(pr, base.tree), files, theirs)
    if result.conflicts:
        print(
            f'agitmem: {ctx.ref} moved since this worktree read its memory '
            f'and the changes conflict ({result.conflicts[0]}); saving yours '
            f'on top (theirs stay in history: `agitmem diff @~1 @`)',
            file=sys.stderr,
        )
        return files
    merged = dict(result.files)
    if memory.CONFIG in files:
        merged[memory.CONFIG] = files[memory.CONFIG]
    store.checkout(ctx.repo, merged)
    return merged


def _refresh_conflicts(ctx: Context, files: store.Files) -> None:
    """A save after resolving a merge conflict clears its record."""
    if (ctx.repo.git_dir / 'agitmem' / 'conflicts').exists():
        from agitmem import merge
        from agitmem.commands import branch
        branch.record_conflicts(ctx.repo, merge.unresolved(files))


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
            files = _catch_up(ctx, pr, files)
        # credentials never reach the ref (from where they would be pushed)
        found = blocking(files)
        if found:
            more = f' (and {len(found) - 1} more)' if len(found) > 1 else ''
            raise AgitmemError(found[0].message + more)
        try:
            tree = store.build_tree(pr, files)
            parent = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
            if subject is None:
                names = changed(pr, parent, tree)
                subject = f'{event}: {", ".join(names) or "no change"}'
            msg = store.message(
                subject, event=event, branch=ctx.branch, head=ctx.head, body=body,
            )
            oid = store.commit(ctx.repo, pr, ctx.ref, tree, msg=msg)
        except (OSError, pygit2.GitError) as e:
            # a read-only or full .git: one line, not a traceback
            detail = ' '.join(str(e).split()) or type(e).__name__
            raise AgitmemError(f'could not write the memory commit to {ctx.ref}: {detail}')
    if oid is not None:
        audit.log(ctx.repo.agent_dir, f'write {event}', f'{str(oid)[:12]} {subject}')
        _refresh_conflicts(ctx, files)
    return oid


def write_and_save(
        ctx: Context,
        name: str,
        data: bytes,
        *,
        save: bool,
        subject: str,
        event: str,
) -> None:
    """Write one memory file, then (with save) commit the memory.  When the
    save refuses (another layer broken, a file over max_file_kb, a read-only
    .git), the file is put back as it was: a command that fails writes
    nothing.  The caller holds the lock, so nobody wrote it in between."""
    path = ctx.repo.memory_dir / name
    old = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    repo_mod.atomic_write(path, data)
    if not save:
        return
    try:
        save_memory(ctx, subject, event=event)
    except BaseException:
        if old is None:
            path.unlink(missing_ok=True)
        else:
            repo_mod.atomic_write(path, old)
        raise


def save(ctx: Context, message: str | None) -> int:
    subject = f'save: {message}' if message else None
    oid = save_memory(ctx, subject)
    if oid is None:
        print(f'nothing to save: memory matches {ctx.ref}')
    else:
        print(f'saved {str(oid)[:12]} to {ctx.ref}')
    return 0
