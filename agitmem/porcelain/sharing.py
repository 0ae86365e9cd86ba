"""Sharing memory (DESIGN.md section 8): fetch, push, pull.

Memory refs travel over git's own transport: `git push` and `git fetch`
with refspecs, so the user's remotes, URLs and credentials apply.  Pushes
never force: a push that lost a race (the remote moved) fetches, merges the
remote's memory into ours and pushes again."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from agitmem import audit
from agitmem import merge as merge_mod
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.porcelain import merging
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError
from agitmem.repo import MEMORY_NS
from agitmem.repo import Repo
from agitmem.repo import REMOTES_NS

PUSH_SPEC = f'{MEMORY_NS}*:{MEMORY_NS}*'
_PORCELAIN = re.compile(r'^(.)\t([^\t]*):([^\t]*)\t(.*)$')
_ATTEMPTS = 5


def fetch_spec(remote: str) -> str:
    return f'+{MEMORY_NS}*:{REMOTES_NS}{remote}/*'


# -- the memory refspec: plain `git fetch` brings memory ------------------------

def has_fetch_spec(repo: Repo, remote: str) -> bool:
    specs = repo_mod.git(
        'config', '--get-all', f'remote.{remote}.fetch', cwd=repo.root, check=False,
    ).stdout.splitlines()
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
            cwd=repo.root,
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
            fetch_spec(remote), cwd=repo.root,
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
        cwd=repo.root,
    ).stdout
    return {
        ref: sha for sha, ref in (line.split(' ', 1) for line in out.splitlines())
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


def fetch_memory(repo: Repo, remote: str) -> list[Change]:
    """Fetch the remote's refs/agitmem/heads/* into
    refs/agitmem/remotes/<remote>/* (pruning the ones it deleted)."""
    prefix = f'{REMOTES_NS}{remote}/'
    before = _refs(repo, prefix)
    proc = repo_mod.git(
        'fetch', '--quiet', '--no-tags', '--prune', '--no-write-fetch-head',
        '--recurse-submodules=no', remote, fetch_spec(remote),
        cwd=repo.root, check=False,
    )
    if proc.returncode != 0:
        raise AgitmemError(
            f'git fetch {remote} failed: {repo_mod.error_line(proc.stderr, f"exit {proc.returncode}")}',
        )
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

@dataclass(frozen=True)
class Row:
    flag: str  # git push --porcelain: ' ' '+' '-' '*' '!' '='
    ref: str  # the remote ref
    summary: str

    @property
    def lost_race(self) -> bool:
        """Rejected because the remote moved (not by a hook or policy)."""
        return self.flag == '!' and self.summary.startswith('[rejected]')


def _push_once(repo: Repo, remote: str, specs: list[str]) -> tuple[int, list[Row], str]:
    # --no-verify: this push runs inside the user's pre-push hook
    proc = repo_mod.git(
        'push', '--porcelain', '--no-verify', remote, *specs,
        cwd=repo.root, check=False,
    )
    rows = []
    for line in proc.stdout.splitlines():
        m = _PORCELAIN.match(line)
        if m:
            rows.append(Row(m[1], m[3], m[4]))
    return proc.returncode, rows, proc.stderr


def _merge_remote(ctx: Context, remote: str, ref: str) -> bool:
    """Merge <remote>'s copy of a memory ref into ours; False when that
    would leave conflicts in a ref no worktree here is on (left alone)."""
    name = ref.removeprefix(MEMORY_NS)
    theirs_ref = f'{REMOTES_NS}{remote}/{name}'
    label = f'{remote}/{name}'
    subject = f'merge: {label} (push)'
    if ref == ctx.ref and ctx.repo.memory_dir.is_dir():
        outcome = merging.merge_into_worktree(ctx, theirs_ref, label, subject=subject)
        if merging.report(outcome, ctx, label, prefix='agitmem: '):
            raise AgitmemError(
                f'the memory of {name} conflicts with {label}: resolve the '
                f'conflicts, `agitmem save`, then push again',
            )
        return True
    pr = store.open_repo(ctx.repo)
    with store.locked(ctx.repo):
        theirs = store.tip(pr, theirs_ref)
        if theirs is None:
            return False
        outcome = merging.merge_refs(
            ctx, pr, ref, theirs, name=label, subject=subject,
            allow_conflicts=False,
        )
    if outcome.kind == 'conflicts':
        print(
            f'agitmem: the memory of {name} conflicts with {label}; not '
            f'pushed: check {name} out and `agitmem pull {remote}`',
            file=sys.stderr,
        )
        return False
    print(f'agitmem: merged {label} into {ref} ({outcome.kind})')
    return True


def unresolved_refs(repo: Repo) -> list[str]:
    """Memory refs whose tip still holds merge conflicts: not pushed, so a
    conflict never spreads to other clones."""
    pr = store.open_repo(repo)
    ret = []
    for ref in sorted(_refs(repo, MEMORY_NS)):
        top = store.tip(pr, ref)
        if top is not None and merge_mod.unresolved(store.tree_files(pr, top.tree)):
            ret.append(ref)
    return ret


def push_refs(ctx: Context, remote: str) -> list[Row]:
    """Push every memory ref; the ones that lost a race are merged with the
    remote's copy and pushed again, never forced.  Refs with unresolved
    merge conflicts stay here."""
    refs = _refs(ctx.repo, MEMORY_NS)
    blocked = unresolved_refs(ctx.repo)
    for ref in blocked:
        print(
            f'agitmem: {ref} not pushed: it has unresolved merge conflicts '
            f'(resolve them, `agitmem save`, push again)',
            file=sys.stderr,
        )
    if not set(refs) - set(blocked):
        return []
    named = remote in repo_mod.remotes(ctx.repo)
    specs = [PUSH_SPEC] if not blocked else [
        f'{ref}:{ref}' for ref in sorted(refs) if ref not in blocked
    ]
    done: dict[str, Row] = {}
    for _ in range(_ATTEMPTS):
        code, rows, err = _push_once(ctx.repo, remote, specs)
        for row in rows:
            done[row.ref] = row
        lost = [r.ref for r in rows if r.lost_race]
        failed = [r for r in rows if r.flag == '!' and not r.lost_race]
        if failed:
            raise AgitmemError(f'{failed[0].ref} not pushed: {failed[0].summary}')
        if code == 0 and not lost:
            return sorted(done.values(), key=lambda r: r.ref)
        if not lost:
            raise AgitmemError(f'git push {remote} failed: {repo_mod.error_line(err, f"exit {code}")}')
        if not named:
            raise AgitmemError(
                f'{lost[0]} was rejected by {remote} (it moved): fetch and '
                f'merge need a named remote (`git remote add`)',
            )
        fetch_memory(ctx.repo, remote)
        merged = [ref for ref in lost if _merge_remote(ctx, remote, ref)]
        if not merged:
            return sorted(done.values(), key=lambda r: r.ref)
        specs = [f'{ref}:{ref}' for ref in merged]
    raise AgitmemError(
        f'{remote} kept moving while the memory was pushed '
        f'({_ATTEMPTS} attempts); try again',
    )


def push_memory(ctx: Context, remote: str) -> list[Row]:
    """pre-push (and `agitmem push`): push refs/agitmem/heads/* along."""
    rows = push_refs(ctx, remote)
    audit.log(
        ctx.repo.agent_dir, 'write push',
        f'{remote}: ' + ', '.join(f'{r.ref} {r.summary}' for r in rows),
    )
    return rows


def refused_by_secrets(ctx: Context) -> bool:
    """The `secrets` check on what a push would send (as the pre-push
    hook does before it calls push_memory); True when it found some."""
    from agitmem.checks import secrets
    from agitmem.porcelain import checking
    if secrets.ID in checking.skipped():
        return False
    found = secrets.in_refs(ctx.repo)
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
    return label, merging.merge_into_worktree(
        ctx, theirs_ref, label, subject=f'merge: {label}',
    )
