"""doctor reads a clone's files (agent settings, MCP configs, Codex's
config.toml, .pre-commit-config.yaml, git hooks) with a bound, never
following a link to a device: a link to /dev/zero exhausted memory
(MemoryError traceback), one to /dev/stdin waited for ever."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from testing.util import agitmem_argv

FILES = [
    '.claude/settings.json',
    '.claude/settings.local.json',
    '.codex/hooks.json',
    '.codex/config.toml',
    '.gemini/settings.json',
    '.mcp.json',
    '.pre-commit-config.yaml',
]


def _doctor(repo: Path) -> subprocess.CompletedProcess[str]:
    # stdin a pipe whose other end stays open: a read of /dev/stdin waits on it
    read_end, write_end = os.pipe()
    try:
        return subprocess.run(
            [*agitmem_argv(), 'doctor', '--json'], cwd=repo, stdin=read_end,
            capture_output=True, text=True, timeout=120,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError('doctor did not end in 120 s') from None
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize('device', ['/dev/zero', '/dev/stdin'])
@pytest.mark.parametrize('rel', FILES)
def test_a_settings_file_linked_to_a_device(memrepo: Path, rel: str, device: str) -> None:
    path = memrepo / rel
    path.parent.mkdir(exist_ok=True)
    path.symlink_to(device)
    proc = _doctor(memrepo)
    assert 'Traceback' not in proc.stderr and 'MemoryError' not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 1)
    json.loads(proc.stdout)


def test_a_settings_file_that_is_a_fifo(memrepo: Path) -> None:
    (memrepo / '.claude').mkdir()
    os.mkfifo(memrepo / '.claude' / 'settings.json')
    os.mkfifo(memrepo / '.mcp.json')
    proc = _doctor(memrepo)
    assert 'Traceback' not in proc.stderr
    json.loads(proc.stdout)


def test_gemini_trusted_folders_linked_to_dev_zero(memrepo: Path, tmp_path: Path) -> None:
    from testing.util import ok
    ok('install', 'gemini', '--scope', 'project', cwd=memrepo)
    rules = tmp_path / 'trusted.json'
    rules.symlink_to('/dev/zero')
    env = {**os.environ, 'GEMINI_CLI_TRUSTED_FOLDERS_PATH': str(rules)}
    proc = subprocess.run(
        [*agitmem_argv(), 'doctor', '--json'], cwd=memrepo, env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert 'Traceback' not in proc.stderr, proc.stderr[-2000:]
    found = [f for f in json.loads(proc.stdout)['findings'] if f['check'] == 'gemini-trust']
    assert found[0]['level'] == 'error'
