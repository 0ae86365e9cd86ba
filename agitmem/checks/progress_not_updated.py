"""`progress-not-updated`: the change touches code, but neither snapshot.md
nor state.json changed since the memory recorded at HEAD.

"The memory recorded at HEAD" is the memory commit the post-commit hook
saved for HEAD; without one, the newest memory commit made before HEAD was
(its `Code-Head` is another commit).  Saves made since HEAD are progress."""
from __future__ import annotations

from agitmem import memory
from agitmem import repo as repo_mod
from agitmem.checks import Finding
from agitmem.memory import state as state_mod
from agitmem.repo import Repo

ID = 'progress-not-updated'
PROGRESS = (memory.SNAPSHOT, memory.STATE)
# how far back to look for HEAD's memory: saves since the last code commit
_DEPTH = 500
# the first read's reach: HEAD's memory is nearly always a few saves back,
# and each commit read costs (a loose object each, on a busy memory); the
# rest is read only when these are all saves made at HEAD
_FIRST = 16
_FORMAT = (
    '%H%x00%(trailers:key=Code-Head,valueonly,separator=%x2C)'
    '%x00%(trailers:key=Agitmem-Event,valueonly,separator=%x2C)%x1e'
)


def log_args(ref: str, skip: int = 0) -> tuple[str, ...]:
    """The git read of `recorded_at`: ref's first-parent history, its
    first `_FIRST` commits (skip 0), else the rest up to `_DEPTH`."""
    count = _FIRST if skip == 0 else _DEPTH - skip
    return (
        'log', f'-n{count}', *([f'--skip={skip}'] if skip else ()),
        '--first-parent', f'--format={_FORMAT}', ref, '--',
    )


def recorded_at(repo: Repo, ref: str, head: str) -> str | None:
    """The memory commit on ref recorded at code commit head (see above)."""
    chosen = None
    skip = 0
    while skip < _DEPTH:
        # (the first begun ahead by the pre-commit hook: checks/staged.py)
        [proc] = repo_mod.git_each(log_args(ref, skip), cwd=repo.top)
        if proc.returncode != 0:  # no memory ref yet
            return chosen
        records = [r for r in proc.stdout.split('\x1e') if r.strip('\n')]
        for record in records:
            fields = record.strip('\n').split('\0')
            if len(fields) != 3:
                continue
            sha, code_head, event = (f.strip() for f in fields)
            chosen = sha
            if code_head != head or event == 'post-commit':
                return chosen
        if len(records) < (_FIRST if skip == 0 else _DEPTH - skip):
            break  # the whole history read
        skip += len(records)
    return chosen


def _blobs_args(commit: str) -> tuple[str, ...]:
    return ('ls-tree', '-z', '--full-tree', commit, '--', *PROGRESS)


def begin_blobs(repo: Repo, commit: str) -> None:
    """Begin `blobs`' read (what it asks for later picks it up)."""
    repo_mod.start(*_blobs_args(commit), cwd=repo.top)


def blobs(repo: Repo, commit: str) -> dict[str, str]:
    """snapshot.md's and state.json's blob ids in a memory commit (absent:
    left out), read by one `git ls-tree` (begun by posix_spawn: the hook
    imports no subprocess for it)."""
    [proc] = repo_mod.git_each(_blobs_args(commit), cwd=repo.top)
    ret = {}
    for entry in proc.stdout.split('\0') if proc.returncode == 0 else ():
        info, _, name = entry.partition('\t')
        words = info.split()
        if name in PROGRESS and len(words) == 3 and words[1] == 'blob':
            ret[name] = words[2]
    return ret


def _content(repo: Repo, oid: str) -> bytes | None:
    [proc] = repo_mod.git_each(('cat-file', 'blob', oid), cwd=repo.top)
    # (git_each decodes as it encodes back: the bytes as git wrote them)
    return proc.stdout.encode('utf-8', 'surrogateescape') if proc.returncode == 0 else None


def changed(repo: Repo, files: dict[str, bytes | None], recorded: dict[str, str], commit: str) -> bool:
    """Whether snapshot.md or state.json (name -> content now, None when
    absent) differ from those recorded in memory commit `commit` (`recorded`:
    their blob ids there; state.json's content read only when it differs)."""
    for name in PROGRESS:
        data = files.get(name)
        now = None if data is None else repo_mod.blob_id(data, commit)
        before = recorded.get(name)
        if now == before:
            continue
        # an observed test run is a fact, not progress
        if name == memory.STATE and data is not None and before is not None and state_mod.same_but_observed(
                _content(repo, before), data,
        ):
            continue
        return True
    return False


def check(
        *,
        code_paths: list[str],
        progress_changed: bool,
        recorded: str | None,
        required: bool,
) -> list[Finding]:
    """code_paths: what the change touches outside .agent/;
    recorded: the memory commit recorded at HEAD (None: nothing to compare)."""
    if not code_paths or progress_changed or recorded is None:
        return []
    n = len(code_paths)
    files = code_paths[0] if n == 1 else f'{n} files ({code_paths[0]}, ...)'
    return [
        Finding(
            ID, 'error' if required else 'warning',
            f'the change touches {files} but snapshot.md and state.json '
            f'are unchanged since the memory recorded at HEAD '
            f'({recorded[:12]}); record the progress first (`agitmem state '
            f'set last_action=... next_intent=...` or edit snapshot.md)',
            path='.agent/memory/snapshot.md',
        ),
    ]
