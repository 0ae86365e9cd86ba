"""The post-commit shim's skip (githooks._SAVED): it ends without starting
Python only where `agitmem hook post-commit` would have done nothing, and
never costs more than the hook it skips."""
from __future__ import annotations

import os
import resource
import shlex
import subprocess
from pathlib import Path

import pytest

from agitmem import githooks
from testing.util import agitmem_argv
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run


def _logged(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH with an `agitmem` first that writes down each hook it is
    started for, then runs this agitmem."""
    bin_dir = tmp_path / 'logging-bin'
    bin_dir.mkdir()
    log = tmp_path / 'started.log'
    (bin_dir / 'agitmem').write_text(
        f'#!/bin/sh\necho "$2" >> {shlex.quote(str(log))}\nexec {shlex.join(agitmem_argv())} "$@"\n',
    )
    (bin_dir / 'agitmem').chmod(0o755)
    return {'PATH': f'{bin_dir}{os.pathsep}{os.environ["PATH"]}'}, log


def _started(log: Path) -> list[str]:
    started = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return started


def _commit(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    with open(repo / 'src' / 'app.py', 'a') as f:
        f.write('# more\n')
    git('add', 'src/app.py', cwd=repo)
    return run('git', 'commit', '-q', '-m', 'change', cwd=repo, env=env)


def _cpu(*cmd: str, cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + sys) of cmd and all it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=cwd, env={**os.environ, **env}, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# 3,000 memory files saved and committed twice (14 s): a case of scale,
# in the full suite; the everyday tier keeps the skip's own tests
# (githooks_test)
@pytest.mark.system
def test_skip_costs_less_than_the_hook_with_thousands_of_memory_files(memrepo: Path, tmp_path: Path) -> None:
    """The shim built its lists a line at a time (`x="$x$line"`, and `read`
    of its copy a byte at a time): quadratic.  With 3,000 files in archive/
    its skip took 1.5 s of CPU where the Python hook it skips takes 0.25 s
    (6,000 files: 5.8 s against 0.35 s)."""
    ok('install', 'git', cwd=memrepo)
    env, log = _logged(tmp_path)
    archive = mem(memrepo, 'archive')
    archive.mkdir(exist_ok=True)
    for i in range(3000):
        (archive / f'note-{i:05}.md').write_text(f'- item {i}\n')
    ok('save', '-m', 'many', cwd=memrepo)
    for _ in range(2):  # the hook keeps its list on the second
        assert _commit(memrepo, env).returncode == 0
    _started(log)
    assert (memrepo / '.git' / 'agitmem' / githooks.POST_COMMIT_IDLE / 'head').exists()
    shim = str(memrepo / '.git' / 'hooks' / 'post-commit')
    skip = _cpu('sh', shim, cwd=memrepo, env=env)
    assert _started(log) == []  # skipped
    hook = _cpu(*agitmem_argv(), 'hook', 'post-commit', cwd=memrepo, env=env)
    assert skip < hook, (skip, hook)


def test_skip_reads_no_file_of_gigabytes(memrepo: Path, tmp_path: Path) -> None:
    """A file over max_file_kb (a runaway log, a sparse file) the hook
    refuses by its size alone; the shim hashed it whole first, on every
    commit: a 2 GB sparse file cost 42 s (18 s CPU) before the hook said
    why it saves nothing.  Now its hash-object gets a second of CPU."""
    ok('install', 'git', cwd=memrepo)
    env, log = _logged(tmp_path)
    for _ in range(2):  # the hook keeps its list on the second
        assert _commit(memrepo, env).returncode == 0
    _started(log)
    with open(mem(memrepo, 'huge.md'), 'wb') as f:
        f.truncate(1 << 30)  # sparse: no disk, all the reading
    shim = str(memrepo / '.git' / 'hooks' / 'post-commit')
    cpu = _cpu('sh', shim, cwd=memrepo, env=env)
    assert _started(log) == ['post-commit']
    assert cpu < 4, cpu
    # and nothing in the working tree from the kill (a core file)
    assert sorted(p.name for p in memrepo.iterdir()) == sorted(['.agent', '.git', 'src', *_tracked_top(memrepo)])


def _tracked_top(repo: Path) -> list[str]:
    names = git('ls-tree', '--name-only', 'HEAD', cwd=repo).split()
    return [n for n in names if n not in ('.agent', 'src')]


def test_a_kept_list_from_two_hooks_at_once_is_not_taken(memrepo: Path, tmp_path: Path) -> None:
    """The hook keeps two files, `files` then `head`, each written whole,
    but two hooks at once (two agents committing in one worktree: git runs
    post-commit after it lets go of the index) interleave: A's `head`
    (tip T2) over B's `files` (T1's list).  The shim took that mix for
    the memory saved as it is: a memory file put back as it was at T1
    (an undo) was never saved, the memory ref keeping T2's text.  Made
    here by the steps the interleaving leaves on disk."""
    ok('install', 'git', cwd=memrepo)
    env, log = _logged(tmp_path)
    idle = memrepo / '.git' / 'agitmem' / githooks.POST_COMMIT_IDLE
    notes = mem(memrepo, 'notes.md')
    for _ in range(2):
        assert _commit(memrepo, env).returncode == 0
    at_t1 = (idle / 'files').read_bytes(), notes.read_bytes()
    notes.write_text('- T2: the next step\n')
    ok('save', '-m', 'T2', cwd=memrepo)
    for _ in range(2):
        assert _commit(memrepo, env).returncode == 0
    _started(log)
    # hook B (which saw T1) wrote its `files` last, hook A (T2) its `head`
    (idle / 'files').write_bytes(at_t1[0])
    # the memory put back as it was at T1: a save to make
    notes.write_bytes(at_t1[1])
    proc = _commit(memrepo, env)
    assert _started(log) == ['pre-commit', 'post-commit']
    assert 'agitmem: memory saved to refs/agitmem/heads/main' in proc.stderr
    assert git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo).encode() == at_t1[1]


def test_a_memory_file_whose_name_ends_in_a_carriage_return(memrepo: Path, tmp_path: Path) -> None:
    """`git hash-object --stdin-paths` reads its lines as text: a CR before
    the newline is dropped.  With `a.md` and `a.md<CR>` (a CRLF script's
    `> "$name"`) the same when the hook kept its list, the shim hashed
    `a.md` for both: an edit to `a.md<CR>` was never saved."""
    ok('install', 'git', cwd=memrepo)
    env, log = _logged(tmp_path)
    archive = mem(memrepo, 'archive')
    archive.mkdir(exist_ok=True)
    (archive / 'a.md').write_text('- same\n')
    (archive / 'a.md\r').write_text('- same\n')
    ok('save', '-m', 'a CR', cwd=memrepo)
    for _ in range(2):
        assert _commit(memrepo, env).returncode == 0
    _started(log)
    (archive / 'a.md\r').write_text('- edited\n')
    proc = _commit(memrepo, env)
    assert _started(log) == ['pre-commit', 'post-commit']
    assert 'agitmem: memory saved to refs/agitmem/heads/main' in proc.stderr
    assert git('show', 'refs/agitmem/heads/main:archive/a.md\r', cwd=memrepo) == '- edited\n'


ODD_NAMES = (
    'sp ace.md', 'back\\slash.md', '[a].md', '*.md', '-dash.md', '"quote.md',
    'bad\udcff.md', 'tab\tx.md', 'x' * 200 + '.md', '[d]/f.md',
)


def test_an_edit_to_a_file_of_any_name_is_saved(memrepo: Path, tmp_path: Path) -> None:
    """(Held.)  Names with glob characters, a backslash, a leading dash or
    quote, a tab, bytes that are not UTF-8, a long name: the shim lists
    them as the hook reads them (the hook keeps its list, the shim skips),
    and an edit that keeps the size and the mtime is saved."""
    ok('install', 'git', cwd=memrepo)
    env, log = _logged(tmp_path)
    archive = mem(memrepo, 'archive')
    for name in ODD_NAMES:
        path = archive / name  # ('\udcff': the byte 0xff, as os names it)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('- one\n')
    ok('save', '-m', 'odd names', cwd=memrepo)
    for _ in range(2):
        assert _commit(memrepo, env).returncode == 0
    _started(log)
    assert _commit(memrepo, env).returncode == 0
    assert _started(log) == ['pre-commit']  # skipped
    for name in ODD_NAMES:
        path = archive / name
        st = path.stat()
        path.write_text('- two\n')
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        proc = _commit(memrepo, env)
        assert 'agitmem: memory saved to refs/agitmem/heads/main' in proc.stderr, name
        assert _started(log) == ['pre-commit', 'post-commit'], name
        _commit(memrepo, env)  # (the hook's save kept the list: skipped)
        assert _started(log) == ['pre-commit'], name
