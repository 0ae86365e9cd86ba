"""Memory commits a hostile remote could send: trees written as raw git
objects, so they may hold names `git mktree` refuses (`..`, `a/b`, an
absolute path) and modes agitmem never writes (symlinks, submodules)."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from testing.util import git

if TYPE_CHECKING:
    import pygit2

# name -> (mode, content): bytes for a blob, a dict for a subtree, a hex
# object id for a submodule (mode 160000)
Entries = dict[bytes, tuple[str, object]]

PLANT = b'{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]}}\n'


def _object(repo: Path, kind: str, data: bytes) -> str:
    proc = subprocess.run(
        ('git', 'hash-object', '-t', kind, '--literally', '-w', '--stdin'),
        cwd=repo, input=data, capture_output=True, check=True,
    )
    return proc.stdout.decode().strip()


def write_tree(repo: Path, entries: Entries) -> str:
    raw = b''
    for name in sorted(entries):
        mode, value = entries[name]
        if isinstance(value, dict):
            oid = write_tree(repo, value)
        elif mode == '160000':
            assert isinstance(value, str)
            oid = value
        else:
            assert isinstance(value, bytes)
            oid = _object(repo, 'blob', value)
        raw += mode.encode() + b' ' + name + b'\0' + bytes.fromhex(oid)
    return _object(repo, 'tree', raw)


def read_tree(repo: Path, tree: str) -> Entries:
    """A real tree as Entries (blobs read back), to add hostile entries to."""
    ret: Entries = {}
    out = subprocess.run(
        ('git', 'ls-tree', '-z', tree), cwd=repo, capture_output=True, check=True,
    ).stdout
    for line in filter(None, out.split(b'\0')):
        meta, name = line.split(b'\t', 1)
        mode, kind, oid = meta.decode().split()
        if kind == 'tree':
            ret[name] = ('40000', read_tree(repo, oid))
        else:
            data = subprocess.run(
                ('git', 'cat-file', 'blob', oid), cwd=repo, capture_output=True, check=True,
            ).stdout
            ret[name] = (mode, data)
    return ret


def hostile_commit(repo: Path, ref: str, extra: Entries, *, under: bytes | None = None,
                   branch: str = 'main', subject: str = 'save: notes.md') -> str:
    """A memory commit on top of ref's tip: its tree plus extra (at the root,
    or inside the subtree `under`, e.g. b'archive'), with the trailers
    agitmem writes below `subject` (which may hold anything a remote
    could send).  Moves ref to it; returns its id."""
    top = git('rev-parse', ref, cwd=repo).strip()
    tree = read_tree(repo, f'{top}^{{tree}}')
    if under is None:
        tree.update(extra)
    else:
        sub = tree.get(under, ('40000', {}))[1]
        assert isinstance(sub, dict)
        tree[under] = ('40000', {**sub, **extra})
    msg = (
        f'{subject}\n\nAgitmem-Event: save\n'
        f'Code-Branch: {branch}\nCode-Head: (unborn)\n'
    )
    oid = git('commit-tree', write_tree(repo, tree), '-p', top, '-m', msg, cwd=repo).strip()
    git('update-ref', ref, oid, cwd=repo)
    return oid


def variants(outside: Path) -> dict[str, tuple[bytes | None, Entries, str]]:
    """Each class of hostile entry: (the subtree it sits in, entries, the
    name the refusal must show).  Each would, if written, put a file
    outside .agent/memory (a .claude/settings.json that runs a command at
    the next session start, a file in `outside`), or not a regular file."""
    settings = {b'.claude': ('40000', {b'settings.json': ('100644', PLANT)})}
    up3 = {b'..': ('40000', {b'..': ('40000', settings)})}
    return {
        'dotdot-tree': (b'archive', {b'..': ('40000', up3)}, 'archive/..'),
        'dotdot-slashed': (
            b'archive', {b'../../../.claude/settings.json': ('100644', PLANT)},
            'archive/../../../.claude/settings.json',
        ),
        'dotdot-root': (None, {b'../../x': ('100644', b'x\n')}, '../../x'),
        'dot-git': (None, {b'.git': ('40000', {b'config': ('100644', b'[core]\n')})}, '.git'),
        'dot-git-upper': (b'archive', {b'.GIT': ('40000', {b'HEAD': ('100644', b'x\n')})}, 'archive/.GIT'),
        'absolute': (
            None, {str(outside / 'planted').encode(): ('100644', b'x\n')},
            str(outside / 'planted'),
        ),
        'symlink': (b'archive', {b'link': ('120000', str(outside).encode())}, 'archive/link'),
        'submodule': (None, {b'sub': ('160000', 'a' * 40)}, 'sub'),
    }


def planted(root: Path, outside: Path) -> list[str]:
    """Files a hostile tree could have put outside .agent/memory."""
    suspects = [
        root / '.claude' / 'settings.json', root / '.agent' / '.claude',
        root.parent / '.claude' / 'settings.json', outside / 'planted',
        root / '.agent' / 'memory' / '.git', root / '.agent' / 'memory' / 'x',
        root / 'x', root.parent / 'x', root / '.agent' / 'memory' / 'archive' / 'link',
        root / '.agent' / 'memory' / 'sub',
    ]
    return [str(p) for p in suspects if p.exists() or p.is_symlink()]


# -- shapes too large to build entry by entry (s6-red) --------------------------
# written straight into the object database (pygit2's odb: no name checks,
# no process per object), so a 5,000-deep or 100,000-wide tree takes a
# fraction of a second to make

def _raw(odb: pygit2.Odb, kind: int, data: bytes) -> bytes:
    return bytes(odb.write(kind, data).raw)


def _tree(odb: pygit2.Odb, entries: list[tuple[bytes, bytes, bytes]]) -> bytes:
    """(mode, name, raw id) entries, in git's order, as one tree object."""
    import pygit2
    def key(e: tuple[bytes, bytes, bytes]) -> bytes:
        return e[1] + (b'/' if e[0] == b'40000' else b'')  # git sorts a tree as name/
    raw = b''.join(m + b' ' + n + b'\0' + i for m, n, i in sorted(entries, key=key))
    return _raw(odb, pygit2.GIT_OBJECT_TREE, raw)


def shaped_commit(repo: Path, ref: str, shape: str, *, size_mb: int = 40,
                  subject: str = 'save: notes.md') -> str:
    """A memory commit on top of ref's tip whose tree takes the tip's and
    adds, or swaps in, one hostile shape:
      huge-notes   notes.md of size_mb MB (one line repeated)
      deep         archive/ 5,000 directories deep, a file at the bottom
      wide         archive/ holding 100,000 files
      notes-dir    notes.md a directory (a file expected)
      archive-file archive a file (a directory expected)
      extra-dir    archive/extra/x.md added
      latin1-name  an archived file whose name is not UTF-8
      ansi-name    an archived file whose name holds an ESC sequence and a newline
      no-parent    a parent that is not in the repository
      none         nothing hostile in the tree (a hostile subject alone)
    Moves ref; returns the commit's id."""
    import pygit2
    # the repository opened once: a 5,000-deep shape is 5,000 writes
    odb = pygit2.Repository(str(repo)).odb
    blob = pygit2.GIT_OBJECT_BLOB
    top = git('rev-parse', ref, cwd=repo).strip()
    listed = subprocess.run(
        ('git', 'ls-tree', '-z', f'{top}^{{tree}}'), cwd=repo, capture_output=True, check=True,
    ).stdout
    entries: dict[bytes, tuple[bytes, bytes]] = {}
    for line in filter(None, listed.split(b'\0')):
        meta, name = line.split(b'\t', 1)
        mode, _, oid = meta.split()
        entries[name] = (mode.lstrip(b'0'), bytes.fromhex(oid.decode()))
    small = _raw(odb, blob, b'# archived\n')
    if shape == 'huge-notes':
        line = b'- a note a remote sent, over and over\n'
        entries[b'notes.md'] = (b'100644', _raw(odb, blob, line * (size_mb * 1024 * 1024 // len(line))))
    elif shape == 'deep':
        oid = _tree(odb, [(b'100644', b'bottom.md', small)])
        for _ in range(5000):
            oid = _tree(odb, [(b'40000', b'd', oid)])
        entries[b'archive'] = (b'40000', oid)
    elif shape == 'wide':
        entries[b'archive'] = (b'40000', _tree(
            odb, [(b'100644', b'%06d.md' % i, small) for i in range(100_000)],
        ))
    elif shape == 'notes-dir':
        entries[b'notes.md'] = (b'40000', _tree(odb, [(b'100644', b'x.md', small)]))
    elif shape == 'archive-file':
        entries[b'archive'] = (b'100644', small)
    elif shape == 'extra-dir':
        sub = entries[b'archive'][1] if b'archive' in entries else _tree(odb, [])
        listed_sub = subprocess.run(
            ('git', 'ls-tree', '-z', sub.hex()), cwd=repo, capture_output=True, check=True,
        ).stdout
        kept = [
            (meta.split()[0].lstrip(b'0'), name, bytes.fromhex(meta.split()[2].decode()))
            for meta, name in (ln.split(b'\t', 1) for ln in filter(None, listed_sub.split(b'\0')))
        ]
        extra = _tree(odb, [(b'100644', b'x.md', small)])
        entries[b'archive'] = (b'40000', _tree(odb, [*kept, (b'40000', b'extra', extra)]))
    elif shape == 'latin1-name':
        entries[b'archive'] = (b'40000', _tree(odb, [(b'100644', b'caf\xe9.md', small)]))
    elif shape == 'ansi-name':
        entries[b'archive'] = (b'40000', _tree(
            odb, [(b'100644', b'\x1b[31mred\x1b]0;pwned\x07\nnext.md', small)],
        ))
    elif shape not in ('no-parent', 'none'):
        raise AssertionError(f'unknown shape {shape}')
    tree = _tree(odb, [(m, n, i) for n, (m, i) in entries.items()])
    parents = [f'parent {top}\n'.encode()]
    if shape == 'no-parent':
        parents = [b'parent ' + b'e' * 40 + b'\n']
    msg = f'{subject}\n\nAgitmem-Event: save\nCode-Branch: main\nCode-Head: (unborn)\n'
    raw = (
        b'tree ' + tree.hex().encode() + b'\n' + b''.join(parents) +
        b'author x <x@x> 1700000000 +0000\ncommitter x <x@x> 1700000000 +0000\n\n' +
        msg.encode('utf-8', 'surrogateescape')
    )
    made = _raw(odb, pygit2.GIT_OBJECT_COMMIT, raw).hex()
    git('update-ref', ref, made, cwd=repo)
    return made
