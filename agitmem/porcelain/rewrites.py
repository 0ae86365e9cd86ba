"""Memory after git rewrites commits (the post-rewrite hook: `commit
--amend`, `rebase`, `pull --rebase`).

A memory commit names the code commit it was saved at (`Code-Head`); a
rewrite gives that commit a new id, and `review BASE..HEAD` would no
longer find the memory saved at it.  Published memory history is never
rewritten (others have fetched it): a new memory commit records the
mapping instead, one `Code-Rewritten: <old> <new>` line for each old id
some memory of this branch names (directly or through an earlier
mapping), and review follows the mappings.  A squash or fixup maps many
old ids to one new one."""
from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from collections.abc import Mapping
from typing import NamedTuple

from agitmem import repo as repo_mod
from agitmem.porcelain.context import Context

KEY = 'Code-Rewritten'
EVENT = 'post-rewrite'
_ID = r'[0-9a-f]{40}(?:[0-9a-f]{24})?'  # sha-1 or sha-256
_IS_ID = re.compile(f'^{_ID}$')
_PAIR = re.compile(rf'^{KEY}: ({_ID}) ({_ID})$', re.MULTILINE)
_HEAD = re.compile(rf'^Code-Head: ({_ID})$', re.MULTILINE)


def parse(stdin: str) -> list[tuple[str, str]]:
    """The (old, new) ids git writes to post-rewrite's stdin, one pair a
    line (`<old> <new> [<extra>]`); anything else is skipped."""
    pairs = []
    for line in stdin.split('\n'):
        words = line.split(' ')
        if len(words) >= 2 and _IS_ID.match(words[0]) and _IS_ID.match(words[1]):
            pairs.append((words[0], words[1]))
    return pairs


def mappings(messages: Iterable[str]) -> dict[str, set[str]]:
    """old id -> the new ids memory commit messages map it to."""
    ret: dict[str, set[str]] = {}
    for msg in messages:
        for old, new in _PAIR.findall(msg):
            ret.setdefault(old, set()).add(new)
    return ret


def followed(sha: str, mapped: Mapping[str, set[str]]) -> set[str]:
    """sha and every id its rewrites (amended twice, then rebased) gave
    it; a cycle (forged, or a rebase undone) ends where it began."""
    seen = {sha}
    todo = [sha]
    while todo:
        for new in mapped.get(todo.pop(), ()):
            if new not in seen:
                seen.add(new)
                todo.append(new)
    return seen


def _named(ctx: Context) -> tuple[set[str], dict[str, set[str]]]:
    """The code ids this branch's memory names (each commit's Code-Head,
    and the new ids of the mappings recorded so far), and those mappings;
    of the history git could read, when part of it is missing (one line
    says so; a shallow memory ref's history ends at its graft, no gap)."""
    if not repo_mod.ref_exists(ctx.repo, ctx.ref):
        return set(), {}
    log = repo_mod.git('log', '--format=%B', '--end-of-options', ctx.ref, '--', cwd=ctx.repo.root, check=False)
    text = log.stdout
    if log.returncode != 0:
        # a commit of the memory's history is gone (pruned, or a broken
        # copy): git log gives nothing then; what can be read is used, and
        # the user told once
        text = _readable_messages(ctx)
        why = repo_mod.error_line(log.stderr, f'exit {log.returncode}')
        print(
            f'agitmem: the history of {repo_mod.short_ref(ctx.ref)} is incomplete '
            f'({repo_mod.shown(why)}): memory saved at a rewritten commit before '
            f'the gap does not follow it (`git fsck` says more)',
            file=sys.stderr,
        )
    named = set(_HEAD.findall(text))
    recorded = mappings([text])
    for news in recorded.values():
        named |= news
    return named, recorded


def _readable_messages(ctx: Context) -> str:
    """The messages of the commits of the memory ref's history that are
    there, up to the missing ones (git's walk stops at the first)."""
    import pygit2

    from agitmem import store
    pr = store.open_repo(ctx.repo)
    top = store.tip(pr, ctx.ref)
    todo = [top.id] if top is not None else []
    seen = set(todo)
    texts: list[str] = []
    while todo:
        c = pr.get(todo.pop())
        if not isinstance(c, pygit2.Commit):
            continue  # the gap
        texts.append(c.message)
        for parent in c.parent_ids:
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return '\n'.join(texts)


def from_reflog(ctx: Context, kind: str) -> list[tuple[str, str]]:
    """The pairs when git's list is not on stdin (the pre-commit framework
    runs post-rewrite hooks without it): an amend from HEAD's reflog, a
    rebase from git's own list, else from its reflog and patch ids."""
    if kind == 'rebase':
        return _rebased(ctx)
    if kind != 'amend':
        return []
    out = repo_mod.git_out(ctx.repo, 'log', '-g', '-2', '-z', '--format=%H %gs', 'HEAD')
    entries = [e for e in out.split('\0') if e]
    if len(entries) != 2 or not entries[0].split(' ', 1)[-1].startswith('commit (amend):'):
        return []
    return [(entries[1].split(' ', 1)[0], entries[0].split(' ', 1)[0])]


# git keeps the list it gives post-rewrite in the rebase's state directory
# until its hooks have run (the merge backend, then the apply backend)
_LISTS = ('rebase-merge/rewritten-list', 'rebase-apply/rewritten')
# a rebase's reflog entries: `<action> (start): checkout <onto>` in HEAD's,
# `<action> (finish): refs/heads/<branch> onto <id>` in the branch's; the
# action is `rebase`, `pull --rebase`, or what a tool that runs the rebase
# names in $GIT_REFLOG_ACTION (`sync`)
_START = re.compile(r'^(.+?) \(start\): checkout (.+)$')
_FINISH = re.compile(rf'^(.+?) \(finish\): \S+ onto ({_ID})$')


class Rebase(NamedTuple):
    """The rebase that just finished, as the reflogs tell it."""
    old: str  # the branch's tip before
    new: str  # and after
    onto: str  # the commit its commits went onto
    onto_name: str | None  # as its `(start): checkout` names it (a branch, an id)
    action: str  # `rebase`, `pull --rebase`, a tool's own


def finished_rebase(ctx: Context) -> Rebase | None:
    """The one reader of a finished rebase's reflog entries (the branch's
    two newest, HEAD's newest `(start): checkout`, both at once, NUL-
    separated); None unless the branch's newest is a `(finish)`.  The
    start entry is this rebase's only when it checked out the commit the
    finish names with the same action: an older rebase's names another
    branch."""
    if ctx.branch is None:
        return None
    branch_log, head_log = repo_mod.git_each(
        ('log', '-g', '-2', '-z', '--format=%H %gs', f'refs/heads/{ctx.branch}', '--'),
        ('log', '-g', '-1', '-z', '-F', '--grep-reflog', '(start): checkout ', '--format=%H %gs', 'HEAD', '--'),
        cwd=ctx.repo.root,
    )
    entries = [e.split(' ', 1) for e in branch_log.stdout.split('\0') if e] if branch_log.returncode == 0 else []
    if len(entries) != 2 or len(entries[0]) != 2:
        return None
    finish = _FINISH.match(entries[0][1])
    if finish is None:
        return None
    action, onto = finish[1], finish[2]
    start = head_log.stdout.strip('\0').split(' ', 1) if head_log.returncode == 0 else []
    m = _START.match(start[1]) if len(start) == 2 else None
    name = m[2] if m is not None and m[1] == action and start[0] == onto else None
    return Rebase(entries[1][0], entries[0][0], onto, name, action)


def _rebased(ctx: Context) -> list[tuple[str, str]]:
    for name in _LISTS:
        try:
            text = (ctx.repo.git_dir / name).read_text(encoding='ascii', errors='replace')
        except OSError:
            continue
        return parse(text)
    return by_patch_id(ctx)


def by_patch_id(ctx: Context) -> list[tuple[str, str]]:
    """The pairs of the rebase that just finished, when its state is gone
    (a hook runner that ran later): the reflogs name the tips before and
    after and what it went onto (finished_rebase), and a commit only the
    old tip had is paired with the one only the new tip has with the same
    `patch-id --stable` (a pick or a reword; a squash matches none)."""
    rebase = finished_rebase(ctx)
    if rebase is None:
        return []
    old, new, onto = rebase.old, rebase.new, rebase.onto
    olds = _patch_ids(ctx, old, f'^{new}', f'^{onto}')
    news = {p: c for c, p in _patch_ids(ctx, new, f'^{old}', f'^{onto}').items()}
    return [(c, news[p]) for c, p in olds.items() if p in news]


def _patch_ids(ctx: Context, *revs: str) -> dict[str, str]:
    """commit -> its stable patch id, for the commits revs select (a merge
    or an empty commit has none)."""
    log = repo_mod.git(
        'log', '--no-merges', '-p', '--format=commit %H', '--no-color', '--no-ext-diff',
        '--no-textconv', '--end-of-options', *revs, '--', cwd=ctx.repo.root, check=False,
    )
    if log.returncode != 0 or not log.stdout:
        return {}
    ids = repo_mod.git('patch-id', '--stable', cwd=ctx.repo.root, stdin=log.stdout, check=False)
    ret = {}
    for line in ids.stdout.splitlines():
        words = line.split(' ')
        if len(words) == 2 and _IS_ID.match(words[0]) and _IS_ID.match(words[1]):
            ret[words[1]] = words[0]
    return ret


def record(ctx: Context, kind: str, pairs: list[tuple[str, str]]) -> str | None:
    """Record the rewritten ids the memory of this branch names (with the
    memory's unsaved edits, like post-commit); the commit's id, None when
    the memory named none of them."""
    named, recorded = _named(ctx)
    kept = sorted({
        (old, new) for old, new in pairs
        # a hook run twice (a runner's and git's own) records a pair once
        if old in named and old != new and new not in recorded.get(old, ())
    })
    if not kept:
        return None
    from agitmem.porcelain import write
    body = '\n'.join(f'{KEY}: {old} {new}' for old, new in kept)
    n = len({old for old, _ in kept})
    subject = f'hook post-rewrite: {kind} rewrote {n} commit{"s" if n > 1 else ""} memory was saved at'
    oid = write.save(ctx, subject, event=EVENT, body=body, force=True)
    return None if oid is None else str(oid)
