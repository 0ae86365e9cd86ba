"""Going back in memory: rollback to an earlier memory commit, archive a
finished snapshot.  Both commit through the one write path and restore the
working tree's memory when that write fails."""
from __future__ import annotations

import datetime
import re

import pygit2
import yaml

from agitmem import audit
from agitmem import memory
from agitmem import store
from agitmem.errors import AgitmemError
from agitmem.memory import snapshot as snapshot_mod
from agitmem.memory import state as state_mod
from agitmem.porcelain import write
from agitmem.porcelain.context import Context
from agitmem.resources import resource_dir

_RELATIVE = re.compile(r'^@(?:~(\d+))?$')


def _check_rev(ctx: Context, pr: pygit2.Repository, rev: str, pending: bool) -> None:
    """Refuse a revision that will not resolve before anything is saved:
    a rollback that fails must not have committed the unsaved edits.  @~N
    counts from the tip as it will be once the pending edits are saved."""
    m = _RELATIVE.match(rev)
    if m is None:
        # an id: the pre-save does not move it.  It may name a fetched
        # commit: its tree is checked before the pre-save writes anything
        store.check_tree(pr, store.resolve(pr, ctx.ref, rev).tree, max_file_kb=ctx.cfg['max_file_kb'])
        return
    top = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
    if top is None and not pending:
        raise AgitmemError(f'no memory yet on {ctx.ref}: run `agitmem save`')
    need = int(m[1] or 0) + 1 - int(pending)  # commits the chain needs now
    have = 0
    target = None
    while top is not None and have < need:  # walks N commits, not the history
        have += 1
        target, top = top, top.parents[0] if top.parents else None
    if have < need:
        raise AgitmemError(
            f'{rev}: memory history is only {have + int(pending)} commit(s) deep',
        )
    if target is not None:  # (None: `@` with edits pending, which are read already)
        store.check_tree(pr, target.tree, max_file_kb=ctx.cfg['max_file_kb'])


def _restore(ctx: Context, files: store.Files, only: set[str] | None) -> None:
    try:
        store.checkout(ctx.repo, files, only=only)
    except (OSError, AgitmemError):
        pass  # the error that brought us here is the one to report


def rollback(ctx: Context, rev: str | None, file: str | None) -> list[str]:
    """Restore memory (all, or one file) from rev into .agent/memory/ and
    record it as a new commit; unsaved edits are saved first.  Returns what
    to tell the user."""
    said = []
    pr = store.open_repo(ctx.repo)
    path = store.memory_path(file) if file is not None else None
    rev = rev or '@~1'
    with store.locked(ctx.repo):
        # another branch's memory here (a switch no hook saw) goes to its
        # own ref first: its edits are not rolled back onto this branch's
        write.align(ctx)
        files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
        parent = store.tip(pr, ctx.ref) or store.base(ctx.repo, pr)
        pending = parent is None or store.tree_files(pr, parent.tree) != files
        _check_rev(ctx, pr, rev, pending)
        # unsaved edits become a commit first: a rollback never loses them
        pre = write.save(ctx, 'save: before rollback', files=files)
        if pre is not None:
            said.append(f'saved unsaved edits as {str(pre)[:12]}')
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
            said.append(f'memory already matches {short}; nothing to roll back')
            return said
        only = {path} if path else None
        what = f' {path}' if path else ''
        try:
            store.checkout(ctx.repo, new, only=only)
            oid = write.save(
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
    said.append(f'rolled back{what} to {short}; recorded as {str(oid)[:12]}')
    return said


def slug(text: str) -> str:
    words = re.findall(r'\w+', text.lower())
    return '-'.join(words)[:48].strip('-') or 'snapshot'


def goal_of(state: dict[str, object], snapshot_text: str) -> str:
    goal = state.get('current_goal')
    if isinstance(goal, str) and goal.strip():
        return goal.strip()
    lines = snapshot_mod.content_lines(
        snapshot_mod.parse(snapshot_text).get(snapshot_mod.GOAL),
    )
    return lines[0][1].lstrip('-* ').strip() if lines else 'untitled'


def archive(ctx: Context) -> list[str]:
    """Move the finished snapshot (state as front matter) under archive/
    in a dated commit; snapshot and state start again from the templates."""
    templates = resource_dir('templates')
    with store.locked(ctx.repo):
        write.align(ctx)  # archive this branch's snapshot, not another's
        files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
        if memory.ARCHIVE in files:
            raise AgitmemError(
                f'.agent/memory/{memory.ARCHIVE}: is a file; the archive is a '
                f'directory of archived snapshots: move the file away',
            )
        before = dict(files)
        snap = files.get(memory.SNAPSHOT, b'').decode()
        state_text = files.get(memory.STATE, b'{}').decode()
        state = state_mod.parse(state_text)
        fresh_snap = (templates / memory.SNAPSHOT).read_bytes()
        fresh_state = (templates / memory.STATE).read_bytes()
        if snap.encode() == fresh_snap and state == state_mod.parse(fresh_state.decode()):
            raise AgitmemError(
                'nothing to archive: snapshot and state are still the '
                'templates',
            )
        goal = goal_of(state, snap)
        now = datetime.datetime.now()
        path = f'{memory.ARCHIVE}/{now:%Y/%m/%d-%H%M%S}-{slug(goal)}.md'
        front = yaml.safe_dump(state, sort_keys=False, allow_unicode=True)
        files[path] = f'---\n{front}---\n\n{snap}'.encode()
        files[memory.SNAPSHOT] = fresh_snap
        files[memory.STATE] = fresh_state
        try:
            store.checkout(ctx.repo, files)
            oid = write.save(ctx, f'archive: {goal}', event='archive', files=files)
        except BaseException as e:
            # memory goes back to what it was: no archive file, the snapshot
            try:
                store.checkout(ctx.repo, before)
            except (OSError, AgitmemError):
                pass  # the error that brought us here is the one to report
            if isinstance(e, OSError):
                raise AgitmemError(f'could not write .agent/memory: {e}')
            raise
    audit.log(ctx.repo.agent_dir, 'write archive', path)
    return [
        f'archived the snapshot to {path}; snapshot and state reset',
        f'recorded as {str(oid)[:12]} (read it with `agitmem show archive:{slug(goal)}`)',
    ]
