"""The one write path: every memory commit goes through `save`.

save, state set, note, fragment add, verify, rollback, archive, merge,
pull, the branch-switch checkout, the agent hooks and the git hooks all
call it.  It takes the writers' lock, catches up with a ref that moved
since this worktree read its memory (another worktree, a merge elsewhere),
refuses credentials, builds the tree, commits with compare-and-swap,
records the worktree's memory base and its unresolved conflicts, and
writes the audit line."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

from agitmem import audit
from agitmem import errors
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.checks.secrets import allowlist
from agitmem.checks.secrets import blocking
from agitmem.checks.secrets import blocking_message
from agitmem.errors import AgitmemError
from agitmem.porcelain import lineage
from agitmem.porcelain import notices
from agitmem.porcelain import read
from agitmem.porcelain.context import Context
from agitmem.porcelain.saved import conflicts_path
from agitmem.repo import Repo

# typing is not imported at run time: every write (state set, the hooks'
# saves) imports this module (mypy takes any name TYPE_CHECKING as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    # imported where used: a plain save (`_save_plainly`) needs no pygit2
    import pygit2

    from agitmem import merge


# -- the conflicts a merge left, per worktree ---------------------------------

def record_conflicts(repo: Repo, conflicts: Sequence[merge.Conflict]) -> None:
    """<git dir>/agitmem/conflicts: one unresolved conflict a line; no
    file when there is none."""
    path = conflicts_path(repo)
    try:
        if conflicts:
            text = ''.join(f'{c}\n' for c in conflicts)
            repo_mod.atomic_write(path, text.encode())
        elif os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)  # (a link: the link, never what it points at)
        # (anything else there, a directory, is none of ours: read as no
        # record, caches.own, and left alone)
    except OSError as e:
        detail = errors.detail(e)
        raise AgitmemError(f'could not record the unresolved memory conflicts in {path}: {detail}') from None


# -- the write path -------------------------------------------------------------

def changed(pr: pygit2.Repository, old: pygit2.Commit | None, tree: pygit2.Oid) -> list[str]:
    if old is None:
        return sorted(store.tree_files(pr, pr[tree]))  # type: ignore[arg-type]
    import pygit2
    new = pr.get(tree)
    assert isinstance(new, pygit2.Tree)
    diff = old.tree.diff_to_tree(new)
    return sorted({d.delta.new_file.path for d in diff if d is not None})


def _catch_up(ctx: Context, pr: pygit2.Repository, files: store.Files) -> store.Files:
    """The ref moved past the memory this worktree was written from (a
    merge done elsewhere, another worktree): merge this write's change
    (base -> files) into the tip rather than commit it over the tip.  A
    conflict keeps this write's files as they are, and says so."""
    base = store.base(ctx.repo, pr)
    top = store.tip(pr, ctx.ref)
    if base is None or top is None or base.id == top.id:
        return files
    if not store.contains(pr, top.id, base.id):
        return files
    theirs = store.tree_files(pr, top.tree)
    from agitmem import merge  # a merge's: not every write pays for it
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


def _saved_config(ctx: Context, files: store.Files) -> dict[str, object]:
    """The settings of the config.yaml this write commits (a merge may
    bring a fetched one's fingerprints: each allows one value only), else
    this worktree's."""
    if memory.CONFIG not in files:
        return ctx.cfg
    from agitmem import config
    try:
        return config.parse(files[memory.CONFIG].decode('utf-8', 'replace'), f'.agent/{memory.CONFIG}')
    except AgitmemError:
        return ctx.cfg  # the schema check's to report


def _refuse_secrets(ctx: Context, files: store.Files, msg: str = '', *, remember: bool = False) -> None:
    # credentials never reach the ref (from where they would be pushed):
    # neither in a memory file nor in a message built from user text; the
    # allowlist is the one `agitmem check` and pre-push honour
    allow = allowlist(_saved_config(ctx, files))
    found, hit = blocking(files, allow)
    found += blocking_message(msg, allow) if msg else []
    if found:
        more = f' (and {len(found) - 1} more)' if len(found) > 1 else ''
        raise AgitmemError(found[0].message + more)
    if remember and files:
        # the pre-commit hook's secrets check need not scan them again
        # (but a file holding an allowed value is no clean one: scanned
        # every time, so an allowance taken back blocks again)
        from agitmem.checks import scanned
        scanned.remember_files(ctx.repo, {k: v for k, v in files.items() if k not in hit})



def begin_save(ctx: Context, *, text: str = '') -> None:
    """Begin the reads a save of ctx's memory makes first (the ref's tip
    and its tree), for a write that waits on `git status` before it saves:
    they run while it does (store.begin_tip), and what it imports is
    imported then, not after.  `text`: much of what the save will scan
    (the file to be written, as it is, and the values going in), scanned
    now, so that the scanner's patterns it needs are compiled by then.
    end_save after the write."""
    store.begin_tip(ctx.repo, ctx.ref)
    import json  # noqa: F401  (state.json rendered)

    from agitmem.checks import scanned  # noqa: F401  (what was scanned clean, recorded)
    if text:
        from agitmem import secrets
        secrets.scan(text, '')  # (what it finds, the save finds again)


def end_save(ctx: Context) -> None:
    """Drop what begin_save began and the save did not take."""
    store.forget_tip(ctx.repo, ctx.ref)


def save(
        ctx: Context,
        subject: str | None = None,
        *,
        event: str = 'save',
        files: store.Files | None = None,
        body: str = '',
        parents: tuple[pygit2.Commit, pygit2.Commit] | None = None,
        conflicts: Sequence[merge.Conflict] | None = None,
        worktree: bool = True,
        parsed: Mapping[str, bytes] | None = None,
        force: bool = False,
) -> str | None:
    """Commit memory to ctx.ref: the working tree's, or files (computed
    from it: an archive, a rollback, a merge).  Returns the new commit's
    id, or None when nothing changed.

    parents: a merge commit of exactly (ours, theirs), moved from ours by
    compare-and-swap (store.Race when the ref moved: the merge must be
    computed again).  worktree=False: ctx.ref is not this worktree's
    memory (a ref merged before a push): no catch-up, no memory base.
    parsed: memory files (name -> bytes) the caller made from a parse of
    its own, as well formed as the parse: not parsed again.
    force: commit even when the memory is unchanged (a record whose
    message is the news: post-rewrite's old -> new commit ids)."""
    with store.locked(ctx.repo):
        if worktree and parents is None and files is None:
            align(ctx)
        elif worktree and parents is None and (held := foreign(ctx)) is not None:
            # files computed from another branch's memory (a caller that
            # did not align first): never commit them onto this ref
            raise AgitmemError(
                f'.agent/memory holds the memory of {held}, not of '
                f'{ctx.ref}: run `agitmem save` to switch it, then try again',
            )
        done = _save_plainly(
            ctx, subject, event=event, files=files, body=body, parsed=parsed, force=force,
        ) if worktree and parents is None else None
        if done is None:
            done = _save(
                ctx, subject, event=event, files=files, body=body, parents=parents,
                worktree=worktree, parsed=parsed, force=force,
            )
        oid, subject, files, ids = done
        if worktree and parents is None and oid is not None:
            _keep_idle(ctx, oid, files, ids)
        if worktree and (
                conflicts is not None or os.path.lexists(conflicts_path(ctx.repo))
        ):
            # a merge records what it left; a save after resolving clears it
            from agitmem import merge  # a merge's: not every write pays for it
            record_conflicts(
                ctx.repo, merge.unresolved(files) if conflicts is None else conflicts,
            )
    if oid is not None:
        audit.log(ctx.repo.agentdir, f'write {event}', f'{oid[:12]} {subject}')
    return oid


def _keep_idle(ctx: Context, oid: str, files: store.Files, ids: dict[str, str] | None) -> None:
    """After a save of this worktree's memory, on a branch: what tells the
    post-commit shim that the memory is saved as it is, which the hook
    would find and record (githook.post_commit): the commit after a save
    (an agent records its progress, then commits) starts no Python for
    it.  The shim checks it all again against the files at the commit.
    Not after a save to another ref than the branch's own (`--ref`): the
    hook switches .agent/memory back to the branch's memory.  `ids`: each
    file's blob id, where the save has them (not hashed again)."""
    if ctx.branch is None or os.environ.get('AGITMEM_REF'):
        return
    try:
        own = repo_mod.memory_ref(ctx.repo, ctx.branch, override=ctx.cfg['ref'])
    except AgitmemError:
        own = None
    if ctx.ref != own:
        return
    from agitmem import post_commit_idle
    if ids is None:
        ids = {path: repo_mod.blob_id(data, oid) for path, data in files.items()}
    post_commit_idle.record_saved(ctx.repo, ctx.branch, ctx.ref, oid, ids)


def _save_plainly(
        ctx: Context,
        subject: str | None,
        *,
        event: str,
        files: store.Files | None,
        body: str,
        parsed: Mapping[str, bytes] | None,
        force: bool,
) -> tuple[str | None, str, store.Files, dict[str, str] | None] | None:
    """save() of the common case by git's plumbing, without pygit2 (issue
    23): the ref's tip is this worktree's memory base (nothing to catch up
    with).  Caller holds the lock.  (commit id or None, subject, files,
    each file's blob id),
    or None when it is not that case, or the ref moved under the lock
    (a writer that does not take it): pygit2's path then does it all."""
    top = store.plain_tip(ctx.repo, ctx.ref)
    if top is None or store.base_id(ctx.repo) not in (None, top.commit):
        return None
    # what the ref already holds was checked when it was committed
    checked = store.plain_same_as(top)
    if files is None:
        made = parsed or {}
        files = store.read_memory(
            ctx.repo, max_file_kb=ctx.cfg['max_file_kb'],
            checked=lambda name, data: checked(name, data) is not None or made.get(name) == data,
        )
    if not files:
        return None
    _refuse_secrets(ctx, {k: v for k, v in files.items() if checked(k, v) is None}, remember=True)
    try:
        tree, ids = store.plain_tree(ctx.repo, top, files, checked)
        if subject is None:
            names = store.plain_changed(top, ids)
            subject = f'{event}: {", ".join(names) or "no change"}'
        msg = store.message(subject, event=event, branch=ctx.branch, head=ctx.head, body=body)
        _refuse_secrets(ctx, {}, f'{subject}\n\n{body}')
        oid = store.plain_commit(ctx.repo, ctx.ref, top, tree, msg=msg, force=force)
    except store.Race:
        return None
    except OSError as e:
        raise _unwritten(ctx, e)
    return oid, subject, files, ids


def _unwritten(ctx: Context, e: Exception) -> AgitmemError:
    # a read-only or full .git: one line, not a traceback
    detail = errors.detail(e)
    return AgitmemError(f'could not write the memory commit to {ctx.ref}: {detail}')


def _save(
        ctx: Context,
        subject: str | None,
        *,
        event: str,
        files: store.Files | None,
        body: str,
        parents: tuple[pygit2.Commit, pygit2.Commit] | None,
        worktree: bool,
        parsed: Mapping[str, bytes] | None,
        force: bool,
) -> tuple[str | None, str, store.Files, dict[str, str] | None]:
    """save() by pygit2: a merge commit, a ref that moved past this
    worktree's memory (caught up with by a merge), a new ref, a ref that
    is not this worktree's.  Caller holds the lock."""
    import pygit2
    pr = store.open_repo(ctx.repo)
    # what the ref already holds was checked when it was committed
    checked = store.same_as(pr, store.tip(pr, ctx.ref))
    if files is None:
        made = parsed or {}
        files = store.read_memory(
            ctx.repo, max_file_kb=ctx.cfg['max_file_kb'],
            checked=lambda name, data: checked(name, data) is not None or made.get(name) == data,
        )
    if worktree and parents is None:
        files = _catch_up(ctx, pr, files)
    _refuse_secrets(ctx, {k: v for k, v in files.items() if checked(k, v) is None}, remember=True)
    try:
        tree = store.build_tree(pr, files, checked)
        if parents is not None:
            if subject is None:
                subject = f'{event}: {str(parents[1].id)[:12]}'
            msg = store.message(
                subject, event=event, branch=ctx.branch, head=ctx.head, body=body,
            )
            _refuse_secrets(ctx, {}, f'{subject}\n\n{body}')
            oid: pygit2.Oid | None = store.commit_merge(
                ctx.repo, pr, ctx.ref, tree, msg=msg,
                parents=[parents[0].id, parents[1].id], old=parents[0].id,
            )
            if worktree:
                assert oid is not None
                store.set_base(ctx.repo, oid, ctx.ref)
        else:
            parent = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
            if subject is None:
                names = changed(pr, parent, tree)
                subject = f'{event}: {", ".join(names) or "no change"}'
            msg = store.message(
                subject, event=event, branch=ctx.branch, head=ctx.head, body=body,
            )
            _refuse_secrets(ctx, {}, f'{subject}\n\n{body}')
            oid = store.commit(ctx.repo, pr, ctx.ref, tree, msg=msg, force=force)
    except (OSError, pygit2.GitError) as e:
        raise _unwritten(ctx, e)
    return None if oid is None else str(oid), subject, files, None


def edit(
        ctx: Context,
        name: str,
        change: Callable[[str], str],
        *,
        save_it: bool,
        subject: str | Callable[[], str],
        event: str,
        parses: bool = False,
) -> str:
    """Read one memory file, change it, write it back atomically, then
    (with save_it) commit the memory: all under the writers' lock, so two
    edits at once never lose one.  When the save refuses (another layer
    broken, a file over max_file_kb, a read-only .git, a credential), the
    file is put back as it was: a command that fails writes nothing.
    parses: change parses the layer it is given and makes a well-formed
    one (fragments.jsonl: an append of rendered fragments), so the save
    does not parse it again.
    Returns the new text."""
    path = os.path.join(ctx.repo.memorydir, name)  # (no pathlib for a step's save)
    with store.locked(ctx.repo):
        if save_it:
            align(ctx)
        current = read.layer(ctx.repo, name)
        new = change(current)
        old = read.read_bytes(path, name) if os.path.isfile(path) and not os.path.islink(path) else None
        data = new.encode()
        repo_mod.atomic_write(path, data)
        if save_it:
            try:
                save(
                    ctx, subject if isinstance(subject, str) else subject(), event=event,
                    parsed={name: data} if parses else None,
                )
            except BaseException:
                if old is None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
                else:
                    repo_mod.atomic_write(path, old)
                raise
    return new


def checkout(
        ctx: Context,
        commit: pygit2.Commit,
        *,
        conflicts: Sequence[merge.Conflict] | None = None,
) -> list[str]:
    """Make commit this worktree's memory: its files into .agent/memory/
    (each through store's safe-path check), the memory base, and the
    conflicts it holds.  Caller holds the lock.  Returns the paths changed."""
    pr = store.open_repo(ctx.repo)
    files = store.tree_files(pr, commit.tree, max_file_kb=ctx.cfg['max_file_kb'])
    changed_paths = store.checkout(ctx.repo, files)
    store.set_base(ctx.repo, commit.id, ctx.ref)
    from agitmem import merge
    record_conflicts(
        ctx.repo, merge.unresolved(files) if conflicts is None else conflicts,
    )
    return changed_paths


# -- memory follows the branch ----------------------------------------------------

def switch(ctx: Context, old: Context) -> tuple[str, pygit2.Commit | None, list[str]]:
    """The working tree's memory is old.ref's; make it ctx.ref's: save it
    to old.ref, then check out ctx.ref's memory (a remote's copy when only
    a remote has it; a fork of old's when there is none).  What post-
    checkout does, and what a save does when no post-checkout ran.  Caller
    holds the lock.  (what happened, the memory now, notes for the user)"""
    pr = store.open_repo(ctx.repo)
    save(old, f'hook post-checkout: {_name(old)} before switching to {_name(ctx)}', event='post-checkout')
    top, said = lineage.memory_for(ctx, pr)
    if top is None:
        # a fork: the new ref starts at the memory just saved
        top = store.base(ctx.repo, pr)
        if top is not None:
            store.update_ref(
                ctx.repo, ctx.ref, str(top.id), None,
                f'agitmem: fork from {str(top.id)[:12]} ({_name(old)})',
            )
        what = f'forked from {_name(old)}'
    else:
        what = 'checked out'
    if top is not None:
        checkout(ctx, top)
        audit.log(
            ctx.repo.agent_dir, 'write checkout',
            f'{repo_mod.shown(ctx.ref)} {what} {str(top.id)[:12]}',
        )
    return what, top, said


def _name(ctx: Context) -> str:
    # shown: into commit messages and the audit log, which are UTF-8
    return repo_mod.shown(ctx.branch) if ctx.branch else 'detached HEAD'


def foreign(ctx: Context) -> str | None:
    """The memory ref whose memory this worktree's .agent/memory holds,
    when it is not ctx.ref's (a branch switch no post-checkout hook saw:
    agent hooks only, a rebase, a failed switch); else None."""
    if lineage.pinned(ctx):
        return None
    held = store.base_ref(ctx.repo)
    if held is None or held == ctx.ref or not repo_mod.is_memory_ref(held):
        return None
    return held


def align(ctx: Context) -> None:
    """Before a write: if the working tree holds another branch's memory,
    switch it as post-checkout would, so no save commits one branch's
    memory onto another's ref.  Caller holds the lock."""
    held = foreign(ctx)
    if held is None:
        return
    pr = store.open_repo(ctx.repo)
    base = store.base(ctx.repo, pr)
    trailers = store.trailers(base) if base is not None else {}
    branch = trailers.get('Code-Branch')
    head = trailers.get('Code-Head')
    old = Context(
        ctx.repo, ctx.cfg,
        None if branch in (None, '(detached)') else branch,
        head if head and head != '(unborn)' else None,
        held,
    )
    files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
    if base is not None and _edited_here(ctx, pr, base, files):
        _carry_edits(ctx, pr, base, old, files)
        return
    what, top, said = switch(ctx, old)
    short = str(top.id)[:12] if top is not None else '-'
    for line in said:
        notices.say(f'agitmem: {line}')
    notices.say(
        f'agitmem: .agent/memory held the memory of {_name(old)} ({repo_mod.shown(held)}): '
        f'saved it there; memory of {_name(ctx)} {what} ({short})'
    )


def _edited_here(
        ctx: Context, pr: pygit2.Repository, base: pygit2.Commit, files: store.Files,
) -> bool:
    """Were the unsaved edits in .agent/memory made after HEAD last moved
    to this branch?  Then they are this branch's (as they would be had a
    post-checkout hook switched the memory), not the memory's old branch's."""
    old = store.tree_files(pr, base.tree)
    edited = [p for p in set(files) | set(old) if files.get(p) != old.get(p) and p != memory.CONFIG]
    if not edited:
        return False
    moved = lineage.head_moved(ctx.repo)
    if moved is None:
        return False
    newest = 0.0
    for path in edited:
        try:
            newest = max(newest, (ctx.repo.memory_dir / path).stat().st_mtime)
        except OSError:
            newest = max(newest, moved + 1.0)  # deleted since: after, as far as we know
    return newest >= moved


def _carry_edits(
        ctx: Context, pr: pygit2.Repository, base: pygit2.Commit, old: Context,
        files: store.Files,
) -> None:
    """Apply the unsaved edits (base -> working tree) to this branch's
    memory (forked from base when it has none), leaving the old branch's
    ref as it was.  Caller holds the lock; the caller's save commits."""
    top, said = lineage.memory_for(ctx, pr)
    if top is None:
        store.update_ref(
            ctx.repo, ctx.ref, str(base.id), None,
            f'agitmem: fork from {str(base.id)[:12]} ({_name(old)})',
        )
        top = base
    if top.id != base.id:
        from agitmem import merge
        result = merge.merge(store.tree_files(pr, base.tree), files, store.tree_files(pr, top.tree))
        if result.conflicts:
            notices.say(
                f'agitmem: the unsaved edits conflict with the memory of {_name(ctx)} '
                f'({result.conflicts[0]}); keeping the edits as they are'
            )
        else:
            merged = dict(result.files)
            if memory.CONFIG in files:
                merged[memory.CONFIG] = files[memory.CONFIG]
            store.checkout(ctx.repo, merged)
    store.set_base(ctx.repo, top.id, ctx.ref)
    for line in said:
        notices.say(f'agitmem: {line}')
    notices.say(
        f'agitmem: .agent/memory held the memory of {_name(old)} with edits made '
        f'since {_name(ctx)} was checked out: they go to {_name(ctx)}\'s memory '
        f'({repo_mod.shown(ctx.ref)}), {_name(old)}\'s stays as it was'
    )
