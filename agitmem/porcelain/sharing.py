"""Sharing memory (DESIGN.md section 8): fetch, push, pull.

Memory refs travel over git's own transport: `git push` and `git fetch`
with refspecs, so the user's remotes, URLs and credentials apply.  Pushes
never force: a push that lost a race (the remote moved) fetches, merges the
remote's memory into ours and pushes again."""
from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agitmem import audit
from agitmem import render
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError
from agitmem.repo import MEMORY_NS
from agitmem.repo import Repo
from agitmem.repo import REMOTES_NS

if TYPE_CHECKING:
    import pygit2

    from agitmem.porcelain import merging

# merging and merge are imported where a merge is made: `status` reads this
# module too

_PORCELAIN = re.compile(r'^(.)\t([^\t]*):([^\t]*)\t(.*)$')

def fetch_spec(remote: str) -> str:
    return f'+{MEMORY_NS}*:{REMOTES_NS}{remote}/*'


# -- the memory refspec: plain `git fetch` brings memory ------------------------

def has_fetch_spec(repo: Repo, remote: str) -> bool:
    specs = repo_mod.git(
        'config', '-z', '--get-all', f'remote.{remote}.fetch', cwd=repo.top, check=False,
    ).stdout.split('\0')
    return fetch_spec(remote) in specs


def add_fetch_specs(repo: Repo) -> list[str]:
    """Add the memory fetch refspec to every remote that lacks it (so
    `git fetch` and `git pull` bring memory too).  One line per remote
    changed."""
    lines = []
    for remote in repo_mod.remotes(repo):
        if has_fetch_spec(repo, remote):
            continue
        repo_mod.git(
            'config', '--add', f'remote.{remote}.fetch', fetch_spec(remote),
            cwd=repo.top,
        )
        lines.append(f'git fetch {remote} now brings memory too (remote.{remote}.fetch += {fetch_spec(remote)})')
    return lines


def remove_fetch_specs(repo: Repo) -> list[str]:
    """Take the memory fetch refspec out of every remote's config."""
    lines = []
    for remote in repo_mod.remotes(repo):
        if not has_fetch_spec(repo, remote):
            continue
        repo_mod.git(
            'config', '--fixed-value', '--unset-all', f'remote.{remote}.fetch',
            fetch_spec(remote), cwd=repo.top,
        )
        lines.append(f'removed the memory fetch refspec from remote.{remote}.fetch')
    return lines


def default_remote(ctx: Context) -> str:
    """The current branch's upstream remote, else origin."""
    return repo_mod.upstream_remote(ctx.repo, ctx.branch) or 'origin'


def named(repo: Repo, remote: str) -> str:
    if remote not in repo_mod.remotes(repo):
        raise AgitmemError(
            f'no remote named "{remote}" (see `git remote -v`)',
        )
    return remote


def _refs(repo: Repo, prefix: str) -> dict[str, str]:
    out = repo_mod.git(
        'for-each-ref', '--format=%(objectname) %(refname)', prefix,
        cwd=repo.top,
    ).stdout
    return {
        # split('\n'): splitlines() would also cut a name at U+2028 or \x85
        ref: sha for sha, ref in (line.split(' ', 1) for line in out.split('\n') if line)
    }


# -- fetch ------------------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    ref: str
    old: str | None
    new: str | None

    def __str__(self) -> str:
        if self.old is None:
            return f'  * new         {self.ref}'
        if self.new is None:
            return f'  - deleted     {self.ref}'
        return f'  {self.old[:7]}..{self.new[:7]}  {self.ref}'


def _network(repo: Repo, remote: str, *args: str) -> repo_mod.Done:
    """git fetch or push, bounded by network_timeout: a remote that stalls
    (accepts and never answers, or hangs in its hooks) is cut off."""
    bound = repo_mod.network_timeout()
    try:
        return repo_mod.git(*args, cwd=repo.top, check=False, timeout=bound)
    except repo_mod.Stalled:
        raise repo_mod.Stalled(
            f'git {args[0]} {remote} gave no answer in {bound:g}s and was '
            f'stopped (network_timeout in .agent/config.yaml sets the bound)',
        )


def fetch_memory(repo: Repo, remote: str) -> list[Change]:
    """Fetch the remote's refs/agitmem/heads/* into
    refs/agitmem/remotes/<remote>/* (pruning the ones it deleted)."""
    prefix = f'{REMOTES_NS}{remote}/'
    before = _refs(repo, prefix)
    # --no-filter: in a partial clone every memory object comes, not only
    # the commits (memory is small, and read offline later)
    proc = _network(
        repo, remote, 'fetch', '--quiet', '--no-tags', '--prune',
        '--no-write-fetch-head', '--recurse-submodules=no', '--no-filter',
        remote, fetch_spec(remote),
    )
    if proc.returncode != 0:
        raise AgitmemError(
            f'git fetch {remote} failed: {repo_mod.error_line(proc.stderr, f"exit {proc.returncode}")}',
        )
    # objects an earlier, filtered `git fetch` left out
    store.fill_memory(repo)
    after = _refs(repo, prefix)
    return [
        Change(ref, before.get(ref), after.get(ref))
        for ref in sorted(set(before) | set(after))
        if before.get(ref) != after.get(ref)
    ]


def fetch_on_init(repo: Repo) -> None:
    """In a fresh clone (no memory refs of its own yet): fetch the memory
    the remote has, and start each branch's local memory ref from it, so
    init checks the memory out instead of the templates.  Never fails init:
    offline, it says so and init goes on."""
    if _refs(repo, MEMORY_NS):
        return
    branch, _ = repo_mod.head(repo)
    remote = repo_mod.upstream_remote(repo, branch) or 'origin'
    if remote not in repo_mod.remotes(repo):
        return
    try:
        fetch_memory(repo, remote)
    except AgitmemError as e:
        print(f'agitmem: no memory fetched from {remote}: {e}', file=sys.stderr)
        return
    prefix = f'{REMOTES_NS}{remote}/'
    made = []
    for ref, sha in sorted(_refs(repo, prefix).items()):
        local = MEMORY_NS + ref.removeprefix(prefix)
        try:
            store.update_ref(repo, local, sha, None, f'agitmem: memory from {remote}')
        except store.Race:
            continue
        made.append(local)
    if made:
        print(f'fetched the memory of {len(made)} branch(es) from {remote}')


# -- push -----------------------------------------------------------------------

# A push is retried, with fetch + merge, while what stops it is transient,
# sleeping a jittered, exponentially growing delay between attempts (agents
# that collided spread out), within _DEADLINE seconds in all.  A push that
# failed on the way is tried _ATTEMPTS times; a race lost to another push
# (someone else's memory got in: the remote makes progress) up to _RACES
# times: 8 agents on a loaded 2-core machine lost 10 in a row now and then.
_ATTEMPTS = 10
_RACES = 30
_DEADLINE = 60.0
_BACKOFF_BASE = 0.05
_BACKOFF_CAP = 2.0

# the remote moved or another push held its ref lock: fetch, merge, retry
# (summaries of `git push --porcelain`, and what receive-pack says of a
# lock: "cannot lock ref 'X': is at A but expected B" / "reference already
# exists" / "Unable to create 'X.lock': File exists")
_RACE = (
    '(fetch first)', '(non-fast-forward)', 'failed to update ref',
    'cannot lock ref', 'incorrect old value', 'stale info',
    'transaction failed to start',
)
# the whole push failed on the way (a busy server dropping connections)
_TRANSIENT = (
    'the remote end hung up unexpectedly', 'connection reset by peer',
    'early eof', 'rpc failed', 'remote failed to report status',
    'unexpected disconnect', 'broken pipe', 'operation timed out',
    'connection timed out', 'returned error: 500', 'returned error: 502',
    'returned error: 503', 'returned error: 504', 'too many children',
    'unable to create',
)
# said alongside a transient phrase, these make the failure final:
# nobody is let in by trying again
_FINAL = (
    'permission denied', 'authentication failed', 'access denied',
    'not exported', 'does not appear to be a git repository',
    'returned error: 401', 'returned error: 403', 'returned error: 404',
    'repository not found', 'could not resolve host', 'connection refused',
    'hook declined',
)


def retryable(summary: str) -> bool:
    """Is a rejected ref's summary (`[rejected] (fetch first)`, `[remote
    rejected] (failed to update ref)`...) a race worth retrying, rather
    than a refusal (a hook, a policy, permissions)?"""
    low = summary.lower()
    return 'hook declined' not in low and any(m in low for m in _RACE)


def transient(stderr: str) -> bool:
    """Did a whole `git push` (or fetch) fail on the way, so the same call
    may work in a moment?"""
    low = stderr.lower()
    if any(m in low for m in _FINAL):
        return False
    return any(m in low for m in _TRANSIENT) or any(m in low for m in _RACE)


def backoff(attempt: int, draw: float) -> float:
    """Seconds to sleep before retry number attempt (1, 2, ...): "full
    jitter" (draw is uniform in [0, 1)) under an exponential cap."""
    return draw * min(_BACKOFF_CAP, _BACKOFF_BASE * 2.0 ** attempt)


def refusal(ref: str, remote: str, summary: str, stderr: str) -> str:
    """One line for a ref the server refused: its reason, and the last
    thing the server's hook said (`remote: ...`), which names the cause."""
    reason = summary.removeprefix('[remote rejected]').removeprefix('[rejected]').strip()
    reason = reason.removeprefix('(').removesuffix(')') or summary
    said = [
        line.strip().removeprefix('remote:').strip()
        for line in stderr.splitlines() if line.strip().startswith('remote:')
    ]
    said = [s for s in said if s]
    tail = f': {said[-1]}' if said else ''
    return f'{ref} not pushed: {remote} refused it ({reason}){tail}'


_GENERIC = ('the remote end hung up unexpectedly', 'could not read from remote repository.')


def said(stderr: str, default: str) -> str:
    """git's error line, with the line after it when it ends in a colon
    ("unable to connect to 127.0.0.1:" / "...errno=Connection refused"),
    and the `error:` that caused a generic `fatal:` ("RPC failed; HTTP
    503 ..." before "the remote end hung up unexpectedly")."""
    line = repo_mod.error_line(stderr, default)
    lines = [x.strip() for x in stderr.splitlines()]
    if line.lower() in _GENERIC:
        causes = [x.removeprefix('error: ') for x in lines if x.startswith('error: ')]
        return causes[0] if causes else line
    if line.endswith(':'):
        for i, x in enumerate(lines[:-1]):
            if x.endswith(line) and lines[i + 1]:
                return f'{line} {lines[i + 1]}'
    return line


class PushFailed(AgitmemError):
    """The memory could not be pushed (exit 1): it stays here, counted by
    `unpushed`, and the next push carries it."""


@dataclass(frozen=True)
class Row:
    flag: str  # git push --porcelain: ' ' '+' '-' '*' '!' '='
    ref: str  # the remote ref
    summary: str

    @property
    def lost_race(self) -> bool:
        """Rejected because the remote moved or another push held its ref
        lock (not by a hook or policy): fetch, merge, push again."""
        return self.flag == '!' and retryable(self.summary)

    @property
    def refused(self) -> bool:
        return self.flag == '!' and not self.lost_race


def _push_once(repo: Repo, remote: str, specs: list[str]) -> tuple[int, list[Row], str]:
    # --no-verify: this push runs inside the user's pre-push hook
    proc = _network(repo, remote, 'push', '--porcelain', '--no-verify', remote, *specs)
    rows = []
    for line in proc.stdout.split('\n'):
        m = _PORCELAIN.match(line)
        if m:
            rows.append(Row(m[1], m[3], m[4]))
    return proc.returncode, rows, proc.stderr


def _track(repo: Repo, remote: str, pushed: dict[str, str]) -> None:
    """After a push, move refs/agitmem/remotes/<remote>/* to what the
    remote now has (git does it only for a remote whose fetch refspec maps
    them), so `unpushed` counts right without a fetch."""
    prefix = f'{REMOTES_NS}{remote}/'
    have = _refs(repo, prefix)
    for ref, sha in sorted(pushed.items()):
        tracking = prefix + ref.removeprefix(MEMORY_NS)
        if have.get(tracking) == sha:
            continue
        try:
            store.update_ref(repo, tracking, sha, have.get(tracking), f'agitmem push {remote}')
        except store.Race:
            pass  # a fetch moved it meanwhile: that is newer still


def unpushed(repo: Repo, remote: str) -> dict[str, int]:
    """Memory commits not on <remote> as far as we know: for each
    refs/agitmem/heads/* ref, the commits not in its
    refs/agitmem/remotes/<remote>/* copy (all of them when there is none);
    refs fully pushed are left out.  pygit2 only: status pays no git
    process for it."""
    pr = store.open_repo(repo)
    prefix = f'{REMOTES_NS}{remote}/'
    ret = {}
    for ref in sorted(r for r in pr.references if r.startswith(MEMORY_NS)):
        ours = store.tip(pr, ref)
        theirs = store.tip(pr, prefix + ref.removeprefix(MEMORY_NS))
        if ours is None:
            continue
        # a parent a fetch never brought: fetched (a partial clone), or one line
        ahead = store.whole(pr, ours, lambda: _ahead(pr, ours.id, theirs.id if theirs else None))
        if ahead:
            ret[ref] = ahead
    return ret


def _ahead(pr: pygit2.Repository, ours: pygit2.Oid, theirs: pygit2.Oid | None) -> int:
    import pygit2
    if theirs is not None:
        return int(pr.ahead_behind(ours, theirs)[0])
    return sum(1 for _ in pr.walk(ours, pygit2.enums.SortMode.NONE))


def unpushed_line(ahead: dict[str, int], remote: str) -> str:
    """status: `memory not pushed: N commits ahead of <remote>`."""
    n = sum(ahead.values())
    line = f'memory not pushed: {n} commit{"" if n == 1 else "s"} ahead of {remote}'
    if len(ahead) > 1:
        line += ' (' + ', '.join(
            f'{ref.removeprefix(MEMORY_NS)} {count}' for ref, count in ahead.items()
        ) + ')'
    return line + ' (the next `agitmem push` carries it)'


def push_remote(repo: Repo, branch: str | None) -> str | None:
    """The remote `agitmem push` would use (the branch's upstream remote,
    else origin), None when there is no such remote: read with pygit2,
    for status."""
    pr = store.open_repo(repo)
    name = 'origin'
    if branch is not None:
        try:
            up = pr.config[f'branch.{branch}.remote']
        except KeyError:
            up = None
        except UnicodeError:  # a branch name that is not UTF-8: ask git
            up = repo_mod.upstream_remote(repo, branch)
        if up and up != '.':
            name = up
    return name if name in pr.remotes.names() else None


def _catch_up(ctx: Context, remote: str, ref: str) -> bool:
    """Before pushing ref again: merge the remote's copy in when it has one
    we lack.  False when the merge would leave conflicts (not pushed)."""
    name = ref.removeprefix(MEMORY_NS)
    pr = store.open_repo(ctx.repo)
    ours = store.tip(pr, ref)
    theirs = store.tip(pr, f'{REMOTES_NS}{remote}/{name}')
    if theirs is None or (ours is not None and store.contains(pr, ours.id, theirs.id)):
        return True  # only a lock was in the way: push the same again
    return _merge_remote(ctx, remote, ref)


def _merge_remote(ctx: Context, remote: str, ref: str) -> bool:
    """Merge <remote>'s copy of a memory ref into ours; False when that
    would leave conflicts in a ref no worktree here is on (left alone)."""
    from agitmem.porcelain import merging
    name = ref.removeprefix(MEMORY_NS)
    theirs_ref = f'{REMOTES_NS}{remote}/{name}'
    label = f'{remote}/{name}'
    subject = f'merge: {label} (push)'
    outcome, worktree = merging.merge_memory(ctx, ref, theirs_ref, label, subject=subject)
    if outcome is None:
        return False
    if worktree:
        if merging.report(outcome, ctx, label, prefix='agitmem: '):
            raise AgitmemError(
                f'the memory of {name} conflicts with {label}: resolve the '
                f'conflicts, `agitmem save`, then push again',
            )
        return True
    if outcome.kind == 'conflicts':
        print(
            f'agitmem: the memory of {name} conflicts with {label}; not '
            f'pushed: check {name} out and `{render.command("pull", remote)}`',
            file=sys.stderr,
        )
        return False
    print(f'agitmem: merged {label} into {ref} ({outcome.kind})')
    return True


def unresolved_refs(repo: Repo) -> list[str]:
    """Memory refs whose tip still holds merge conflicts: not pushed, so a
    conflict never spreads to other clones."""
    from agitmem import merge as merge_mod
    pr = store.open_repo(repo)
    ret = []
    for ref in sorted(_refs(repo, MEMORY_NS)):
        top = store.tip(pr, ref)
        if top is not None and merge_mod.unresolved(store.tree_files(pr, top.tree)):
            ret.append(ref)
    return ret


def push_refs(ctx: Context, remote: str) -> list[Row]:
    """Push every memory ref; the ones that lost a race (the remote moved,
    or another push held its ref lock) are merged with the remote's copy
    and pushed again, never forced, with a jittered backoff, as is a push
    that failed on the way.  A refusal is final: PushFailed, one line.
    Refs with unresolved merge conflicts stay here."""
    refs = _refs(ctx.repo, MEMORY_NS)
    blocked = unresolved_refs(ctx.repo)
    for ref in blocked:
        print(
            f'agitmem: {ref} not pushed: it has unresolved merge conflicts '
            f'(resolve them, `agitmem save`, push again)',
            file=sys.stderr,
        )
    todo = sorted(set(refs) - set(blocked))
    if not todo:
        return []
    named = remote in repo_mod.remotes(ctx.repo)
    done: dict[str, Row] = {}
    start = time.monotonic()
    attempt = 0
    while True:
        # the tips as they are now, by id: what the remote-tracking refs
        # are set to once pushed (a note saved meanwhile is not on it)
        sent = {ref: sha for ref, sha in _refs(ctx.repo, MEMORY_NS).items() if ref in todo}
        try:
            code, rows, err = _push_once(
                ctx.repo, remote, [f'{sha}:{ref}' for ref, sha in sorted(sent.items())],
            )
        except repo_mod.Stalled as e:
            # not retried: a remote that hung once makes every caller
            # (the pre-push hook, then the code push) wait as long again
            raise PushFailed(str(e))
        attempt += 1
        for row in rows:
            done[row.ref] = row
        if named:
            _track(ctx.repo, remote, {
                r.ref: sent[r.ref] for r in rows if r.flag != '!' and r.ref in sent
            })
        refused = [r for r in rows if r.refused]
        if refused:
            raise PushFailed(refusal(refused[0].ref, remote, refused[0].summary, err))
        lost = [r.ref for r in rows if r.lost_race]
        if code == 0 and not lost:
            return sorted(done.values(), key=lambda r: r.ref)
        if not lost and not transient(err):
            raise PushFailed(
                f'git push {remote} failed: {said(err, f"exit {code}")}',
            )
        if lost and not named:
            raise PushFailed(
                f'{lost[0]} was rejected by {remote} (it moved): fetch and '
                f'merge need a named remote (`git remote add`)',
            )
        import random
        pause = backoff(attempt, random.random())
        if (
                attempt >= (_RACES if lost else _ATTEMPTS) or
                time.monotonic() - start + pause > _DEADLINE
        ):
            why = said(err, f'exit {code}') if not lost else 'its memory refs kept moving'
            raise PushFailed(
                f'{remote} stayed busy: memory not pushed after {attempt} '
                f'attempts in {time.monotonic() - start:.0f}s ({why}); it '
                f'stays here and the next push carries it',
            )
        time.sleep(pause)
        if not lost:
            continue  # the push failed on the way: the same again
        try:
            fetch_memory(ctx.repo, remote)
        except AgitmemError as e:
            if not transient(str(e)):
                raise PushFailed(str(e))
            continue
        todo = [ref for ref in lost if _catch_up(ctx, remote, ref)]
        if not todo:
            return sorted(done.values(), key=lambda r: r.ref)


def push_memory(ctx: Context, remote: str) -> list[Row]:
    """pre-push (and `agitmem push`): push refs/agitmem/heads/* along."""
    rows = push_refs(ctx, remote)
    audit.log(
        ctx.repo.agent_dir, 'write push',
        f'{remote}: ' + ', '.join(f'{r.ref} {r.summary}' for r in rows),
    )
    return rows


def refused_by_secrets(ctx: Context, remote: str) -> bool:
    """The `secrets` check on what a push would send (as the pre-push
    hook does before it calls push_memory): the tips, and every commit
    the remote does not have, messages too; True when it found some."""
    from agitmem.checks import secrets
    from agitmem.porcelain import checking
    if secrets.ID in checking.skipped():
        return False
    allow = secrets.allowlist(ctx.cfg)
    found = secrets.in_refs(ctx.repo, allow=allow) + secrets.in_push(ctx.repo, remote, allow)
    if found:
        checking.report(found, as_json=False)
        print('agitmem: push refused: memory holds likely credentials', file=sys.stderr)
    return bool(found)


# -- pull --------------------------------------------------------------------------

def pull(ctx: Context, remote: str) -> tuple[str, merging.Outcome | None]:
    """fetch, then merge the remote's memory of this branch into ours.
    (label, outcome); outcome None when the remote has no such memory."""
    if not ctx.ref.startswith(MEMORY_NS):
        raise AgitmemError(
            f'pull merges a branch\'s memory; {ctx.ref} is not one (detached '
            f'HEAD? check a branch out, or use --ref)',
        )
    fetch_memory(ctx.repo, remote)
    name = ctx.ref.removeprefix(MEMORY_NS)
    theirs_ref = f'{REMOTES_NS}{remote}/{name}'
    label = f'{remote}/{name}'
    pr = store.open_repo(ctx.repo)
    if store.tip(pr, theirs_ref) is None:
        return label, None
    from agitmem.porcelain import merging
    return label, merging.merge_into_worktree(
        ctx, theirs_ref, label, subject=f'merge: {label}',
    )
