"""The git reads of the checks of what is staged: the diff of the index git
gave the hook against HEAD, and whether that index is the tree of the last
verification.  Each reads the whole index (on a big repository, most of a
pre-commit hook's git time), so the hook begins both before it imports the
checks, and they run at once."""
from __future__ import annotations

import json
import subprocess

from agitmem import diffs
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.repo import Repo


def _env(index: str | None) -> dict[str, str] | None:
    return {'GIT_INDEX_FILE': index} if index else None


def same_tree_args(tree: str) -> tuple[str, ...]:
    return (
        'diff-index', '--cached', '--quiet', tree, '--', '.',
        *repo_mod.NOT_CODE_PATHSPECS,
    )


def verified_tree(state_text: str) -> str | None:
    """The tree of the last verification state.json records, if any."""
    try:
        state = json.loads(state_text)
    except (ValueError, RecursionError):
        return None
    lv = state.get('last_verification') if isinstance(state, dict) else None
    tree = lv.get('tree') if isinstance(lv, dict) else None
    return tree if repo_mod.is_oid(tree) else None


def start(
        repo: Repo, index: str | None, *, diff: bool, verified: str | None,
        history: str | None,
) -> None:
    """Begin the reads the checks will make (`read` picks them up), and
    the memory ref's history progress-not-updated reads."""
    if history is not None:
        from agitmem.checks import progress_not_updated
        repo_mod.start(*progress_not_updated.log_args(history), cwd=repo.root)
    if diff:
        repo_mod.start(*diffs.DIFF_ARGS, cwd=repo.root, env=_env(index))
    if verified is not None:
        repo_mod.start(*same_tree_args(verified), cwd=repo.root, env=_env(index))


def read(repo: Repo, index: str | None, args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    [proc] = repo_mod.git_each(args, cwd=repo.root, env=_env(index))
    return proc


def diff(repo: Repo, index: str | None) -> str:
    proc = read(repo, index, diffs.DIFF_ARGS)
    if proc.returncode != 0:
        detail = repo_mod.error_line(proc.stderr, f'exit {proc.returncode}')
        raise AgitmemError(f'git diff failed: {detail}')
    return proc.stdout


def same_tree(repo: Repo, index: str | None, tree: str) -> bool:
    """Whether the index holds `tree`'s code (a tree git no longer has,
    or no tree id at all, is other code)."""
    if not repo_mod.is_oid(tree):
        return False
    return read(repo, index, same_tree_args(tree)).returncode == 0
