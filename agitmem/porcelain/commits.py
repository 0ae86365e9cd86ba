"""Reading the memory ref's commits for the read-only commands: its log,
one commit or one file of it, the diff between two memories, and what the
working tree's memory changed since it was last saved."""
from __future__ import annotations

from typing import Any
from typing import NamedTuple

from agitmem import audit
from agitmem import memory
from agitmem import store
from agitmem.diffs import changes as file_changes
from agitmem.diffs import unified
from agitmem.memory import state as state_mod
from agitmem.porcelain.context import Context


SUBJECT_CHARS = 200  # what agitmem writes; a fetched commit's may be megabytes


def subject(message: str) -> str:
    line = message[:SUBJECT_CHARS + 1].split('\n', 1)[0]
    return line if len(line) <= SUBJECT_CHARS else f'{line[:SUBJECT_CHARS - 1]}…'


def log(ctx: Context, n: int | None) -> list[dict[str, Any]]:
    """The newest `n` memory commits (all without n), newest first."""
    pr = store.open_repo(ctx.repo)
    commits = store.history(pr, ctx.ref, n)
    audit.log(ctx.repo.agent_dir, 'read log', f'{ctx.ref} {len(commits)} commits')
    rows: list[dict[str, Any]] = []
    for c in commits:
        t = store.trailers(c)
        rows.append({
            'id': str(c.id),
            'date': store.commit_time(c).isoformat(),
            'event': t.get('Agitmem-Event', ''),
            'subject': subject(c.message),
            'code_branch': t.get('Code-Branch', ''),
            'code_head': t.get('Code-Head', ''),
            'parents': [str(p) for p in c.parent_ids],
        })
    return rows


class Shown(NamedTuple):
    id: str
    message: str
    date: str
    event: str
    files: store.Files
    path: str | None  # the file asked for, None for the whole commit


def show(ctx: Context, spec: str) -> Shown:
    """REV, REV:FILE or archive:NAME of the memory ref."""
    pr = store.open_repo(ctx.repo)
    if spec.startswith('archive:'):
        commit = store.resolve(pr, ctx.ref, '@')
        path: str | None = store.find_archive(pr, commit, spec[len('archive:'):])
    else:
        rev, sep, file = spec.partition(':')
        commit = store.resolve(pr, ctx.ref, rev or '@')
        path = store.memory_path(file) if sep else None
    files = store.tree_files(pr, commit.tree)
    audit.log(ctx.repo.agent_dir, 'read show', f'{str(commit.id)[:12]}:{path or ""}')
    return Shown(
        str(commit.id), commit.message, store.commit_time(commit).isoformat(),
        store.trailers(commit).get('Agitmem-Event', ''), files, path,
    )


def diff(ctx: Context, revs: list[str]) -> list[tuple[str, str, str]]:
    """(path, status, unified diff) from the first memory to the second:
    REV REV, REV and the working tree, or the working tree's base and it."""
    pr = store.open_repo(ctx.repo)
    if len(revs) == 2:
        old_c = store.resolve(pr, ctx.ref, revs[0])
        new = store.tree_files(pr, store.resolve(pr, ctx.ref, revs[1]).tree)
    else:
        if revs:
            old_c = store.resolve(pr, ctx.ref, revs[0])
        else:
            old_c = store.base(ctx.repo, pr) or store.resolve(pr, ctx.ref, '@')
        new = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
    old = store.tree_files(pr, old_c.tree)
    changes = unified(old, new)
    audit.log(ctx.repo.agent_dir, 'read diff', f'{" ".join(revs) or "worktree"}: {len(changes)} files')
    return changes


class Unsaved(NamedTuple):
    tip: str | None  # the memory ref's
    subject: str | None  # of the tip
    base: str | None  # what this worktree last wrote or checked out
    files: store.Files  # the working tree's memory
    changes: list[tuple[str, str]]  # (path, status) against base, else tip

    @property
    def moved(self) -> bool:
        """The ref moved since this worktree last wrote its memory."""
        return self.tip is not None and self.base is not None and self.tip != self.base


def unsaved(ctx: Context) -> Unsaved:
    pr = store.open_repo(ctx.repo)
    top = store.tip(pr, ctx.ref)
    base = store.base(ctx.repo, pr)
    against = base or top
    # a layer byte for byte what the memory commit holds was checked when
    # it was committed (as a save takes it)
    same = store.same_as(pr, against)
    files = store.read_memory(
        ctx.repo, max_file_kb=ctx.cfg['max_file_kb'],
        checked=lambda name, data: same(name, data) is not None,
    )
    old = store.tree_files(pr, against.tree) if against is not None else {}
    changes = [
        (p, s) for p, s in file_changes(old, files)
        # a test run the hooks observed is carried by the next save
        if not (p == memory.STATE and state_mod.same_but_observed(old.get(p), files.get(p)))
    ]
    return Unsaved(
        str(top.id) if top is not None else None,
        subject(top.message) if top is not None else None,
        str(base.id) if base is not None else None,
        files, changes,
    )
