from __future__ import annotations

from pathlib import Path
from typing import Any

from agitmem.checks.size import check
from testing.util import agitmem
from testing.util import mem

PATH = '.agent/memory/notes.md'


def test_at_the_limit_is_fine() -> None:
    assert check({PATH: 256 * 1024}, max_file_kb=256) == []


def test_over_the_limit_is_an_error() -> None:
    found, = check({PATH: 256 * 1024 + 1, 'other': 10}, max_file_kb=256)
    assert (found.id, found.severity, found.path, found.line) == ('size', 'error', PATH, None)
    assert found.message.startswith('256 KB, over max_file_kb (256 KB)')


def test_through_the_cli_with_max_file_kb(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text('max_file_kb: 1\n')
    mem(memrepo, 'notes.md').write_text('- ' + 'x' * 3000 + '\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert f'error size {PATH}: 3 KB, over max_file_kb (1 KB)' in proc.stdout
    # a file too big to read is not read: no other check trips over it
    assert proc.stdout.count('\nerror ') + proc.stdout.startswith('error ') == 1


def test_a_file_grown_past_the_limit_while_read_is_over_it(memrepo: Path, monkeypatch: Any) -> None:
    """lstat found it within max_file_kb, then it grew before it was read
    (a note being appended): its size is what was read, so it is over the
    limit, not checked as its first max_file_kb + 1 bytes and passed."""
    import os

    from agitmem import repo as repo_mod
    from agitmem.checks import run
    notes = mem(memrepo, 'notes.md')
    notes.write_text('- ' + 'x' * 3000 + '\n')
    real = os.lstat

    def small(path: Any, *a: Any, **k: Any) -> os.stat_result:
        st = real(path, *a, **k)
        if os.fspath(path) == str(notes):
            return os.stat_result((*st[:6], 10, *st[7:]))  # as it was before it grew
        return st
    monkeypatch.setattr(os, 'lstat', small)
    read = run.read_memory(repo_mod.find(memrepo), max_file_kb=1)
    assert read.sizes[PATH] > 1024
    assert PATH not in read.files
    assert PATH in [f.path for f in check(read.sizes, max_file_kb=1)]
