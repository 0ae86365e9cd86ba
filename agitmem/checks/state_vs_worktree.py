"""`state-vs-worktree`: the state and the snapshot name files that are not
there.  `current_file` missing is an error (the agent would resume work in
a file that does not exist); `current_symbol` not in it, and backticked
paths in the snapshot's In progress that do not exist, are warnings."""
from __future__ import annotations

import os

from agitmem.checks import Finding
from agitmem.checks import json_line
from agitmem.memory import snapshot as snapshot_mod
from agitmem.textmatch import backticked
from agitmem.textmatch import is_word
from agitmem.textmatch import occurs

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any
    from agitmem.paths import Folding

ID = 'state-vs-worktree'
_PATH_CHARS = '.@+-'


def _is_path(term: str) -> bool:
    """`src/a.py`, `docs/`: a relative path with at least one directory;
    not a URL, an option or a ref range.  What
    `^(?:\\./)?[\\w.@+][\\w.@+-]*(?:/[\\w.@+-]+)*/?$` matched, by str's
    methods (agitmem/textmatch.py)."""
    term = term[:-1] if term.endswith('\n') else term  # ($ is before it too)
    return _parts_are_path(term) or term.startswith('./') and _parts_are_path(term[2:])


def _parts_are_path(term: str) -> bool:
    parts = term.split('/')
    if parts[-1] == '' and len(parts) > 1:
        parts.pop()  # the one `/` that may end it
    return (
        parts[0][:1] != '-' and
        all(p and all(is_word(c, _PATH_CHARS) for c in p) for p in parts)
    )


def _without_suffix(name: str) -> str:
    """name without a `:line`, `:line:column` or `::test` suffix: what
    re.sub(r'(?:::\\S+|:\\d+(?::\\d+)?)$', '', name) made."""
    body = name[:-1] if name.endswith('\n') else name  # ($ is before it too)
    spaces = [i for i, c in enumerate(body) if c.isspace()]
    last_space = spaces[-1] if spaces else -1
    last = body.rfind(':')
    before = body.rfind(':', 0, last) if last > 0 else -1
    at = body.find(':')
    while at != -1:
        # `::` and what follows, no space in it
        if body.startswith('::', at) and len(body) > at + 2 and last_space < at + 2:
            break
        # `:` and digits, and `:` and digits again
        if at == last and body[at + 1:].isdecimal() or (
                at == before and body[at + 1:last].isdecimal() and body[last + 1:].isdecimal()
        ):
            break
        at = body.find(':', at + 1)
    return name if at == -1 else body[:at] + name[len(body):]


READ_MAX = 8_000_000  # bytes of current_file read to find current_symbol


def _resolve(root: str, name: str, fold: Callable[[], Folding] | None = None) -> str | None:
    """The file `name` (relative to the repository, or absolute), also
    with a `:line` / `::test` suffix taken off; None when neither exists.
    Where the file system folds names (`fold`, asked only when it is not
    there as spelled), `Src/Über.py` is found as the working tree spells
    it (`src/über.py`)."""
    candidates = [c for c in dict.fromkeys((name, _without_suffix(name))) if c]
    for candidate in candidates:
        path = os.path.join(root, _pure(candidate))  # (an absolute one as it is)
        if os.path.lexists(path):
            return path
    if fold is None:
        return None
    from agitmem import paths
    folding = fold()
    if folding == paths.PLAIN:
        return None
    for candidate in candidates:
        if not os.path.isabs(candidate):
            found = paths.on_disk(root, candidate, folding)
            if found:
                return os.path.join(root, found)
    return None


def _pure(name: str) -> str:
    """name as pathlib spells it (without its import): no empty or `.`
    parts, so `src/app.py/` is the file (`..` kept, as pathlib keeps it)."""
    parts = [p for p in name.split('/') if p not in ('', '.')]
    return ('/' if name.startswith('/') else '') + '/'.join(parts)


def _mentions(path: str, symbol: str) -> bool:
    """Whether the file names symbol; True when that cannot be told
    cheaply.  current_file may come from a fetched memory ref: it may name
    a file that never ends (/proc/self/pagemap, through a symlink of the
    repository, reads as a regular file of size 0) or a FIFO, so at most
    READ_MAX bytes of a regular file are read, without blocking."""
    from agitmem import caches
    data = caches.read(path, READ_MAX)
    if data is None:  # not a regular file, unreadable, or too large: nothing to say
        return True
    return occurs(data.decode('utf-8', 'replace'), symbol.split('.')[-1], also='$')


def _gone_reads(names: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two reads `_gone_how` makes, NUL-separated: the index's entries
    for names (`S ` when skip-worktree) and the renames `git mv` staged
    (plumbing: porcelain `git diff` rewrites the index's stat data even
    with --no-optional-locks)."""
    return (
        ('ls-files', '-t', '-z', '--', *(f':(literal){n}' for n in names)),
        ('diff-index', '--cached', '-M', '--name-status', '-z', '--diff-filter=R', 'HEAD', '--'),
    )


def _under(path: str, names: list[str]) -> bool:
    return any(path == n or path.startswith(n.rstrip('/') + '/') for n in names)


def _arg_safe(name: str) -> bool:
    """Whether name can be an argument to git: no NUL, and no surrogate
    but those of undecodable bytes (a state.json's `\\ud800`)."""
    try:
        os.fsencode(name)
    except UnicodeError:
        return False
    return '\0' not in name


def _gone_how(root: str, name: str) -> tuple[bool, str | None]:
    """Why a file the state names is not on disk: (left out of a sparse
    checkout, so still the branch's; the path `git mv` moved it to, with
    the name's `:line` suffix).  Asked of git only when the file is
    missing, both reads at once; the name is tried as it is and without
    its suffix, as `_resolve` does."""
    from agitmem import repo as repo_mod
    names = list(dict.fromkeys(
        n.removeprefix('./') for n in (name, _without_suffix(name))
        if n.removeprefix('./') and _arg_safe(n)
    ))
    if not names:  # (no file can be named so: it is not there)
        return False, None
    listed, renames = repo_mod.git_each(*_gone_reads(names), cwd=root)
    entries = listed.stdout.split('\0') if listed.returncode == 0 else []
    # outside the sparse checkout (a directory: what it holds is)
    if any(e.startswith('S ') and _under(e[2:], names) for e in entries):
        return True, None
    moved = renames.stdout.split('\0') if renames.returncode == 0 else []
    for i in range(0, len(moved) - 2, 3):
        if moved[i].startswith('R') and moved[i + 1] in names:
            suffix = name.removeprefix('./')[len(moved[i + 1]):]
            return False, moved[i + 2] + suffix
    return False, None


def check(
        state: dict[str, Any],
        snapshot_text: str,
        *,
        root: str | os.PathLike[str],
        state_path: str,
        snapshot_path: str,
        state_text: str = '',
        fold: Callable[[], Folding] | None = None,
) -> list[Finding]:
    root = os.fspath(root)
    ret = []
    current = state.get('current_file')
    if isinstance(current, str) and current.strip():
        found = _resolve(root, current.strip(), fold)
        if found is None:
            sparse, renamed = _gone_how(root, current.strip())
            if not sparse:
                where = (
                    f'was moved to {renamed}: `agitmem state set current_file={renamed}`'
                    if renamed else
                    'does not exist; point it at the file being worked on '
                    '(`agitmem state set current_file=PATH`)'
                )
                ret.append(
                    Finding(
                        ID, 'error',
                        f'current_file "{current}" {where} or clear it '
                        f'(`agitmem state set current_file:=null`)',
                        path=state_path, line=json_line(state_text, 'current_file'),
                    ),
                )
        else:
            symbol = state.get('current_symbol')
            if (
                    isinstance(symbol, str) and symbol.strip() and
                    os.path.isfile(found) and not _mentions(found, symbol.strip())
            ):
                ret.append(
                    Finding(
                        ID, 'warning',
                        f'current_symbol "{symbol}" is not in {current}; '
                        f'update it (`agitmem state set current_symbol=NAME`)',
                        path=state_path,
                        line=json_line(state_text, 'current_symbol'),
                    ),
                )

    section = snapshot_mod.parse(snapshot_text).get(snapshot_mod.IN_PROGRESS)
    for n, text in snapshot_mod.content_lines(section):
        for term in backticked(text):
            term = term.strip()
            if (
                    '/' in term and _is_path(_without_suffix(term)) and
                    '://' not in term and _resolve(root, term, fold) is None
            ):
                ret.append(
                    Finding(
                        ID, 'warning',
                        f'In progress names `{term}`, which does not exist; '
                        f'fix the path, or move the item to Done if the file '
                        f'is gone for good',
                        path=snapshot_path, line=n,
                    ),
                )
    return ret
