"""The CLI's own behaviour, whatever the command."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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
