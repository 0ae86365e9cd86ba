"""Memory follows branches (DESIGN.md sections 2, 7, 8): the post-checkout,
post-merge and post-rewrite (rebase) git hooks, and `agitmem merge BRANCH`.

A branch switch saves the memory of the branch we came from to its own
ref, then checks the new branch's memory out into .agent/memory/ (a branch
without memory forks from the one it was created from).  A merge of two
memory histories is agitmem.merge's; a conflict is written into the file
with markers, listed in the merge commit and in <git dir>/agitmem/conflicts,
and blocks `check` until it is resolved and saved."""
from __future__ import annotations

import re
import sys
from collections.abc import Sequence

import pygit2

from agitmem import repo as repo_mod
from agitmem import store
from agitmem.porcelain import lineage
from agitmem.porcelain import merging
from agitmem.porcelain import write
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError
from agitmem.repo import MEMORY_NS
from agitmem.repo import Repo
from agitmem.repo import REMOTES_NS

_MOVE = re.compile(r'^checkout: moving from (\S+) to (\S+)$')
_MERGE = re.compile(r'^merge (\S+): ')
_SQUASHED = re.compile(r'^commit ([0-9a-f]{40})$', re.MULTILINE)
_SHA = re.compile(r'^[0-9a-f]{40}$')


# -- post-merge -------------------------------------------------------------------

def _merged_commit(repo: Repo, squash: bool) -> str | None:
    """The commit a code merge just brought in."""
    try:
        text = (repo.git_dir / 'MERGE_HEAD').read_text()
        if _SHA.match(text.split('\n', 1)[0]):
            return text.split('\n', 1)[0]
    except OSError:
        pass
    if squash:
        try:
            m = _SQUASHED.search((repo.git_dir / 'SQUASH_MSG').read_text())
        except OSError:
            return None
        return m[1] if m else None
    return repo_mod.git_out(repo, 'rev-parse', '-q', '--verify', 'HEAD^2') or (
        repo_mod.git_out(repo, 'rev-parse', '-q', '--verify', 'HEAD')
    ) or None


def _refs_at(repo: Repo, sha: str) -> list[str]:
    """The local and remote-tracking branches at a commit (full names)."""
    out = repo_mod.git_out(
        repo, 'for-each-ref', '--points-at', sha, '--format=%(refname)',
        'refs/heads/', 'refs/remotes/',
    )
    # split('\n'): splitlines() would also cut a name at U+2028 or \x85
    return [r for r in out.split('\n') if r and not r.endswith('/HEAD')]


def _memory_ref(code_ref: str) -> str:
    """refs/heads/X -> refs/agitmem/heads/X, refs/remotes/R/X ->
    refs/agitmem/remotes/R/X."""
    if code_ref.startswith('refs/heads/'):
        return MEMORY_NS + code_ref.removeprefix('refs/heads/')
    return REMOTES_NS + code_ref.removeprefix('refs/remotes/')


def _code_ref(repo: Repo, name: str) -> str | None:
    for ref in (f'refs/heads/{name}', f'refs/remotes/{name}'):
        if repo_mod.ref_exists(repo, ref):
            return ref
    return None


def merged_memory(ctx: Context, squash: bool) -> tuple[str, str] | None:
    """(memory ref, name) of the branch a code merge just merged, by the
    name the user gave it: its reflog entry's (`merge feature: ...`), the
    branch a `git pull` fetched (FETCH_HEAD), the default message of a
    merge committed by hand; never whatever branch points at the commit
    it brought in (`git merge <id>` names no branch).  A squash, or a
    conflicted merge committed with a message of one's own, records no
    name: there, the one branch with memory at the commit it brought in.  After
    a `git pull` the remote's memory is fetched first."""
    subject = repo_mod.head_reflog(ctx.repo)
    sha = _merged_commit(ctx.repo, squash)
    m = _MERGE.match(subject)
    code_refs: list[str | None]
    if squash:
        code_refs = [*_only(ctx, _refs_at(ctx.repo, sha))] if sha else []
    elif subject.startswith('pull'):
        code_refs = [_pulled(ctx, sha)] if sha else []
    elif m:
        code_refs = [named_branch(ctx.repo, m[1])]
    else:
        said = _MERGE_MSG.match(repo_mod.git_out(ctx.repo, 'log', '-1', '--format=%s', 'HEAD'))
        if said:
            code_refs = [named_branch(ctx.repo, said[1])]
        else:
            # a conflict resolved and committed with a message of one's
            # own names nothing: the one branch with memory at the merge's
            # second parent, as for a squash
            code_refs = [*_only(ctx, _refs_at(ctx.repo, sha))] if sha else []
    return _memory_of(ctx, code_refs, subject)


# the subject git gives a merge of a branch (`Merge branch 'x' into y`,
# `Merge remote-tracking branch 'origin/x'`); `Merge commit '<id>'` and
# `Merge tag` name none
_MERGE_MSG = re.compile(r"^Merge (?:remote-tracking )?branch '([^']+)'")
_FETCHED = re.compile(r"^([0-9a-f]{40}(?:[0-9a-f]{24})?)\t\tbranch '([^']+)' of (.+)$")


def named_branch(repo: Repo, name: str) -> str | None:
    """The code branch (refs/heads/ or refs/remotes/) a name the user
    gave resolves to, as git resolves it: a tag, an id or `HEAD~3` names
    no branch, even where a branch points at the same commit."""
    if not name or name.startswith('-') or _SHA.match(name):
        return None
    full = repo_mod.git_out(repo, 'rev-parse', '--verify', '-q', '--symbolic-full-name', name)
    return full if full.startswith(('refs/heads/', 'refs/remotes/')) and '\n' not in full else None


def _only(ctx: Context, code_refs: list[str]) -> list[str]:
    """code_refs if exactly one of them (not this branch) has memory: a
    commit id alone never picks between two branches."""
    pr = store.open_repo(ctx.repo)
    mine = f'refs/heads/{ctx.branch}'
    with_memory = [r for r in code_refs if r != mine and store.tip(pr, _memory_ref(r)) is not None]
    return with_memory if len(with_memory) == 1 else []


def _pulled(ctx: Context, sha: str) -> str | None:
    """The remote-tracking branch a `git pull` merged or rebased onto (at
    sha): FETCH_HEAD's line for it names the branch and the remote's URL
    (the remote whose URL that is, else this branch's upstream remote)."""
    try:
        with open(ctx.repo.git_dir / 'FETCH_HEAD', 'rb') as f:
            text = f.read(1 << 20).decode('utf-8', 'replace')
    except OSError:
        return None
    for line in text.split('\n'):
        m = _FETCHED.match(line)
        if m is None or m[1] != sha:
            continue
        candidates = [
            r for r in repo_mod.remotes(ctx.repo)
            if _same_url(repo_mod.git_out(ctx.repo, 'config', '--get', f'remote.{r}.url'), m[3])
        ] or [repo_mod.upstream_remote(ctx.repo, ctx.branch) or '']
        for remote in candidates:
            ref = f'refs/remotes/{remote}/{m[2]}'
            if remote and repo_mod.ref_exists(ctx.repo, ref):
                return ref
    return None


def _same_url(configured: str, fetched: str) -> bool:
    """FETCH_HEAD writes a remote's URL without a trailing `/` or `.git`."""
    def bare(u: str) -> str:
        return u.rstrip('/').removesuffix('.git').rstrip('/')
    return bool(configured) and bare(configured) == bare(fetched)


def _memory_of(
        ctx: Context, code_refs: Sequence[str | None], subject: str,
) -> tuple[str, str] | None:
    """(memory ref, name) of the first of code_refs (other than this
    branch) that has memory; a remote's memory is fetched first when git
    just pulled (`subject`, HEAD's reflog entry)."""
    pr = store.open_repo(ctx.repo)
    fetched = set()
    for code_ref in code_refs:
        if code_ref is None or code_ref == f'refs/heads/{ctx.branch}':
            continue
        ref = _memory_ref(code_ref)
        remote = code_ref.removeprefix('refs/remotes/').split('/', 1)[0]
        if (
                subject.startswith('pull') and
                code_ref.startswith('refs/remotes/') and remote not in fetched and
                remote in repo_mod.remotes(ctx.repo)
        ):
            fetched.add(remote)
            from agitmem.porcelain.sharing import fetch_memory
            try:
                fetch_memory(ctx.repo, remote)
            except AgitmemError as e:
                print(f'agitmem: memory not fetched: {e}', file=sys.stderr)
        if store.tip(pr, ref) is not None and ref != ctx.ref:
            return ref, repo_mod.short_ref(ref)
    return None


def on_merge(ctx: Context, squash: bool) -> int:
    """post-merge: merge the merged branch's memory into this branch's."""
    if not ctx.repo.memory_dir.is_dir() or lineage.pinned(ctx):
        return 0
    found = merged_memory(ctx, squash)
    if found is None:
        return 0
    ref, name = found
    subject = f'merge: {name}{" (squash)" if squash else ""}'
    outcome = merging.merge_into_worktree(ctx, ref, name, subject=subject)
    return merging.report(outcome, ctx, name, prefix='agitmem: ')


# -- post-rewrite (rebase) -----------------------------------------------------------

def rebased_onto(ctx: Context) -> tuple[str, str] | None:
    """(memory ref, name) of the branch a rebase that just finished put
    this branch's commits on, by the name the user gave it: its `(start):
    checkout X` reflog entry's (`main`, `origin/main`; an id, a tag,
    `HEAD~3` or `--root` name none), or for `git pull --rebase` the
    branch it fetched (FETCH_HEAD; git names the upstream by id there).
    Never whatever branch points at the commit it went onto
    (rewrites.finished_rebase reads the reflogs)."""
    from agitmem.porcelain import rewrites
    rebase = rewrites.finished_rebase(ctx)
    if rebase is None:
        return None
    if rebase.action.startswith('pull'):
        named = _pulled(ctx, rebase.onto)
    else:
        named = named_branch(ctx.repo, rebase.onto_name) if rebase.onto_name else None
    return _memory_of(ctx, [named], rebase.action)


def on_rebase(ctx: Context) -> int:
    """post-rewrite after a rebase: the branch it was rebased onto is in
    this one now, as after a merge: its memory is merged into this
    branch's (a `git pull --rebase` runs no post-merge)."""
    if not ctx.repo.memory_dir.is_dir() or lineage.pinned(ctx) or ctx.branch is None:
        return 0
    found = rebased_onto(ctx)
    if found is None:
        return 0
    ref, name = found
    outcome = merging.merge_into_worktree(ctx, ref, name, subject=f'merge: {name} (rebase)')
    return merging.report(outcome, ctx, name, prefix='agitmem: ')


# -- post-checkout ------------------------------------------------------------------

def _branch_named(repo: Repo, name: str, sha: str) -> str | None:
    """The branch a reflog entry names, or None for a detached HEAD."""
    if name == sha or _SHA.match(name) or name == 'HEAD':
        return None
    return name if repo_mod.ref_exists(repo, f'refs/heads/{name}') else None


def _old_branch(ctx: Context, pr: pygit2.Repository, old: str) -> tuple[bool, str | None]:
    """(is this a branch switch, the branch we came from)."""
    subject = repo_mod.head_reflog(ctx.repo)
    if subject:
        m = _MOVE.match(subject)
        if m is None:  # rebase, reset, worktree add: not a switch
            return False, None
        return True, _branch_named(ctx.repo, m[1], old)
    # no reflog: the branch the memory was last written under
    base = store.base(ctx.repo, pr)
    if base is None:
        return False, None
    branch = store.trailers(base).get('Code-Branch')
    return True, None if branch in (None, '(detached)') else branch


def _fork_source(ctx: Context, pr: pygit2.Repository) -> tuple[str, pygit2.Commit] | None:
    """For a new worktree on a branch without memory: the memory of the
    branch it was created from (its reflog's `branch: Created from X`, else
    the one local branch with memory at the same commit)."""
    if ctx.branch is None or ctx.head is None:
        return None
    created = repo_mod.git_out(
        ctx.repo, 'log', '-g', '-z', '--format=%gs', f'refs/heads/{ctx.branch}',
    ).split('\0')
    m = re.match(r'^branch: Created from (\S+)$', created[-1] if created else '')
    named = _code_ref(ctx.repo, m[1]) if m and m[1] != 'HEAD' else None
    candidates = [named] if named else [
        r for r in _refs_at(ctx.repo, ctx.head)
        if r.startswith('refs/heads/') and r != f'refs/heads/{ctx.branch}'
    ]
    found = [
        (ref, c) for ref, c in (
            (_memory_ref(r), store.tip(pr, _memory_ref(r))) for r in candidates
        ) if c is not None
    ]
    if len(found) != 1:
        return None
    return repo_mod.short_ref(found[0][0]), found[0][1]


def _new_worktree(ctx: Context, old: str) -> int:
    """post-checkout of `git worktree add`: a worktree of a repository that
    has memory gets its own .agent/ (its branch's memory, or a fork of the
    memory of the branch it was created from)."""
    if old != store.ZERO or lineage.pinned(ctx):
        return 0
    pr = store.open_repo(ctx.repo)
    if store.tip(pr, ctx.ref) is None and lineage.from_remote(ctx, pr) is None:
        source = _fork_source(ctx, pr)
        if source is None:
            return 0
        name, commit = source
        store.update_ref(
            ctx.repo, ctx.ref, str(commit.id), None,
            f'agitmem: fork from {str(commit.id)[:12]} ({name})',
        )
        print(f'agitmem: memory of {ctx.branch} forked from {name}')
    from agitmem.porcelain.initialize import initialize
    for line in initialize(ctx.repo, None):
        print(line)
    return 0


def on_checkout(ctx: Context, old: str, new: str, flag: str | bool) -> int:
    """post-checkout: on a branch switch (flag 1), save the memory of the
    branch we came from to its ref, then check out the new branch's memory
    (forking it from the old branch's when it has none)."""
    if flag not in ('1', True):
        return 0  # a file checkout
    if not ctx.repo.memory_dir.is_dir():
        return _new_worktree(ctx, old)
    if lineage.pinned(ctx):
        return 0
    if store.base_ref(ctx.repo) == ctx.ref:
        # the memory here is already this branch's: back from a bisect or
        # a rebase, whose detached HEAD kept the branch's memory
        return 0
    pr = store.open_repo(ctx.repo)
    switched, old_branch = _old_branch(ctx, pr, old)
    old_ref = repo_mod.memory_ref(ctx.repo, old_branch)
    held = write.foreign(ctx)
    if held is not None and (not switched or held != old_ref):
        # not a plain switch (a rebase checking its branch out), or the
        # memory here is not the old branch's: the memory base says whose
        old_ref, old_branch = held, _branch_of(pr, ctx, held)
    elif not switched or old_ref == ctx.ref:
        return 0
    old_ctx = Context(
        ctx.repo, ctx.cfg, old_branch, old if _SHA.match(old) and old != store.ZERO else None,
        old_ref,
    )
    with store.locked(ctx.repo):
        try:
            what, top, said = write.switch(ctx, old_ctx)
        except AgitmemError as e:
            print(
                f'agitmem: memory of {old_branch or "detached HEAD"} not saved, so '
                f'.agent/memory was left as it is (it is not '
                f'{ctx.branch or "detached HEAD"}\'s memory): {e}',
                file=sys.stderr,
            )
            return 1
    for line in said:
        print(f'agitmem: {line}')
    short = str(top.id)[:12] if top is not None else '-'
    print(f'agitmem: memory of {ctx.branch or "detached HEAD"} {what} ({short})')
    return 0


def _branch_of(pr: pygit2.Repository, ctx: Context, ref: str) -> str | None:
    base = store.base(ctx.repo, pr)
    branch = store.trailers(base).get('Code-Branch') if base is not None else None
    return None if branch in (None, '(detached)') else branch
