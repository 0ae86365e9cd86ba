"""agitmem's own files under <git dir>/agitmem/ made into something that
never ends: a FIFO (a read blocks) or a symlink to /dev/zero (a read never
stops).  They are caches: a command or a hook reads such a file as nothing
and goes on, within a bound, never hanging the agent or the commit.

Only someone who can write the git dir can plant these (who can also write
.git/hooks), so this is robustness more than trust: a damaged cache must
never cost more than computing it again."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from agitmem import repo as repo_mod
from agitmem import trees

from testing.util import agitmem_argv
from testing.util import ok

BOUND = 30  # seconds; each of these commands takes well under one


def _run(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            [*agitmem_argv(), *args], cwd=repo, input=stdin, capture_output=True,
            text=True, timeout=BOUND, check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f'agitmem {" ".join(args)} hung on a cache file')
    assert 'Traceback' not in proc.stderr, proc.stderr
    return proc


def _plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if kind == 'fifo':
        os.mkfifo(path)
    else:
        path.symlink_to('/dev/zero')


def _prompt(repo: Path) -> str:
    return json.dumps({
        'hook_event_name': 'UserPromptSubmit', 'session_id': 's1', 'cwd': str(repo),
        'transcript_path': str(repo / 'none.jsonl'), 'prompt': 'go on',
    })


def _session_file(repo: Path) -> Path:
    # sessions.py: the sha1 of "<agent>\0<session id>", 20 hex digits
    name = hashlib.sha1(b'claude\0s1').hexdigest()[:20]
    return repo / '.git' / 'agitmem' / 'sessions' / f'{name}.json'


@pytest.mark.parametrize('kind', ['fifo', 'dev-zero'])
def test_observed_facts_never_end(memrepo: Path, kind: str) -> None:
    _plant(memrepo / '.git' / 'agitmem' / 'observed.json', kind)
    proc = _run(memrepo, 'load')
    assert proc.returncode == 0, proc.stderr
    assert 'AGENT MEMORY BEGIN' in proc.stdout


@pytest.mark.parametrize('kind', ['fifo', 'dev-zero'])
def test_session_state_never_ends(memrepo: Path, kind: str) -> None:
    _plant(_session_file(memrepo), kind)
    proc = _run(memrepo, 'hook', 'prompt', '--agent', 'claude', stdin=_prompt(memrepo))
    assert proc.returncode == 0, proc.stderr


def test_observed_facts_too_large_read_as_nothing(memrepo: Path) -> None:
    """Larger than anything agitmem writes there: read as nothing, not
    parsed (a forged 4 MB of JSON costs no hook its time)."""
    path = memrepo / '.git' / 'agitmem' / 'observed.json'
    path.write_text('{"edits": [' + ' ' * 5_000_000 + ']}')
    proc = _run(memrepo, 'load')
    assert proc.returncode == 0, proc.stderr
    assert 'OBSERVED' not in proc.stdout


# The caches of modules s4-red does not own: a FIFO only (a symlink to
# /dev/zero would make the failing read take the machine's memory).

def test_tree_cache_is_a_fifo(memrepo: Path) -> None:
    (memrepo / 'README').write_text('changed\n')
    time.sleep(trees.RACY_NS / 1e9 + 0.2)  # not racy: the cache is used
    ok('state', 'set', 'current_goal=x', cwd=memrepo)
    assert (memrepo / '.git' / 'agitmem' / 'tree-cache').is_file()
    _plant(memrepo / '.git' / 'agitmem' / 'tree-cache', 'fifo')
    proc = _run(memrepo, 'state', 'set', 'current_goal=y')
    assert proc.returncode == 0, proc.stderr


def test_scanned_cache_is_a_fifo(memrepo: Path) -> None:
    _plant(memrepo / '.git' / 'agitmem' / 'scanned', 'fifo')
    proc = _run(memrepo, 'check')
    assert proc.returncode == 0, proc.stderr


def test_memory_base_is_a_fifo(memrepo: Path) -> None:
    _plant(memrepo / '.git' / 'agitmem' / 'base', 'fifo')
    proc = _run(memrepo, 'status')
    assert proc.returncode in (0, 2), proc.stderr


def test_huge_prompt_is_clipped_before_it_is_scanned(memrepo: Path) -> None:
    """A 20 MB prompt: the prompt hook records the user's request (300
    characters, secrets redacted) without scanning all of it for secrets
    (a 60 MB one took 100 s, past an agent's hook time limit); a token
    near the start is still redacted."""
    token = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'
    prompt = f'deploy with {token} ' + 'word ' * 4_000_000
    payload = json.dumps({
        'hook_event_name': 'UserPromptSubmit', 'session_id': 's1', 'cwd': str(memrepo),
        'transcript_path': str(memrepo / 'none.jsonl'), 'prompt': prompt,
    })
    began = time.monotonic()
    proc = _run(memrepo, 'hook', 'prompt', '--agent', 'claude', stdin=payload)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - began < 20
    observed = (memrepo / '.git' / 'agitmem' / 'observed.json').read_text()
    [request] = json.loads(observed)['requests']
    assert request['text'].startswith('deploy with [redacted')
    assert token not in observed


# -- links: agitmem's files under .git/agitmem/ are replaced whole, so a
# symlink there is none of its own: never read, never written through

def test_memory_base_linked_out_is_not_read(memrepo: Path, tmp_path: Path) -> None:
    """A memory base linked to a file outside the repository (a copy of
    the real one, so only the link differs) is read as none."""
    base = memrepo / '.git' / 'agitmem' / 'base'
    outside = tmp_path / 'outside-base'
    outside.write_bytes(base.read_bytes())
    assert repo_mod.memory_base(repo_mod.find(memrepo))[0] is not None
    base.unlink()
    base.symlink_to(outside)
    assert repo_mod.memory_base(repo_mod.find(memrepo)) == (None, None)


def test_tree_cache_linked_out_is_not_read(memrepo: Path, tmp_path: Path) -> None:
    (memrepo / 'README').write_text('changed\n')
    time.sleep(trees.RACY_NS / 1e9 + 0.2)  # not racy: the cache is used
    ok('state', 'set', 'current_goal=x', cwd=memrepo)
    cache = memrepo / '.git' / 'agitmem' / 'tree-cache'
    key, _, tree = cache.read_bytes().strip().partition(b' ')
    repo = repo_mod.find(memrepo)
    assert trees._cached_tree(repo, key) == tree.decode()
    outside = tmp_path / 'outside-cache'
    outside.write_bytes(cache.read_bytes())
    cache.unlink()
    cache.symlink_to(outside)
    assert trees._cached_tree(repo, key) is None


def test_tree_cache_never_written_through_a_link(memrepo: Path, tmp_path: Path) -> None:
    """The cache's temp file is a new one (O_EXCL): a link planted where a
    name made of the pid would have been is not written through."""
    outside = tmp_path / 'victim'
    outside.write_text('outside the repository\n')
    repo = repo_mod.find(memrepo)
    where = memrepo / '.git' / 'agitmem'
    for name in (f'.tree-cache.{os.getpid()}', 'tree-cache'):
        (where / name).unlink(missing_ok=True)
        (where / name).symlink_to(outside)
    trees._remember_tree(repo, b'k' * 40, 'a' * 40)
    assert outside.read_text() == 'outside the repository\n'
    assert not (where / 'tree-cache').is_symlink()
    assert (where / 'tree-cache').read_bytes() == b'k' * 40 + b' ' + b'a' * 40 + b'\n'
    # (a replaced link lends its target's permissions to nothing)
    assert (where / 'tree-cache').stat().st_mode & 0o777 == 0o644


def test_scanned_never_read_or_written_through_a_link(memrepo: Path, tmp_path: Path) -> None:
    from agitmem.checks import scanned
    repo = repo_mod.find(memrepo)
    key = scanned.scanner_key()
    path = memrepo / '.git' / 'agitmem' / 'scanned'
    outside = tmp_path / 'victim'
    outside.write_text(f'{key}\n{"0" * 40}\n')
    for name in (f'.scanned.{os.getpid()}', 'scanned'):
        (path.parent / name).unlink(missing_ok=True)
        (path.parent / name).symlink_to(outside)
    assert scanned.clean(repo, key) == []  # the link's list is not taken
    scanned.remember(repo, key, [], ['1' * 40])
    assert outside.read_text() == f'{key}\n{"0" * 40}\n'
    assert scanned.clean(repo, key) == ['1' * 40]
