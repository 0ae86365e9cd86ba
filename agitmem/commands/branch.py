"""Memory follows branches (DESIGN.md sections 2, 7, 8): the post-checkout
and post-merge git hooks, and `agitmem merge BRANCH`.

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
from dataclasses import dataclass
from pathlib import Path

import pygit2

from agitmem import audit
from agitmem import memory
from agitmem import merge as merge_mod
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.commands.save import save_memory
from agitmem.context import Context
from agitmem.errors import AgitmemError
from agitmem.repo import MEMORY_NS
from agitmem.repo import Repo
from agitmem.repo import REMOTES_NS

_MOVE = re.compile(r'^checkout: moving from (\S+) to (\S+)$')
_MERGE = re.compile(r'^merge (\S+): ')
_SQUASHED = re.compile(r'^commit ([0-9a-f]{40})$', re.MULTILINE)
_SHA = re.compile(r'^[0-9a-f]{40}$')


# -- the conflicts a merge left, per worktree ---------------------------------

def conflicts_path(repo: Repo) -> Path:
    return repo.git_dir / 'agitmem' / 'conflicts'


def record_conflicts(repo: Repo, conflicts: Sequence[merge_mod.Conflict]) -> None:
    """<git dir>/agitmem/conflicts: one unresolved conflict a line; no
    file when there is none."""
    path = conflicts_path(repo)
    if conflicts:
        text = ''.join(f'{c}\n' for c in conflicts)
        repo_mod.atomic_write(path, text.encode())
    elif path.exists():
        path.unlink()


# -- git facts ------------------------------------------------------------------

def _git_out(repo: Repo, *args: str) -> str:
    proc = repo_mod.git(*args, cwd=repo.root, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ''


def _ref_exists(repo: Repo, ref: str) -> bool:
    return bool(_git_out(repo, 'rev-parse', '-q', '--verify', f'{ref}^{{commit}}'))


def head_reflog(repo: Repo) -> str:
    """The subject of HEAD's newest reflog entry (what git just did)."""
    return _git_out(repo, 'log', '-g', '-1', '--format=%gs', 'HEAD')


def remotes(repo: Repo) -> list[str]:
    return _git_out(repo, 'remote').split()


def upstream_remote(repo: Repo, branch: str | None) -> str | None:
    if branch is None:
        return None
    name = _git_out(repo, 'config', '--get', f'branch.{branch}.remote')
    return name if name and name != '.' else None


def _pinned(ctx: Context) -> bool:
    """--ref, $AGITMEM_REF or `ref:` pin one memory ref for every branch."""
    return ctx.ref != repo_mod.memory_ref(ctx.branch)


def _short(ref: str) -> str:
    for ns in (MEMORY_NS, REMOTES_NS):
        if ref.startswith(ns):
            return ref[len(ns):]
    return ref


# -- merging two memory histories -----------------------------------------------

@dataclass(frozen=True)
class Outcome:
    kind: str  # 'up to date', 'fast-forward', 'created', 'merged', 'conflicts'
    tip: pygit2.Commit
    result: merge_mod.Result | None = None

    @property
    def conflicts(self) -> tuple[merge_mod.Conflict, ...]:
        return self.result.conflicts if self.result is not None else ()


def merge_refs(
        repo: Repo,
        pr: pygit2.Repository,
        ref: str,
        theirs: pygit2.Commit,
        *,
        name: str,
        subject: str,
        branch: str | None,
        head: str | None,
        allow_conflicts: bool = True,
) -> Outcome:
    """Merge the memory commit theirs into ref, without touching any
    working tree: nothing to do, a fast-forward, or a merge commit with
    both parents.  allow_conflicts=False: a merge that would conflict is
    not committed ('conflicts', ref left as it was).  Caller holds the
    lock."""
    for _ in range(5):
        ours = store.tip(pr, ref)
        try:
            if ours is None:
                store.update_ref(repo, ref, str(theirs.id), None, f'agitmem {subject}')
                return Outcome('created', theirs)
            if store.contains(pr, ours.id, theirs.id):
                return Outcome('up to date', ours)
            if store.contains(pr, theirs.id, ours.id):
                store.update_ref(
                    repo, ref, str(theirs.id), str(ours.id),
                    f'agitmem {subject}: fast-forward',
                )
                return Outcome('fast-forward', theirs)
            oid, result = _merge_commit(
                repo, pr, ref, ours, theirs, name=name, subject=subject,
                branch=branch, head=head, allow_conflicts=allow_conflicts,
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
        repo: Repo,
        pr: pygit2.Repository,
        ref: str,
        ours: pygit2.Commit,
        theirs: pygit2.Commit,
        *,
        name: str,
        subject: str,
        branch: str | None,
        head: str | None,
        allow_conflicts: bool,
) -> tuple[pygit2.Oid | None, merge_mod.Result]:
    base = store.merge_base(pr, ours.id, theirs.id)
    ours_files = store.tree_files(pr, ours.tree)
    result = merge_mod.merge(
        store.tree_files(pr, base.tree) if base is not None else {},
        ours_files,
        store.tree_files(pr, theirs.tree),
        merge_mod.Labels(_short(ref), 'merge base', name),
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
    msg = store.message(subject, event='merge', branch=branch, head=head, body=body)
    oid = store.commit_merge(
        repo, pr, ref, store.build_tree(pr, files), msg=msg,
        parents=[ours.id, theirs.id], old=ours.id,
    )
    return oid, merge_mod.Result(files, result.conflicts, result.notices)


def merge_into_worktree(ctx: Context, theirs_ref: str, name: str, *, subject: str) -> Outcome:
    """Merge the memory on theirs_ref into this worktree's memory: unsaved
    edits are saved first, the result is checked out into .agent/memory/
    and its conflicts recorded."""
    pr = store.open_repo(ctx.repo)
    with store.locked(ctx.repo):
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
        pre = save_memory(ctx, f'save: before {subject}', files=files)
        if pre is not None:
            print(f'saved unsaved memory as {str(pre)[:12]}')
        outcome = merge_refs(
            ctx.repo, pr, ctx.ref, theirs, name=name, subject=subject,
            branch=ctx.branch, head=ctx.head,
        )
        if outcome.kind != 'up to date':
            store.checkout(ctx.repo, store.tree_files(pr, outcome.tip.tree))
        store.set_base(ctx.repo, outcome.tip.id)
        record_conflicts(ctx.repo, outcome.conflicts)
    audit.log(
        ctx.repo.agent_dir, 'write merge',
        f'{theirs_ref} into {ctx.ref}: {outcome.kind} {str(outcome.tip.id)[:12]}',
    )
    return outcome


def report(outcome: Outcome, ctx: Context, name: str, *, prefix: str = '') -> int:
    """Print what a merge did; 1 when it left conflicts."""
    short = str(outcome.tip.id)[:12]
    if outcome.kind == 'up to date':
        print(f'{prefix}memory already up to date with {name}')
    elif outcome.kind in ('fast-forward', 'created'):
        print(f'{prefix}fast-forward: memory of {_short(ctx.ref)} is now {name}\'s ({short})')
    else:
        print(f'{prefix}merged the memory of {name} into {ctx.ref} ({short})')
    if outcome.result is not None:
        for n in outcome.result.notices:
            print(f'{prefix}note: {n}')
    for c in outcome.conflicts:
        print(f'{prefix}CONFLICT {c}')
    if outcome.conflicts:
        print(
            f'{prefix}resolve them in .agent/memory/ (keep what is right; '
            f'delete the <<<<<<< ||||||| ======= >>>>>>> lines, and the '
            f'"{merge_mod.STATE_CONFLICTS}" key of state.json), then '
            f'`agitmem save`; `agitmem check` fails until then',
        )
        return 1
    return 0


def memory_of(ctx: Context, pr: pygit2.Repository, name: str) -> str:
    """The memory ref BRANCH names: a full ref, a branch (its
    refs/agitmem/heads/ ref) or a remote's copy (origin/main)."""
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


def merge(ctx: Context, branch: str) -> int:
    """`agitmem merge BRANCH`."""
    if not branch.strip():
        raise AgitmemError('merge needs a branch: agitmem merge BRANCH')
    pr = store.open_repo(ctx.repo)
    ref = memory_of(ctx, pr, branch)
    outcome = merge_into_worktree(ctx, ref, branch, subject=f'merge: {branch}')
    return report(outcome, ctx, branch)


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
    return _git_out(repo, 'rev-parse', '-q', '--verify', 'HEAD^2') or (
        _git_out(repo, 'rev-parse', '-q', '--verify', 'HEAD')
    ) or None


def _refs_at(repo: Repo, sha: str) -> list[str]:
    """The local and remote-tracking branches at a commit (full names)."""
    out = _git_out(
        repo, 'for-each-ref', '--points-at', sha, '--format=%(refname)',
        'refs/heads/', 'refs/remotes/',
    )
    return [r for r in out.splitlines() if not r.endswith('/HEAD')]


def _memory_ref(code_ref: str) -> str:
    """refs/heads/X -> refs/agitmem/heads/X, refs/remotes/R/X ->
    refs/agitmem/remotes/R/X."""
    if code_ref.startswith('refs/heads/'):
        return MEMORY_NS + code_ref.removeprefix('refs/heads/')
    return REMOTES_NS + code_ref.removeprefix('refs/remotes/')


def _code_ref(repo: Repo, name: str) -> str | None:
    for ref in (f'refs/heads/{name}', f'refs/remotes/{name}'):
        if _ref_exists(repo, ref):
            return ref
    return None


def merged_memory(ctx: Context, squash: bool) -> tuple[str, str] | None:
    """(memory ref, name) of the branch a code merge just merged: the one
    its reflog entry names (`merge feature: ...`), else the branches at
    the commit it brought in (MERGE_HEAD, the squashed tip, HEAD^2).  After
    a `git pull` the remote's memory is fetched first."""
    pr = store.open_repo(ctx.repo)
    subject = head_reflog(ctx.repo)
    code_refs = []
    m = _MERGE.match(subject)
    if m and not squash:
        code_refs.append(_code_ref(ctx.repo, m[1]))
    sha = _merged_commit(ctx.repo, squash)
    if sha:
        code_refs.extend(_refs_at(ctx.repo, sha))
    fetched = set()
    for code_ref in code_refs:
        if code_ref is None or code_ref == f'refs/heads/{ctx.branch}':
            continue
        ref = _memory_ref(code_ref)
        remote = code_ref.removeprefix('refs/remotes/').split('/', 1)[0]
        if (
                subject.startswith('pull') and
                code_ref.startswith('refs/remotes/') and remote not in fetched and
                remote in remotes(ctx.repo)
        ):
            fetched.add(remote)
            from agitmem.commands.remote import fetch_memory
            try:
                fetch_memory(ctx.repo, remote)
            except AgitmemError as e:
                print(f'agitmem: memory not fetched: {e}', file=sys.stderr)
        if store.tip(pr, ref) is not None and ref != ctx.ref:
            return ref, _short(ref)
    return None


def on_merge(ctx: Context, squash: bool) -> int:
    """post-merge: merge the merged branch's memory into this branch's."""
    if not ctx.repo.memory_dir.is_dir() or _pinned(ctx):
        return 0
    found = merged_memory(ctx, squash)
    if found is None:
        return 0
    ref, name = found
    subject = f'merge: {name}{" (squash)" if squash else ""}'
    outcome = merge_into_worktree(ctx, ref, name, subject=subject)
    return report(outcome, ctx, name, prefix='agitmem: ')


# -- post-checkout ------------------------------------------------------------------

def _branch_named(repo: Repo, name: str, sha: str) -> str | None:
    """The branch a reflog entry names, or None for a detached HEAD."""
    if name == sha or _SHA.match(name) or name == 'HEAD':
        return None
    return name if _ref_exists(repo, f'refs/heads/{name}') else None


def _old_branch(ctx: Context, pr: pygit2.Repository, old: str) -> tuple[bool, str | None]:
    """(is this a branch switch, the branch we came from)."""
    subject = head_reflog(ctx.repo)
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


def from_remote(ctx: Context, pr: pygit2.Repository) -> pygit2.Commit | None:
    """A branch with no memory here whose memory a remote has (a branch
    checked out from origin): start its memory from the remote's copy."""
    if ctx.branch is None or not ctx.ref.startswith(MEMORY_NS):
        return None
    name = ctx.ref.removeprefix(MEMORY_NS)
    upstream = upstream_remote(ctx.repo, ctx.branch)
    candidates = [upstream] if upstream else remotes(ctx.repo)
    found = [
        c for c in (store.tip(pr, f'{REMOTES_NS}{r}/{name}') for r in candidates)
        if c is not None
    ]
    if len(found) != 1:
        return None
    store.update_ref(
        ctx.repo, ctx.ref, str(found[0].id), None,
        'agitmem: memory from the remote',
    )
    return found[0]


def _fork_source(ctx: Context, pr: pygit2.Repository) -> tuple[str, pygit2.Commit] | None:
    """For a new worktree on a branch without memory: the memory of the
    branch it was created from (its reflog's `branch: Created from X`, else
    the one local branch with memory at the same commit)."""
    if ctx.branch is None or ctx.head is None:
        return None
    created = _git_out(
        ctx.repo, 'log', '-g', '--format=%gs', f'refs/heads/{ctx.branch}',
    ).splitlines()
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
    return _short(found[0][0]), found[0][1]


def _new_worktree(ctx: Context, old: str) -> int:
    """post-checkout of `git worktree add`: a worktree of a repository that
    has memory gets its own .agent/ (its branch's memory, or a fork of the
    memory of the branch it was created from)."""
    if old != store.ZERO or _pinned(ctx):
        return 0
    pr = store.open_repo(ctx.repo)
    if store.tip(pr, ctx.ref) is None and from_remote(ctx, pr) is None:
        source = _fork_source(ctx, pr)
        if source is None:
            return 0
        name, commit = source
        store.update_ref(
            ctx.repo, ctx.ref, str(commit.id), None,
            f'agitmem: fork from {str(commit.id)[:12]} ({name})',
        )
        print(f'agitmem: memory of {ctx.branch} forked from {name}')
    from agitmem.commands.init import init
    return init(None)


def on_checkout(ctx: Context, old: str, new: str, flag: str | bool) -> int:
    """post-checkout: on a branch switch (flag 1), save the memory of the
    branch we came from to its ref, then check out the new branch's memory
    (forking it from the old branch's when it has none)."""
    if flag not in ('1', True):
        return 0  # a file checkout
    if not ctx.repo.memory_dir.is_dir():
        return _new_worktree(ctx, old)
    if _pinned(ctx):
        return 0
    pr = store.open_repo(ctx.repo)
    switch, old_branch = _old_branch(ctx, pr, old)
    old_ref = repo_mod.memory_ref(old_branch)
    if not switch or old_ref == ctx.ref:
        return 0
    old_name = old_branch or 'detached HEAD'
    new_name = ctx.branch or 'detached HEAD'
    old_ctx = Context(
        ctx.repo, ctx.cfg, old_branch, old if _SHA.match(old) and old != store.ZERO else None,
        old_ref,
    )
    with store.locked(ctx.repo):
        try:
            save_memory(
                old_ctx, f'hook post-checkout: {old_name} before switching to {new_name}',
                event='post-checkout',
            )
        except AgitmemError as e:
            print(
                f'agitmem: memory of {old_name} not saved, so .agent/memory was '
                f'left as it is (it is not {new_name}\'s memory): {e}',
                file=sys.stderr,
            )
            return 1
        top = store.tip(pr, ctx.ref) or from_remote(ctx, pr)
        if top is None:
            # same files as the base just saved: store.commit points the new
            # ref at it (a fork) and writes nothing
            save_memory(ctx, f'hook post-checkout: fork from {old_name}', event='post-checkout')
            top = store.tip(pr, ctx.ref)
            what = f'forked from {old_name}'
        else:
            store.checkout(ctx.repo, store.tree_files(pr, top.tree))
            store.set_base(ctx.repo, top.id)
            what = 'checked out'
        files = store.tree_files(pr, top.tree) if top is not None else {}
        record_conflicts(ctx.repo, merge_mod.unresolved(files))
    short = str(top.id)[:12] if top is not None else '-'
    audit.log(ctx.repo.agent_dir, 'write checkout', f'{ctx.ref} {what} {short}')
    print(f'agitmem: memory of {new_name} {what} ({short})')
    return 0
