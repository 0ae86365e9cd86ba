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
from collections.abc import Iterable
from collections.abc import Mapping

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


def _named(ctx: Context) -> set[str]:
    """The code ids this branch's memory names: each commit's Code-Head,
    and the new ids of the mappings recorded so far."""
    if not repo_mod.ref_exists(ctx.repo, ctx.ref):
        return set()
    text = repo_mod.git_out(ctx.repo, 'log', '--format=%B', '--end-of-options', ctx.ref)
    named = set(_HEAD.findall(text))
    for news in mappings([text]).values():
        named |= news
    return named


def from_reflog(ctx: Context, kind: str) -> list[tuple[str, str]]:
    """The pair of an amend when git's list is not at hand (the pre-commit
    framework runs post-rewrite hooks without it): HEAD before and after,
    when HEAD's last move was that amend."""
    if kind != 'amend':
        return []
    out = repo_mod.git_out(ctx.repo, 'log', '-g', '-2', '-z', '--format=%H %gs', 'HEAD')
    entries = [e for e in out.split('\0') if e]
    if len(entries) != 2 or not entries[0].split(' ', 1)[-1].startswith('commit (amend):'):
        return []
    return [(entries[1].split(' ', 1)[0], entries[0].split(' ', 1)[0])]


def record(ctx: Context, kind: str, pairs: list[tuple[str, str]]) -> str | None:
    """Record the rewritten ids the memory of this branch names (with the
    memory's unsaved edits, like post-commit); the commit's id, None when
    the memory named none of them."""
    named = _named(ctx)
    kept = sorted({(old, new) for old, new in pairs if old in named and old != new})
    if not kept:
        return None
    from agitmem.porcelain import write
    body = '\n'.join(f'{KEY}: {old} {new}' for old, new in kept)
    n = len({old for old, _ in kept})
    subject = f'hook post-rewrite: {kind} rewrote {n} commit{"s" if n > 1 else ""} memory was saved at'
    oid = write.save(ctx, subject, event=EVENT, body=body, force=True)
    return None if oid is None else str(oid)
