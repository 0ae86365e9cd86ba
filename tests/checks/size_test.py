from __future__ import annotations

from pathlib import Path

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
