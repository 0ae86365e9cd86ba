"""`agitmem hook <git event>`: the git hooks.

Called two ways: by the shims of `agitmem install git`, with the arguments
git gives the hook; or by the pre-commit framework (.pre-commit-hooks.yaml),
which passes the commit message file as an argument and the rest in
PRE_COMMIT_* variables (PRE_COMMIT_REMOTE_NAME, PRE_COMMIT_FROM_REF,
PRE_COMMIT_TO_REF, PRE_COMMIT_CHECKOUT_TYPE, PRE_COMMIT_IS_SQUASH_MERGE,
PRE_COMMIT_REWRITE_COMMAND).

pre-commit, commit-msg and pre-push may refuse (exit 1, or 2 on bad input);
post-* hooks never fail the git command: an error is one line, exit 0.  In
a repository without `.agent/` there is nothing to check: exit 0, quietly.
"""
from __future__ import annotations

import os
import sys

from agitmem import config
from agitmem.porcelain import context
from agitmem import repo as repo_mod
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar
    T = TypeVar('T')

EVENTS = (
    'pre-commit', 'commit-msg', 'post-commit', 'pre-push', 'post-checkout',
    'post-merge', 'post-rewrite',
)
# set while pre-push pushes the memory refs: that push runs pre-push again
IN_PUSH = 'AGITMEM_IN_PRE_PUSH'


def _repo() -> Repo | None:
    """This repository; None where agitmem is not in use (no .agent/)."""
    repo = repo_mod.find()
    if not os.path.isdir(repo.agentdir):
        return None
    context.require_memory(repo)
    return repo


def _context(*, memory_refs_will_do: bool = False) -> Context | None:
    """This repository's context; None where agitmem is not in use.  Where
    the repository is and HEAD are asked in one git process (started
    while the hook imported, cli._hook)."""
    repo, head = repo_mod.find_with_head()
    if os.path.isdir(repo.agentdir):
        context.require_memory(repo)
    elif not (memory_refs_will_do and repo_mod.git(
            'for-each-ref', '--count=1', '--format=x', 'refs/agitmem/',
            cwd=repo.top,
    ).stdout.strip()):
        return None
    return context.make(repo, config.load(repo), head=head)


def _arg(args: list[str], i: int, env: str) -> str | None:
    if len(args) > i:
        return args[i]
    return os.environ.get(env) or None


def pre_commit(args: list[str], stdin: str) -> int:
    ctx = _context()
    if ctx is None:
        return 0
    from agitmem.porcelain import checking
    checking.begin_staged(ctx)
    found = checking.findings(ctx, staged=True, commit_msg_file=None)
    return checking.report(found, as_json=False, quiet=True)


def commit_msg(args: list[str], stdin: str) -> int:
    if not args:
        raise AgitmemError(
            'hook commit-msg needs the commit message file (git passes it)',
        )
    # the message's rules need neither HEAD nor the memory ref
    repo = _repo()
    if repo is None:
        return 0
    cfg, data = config.load_read(repo)
    from agitmem.checks import commit_msg as stage
    from agitmem.porcelain import checking
    found = checking.message_findings(repo, cfg, args[0])
    # while config.yaml stays as it is, the shim need not start Python
    from agitmem import githooks
    githooks.record_idle(repo, data, stage.idle(cfg))
    return checking.report(found, as_json=False, quiet=True)


def post_commit(args: list[str], stdin: str) -> int:
    ctx = _context()
    if ctx is None:
        return 0
    from agitmem.porcelain.saved import saved
    # most commits leave the memory as it was saved: then neither pygit2
    # nor the save's reads are needed
    unchanged, parents, tip, ids = saved(ctx)
    if (unchanged and parents == 1 and ctx.branch is not None and tip is not None and
            ids is not None and not os.environ.get('AGITMEM_REF')):
        # while all stays as it is, the shim need not start Python (which
        # it does where AGITMEM_REF names another memory ref)
        from agitmem import post_commit_idle
        post_commit_idle.record_saved(ctx.repo, ctx.branch, ctx.ref, tip, ids)
    if not unchanged:
        subject = repo_mod.git(
            'log', '-1', '--format=%s', 'HEAD', cwd=ctx.repo.root,
        ).stdout.strip()
        from agitmem.porcelain import write
        oid = write.save(ctx, f'hook post-commit: {subject}', event='post-commit')
        if oid is not None:
            print(f'agitmem: memory saved to {ctx.ref} ({str(oid)[:12]})')
    if parents is None:
        proc = repo_mod.git('rev-list', '--parents', '-n', '1', 'HEAD', cwd=ctx.repo.root)
        parents = len(proc.stdout.split()) - 1
    if parents > 1:
        # a merge that stopped on a conflict and was committed by hand: git
        # runs no post-merge for it, so the memory merge happens here
        from agitmem.porcelain import branches
        branches.on_merge(ctx, False)
    return 0


def pre_push(args: list[str], stdin: str) -> int:
    if os.environ.get(IN_PUSH):
        return 0  # the push of the memory refs below
    ctx = _context()
    if ctx is None:
        return 0
    from agitmem.checks import run
    from agitmem.checks import secrets
    from agitmem.porcelain import checking
    if secrets.ID not in checking.skipped():
        mem = run.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
        remote = _arg(args, 0, 'PRE_COMMIT_REMOTE_NAME')
        allow = secrets.allowlist(ctx.cfg)
        found = (
            secrets.check(mem.texts(), allow) + secrets.in_refs(ctx.repo, allow=allow) +
            secrets.in_push(ctx.repo, remote, allow)
        )
        if found:
            checking.report(found, as_json=False)
            print('agitmem: push refused: memory holds likely credentials')
            return 1

    remote = _arg(args, 0, 'PRE_COMMIT_REMOTE_NAME')
    if remote is None:
        return 0
    from agitmem.porcelain.sharing import push_memory
    from agitmem.porcelain import forge
    os.environ[IN_PUSH] = '1'
    try:
        # a branch this push deletes: its memory goes too (once pushed)
        deletion = _forge(lambda: forge.before_push(ctx, remote, stdin), remote)
        try:
            push_memory(ctx, remote)
        except AgitmemError as e:
            # never silent: the memory stays here (status counts it) and the
            # next push carries it; the code push goes on unless push_strict
            if ctx.cfg['push_strict']:
                print(f'agitmem: push refused (push_strict): memory refs not pushed: {e}', file=sys.stderr)
                return 1
            print(
                f'agitmem: memory refs not pushed: {e} (the code push goes on; '
                f'the next push carries the memory)', file=sys.stderr,
            )
        _forge(lambda: forge.after_push(ctx, remote, deletion), remote)
    finally:
        del os.environ[IN_PUSH]
    return 0



def _forge(step: Callable[[], T], remote: str) -> T | None:
    """The memory of branches a push deletes: never stops the push."""
    try:
        return step()
    except AgitmemError as e:
        print(f'agitmem: memory of deleted branches left on {remote}: {e}', file=sys.stderr)
        return None


def post_checkout(args: list[str], stdin: str) -> int:
    old = _arg(args, 0, 'PRE_COMMIT_FROM_REF')
    new = _arg(args, 1, 'PRE_COMMIT_TO_REF')
    flag = _arg(args, 2, 'PRE_COMMIT_CHECKOUT_TYPE')
    if old is None or new is None:
        return 0
    ctx = _context(memory_refs_will_do=True)
    if ctx is None:
        return 0
    from agitmem.porcelain import branches
    branches.on_checkout(ctx, old, new, flag == '1')
    return 0


def post_merge(args: list[str], stdin: str) -> int:
    squash = _arg(args, 0, 'PRE_COMMIT_IS_SQUASH_MERGE')
    ctx = _context()
    if ctx is None:
        return 0
    from agitmem.porcelain import branches
    branches.on_merge(ctx, squash == '1')
    _after_pull(ctx)
    return 0


def _after_pull(ctx: Context) -> None:
    if repo_mod.head_reflog(ctx.repo).startswith('pull'):
        # a `git pull` fetched: branches gone from the remote are settled
        from agitmem.porcelain import forge
        from agitmem.porcelain import sharing
        remote = repo_mod.upstream_remote(ctx.repo, ctx.branch)
        if remote and remote in repo_mod.remotes(ctx.repo) and sharing.has_fetch_spec(ctx.repo, remote):
            forge.tidy(ctx, remote, catch_up=True)


def post_rewrite(args: list[str], stdin: str) -> int:
    """`commit --amend` or a rebase gave commits new ids: the memory
    saved at the old ones follows them (porcelain/rewrites.py); a rebase
    also merges the memory of the branch it rebased onto, as post-merge
    does for a merge (`git pull --rebase` runs no post-merge)."""
    kind = _arg(args, 0, 'PRE_COMMIT_REWRITE_COMMAND')
    if kind not in ('amend', 'rebase'):
        return 0
    ctx = _context()
    if ctx is None:
        return 0
    if kind == 'amend' and any(
            (ctx.repo.git_dir / d).is_dir() for d in ('rebase-merge', 'rebase-apply')
    ):
        return 0  # a fixup or squash inside a rebase: the rebase's own list maps it
    from agitmem.porcelain import rewrites
    pairs = rewrites.parse(stdin) if stdin else rewrites.from_reflog(ctx, kind)
    oid = rewrites.record(ctx, kind, pairs)
    if oid is not None:
        print(f'agitmem: memory follows the rewritten commits ({oid[:12]} on {ctx.ref})')
    if kind == 'rebase':
        from agitmem.porcelain import branches
        branches.on_rebase(ctx)
        _after_pull(ctx)
    return 0


_HANDLERS: dict[str, Callable[[list[str], str], int]] = {
    'pre-commit': pre_commit,
    'commit-msg': commit_msg,
    'post-commit': post_commit,
    'pre-push': pre_push,
    'post-checkout': post_checkout,
    'post-merge': post_merge,
    'post-rewrite': post_rewrite,
}


def githook(event: str, args: list[str], stdin: str) -> int:
    if event not in _HANDLERS:
        print(
            f'agitmem: unknown git hook "{event}" (known: {", ".join(EVENTS)})',
            file=sys.stderr,
        )
        return 2
    blocking = not event.startswith('post-')
    try:
        return _HANDLERS[event](args, stdin)
    except AgitmemError as e:
        if blocking:
            print(f'agitmem: {e}', file=sys.stderr)
            return 2
        print(f'agitmem: hook {event}: {e}', file=sys.stderr)
        return 0
    except Exception as e:
        if blocking:
            raise
        # a post-* hook never fails the git command that ran it
        print(
            f'agitmem: hook {event} failed: {type(e).__name__}: {e}',
            file=sys.stderr,
        )
        return 0
