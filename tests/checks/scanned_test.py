"""The secrets check remembers the memory texts it (or a save) scanned
clean, per worktree: a remembered text is not scanned again, a text with a
finding never is remembered, and what another scanner remembered counts
for nothing."""
from __future__ import annotations

from pathlib import Path

from agitmem.checks import scanned
from agitmem.repo import find
from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok

# built at run time: no key-shaped literal in the repository
AWS_KEY = 'AKIA' + 'QYLPMN4RZT7W2XHB'


def _cache(repo: Path) -> Path:
    return repo / '.git' / 'agitmem' / 'scanned'


def _staged(repo: Path) -> None:
    (repo / 'src.py').write_text('x = 1\n')
    git('add', 'src.py', cwd=repo)


def test_a_save_remembers_what_it_scanned_clean(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- the loader reads config.yaml\n')
    ok('save', cwd=memrepo)
    lines = _cache(memrepo).read_text().split()
    assert lines[0] == scanned.scanner_key()
    assert scanned.digest('- the loader reads config.yaml\n') in lines[1:]


def test_a_key_is_found_every_time_and_never_remembered(memrepo: Path) -> None:
    ok('save', cwd=memrepo)
    _staged(memrepo)
    text = f'- use {AWS_KEY} for s3\n'
    mem(memrepo, 'notes.md').write_text(text)
    for _ in range(2):
        proc = agitmem('hook', 'pre-commit', cwd=memrepo)
        assert proc.returncode == 1, proc.stdout
        assert 'error secrets .agent/memory/notes.md:1:' in proc.stdout
    assert scanned.digest(text) not in _cache(memrepo).read_text().split()


def test_a_text_remembered_clean_by_another_scanner_is_scanned(memrepo: Path) -> None:
    _staged(memrepo)
    text = f'- use {AWS_KEY} for s3\n'
    mem(memrepo, 'notes.md').write_text(text)
    repo = find(memrepo)
    # as if an older scanner, which had no such rule, had found it clean
    scanned.remember(repo, 'f' * 40, [], [scanned.digest(text)])
    proc = agitmem('hook', 'pre-commit', cwd=memrepo)
    assert proc.returncode == 1
    assert 'error secrets .agent/memory/notes.md:1:' in proc.stdout
    # the cache is this scanner's now, without the key's text
    assert _cache(memrepo).read_text().split()[0] == scanned.scanner_key()
    assert scanned.digest(text) not in scanned.clean(repo, scanned.scanner_key())


def test_a_malformed_cache_remembers_nothing(memrepo: Path) -> None:
    repo = find(memrepo)
    key = scanned.scanner_key()
    _cache(memrepo).parent.mkdir(parents=True, exist_ok=True)
    _cache(memrepo).write_bytes(key.encode() + b'\nnot a digest\n\xff\xfe\n')
    assert scanned.clean(repo, key) == []
    _cache(memrepo).write_text(f'{key}\n{"a" * 40}\n{"A" * 40}\n{"a" * 39}\n')
    assert scanned.clean(repo, key) == ['a' * 40]
    _cache(memrepo).unlink()
    assert scanned.clean(repo, key) == []


def test_the_cache_keeps_the_newest(memrepo: Path) -> None:
    repo = find(memrepo)
    key = scanned.scanner_key()
    digests = [scanned.digest(str(i)) for i in range(scanned.KEEP + 10)]
    scanned.remember(repo, key, [], digests)
    kept = scanned.clean(repo, key)
    assert kept == digests[-scanned.KEEP:]
    # one seen again moves to the end, not twice in the file
    scanned.remember(repo, key, kept, [kept[0]])
    assert scanned.clean(repo, key) == kept
    scanned.remember(repo, key, kept, [digests[0]])
    assert scanned.clean(repo, key)[-1] == digests[0]
    assert len(scanned.clean(repo, key)) == scanned.KEEP
