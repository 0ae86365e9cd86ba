"""Merging two memory histories: a memory ref with another (a branch, a
remote's copy), committed through the one write path; into this worktree's
memory (`agitmem merge`, pull, post-merge) or into a ref no worktree is on
(before a push).  The file-level merge is agitmem.merge's."""
from __future__ import annotations

from dataclasses import dataclass

import pygit2

from agitmem import audit
from agitmem import memory
from agitmem import merge as merge_mod
from agitmem import render
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.errors import AgitmemError
from agitmem.porcelain import write
from agitmem.porcelain.context import Context
from agitmem.repo import MEMORY_NS
from agitmem.repo import REMOTES_NS


@dataclass(frozen=True)
class Outcome:
    kind: str  # 'up to date', 'fast-forward', 'created', 'merged', 'conflicts'
    tip: pygit2.Commit
    result: merge_mod.Result | None = None

    @property
    def conflicts(self) -> tuple[merge_mod.Conflict, ...]:
        return self.result.conflicts if self.result is not None else ()


def merge_refs(
        ctx: Context,
        pr: pygit2.Repository,
        ref: str,
        theirs: pygit2.Commit,
        *,
        name: str,
        subject: str,
        allow_conflicts: bool = True,
        no_ff: bool = False,
) -> Outcome:
    """Merge the memory commit theirs into ref, without touching any
    working tree: nothing to do, a fast-forward, or a merge commit with
    both parents.  allow_conflicts=False: a merge that would conflict is
    not committed ('conflicts', ref left as it was).  no_ff: a merge
    commit even where a fast-forward would do (its message is the record:
    a pull request landed).  Caller holds the lock."""
    repo = ctx.repo
    # theirs may come from a remote: no ref moves to a tree that could
    # write outside .agent/memory (a fast-forward reads no file)
    store.check_tree(pr, theirs.tree, max_file_kb=ctx.cfg['max_file_kb'])
    for _ in range(5):
        ours = store.tip(pr, ref)
        try:
            if ours is None:
                store.update_ref(repo, ref, str(theirs.id), None, f'agitmem {subject}')
                return Outcome('created', theirs)
            if store.contains(pr, ours.id, theirs.id):
                return Outcome('up to date', ours)
            if not no_ff and store.contains(pr, theirs.id, ours.id):
                store.update_ref(
                    repo, ref, str(theirs.id), str(ours.id),
                    f'agitmem {subject}: fast-forward',
                )
                return Outcome('fast-forward', theirs)
            oid, result = _merge_commit(
                ctx, pr, ref, ours, theirs, name=name, subject=subject,
                allow_conflicts=allow_conflicts,
            )
        except store.Race:
            continue
        if oid is None:
            return Outcome('conflicts', ours, result)
        commit = pr[oid]
        assert isinstance(commit, pygit2.Commit)
        return Outcome('merged', commit, result)
    raise AgitmemError(f'{ref} kept moving during the merge; try again')


def _merge_commit(
        ctx: Context,
        pr: pygit2.Repository,
        ref: str,
        ours: pygit2.Commit,
        theirs: pygit2.Commit,
        *,
        name: str,
        subject: str,
        allow_conflicts: bool,
) -> tuple[str | None, merge_mod.Result]:
    base = store.merge_base(pr, ours.id, theirs.id)
    ours_files = store.tree_files(pr, ours.tree)
    result = merge_mod.merge(
        store.tree_files(pr, base.tree) if base is not None else {},
        ours_files,
        store.tree_files(pr, theirs.tree),
        merge_mod.Labels(repo_mod.short_ref(ref), 'merge base', name),
    )
    if result.conflicts and not allow_conflicts:
        return None, result
    files = dict(result.files)
    # settings are not memory: the config in force stays (as in rollback)
    files.pop(memory.CONFIG, None)
    if memory.CONFIG in ours_files:
        files[memory.CONFIG] = ours_files[memory.CONFIG]
    body = ''
    if result.conflicts:
        body += 'Conflicts:\n' + ''.join(f'\t{c}\n' for c in result.conflicts)
    if result.notices:
        body += '\n' + ''.join(f'{n}\n' for n in result.notices)
    here = ref == ctx.ref
    oid = write.save(
        ctx._replace(ref=ref), subject, event='merge', files=files,
        body=body, parents=(ours, theirs), worktree=here,
        conflicts=result.conflicts if here else None,
    )
    return oid, merge_mod.Result(files, result.conflicts, result.notices)


def merge_into_worktree(
        ctx: Context, theirs_ref: str, name: str, *, subject: str, no_ff: bool = False,
) -> Outcome:
    """Merge the memory on theirs_ref into this worktree's memory: unsaved
    edits are saved first, the result is checked out into .agent/memory/
    and its conflicts recorded."""
    pr = store.open_repo(ctx.repo)
    with store.locked(ctx.repo):
        write.align(ctx)  # another branch's memory here goes to its ref first
        files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
        left = merge_mod.unresolved(files)
        if left:
            raise AgitmemError(
                f'memory has unresolved merge conflicts ({left[0]}): resolve '
                f'them and `agitmem save` before merging again',
            )
        theirs = store.tip(pr, theirs_ref)
        if theirs is None:
            raise AgitmemError(f'no memory on {theirs_ref}')
        # before the pre-save writes
        store.check_tree(pr, theirs.tree, max_file_kb=ctx.cfg['max_file_kb'])
        pre = write.save(ctx, f'save: before {subject}', files=files)
        if pre is not None:
            print(f'saved unsaved memory as {str(pre)[:12]}')
        outcome = merge_refs(ctx, pr, ctx.ref, theirs, name=name, subject=subject, no_ff=no_ff)
        write.checkout(ctx, outcome.tip, conflicts=outcome.conflicts)
    audit.log(
        ctx.repo.agent_dir, 'write merge',
        f'{theirs_ref} into {ctx.ref}: {outcome.kind} {str(outcome.tip.id)[:12]}',
    )
    return outcome


def merge_memory(
        ctx: Context, ref: str, theirs_ref: str, name: str, *, subject: str, no_ff: bool = False,
) -> tuple[Outcome | None, bool]:
    """Merge the memory on theirs_ref into ref's: into this worktree's
    memory when ref is ours (unsaved edits saved first, conflicts written
    there to resolve, as `agitmem merge` does), else into the ref alone,
    where a merge that would conflict is not made ('conflicts', the ref
    left as it was).  (The outcome, None when theirs_ref holds no memory;
    whether it went into the worktree.)"""
    if ref == ctx.ref and ctx.repo.memory_dir.is_dir():
        return merge_into_worktree(ctx, theirs_ref, name, subject=subject, no_ff=no_ff), True
    pr = store.open_repo(ctx.repo)
    with store.locked(ctx.repo):
        theirs = store.tip(pr, theirs_ref)
        if theirs is None:
            return None, False
        return merge_refs(
            ctx, pr, ref, theirs, name=name, subject=subject,
            allow_conflicts=False, no_ff=no_ff,
        ), False


def report(outcome: Outcome, ctx: Context, name: str, *, prefix: str = '') -> int:
    """Print what a merge did; 1 when it left conflicts."""
    short = str(outcome.tip.id)[:12]
    if outcome.kind == 'up to date':
        print(f'{prefix}memory already up to date with {name}')
    elif outcome.kind in ('fast-forward', 'created'):
        print(f'{prefix}fast-forward: memory of {repo_mod.short_ref(ctx.ref)} is now {name}\'s ({short})')
    else:
        print(f'{prefix}merged the memory of {name} into {ctx.ref} ({short})')
    if outcome.result is not None:
        for n in outcome.result.notices:
            print(f'{prefix}note: {render.line(n)}')
    for c in outcome.conflicts:
        print(f'{prefix}CONFLICT {render.line(str(c))}')
    if outcome.conflicts:
        print(
            f'{prefix}resolve them in .agent/memory/ (keep what is right; '
            f'delete the <<<<<<< ||||||| ======= >>>>>>> lines, and the '
            f'"{merge_mod.STATE_CONFLICTS}" key of state.json), then '
            f'`agitmem save`; `agitmem check` fails until then',
        )
        return 1
    return 0


def memory_of(ctx: Context, name: str) -> str:
    """The memory ref BRANCH names: a full ref, a branch (its
    refs/agitmem/heads/ ref) or a remote's copy (origin/main)."""
    pr = store.open_repo(ctx.repo)
    refs = [name] if name.startswith('refs/') else [
        MEMORY_NS + name, REMOTES_NS + name,
    ]
    for ref in refs:
        if store.tip(pr, ref) is not None:
            if ref == ctx.ref:
                raise AgitmemError(
                    f'{name} is the memory in use ({ctx.ref}); nothing to merge',
                )
            return ref
    raise AgitmemError(
        f'no memory for "{name}": no {refs[0]} (see `git for-each-ref '
        f'refs/agitmem`; `agitmem fetch` brings a remote\'s)',
    )
