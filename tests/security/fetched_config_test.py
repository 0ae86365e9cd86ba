"""A config.yaml that comes with fetched memory is untrusted (whoever can
push to the remote wrote it): `agitmem init` in a clone adopts it, but a
setting that loosens a bound protecting the user (max_file_kb,
budget_tokens, network_timeout, max_rules, user_tattoo) is not taken:
the default holds, one line says so, and memory files are checked
against the bound that holds before anything is written."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing import gitserver
from testing.util import agitmem
from testing.util import git
from testing.util import ok

LOOSE = (
    'max_file_kb: 100000\n'
    'budget_tokens: 900000\n'
    'network_timeout: 86400\n'
    'max_rules: 5000\n'
    'user_tattoo: false\n'
)


def _origin(tmp_path: Path, config: str, notes_kb: int = 0) -> Path:
    """A bare remote whose main memory holds `config` (and notes.md of
    notes_kb KB, when given); a fresh clone of it, not initialised."""
    bare, seed = gitserver.seeded(tmp_path)
    ok('init', cwd=seed)
    (seed / '.agent' / 'config.yaml').write_text(config)
    if notes_kb:
        (seed / '.agent' / 'memory' / 'notes.md').write_text('# Notes\n' + 'x' * notes_kb * 1024 + '\n')
    ok('note', 'from the origin', cwd=seed)
    git('push', '-q', 'origin', 'refs/agitmem/heads/*:refs/agitmem/heads/*', cwd=seed)
    clone = tmp_path / 'clone'
    git('clone', '-q', str(bare), str(clone), cwd=tmp_path)
    return clone


def test_fetched_config_cannot_loosen_a_bound(tmp_path: Path) -> None:
    clone = _origin(tmp_path, LOOSE + 'stale_minutes: 5\n')
    proc = agitmem('init', cwd=clone)
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr
    for key in ('max_file_kb', 'budget_tokens', 'network_timeout', 'max_rules', 'user_tattoo'):
        lines = [x for x in proc.stderr.splitlines() if f': {key}: ' in x]
        assert len(lines) == 1 and 'not taken' in lines[0], proc.stderr
    text = (clone / '.agent' / 'config.yaml').read_text()
    assert 'stale_minutes: 5\n' in text  # a setting that bounds nothing is adopted
    for line in LOOSE.splitlines():
        assert f'# not taken from fetched memory (agitmem init): {line}\n' in text
    # the memory itself came along, and a file over the default bound is refused now
    assert 'from the origin' in (clone / '.agent' / 'memory' / 'notes.md').read_text()
    (clone / '.agent' / 'memory' / 'notes.md').write_text('x' * 300 * 1024)
    assert agitmem('note', 'more', cwd=clone).returncode == 2


def test_fetched_config_may_tighten_a_bound(tmp_path: Path) -> None:
    clone = _origin(tmp_path, 'max_file_kb: 64\nbudget_tokens: 400\n')
    proc = agitmem('init', cwd=clone)
    assert proc.returncode == 0, proc.stderr
    assert 'not taken' not in proc.stderr
    assert (clone / '.agent' / 'config.yaml').read_text() == 'max_file_kb: 64\nbudget_tokens: 400\n'


def test_a_flow_mapping_that_loosens_is_not_adopted(tmp_path: Path) -> None:
    clone = _origin(tmp_path, '{max_file_kb: 100000, stale_minutes: 5}\n')
    proc = agitmem('init', cwd=clone)
    assert proc.returncode == 0, proc.stderr
    assert 'not adopted' in proc.stderr
    text = (clone / '.agent' / 'config.yaml').read_text()
    assert 'max_file_kb: 100000' not in text and 'stale_minutes: 5' not in text


@pytest.mark.parametrize('local', (None, 'max_file_kb: 1024\n'))
def test_an_oversized_fetched_file_is_refused_before_anything_is_written(
        tmp_path: Path, local: str | None,
) -> None:
    """The remote raised max_file_kb to hold a 400 KB notes.md: init in the
    clone refuses it (one line, exit 2, no .agent/ half made), unless the
    user's own config.yaml raised the bound (local wins)."""
    clone = _origin(tmp_path, LOOSE, notes_kb=400)
    if local is not None:
        (clone / '.agent').mkdir()
        (clone / '.agent' / 'config.yaml').write_text(local)
    proc = agitmem('init', cwd=clone)
    assert 'Traceback' not in proc.stderr
    if local is None:
        assert proc.returncode == 2, proc.stderr
        assert 'over max_file_kb (256 KB)' in proc.stderr.splitlines()[-1]
        assert not (clone / '.agent').exists()
    else:
        assert proc.returncode == 0, proc.stderr
        assert (clone / '.agent' / 'config.yaml').read_text() == local
        assert len((clone / '.agent' / 'memory' / 'notes.md').read_bytes()) > 400 * 1024
