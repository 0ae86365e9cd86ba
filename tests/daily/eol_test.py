"""Memory written in a clone whose files are LF, read in a clone whose
files git checks out CRLF (core.autocrlf=true, or a .gitattributes eol
rule, .agent/ files named too): the same code, so no STALE, no
verification-stale, the same memory bytes.  (tests/workflows_test.py
checks one clone's memory files stay LF.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok


@pytest.mark.parametrize('how', ('autocrlf', 'gitattributes'))
def test_a_crlf_clone_reads_lf_memory_without_stale(memrepo: Path, tmp_path: Path, how: str) -> None:
    if how == 'gitattributes':
        (memrepo / '.gitattributes').write_text('* text=auto eol=crlf\n.agent/** text eol=crlf\n')
        git('add', '.gitattributes', cwd=memrepo)
        git('commit', '-q', '-m', 'eol', cwd=memrepo)
        git('config', 'core.autocrlf', 'false', cwd=memrepo)
        # this clone's own files LF: it checked them out before the rule
        assert b'\r' not in (memrepo / 'src' / 'app.py').read_bytes()
    remote = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(remote), cwd=tmp_path)
    git('remote', 'add', 'origin', str(remote), cwd=memrepo)
    git('push', '-q', 'origin', 'main', cwd=memrepo)
    ok('state', 'set', 'current_goal=eol goal', 'current_file=src/app.py', cwd=memrepo)
    proc = agitmem('verify', '--', 'true', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    ok('push', 'origin', cwd=memrepo)

    clone = tmp_path / 'clone'
    cfg = ('-c', 'core.autocrlf=true') if how == 'autocrlf' else ()
    git('clone', '-q', *cfg, str(remote), str(clone), cwd=tmp_path)
    assert b'\r\n' in (clone / 'src' / 'app.py').read_bytes()  # CRLF on disk
    ok('init', cwd=clone)
    ok('install', 'git', cwd=clone)
    for name in ('state.json', 'notes.md', 'tattoo.md'):
        assert mem(clone, name).read_bytes() == git('show', f'refs/agitmem/heads/main:{name}', cwd=memrepo).encode()
    state = json.loads(mem(clone, 'state.json').read_text())
    assert state['last_verification']['result'] == 'passed'

    def no_stale() -> None:
        out = ok('load', cwd=clone)
        assert 'current_goal: eol goal' in out.splitlines() and 'STALE' not in out, out
        proc = agitmem('check', cwd=clone)
        assert proc.returncode == 0 and 'verification-stale' not in proc.stdout, proc.stdout + proc.stderr
        assert 'no unsaved changes' in ok('status', cwd=clone)

    no_stale()
    git('checkout', '-q', '-b', 'side', cwd=clone)  # files written again by git
    git('checkout', '-q', 'main', cwd=clone)
    no_stale()
    # a real change is seen, CRLF or not
    (clone / 'src' / 'app.py').write_bytes(b'def main():\r\n    return 2\r\n')
    out = ok('load', cwd=clone)
    assert 'STALE' in out and 'src/app.py' in out, out
