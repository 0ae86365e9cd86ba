"""`agitmem doctor` keeps its wall-clock bounds whatever the setup it
reads does: the login shell it asks for the agents' PATH is given
LOGIN_TIMEOUT seconds, children it started included."""
from __future__ import annotations

import time
from pathlib import Path

from agitmem.agents.launcher import LOGIN_TIMEOUT
from testing.util import agitmem


def test_login_shell_whose_profile_hangs_in_a_child(memrepo: Path, tmp_path: Path) -> None:
    """The shell starts a child that inherits its stdout and never ends;
    the shell is stopped past the bound, and the child with it (doctor
    waited for the child: 60 s here)."""
    shell = tmp_path / 'shell'
    shell.write_text('#!/bin/sh\nsleep 60\n:\n')
    shell.chmod(0o755)
    began = time.monotonic()
    proc = agitmem('doctor', cwd=memrepo, env={'SHELL': str(shell)})
    took = time.monotonic() - began
    assert 'Traceback' not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    assert took < LOGIN_TIMEOUT + 25, took
