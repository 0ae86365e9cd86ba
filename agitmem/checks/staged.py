"""The git reads of the checks of what is staged: what the index git gave
the hook changes against HEAD (names, modes, blob ids: one `diff-index`,
the one read of the whole index, on a big repository most of a pre-commit
hook's git time), the patch only when an enforce rule needs its lines, and
whether that index is the tree of the last verification, told without
reading the index again: from the same `diff-index` and HEAD's tree against
that tree's (`diff-tree`, which reads only the subtrees that differ, and
no index: repo.trees_only).  The
hook begins them before it imports the checks, and they run at once."""
from __future__ import annotations

import os

from agitmem import ahead
from agitmem import jsontext
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.repo import Repo


def _env(index: str | None) -> dict[str, str] | None:
    return {'GIT_INDEX_FILE': index} if index else None


def same_tree_args(tree: str) -> tuple[str, ...]:
    """An unborn HEAD's way: the index against `tree` (its own read)."""
    return (
        'diff-index', '--cached', '--quiet', tree, '--', '.',
        *repo_mod.NOT_CODE_PATHSPECS,
    )


def raw_args() -> tuple[str, ...]:
    """The index against HEAD, a record a path: plumbing, so no config
    (renames, external drivers) changes it; full blob ids.  HEAD by name,
    as ahead.py begins it for the pre-commit hook before HEAD is read (the
    same commit: nothing moves HEAD while a hook runs)."""
    return ahead.STAGED


def moved_args(head: str, tree: str) -> tuple[str, ...]:
    """HEAD's code against `tree`'s, as `raw_args` gives it."""
    return (
        'diff-tree', '-r', '-z', '--no-renames', head, tree, '--', '.',
        *repo_mod.NOT_CODE_PATHSPECS,
    )


def entries(out: str) -> dict[str, tuple[str, str]]:
    """path -> (new mode, new blob id) of raw `-z` output (`:old new
    oid oid status NUL path NUL`, renames off), code paths only; a deleted
    path's are zeros."""
    ret = {}
    words = out.split('\0')
    for info, path in zip(words[::2], words[1::2]):
        fields = info.split(' ')
        if len(fields) == 5 and repo_mod.is_code(path):
            ret[path] = (fields[1], fields[3])
    return ret


def verified_tree(state_text: str) -> str | None:
    """The tree of the last verification state.json records, if any."""
    try:
        state = jsontext.loads(state_text)
    except (ValueError, RecursionError):
        return None
    lv = state.get('last_verification') if isinstance(state, dict) else None
    tree = lv.get('tree') if isinstance(lv, dict) else None
    return tree if repo_mod.is_oid(tree) else None


def start(
        repo: Repo, index: str | None, head: str | None, *, raw: bool,
        patch: bool, verified: str | None, history: str | None,
) -> None:
    """Begin the reads the checks will make (`read` picks them up), and
    the memory ref's history progress-not-updated reads."""
    if history is not None:
        from agitmem.checks import progress_not_updated
        repo_mod.start(*progress_not_updated.log_args(history), cwd=repo.top)
    if patch or (head is None and raw):
        from agitmem import diffs
        repo_mod.start(*diffs.DIFF_ARGS, cwd=repo.top, env=_env(index))
    if head is None:  # no tree to compare both with: the index is
        if verified is not None:
            repo_mod.start(*same_tree_args(verified), cwd=repo.top, env=_env(index))
        return
    if (raw or verified is not None) and not _on_stdin(index):
        repo_mod.start(*raw_args(), cwd=repo.top, env=_env(index))
    if verified is not None:
        repo_mod.start(*moved_args(head, verified), cwd=repo.top, env=repo_mod.trees_only(repo))


def read(repo: Repo, index: str | None, args: tuple[str, ...]) -> repo_mod.Done:
    if args == raw_args() and _on_stdin(index):
        piped = _piped()
        if piped is not None:
            return piped
    [proc] = repo_mod.git_each(args, cwd=repo.top, env=_env(index))
    return proc


def _on_stdin(index: str | None) -> bool:
    """Whether the pre-commit shim gave `raw_args`' diff of `index` on
    stdin (ahead.PIPED), not yet read."""
    return ahead.PIPED == [index]


def _piped() -> repo_mod.Done | None:
    """The diff the pre-commit shim began (githooks._STAGED), read from
    stdin once: as git_each gives it, where git said it ran well (its
    exit code, on the line after the last NUL, is 0); else None, and the
    caller runs it itself (then git says what is wrong)."""
    ahead.PIPED.clear()
    data = _stdin(repo_mod.local_timeout())
    if data is None:
        return None
    head, nul, code = data.rpartition(b'\0')
    if code != b'0\n':
        return None
    return repo_mod.Done(('git', '--no-optional-locks', *raw_args()), 0, repo_mod._text(head + nul), '')


def _stdin(bound: float) -> bytes | None:
    """All of stdin, within `bound` seconds (None past it: the shim's git
    is left to end on a closed pipe)."""
    import select
    import time
    deadline = time.monotonic() + bound
    chunks: list[bytes] = []
    poller = select.poll()
    poller.register(0, select.POLLIN)
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            return None
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return b''.join(chunks)
        chunks.append(chunk)


def diff(repo: Repo, index: str | None) -> str:
    from agitmem import diffs
    proc = read(repo, index, diffs.DIFF_ARGS)
    if proc.returncode != 0:
        detail = repo_mod.error_line(proc.stderr, f'exit {proc.returncode}')
        raise AgitmemError(f'git diff failed: {detail}')
    return proc.stdout


def changes(repo: Repo, index: str | None, head: str) -> dict[str, tuple[str, str]]:
    """The code paths the index changes against HEAD (see `entries`)."""
    proc = read(repo, index, raw_args())
    if proc.returncode != 0:
        detail = repo_mod.error_line(proc.stderr, f'exit {proc.returncode}')
        raise AgitmemError(f'git diff-index failed: {detail}')
    return entries(proc.stdout)


def moved(repo: Repo, head: str, tree: str) -> dict[str, tuple[str, str]] | None:
    """The code paths `tree` changes against HEAD (see `entries`); None
    when git does not have it (other code)."""
    [proc] = repo_mod.git_each(moved_args(head, tree), cwd=repo.top, env=repo_mod.trees_only(repo))
    return entries(proc.stdout) if proc.returncode == 0 else None


def same_index_tree(repo: Repo, index: str | None, tree: str) -> bool:
    """Whether the index holds `tree`'s code, asked of the index itself
    (an unborn HEAD's way: there is no HEAD to compare both with)."""
    return read(repo, index, same_tree_args(tree)).returncode == 0
