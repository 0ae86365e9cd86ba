"""Memory through the forge: pull requests merged on the server, branches
deleted there.

A branch whose code landed in its base (a merge commit, a squash, a
rebase: judged by content, as merging its code into the base would change
nothing, so squash works though it drops every link) has its memory merged
into the base's memory, once: the merge commit has the branch's memory as a
parent, so the base's memory containing it is the record.  A branch gone
from the remote whose memory the base's memory holds retires: its local
memory ref moves to the attic (nothing is lost here) and its memory ref is
deleted on the remote (compare-and-swap on the sha we saw, never forced),
so no clone fetches it again.  Memory nobody merged is never deleted.

Every network git call here has a wall-clock bound (network_timeout)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from dataclasses import field

import pygit2

from agitmem import render
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.errors import AgitmemError
from agitmem.porcelain import merging
from agitmem.porcelain import sharing
from agitmem.porcelain.context import Context
from agitmem.repo import MEMORY_NS
from agitmem.repo import Repo
from agitmem.repo import REMOTES_NS

# how far back a branch's memory is searched for the code it was saved at
_WALK = 500
HEADS = 'refs/heads/'


def net_git(repo: Repo, *args: str) -> repo_mod.Done:
    """A git call that talks to a remote, stopped past network_timeout
    (repo.Stalled, one line)."""
    return repo_mod.git(*args, cwd=repo.top, check=False, timeout=repo_mod.network_timeout())


# -- what the remote has ---------------------------------------------------------

@dataclass(frozen=True)
class RemoteState:
    base: str  # the remote's default branch (its HEAD)
    heads: frozenset[str]  # its code branches
    memory: dict[str, str]  # branch -> the sha of its memory ref there


def parse_ls_remote(out: str) -> RemoteState:
    """`git ls-remote --symref` output: `ref: refs/heads/main\\tHEAD`, then
    `<sha>\\t<ref>` lines."""
    base = 'main'
    heads = set()
    memory = {}
    for line in out.splitlines():
        left, _, ref = line.partition('\t')
        if left.startswith('ref: ') and ref == 'HEAD':
            base = left.removeprefix('ref: ').removeprefix(HEADS)
        elif ref.startswith(HEADS):
            heads.add(ref.removeprefix(HEADS))
        elif ref.startswith(MEMORY_NS):
            memory[ref.removeprefix(MEMORY_NS)] = left
    return RemoteState(base, frozenset(heads), memory)


def remote_state(repo: Repo, remote: str) -> RemoteState:
    proc = net_git(repo, 'ls-remote', '--symref', remote)
    if proc.returncode != 0:
        raise AgitmemError(
            f'git ls-remote {remote} failed: {repo_mod.error_line(proc.stderr, f"exit {proc.returncode}")}',
        )
    return parse_ls_remote(proc.stdout)


# -- did a branch's code land in its base? ------------------------------------------

def _rev(repo: Repo, spec: str) -> str | None:
    proc = repo_mod.git('rev-parse', '-q', '--verify', f'{spec}^{{commit}}', cwd=repo.top, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def code_head(repo: Repo, pr: pygit2.Repository, remote: str, branch: str, tips: list[pygit2.Commit]) -> str | None:
    """The newest code of branch we know: its local branch, its stale
    remote-tracking branch, else the Code-Head of the newest memory commit
    saved on it (the code itself may be gone: squash and delete)."""
    for spec in (f'{HEADS}{branch}', f'refs/remotes/{remote}/{branch}'):
        sha = _rev(repo, spec)
        if sha is not None:
            return sha
    best: tuple[int, str] | None = None
    for t in tips:
        # a parent a fetch never brought: fetched (a partial clone), or one line
        found = store.whole(pr, t, lambda: _newest_saved_on(pr, t, repo_mod.shown(branch)))
        if found is None:
            continue
        time, head = found
        if _rev(repo, head) is not None and (best is None or time > best[0]):
            best = (time, head)
    return best[1] if best is not None else None


def _newest_saved_on(pr: pygit2.Repository, t: pygit2.Commit, branch: str) -> tuple[int, str] | None:
    """(time, Code-Head) of the newest memory commit under t saved on branch,
    among the newest _WALK."""
    for i, c in enumerate(pr.walk(t.id, pygit2.enums.SortMode.TIME)):
        if i >= _WALK:
            break
        tr = store.trailers(c)
        if tr.get('Code-Branch') == branch:
            return c.commit_time, tr.get('Code-Head', '')
    return None


def landed(repo: Repo, head: str, base: str) -> bool:
    """Is the code at head in base (merged, squashed or rebased)?  Merging
    head into base would change nothing: the same tree comes out."""
    if repo_mod.git('merge-base', '--is-ancestor', head, base, cwd=repo.top, check=False).returncode == 0:
        return True
    proc = repo_mod.git('merge-tree', '--write-tree', base, head, cwd=repo.top, check=False)
    if proc.returncode != 0:
        return False  # conflicts: the base changed it since, or never had it
    tree = proc.stdout.split('\n', 1)[0].strip()
    return tree == repo_mod.git('rev-parse', f'{base}^{{tree}}', cwd=repo.top).stdout.strip()


# -- settle: merge what landed, retire what is merged and gone --------------------

@dataclass
class Report:
    merged: list[str] = field(default_factory=list)
    retired: list[tuple[str, str]] = field(default_factory=list)  # (branch, attic ref)
    deleted: list[str] = field(default_factory=list)  # memory refs deleted on the remote
    kept: list[str] = field(default_factory=list)  # gone, not merged: stays

    def lines(self, remote: str, base: str) -> list[str]:
        ret = [f'merged the memory of {b} into {base}\'s (its code is in {base})' for b in self.merged]
        ret += [f'retired the memory of {b}: moved to {a}' for b, a in self.retired]
        ret += [f'deleted {MEMORY_NS}{b} on {remote} (merged into {base}\'s memory)' for b in self.deleted]
        ret += [
            f'kept the memory of {b}: gone from {remote} but not merged into '
            f'{base}\'s memory (`{render.command("merge", b)}` on {base} merges it)'
            for b in self.kept
        ]
        return [repo_mod.shown(x) for x in ret]


def _held(pr: pygit2.Repository, holder: pygit2.Commit | None, tips: list[pygit2.Commit]) -> bool:
    return holder is not None and all(store.contains(pr, holder.id, t.id) for t in tips)


def merge_in(
        ctx: Context, base_ref: str, theirs_ref: str, label: str, subject: str,
        *, no_ff: bool = True,
) -> bool:
    """Merge the memory on theirs_ref into base_ref's: this worktree's
    memory when base_ref is ours (unsaved edits saved first, conflicts
    written there to resolve, as `agitmem merge` does), else a ref no
    worktree is on, where a merge that would conflict is not made (False).
    no_ff: always a merge commit, whose subject says why."""
    outcome, worktree = merging.merge_memory(ctx, base_ref, theirs_ref, label, subject=subject, no_ff=no_ff)
    if outcome is None:
        return False
    if worktree:
        if outcome.kind != 'up to date':
            merging.report(outcome, ctx, label, prefix='agitmem: ')
        return not outcome.conflicts
    return outcome.kind != 'conflicts'


def refs(repo: Repo, prefix: str) -> dict[str, str]:
    out = repo_mod.git(
        'for-each-ref', '--format=%(objectname) %(refname)', prefix, cwd=repo.top,
    ).stdout
    return {ref: sha for sha, ref in (line.split(' ', 1) for line in out.splitlines())}


def _gone(ctx: Context, remote: str, state: RemoteState) -> list[str]:
    """Branches that were on the remote and are gone from it, not checked
    out here: the remote's memory of them is here, or their memory is here
    and their code branch is not (deleted), or tracks the remote (pushed
    with -u: a branch only here, never pushed, is not gone)."""
    names = set(refs(ctx.repo, f'{REMOTES_NS}{remote}/'))
    names = {r.removeprefix(f'{REMOTES_NS}{remote}/') for r in names}
    out = repo_mod.git(
        'for-each-ref', '--format=%(refname)%00%(upstream:remotename)', HEADS,
        cwd=ctx.repo.root,
    ).stdout
    upstream = dict(line.split('\0', 1) for line in out.splitlines() if '\0' in line)
    for ref in refs(ctx.repo, MEMORY_NS):
        name = ref.removeprefix(MEMORY_NS)
        if upstream.get(HEADS + name, remote) == remote:
            names.add(name)
    current = ctx.ref.removeprefix(MEMORY_NS)
    return sorted(
        n for n in names
        if n not in state.heads and n != state.base and n != current
    )


def _merge_landed(
        ctx: Context, pr: pygit2.Repository, remote: str, name: str, base: str,
        base_code: str | None,
) -> str:
    """A branch gone from the remote: 'held' when the base's memory holds
    its memory (ours and the remote's copy) already, 'merged' when its code
    landed in the base and its memory is now merged, else 'kept'."""
    base_ref = MEMORY_NS + base
    where = {
        r: t for r in (MEMORY_NS + name, f'{REMOTES_NS}{remote}/{name}')
        if (t := store.tip(pr, r)) is not None
    }
    pending = [r for r, t in where.items() if not _held(pr, store.tip(pr, base_ref), [t])]
    if not pending:
        return 'held'
    head = code_head(ctx.repo, pr, remote, name, list(where.values()))
    if base_code is None or head is None or not landed(ctx.repo, head, base_code):
        return 'kept'
    label = f'{name} (landed in {base})'
    subject = f'merge: {name} (its code landed in {base} as of {base_code[:12]})'
    if all(merge_in(ctx, base_ref, r, label, subject) for r in pending):
        return 'merged'
    return 'kept'


def settle(ctx: Context, remote: str, state: RemoteState, *, push: bool) -> Report:
    """After a fetch of the memory: merge the memory of branches whose code
    landed in the base into the base's, retire what the base's memory
    holds, and delete on the remote what the remote's base memory holds.
    push: push the base's memory first (with the usual retries), so the
    remote can retire what was merged here."""
    rep = Report()
    pr = store.open_repo(ctx.repo)
    base_ref = MEMORY_NS + state.base
    base_code = _rev(ctx.repo, f'refs/remotes/{remote}/{state.base}') or _rev(ctx.repo, HEADS + state.base)
    gone = _gone(ctx, remote, state)
    if store.tip(pr, base_ref) is None and gone:
        start = store.tip(pr, f'{REMOTES_NS}{remote}/{state.base}')
        if start is not None:
            store.update_ref(ctx.repo, base_ref, str(start.id), None, f'agitmem: memory from {remote}')
    for name in gone:
        outcome = _merge_landed(ctx, pr, remote, name, state.base, base_code)
        if outcome == 'merged':
            rep.merged.append(name)
        elif outcome == 'kept':
            rep.kept.append(name)
    for name in gone:
        local = MEMORY_NS + name
        ours = store.tip(pr, local)
        if ours is not None and name not in rep.kept and _held(pr, store.tip(pr, base_ref), [ours]):
            why = f'retired: {name} is gone from {remote} and merged into {state.base}'
            rep.retired.append((name, store.move_aside(ctx.repo, local, why)))
    # the remote's copies the base's memory holds: here, and (once pushed,
    # when push) on the remote too
    held: dict[str, pygit2.Commit] = {}
    for name in gone:
        sha = state.memory.get(name)
        if sha is None or name in rep.kept:
            continue
        try:
            commit = pr[sha]
        except (KeyError, ValueError):
            continue  # not fetched: we cannot tell what it holds
        if isinstance(commit, pygit2.Commit) and _held(pr, store.tip(pr, base_ref), [commit]):
            held[name] = commit
    theirs_base = store.tip(pr, f'{REMOTES_NS}{remote}/{state.base}')
    if push and held and not _held(pr, theirs_base, list(held.values())):
        sharing.push_memory(ctx, remote)
        theirs_base = store.tip(pr, f'{REMOTES_NS}{remote}/{state.base}')
    doomed = {
        name: str(commit.id) for name, commit in held.items()
        if _held(pr, theirs_base, [commit])
    }
    rep.deleted = delete_remote(ctx.repo, remote, doomed)
    return rep


def delete_remote(repo: Repo, remote: str, doomed: dict[str, str]) -> list[str]:
    """Delete memory refs on the remote, each only if it is still at the
    sha judged (a lease on that exact commit, which the caller holds safe
    here); then their copies here.  A ref that moved meanwhile (a
    teammate's push) is not deleted: it is fetched here, to safety, and
    said.  Returns the names deleted."""
    if not doomed:
        return []
    leases = [f'--force-with-lease={MEMORY_NS}{n}:{sha}' for n, sha in sorted(doomed.items())]
    specs = [f':{MEMORY_NS}{n}' for n in sorted(doomed)]
    proc = net_git(repo, 'push', '--porcelain', '--no-verify', *leases, remote, *specs)
    done = []
    for line in proc.stdout.splitlines():
        parts = line.split('\t')
        if len(parts) >= 2 and parts[0] == '-' and parts[1].startswith(':'):
            done.append(parts[1][1:].removeprefix(MEMORY_NS))
    moved = sorted(set(doomed) - set(done)) if 'stale info' in proc.stdout else []
    if proc.returncode != 0 and not done and not moved:
        print(
            f'agitmem: memory refs not deleted on {remote}: '
            f'{sharing.said(proc.stderr, f"exit {proc.returncode}")}', file=sys.stderr,
        )
    for name in done:
        repo_mod.git('update-ref', '-d', f'{REMOTES_NS}{remote}/{name}', cwd=repo.top, check=False)
    keep_safe(repo, remote, moved)
    return sorted(done)


def remote_memory(repo: Repo, remote: str, names: list[str]) -> dict[str, str]:
    """branch -> the sha of its memory ref on the remote now (bounded)."""
    if not names:
        return {}
    wanted = {MEMORY_NS + n for n in names}
    proc = net_git(repo, 'ls-remote', '--refs', remote, *sorted(wanted))
    if proc.returncode != 0:
        raise AgitmemError(
            f'git ls-remote {remote} failed: {repo_mod.error_line(proc.stderr, f"exit {proc.returncode}")}',
        )
    ret = {}
    for line in proc.stdout.splitlines():
        sha, _, ref = line.partition('\t')
        if ref in wanted:  # ls-remote matches by tail: a/refs/agitmem/heads/x too
            ret[ref.removeprefix(MEMORY_NS)] = sha
    return ret


def keep_safe(repo: Repo, remote: str, names: list[str]) -> None:
    """Memory on the remote that this clone was about to delete but does
    not hold (a teammate pushed it after it was judged, or it was never
    fetched): left there, and fetched into refs/agitmem/remotes/<remote>/,
    where `agitmem prune` retires it once a base's memory holds it."""
    if not names:
        return
    specs = [f'+{MEMORY_NS}{n}:{REMOTES_NS}{remote}/{n}' for n in names]
    proc = net_git(
        repo, 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head',
        '--recurse-submodules=no', '--no-filter', remote, *specs,
    )
    where = (
        'fetched here to ' + ', '.join(f'{REMOTES_NS}{remote}/{n}' for n in names)
        if proc.returncode == 0 else
        f'not fetched: {sharing.said(proc.stderr, f"exit {proc.returncode}")}'
    )
    print(repo_mod.shown(
        f'agitmem: kept {", ".join(MEMORY_NS + n for n in names)} on {remote}: it holds '
        f'memory this clone does not have (pushed since it was judged); {where}',
    ), file=sys.stderr)


def _safe(pr: pygit2.Repository, sha: str | None, holders: list[str]) -> bool:
    """Is the commit sha here, in the history of one of holders (the
    refs that keep a branch's memory here: its own, the attic)?"""
    if sha is None:
        return False
    try:
        commit = pr.get(sha)
    except ValueError:
        return False
    if not isinstance(commit, pygit2.Commit):
        return False
    return any(
        (t := store.tip(pr, ref)) is not None and store.contains(pr, t.id, commit.id)
        for ref in holders
    )


# -- a branch deleted by our own push ------------------------------------------------

def deleted(stdin: str) -> list[str]:
    """The code branches a push deletes: pre-push stdin lines `<local ref>
    <local sha> <remote ref> <remote sha>` whose local sha is all zeros."""
    ret = []
    for line in stdin.splitlines():
        parts = line.split(' ')
        if len(parts) == 4 and not parts[1].strip('0') and parts[2].startswith(HEADS):
            ret.append(parts[2].removeprefix(HEADS))
    return ret


@dataclass(frozen=True)
class Deletion:
    state: RemoteState
    # branch -> the refs that keep its memory here (its own, the attic):
    # the remote's copy is deleted only when one of them holds it
    holders: dict[str, list[str]]


def before_push(ctx: Context, remote: str, stdin: str) -> Deletion | None:
    """pre-push, when the push deletes branches on the remote: their memory
    goes too, whether or not their code landed, once it is safe here.
    Memory whose code landed in the base is merged into the base's first
    (this push carries it).  A branch still here keeps its memory as it
    is; the memory of one gone here moves to the attic.  after_push
    deletes them on the remote, each leased on a commit kept here."""
    names = [n for n in deleted(stdin) if MEMORY_NS + n != ctx.ref]
    if not names:
        return None
    state = remote_state(ctx.repo, remote)
    pr = store.open_repo(ctx.repo)
    base_ref = MEMORY_NS + state.base
    base_code = _rev(ctx.repo, f'refs/remotes/{remote}/{state.base}') or _rev(ctx.repo, HEADS + state.base)
    holders: dict[str, list[str]] = {}
    for name in names:
        if name == state.base:
            continue
        tracking = f'{REMOTES_NS}{remote}/{name}'
        where = [r for r in (MEMORY_NS + name, tracking) if store.tip(pr, r) is not None]
        tips = [t for t in (store.tip(pr, r) for r in where) if t is not None]
        stays = False  # the branch is still here, its memory in no base
        if not _held(pr, store.tip(pr, base_ref), tips):
            head = code_head(ctx.repo, pr, remote, name, tips)
            if base_code is not None and head is not None and landed(ctx.repo, head, base_code):
                label = f'{name} (landed in {state.base})'
                subject = f'merge: {name} (deleted on {remote}; its code is in {state.base})'
                for r in where:
                    merge_in(ctx, base_ref, r, label, subject)
            elif _rev(ctx.repo, HEADS + name) is not None:
                stays = True
                print(repo_mod.shown(
                    f'agitmem: kept the memory of {name} here: the branch is still '
                    f'here and its memory is in no base yet',
                ), file=sys.stderr)
        local = store.tip(pr, MEMORY_NS + name)
        kept = [MEMORY_NS + name] if stays and local is not None else []
        for r in where:
            t = store.tip(pr, r)
            if r in kept:
                continue
            if r == tracking and t is not None and local is not None and store.contains(pr, local.id, t.id):
                continue  # our own copy (kept, or moved aside) holds it
            attic = store.move_aside(ctx.repo, r, f'{name} deleted on {remote}')
            print(repo_mod.shown(f'agitmem: the memory of {name} moved to {attic}'))
            kept.append(attic)
        holders[name] = kept
    return Deletion(state, holders)


def after_push(ctx: Context, remote: str, deletion: Deletion | None) -> None:
    """pre-push, once the memory is pushed: delete on the remote the memory
    refs of the branches this push deletes, each leased on the exact
    commit the remote has now, and only when a ref here holds it (that
    push may have moved it; a teammate may have pushed memory this clone
    never fetched: that is fetched to safety instead, and said)."""
    if deletion is None or not deletion.holders:
        return
    now = remote_memory(ctx.repo, remote, sorted(deletion.holders))
    pr = store.open_repo(ctx.repo)
    doomed = {n: sha for n, sha in now.items() if _safe(pr, sha, deletion.holders[n])}
    keep_safe(ctx.repo, remote, sorted(set(now) - set(doomed)))
    for name in delete_remote(ctx.repo, remote, doomed):
        print(repo_mod.shown(f'agitmem: deleted {MEMORY_NS}{name} on {remote} with its branch'))
    for name in deletion.holders:
        if name not in now:  # gone there: our copy of it is safe here
            repo_mod.git('update-ref', '-d', f'{REMOTES_NS}{remote}/{name}', cwd=ctx.repo.root, check=False)


# -- the forge's job: a pull request merged on the server ------------------------------

def land(
        ctx: Context, remote: str, branch: str, base: str, pull_request: str,
        commit: str,
) -> str:
    """Merge the memory of branch into base's, as the forge merged its
    code: fetch, one memory commit naming the pull request and the code
    commit it landed as, push (the usual retries, never forced).  Returns
    what happened, one line."""
    sha = _rev(ctx.repo, commit)
    if sha is None:
        raise AgitmemError(f'"{commit}" is not a commit here (fetch the code first)')
    sharing.fetch_memory(ctx.repo, remote)
    pr = store.open_repo(ctx.repo)
    theirs_ref = f'{REMOTES_NS}{remote}/{branch}'
    theirs = store.tip(pr, theirs_ref)
    if theirs is None:
        return f'{remote} has no memory for {branch}: nothing to merge'
    base_ref = MEMORY_NS + base
    if store.tip(pr, f'{REMOTES_NS}{remote}/{base}') is not None:
        merge_in(
            ctx, base_ref, f'{REMOTES_NS}{remote}/{base}', f'{remote}/{base}',
            f'merge: {remote}/{base}', no_ff=False,
        )
    if _held(pr, store.tip(pr, base_ref), [theirs]):
        return f'the memory of {base} already holds {branch}\'s: nothing to merge'
    subject = f'merge: {branch} (pull request {pull_request}, landed as {sha[:12]})'
    if not merge_in(ctx._replace(branch=base, head=sha), base_ref, theirs_ref, branch, subject):
        raise AgitmemError(
            f'the memory of {branch} conflicts with {base}\'s: not merged; on '
            f'{base}, `{render.command("merge", f"{remote}/{branch}")}`, resolve, save and push',
        )
    sharing.push_memory(ctx, remote)
    return f'merged the memory of {branch} into {base}\'s and pushed it to {remote}'


def tidy(ctx: Context, remote: str, *, catch_up: bool = False) -> None:
    """`agitmem pull` and post-merge after a `git pull`, once the memory
    is fetched: settle the branches gone from the remote (no push: the
    next push carries what was merged here).  catch_up (a `git pull`):
    first merge the remote's memory of this branch, as `agitmem pull`
    does (a memory merge the forge's job pushed comes with the code).  A
    remote that does not answer is one line: the pull itself is done."""
    theirs = f'{REMOTES_NS}{remote}/{ctx.ref.removeprefix(MEMORY_NS)}'
    pr = store.open_repo(ctx.repo)
    if catch_up and ctx.ref.startswith(MEMORY_NS) and store.tip(pr, theirs) is not None:
        label = f'{remote}/{ctx.ref.removeprefix(MEMORY_NS)}'
        merge_in(ctx, ctx.ref, theirs, label, f'merge: {label}', no_ff=False)
    try:
        state = remote_state(ctx.repo, remote)
        lines = settle(ctx, remote, state, push=False).lines(remote, state.base)
    except AgitmemError as e:
        print(f'agitmem: branches gone from {remote} not settled: {e}', file=sys.stderr)
        return
    for line in lines:
        print(f'agitmem: {line}')


def unmerged_orphans(ctx: Context, remote: str) -> list[str]:
    """For doctor, offline: branches with memory here whose code branch is
    neither here nor on the remote (as of the last fetch), and whose memory
    the base's does not hold: kept, never deleted, until merged."""
    pr = store.open_repo(ctx.repo)
    head = repo_mod.git(
        'symbolic-ref', '-q', '--short', f'refs/remotes/{remote}/HEAD', cwd=ctx.repo.root, check=False,
    ).stdout.strip()
    base = head.removeprefix(f'{remote}/') or 'main'
    holder = store.tip(pr, MEMORY_NS + base)
    ret = []
    for ref, sha in sorted(refs(ctx.repo, MEMORY_NS).items()):
        name = ref.removeprefix(MEMORY_NS)
        if name == base or ref == ctx.ref:
            continue
        if _rev(ctx.repo, HEADS + name) or _rev(ctx.repo, f'refs/remotes/{remote}/{name}'):
            continue
        if holder is None or not store.contains(pr, holder.id, pygit2.Oid(hex=sha)):
            ret.append(name)
    return ret
