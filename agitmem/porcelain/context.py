"""What every command starts from: the repo, its config and memory ref."""
from __future__ import annotations

import os

from agitmem import config
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.repo import Repo

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple


class Context(NamedTuple):
    repo: Repo
    cfg: dict[str, Any]
    branch: str | None
    head: str | None
    ref: str


def settle_detached(repo: Repo, ref: str) -> None:
    """Before ref, this worktree's detached memory, is used: the memory an
    older agitmem kept on refs/worktree/ moves to it; a removed worktree's
    of the same name goes to the attic (kept, never taken for this one's)."""
    repo_mod.adopt_legacy_detached(repo, ref)
    if repo_mod.from_a_removed_worktree(repo, ref):
        from agitmem import store
        store.move_aside(repo, ref, 'detached memory of a removed worktree of the same name')


def refuse_over_stash(repo: Repo) -> None:
    """.agent/ is gone into a stash (`git stash --all`): making it again
    would make `git stash pop` fail and keep the unsaved memory in there."""
    held = repo_mod.stash_holding(repo, '.agent')
    if held is not None:
        raise AgitmemError(
            f'.agent/ is in the stash ({held}; `git stash --all` took it, '
            f'with any unsaved memory edits): `git stash pop` puts it back; '
            f'agitmem does not make it again over the stash',
        )


def require_memory(repo: Repo) -> None:
    if os.path.islink(repo.agentdir) or os.path.islink(repo.memorydir):
        raise AgitmemError(
            '.agent/memory is a symlink; agitmem keeps memory in a real '
            'directory inside the repository',
        )
    if not os.path.isdir(repo.agentdir):
        refuse_over_stash(repo)
        raise AgitmemError(
            f'no .agent/ in {repo.top}: run `agitmem init` first',
        )
    if not os.path.isdir(repo.memorydir):
        raise AgitmemError(
            '.agent/memory/ is missing (half-initialised .agent/): run '
            '`agitmem init` to restore it',
        )


def make(
        repo: Repo,
        cfg: dict[str, Any],
        ref: str | None = None,
        *,
        head: tuple[str | None, str | None] | None = None,
) -> Context:
    """The context of a repo already found and its config already read.
    The memory ref: --ref, then $AGITMEM_REF, then config, then the branch."""
    branch, sha = repo_mod.head(repo) if head is None else head
    if branch is None:
        # HEAD detached under a rebase or bisect: the branch's memory
        branch = repo_mod.operation_branch(repo)
    override = ref or os.environ.get('AGITMEM_REF') or cfg['ref']
    repo_mod.set_network_timeout(cfg['network_timeout'])
    ref = repo_mod.memory_ref(repo, branch, override=override)
    if branch is None:
        settle_detached(repo, ref)
    return Context(repo, cfg, branch, sha, ref)


def get(
        ref: str | None = None,
        *,
        cwd: str | None = None,
        need_memory: bool = True,
) -> Context:
    repo, head = repo_mod.find_with_head(cwd)
    if need_memory:
        require_memory(repo)
    return make(repo, config.load(repo), ref, head=head)
