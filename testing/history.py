"""Long memory histories, made fast: commits written straight into the
repository with pygit2 (as a fetch would bring them), for tests that then
drive agitmem as a user does."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pygit2

REF = 'refs/agitmem/heads/main'
# each commit one minute after the one before, from here
START = 1_790_000_000


def grow(
        repo: Path,
        steps: Iterable[dict[str, str | None]],
        *,
        ref: str = REF,
        start: int = START,
) -> list[str]:
    """A memory commit for each step on top of ref (a new ref starts from
    main's memory): each step maps a path in the memory tree to its new
    text (None removes it).  Returns the commits' ids, oldest first."""
    pr = pygit2.Repository(str(repo))
    base = pr.references.get(ref) or pr.references[REF]
    parent = base.peel(pygit2.Commit)
    made = []
    for i, changes in enumerate(steps):
        tree = parent.tree
        for path, text in changes.items():
            tree = _put(pr, tree, path.split('/'), text)
        when = pygit2.Signature('Test User', 'test@example.com', start + 60 * len(made), 0)
        msg = f'save: step {i}\n\nAgitmem-Event: save\nCode-Branch: main\nCode-Head: (unborn)\n'
        oid = pr.create_commit(None, when, when, msg, tree.id, [parent.id])
        parent = pr[oid]
        made.append(str(oid))
    pr.references.create(ref, parent.id, force=True)
    return made


def _put(pr: pygit2.Repository, tree: pygit2.Tree | None, parts: list[str], text: str | None) -> pygit2.Tree:
    tb = pr.TreeBuilder(tree) if tree is not None else pr.TreeBuilder()
    name, rest = parts[0], parts[1:]
    if rest:
        try:
            sub = pr[tree[name].id] if tree is not None else None
        except KeyError:
            sub = None
        assert sub is None or isinstance(sub, pygit2.Tree)
        tb.insert(name, _put(pr, sub, rest, text).id, pygit2.GIT_FILEMODE_TREE)
    elif text is None:
        tb.remove(name)
    else:
        tb.insert(name, pr.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
    got = pr[tb.write()]
    assert isinstance(got, pygit2.Tree)
    return got


def checkout(repo: Path, ref: str = REF) -> None:
    """.agent/memory as ref's tip holds it, recorded as the worktree's
    memory base (what a post-checkout hook would leave)."""
    pr = pygit2.Repository(str(repo))
    top = pr.references[ref].peel(pygit2.Commit)
    root = repo / '.agent' / 'memory'
    for entry in top.tree:
        obj = pr[entry.id]
        if isinstance(obj, pygit2.Blob) and entry.name != 'config.yaml':
            (root / str(entry.name)).write_bytes(obj.data)
    (Path(pr.path) / 'agitmem' / 'base').write_text(f'{top.id} {ref}\n')


def heavy(repo: Path, commits: int, kb: int, *, keep: str = '') -> None:
    """commits memory commits each rewriting a notes.md of about kb KB in
    place (a few lines changed in the middle, none appended): the history
    whose every commit costs recall a large blob.  keep: a note held by
    the first commit only (an old match for RELATED to find)."""
    base = [f'- note {i} about the build and its many parts' for i in range(kb * 1024 // 44)]

    def steps() -> Iterable[dict[str, str | None]]:
        lines = list(base)
        yield {'notes.md': '\n'.join([f'- {keep}', *lines]) + '\n' if keep else '\n'.join(lines) + '\n'}
        for c in range(1, commits):
            for j in range(5):
                at = (c * 37 + j * 101) % len(lines)
                lines[at] = f'- note {at} revised in step {c}'
            yield {'notes.md': '\n'.join(lines) + '\n'}
    grow(repo, steps())
