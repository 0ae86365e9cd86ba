"""The CLI's own behaviour, whatever the command."""
from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from agitmem import cli
from testing.util import agitmem_argv


@pytest.mark.parametrize('args', [('status',), ('log',), ('show', '@:tattoo.md')])
def test_a_reader_gone_is_no_traceback(memrepo: Path, args: tuple[str, ...]) -> None:
    # `agitmem status | head`: the pipe's reader has exited; like git, say
    # nothing, exit 141 (128 + SIGPIPE)
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([*agitmem_argv(), *args], cwd=memrepo, stdout=w, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(w)
    assert (proc.returncode, proc.stderr) == (141, '')


@pytest.mark.parametrize('args,code', [
    (('status',), 2), (('load',), 2), (('state', 'set', 'a=b'), 2), (('note', 'x'), 2),
    (('init',), 2), (('hook', 'pre-commit'), 2),
    (('hook', 'prompt', '--agent', 'claude'), 0),  # an agent hook never fails the agent
])
def test_a_deleted_current_directory_is_one_line(
        memrepo: Path, args: tuple[str, ...], code: int,
) -> None:
    # a shell left in a directory someone removed: os.getcwd() fails
    gone = memrepo / 'gone'
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"'
    proc = subprocess.run(
        ['sh', '-c', script, 'sh', *agitmem_argv(), *args], cwd=memrepo,
        input='{}', capture_output=True, text=True,
    )
    assert not gone.exists()
    assert proc.returncode == code, proc.stderr
    assert 'Traceback' not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and 'the current directory no longer exists' in lines[0], proc.stderr


def test_the_output_streams_escape_what_a_terminal_acts_on() -> None:
    # every command's and hook's output goes through this net: whatever
    # writes it (print, write, writelines) nothing raw gets out
    raw = io.BytesIO()
    stream = cli._Escaped(io.TextIOWrapper(raw, encoding='utf-8'))
    print('a\x1b[8mb', file=stream)
    stream.write('\u202e\n')
    stream.writelines(['\x9b', 'x\n'])
    stream.flush()
    assert raw.getvalue().decode() == 'a\\u001b[8mb\n\\u202e\n\\u009bx\n'


@pytest.mark.parametrize('argv', [
    ['load'], ['load', '--json'], ['load', '--after-compact'], ['load', '--json', '--after-compact', '--json'],
])
def test_load_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    fast = cli._load_call(argv)
    assert fast is not None
    assert vars(fast) == vars(cli._parser('load').parse_args(argv))


@pytest.mark.parametrize('argv', [
    ['load', '--ref', 'refs/agitmem/heads/x'], ['load', '--ref=x'], ['load', '-h'], ['load', 'extra'],
    ['load', '--jso'], ['state', 'show'],
])
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert cli._load_call(argv) is None
