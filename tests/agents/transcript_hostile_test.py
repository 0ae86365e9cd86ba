"""A hook payload's `transcript_path` is whatever the payload says: only a
regular file is read, and only so much of it.  Through the real prompt
hook, with a timeout as hang guard."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agitmem.agents.transcript import context_sizes
from agitmem.agents.transcript import MAX_BYTES
from agitmem.errors import AgitmemError
from testing import util


def _prompt(repo: Path, transcript: str) -> subprocess.CompletedProcess[str]:
    payload = {
        'hook_event_name': 'UserPromptSubmit', 'session_id': 's',
        'cwd': str(repo), 'prompt': 'go', 'transcript_path': transcript,
    }
    exe = [util._AGITMEM] if util._AGITMEM else [sys.executable, '-m', 'agitmem']
    return subprocess.run(
        [*exe, 'hook', 'prompt', '--agent', 'claude'], cwd=repo,
        input=json.dumps(payload), capture_output=True, text=True, timeout=20,
    )


def _turn(n: int, size: int) -> str:
    return json.dumps({
        'type': 'assistant',
        'message': {'id': f'm{n}', 'usage': {'input_tokens': size}},
    }) + '\n'


def _not_read(memrepo: Path, path: str, why: str) -> None:
    proc = _prompt(memrepo, path)
    assert proc.returncode == 0
    assert proc.stdout == ''
    assert proc.stderr == f'agitmem hook prompt: {path}: {why}\n'


def test_fifo(memrepo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / 'transcript.jsonl'
    os.mkfifo(fifo)
    _not_read(memrepo, str(fifo), 'is not a regular file, not a transcript')


@pytest.mark.skipif(not os.path.exists('/dev/zero'), reason='no /dev/zero')
def test_dev_zero(memrepo: Path) -> None:
    _not_read(memrepo, '/dev/zero', 'is not a regular file, not a transcript')


@pytest.mark.skipif(not os.path.exists('/dev/zero'), reason='no /dev/zero')
def test_symlink_to_dev_zero(memrepo: Path, tmp_path: Path) -> None:
    link = tmp_path / 'transcript.jsonl'
    link.symlink_to('/dev/zero')
    _not_read(memrepo, str(link), 'is not a regular file, not a transcript')


def test_directory(memrepo: Path, tmp_path: Path) -> None:
    _not_read(memrepo, str(tmp_path), 'is a directory, not a transcript')


def test_huge_sparse_jsonl_reads_a_bounded_tail(memrepo: Path, tmp_path: Path) -> None:
    # 1 TB of holes between two turns: only the last MAX_BYTES are read,
    # where one turn is; the hook answers, as for a short transcript
    path = tmp_path / 'transcript.jsonl'
    with open(path, 'wb') as f:
        f.write(_turn(1, 100).encode())
        f.truncate(1 << 40)
        f.seek(0, os.SEEK_END)
        f.write(b'\n' + _turn(2, 50).encode())
    assert context_sizes(str(path)) == [50]
    proc = _prompt(memrepo, str(path))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '', '')


def test_huge_sparse_legacy_json_is_refused(memrepo: Path, tmp_path: Path) -> None:
    path = tmp_path / 'session.json'
    with open(path, 'wb') as f:
        f.truncate(1 << 40)
    _not_read(
        memrepo, str(path),
        f'transcript of {1 << 20} MB is too large to read (over '
        f'{MAX_BYTES >> 20} MB)',
    )


def test_a_bad_line_far_into_a_huge_file_is_named_by_byte(tmp_path: Path) -> None:
    path = tmp_path / 'transcript.jsonl'
    with open(path, 'wb') as f:
        f.truncate(1 << 40)
        f.seek(0, os.SEEK_END)
        f.write(b'\nnot json\n' + _turn(2, 50).encode())
    with pytest.raises(AgitmemError) as excinfo:
        context_sizes(str(path))
    assert str(excinfo.value) == (
        f'{path}: not a JSONL transcript (the line at byte {(1 << 40) + 1} '
        f'is not JSON)'
    )



def test_a_pre_compact_names_itself_when_the_transcript_is_not_read(memrepo: Path, tmp_path: Path) -> None:
    """The transcript's error is said by the hook that read it (it was
    always called `hook prompt`), its path's control characters escaped."""
    fifo = tmp_path / 'a\x1b[31mred.jsonl'
    os.mkfifo(fifo)
    payload = {
        'hook_event_name': 'PreCompact', 'session_id': 's', 'cwd': str(memrepo),
        'trigger': 'auto', 'transcript_path': str(fifo),
    }
    exe = [util._AGITMEM] if util._AGITMEM else [sys.executable, '-m', 'agitmem']
    proc = subprocess.run(
        [*exe, 'hook', 'pre-compact', '--agent', 'claude'], cwd=memrepo,
        input=json.dumps(payload), capture_output=True, text=True, timeout=20,
    )
    assert proc.returncode == 0, proc.stderr
    escaped = str(fifo).replace('\x1b', '\\u001b')
    assert f'agitmem hook pre-compact: {escaped}: is not a regular file, not a transcript\n' in proc.stderr
    assert '\x1b' not in proc.stderr
