"""Memory commits a hostile remote could send: trees written as raw git
objects, so they may hold names `git mktree` refuses (`..`, `a/b`, an
absolute path) and modes agitmem never writes (symlinks, submodules)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from testing.util import git

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
