from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from testing.util import agitmem_argv
from testing.util import bad
from testing.util import count
from testing.util import git
from testing.util import git_state
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import tip


def test_init_creates_memory_and_first_commit(repo: Path) -> None:
    before = git_state(repo)
    out = ok('init', cwd=repo)
    assert 'created .agent/memory/tattoo.md' in out
    for name in ('tattoo.md', 'snapshot.md', 'state.json', 'notes.md', 'fragments.jsonl'):
        assert mem(repo, name).is_file()
    assert (repo / '.agent' / 'config.yaml').is_file()
    assert '/.agent/' in (repo / '.git' / 'info' / 'exclude').read_text().splitlines()
    assert count(repo) == 1
    msg = message(repo)
    assert msg.startswith('init: agitmem memory\n')
    assert 'Agitmem-Event: init' in msg
    assert 'Code-Branch: main' in msg
    head = git('rev-parse', 'HEAD', cwd=repo).strip()
    assert f'Code-Head: {head}' in msg
    assert git_state(repo) == before


def test_init_tree_is_flat_memory_plus_config(memrepo: Path) -> None:
    names = git('ls-tree', '--name-only', 'refs/agitmem/heads/main', cwd=memrepo).split()
    assert names == sorted([
        'config.yaml', 'fragments.jsonl', 'notes.md', 'snapshot.md', 'state.json', 'tattoo.md',
    ])


def test_init_is_idempotent_and_never_overwrites(memrepo: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text('- mine\n')
    ok('save', cwd=memrepo)
    first = tip(memrepo)
    out = ok('init', cwd=memrepo)
    assert 'already initialised' in out
    assert mem(memrepo, 'tattoo.md').read_text() == '- mine\n'
    assert tip(memrepo) == first
    exclude = (memrepo / '.git' / 'info' / 'exclude').read_text()
    assert exclude.count('/.agent/') == 1


def test_init_restores_a_half_present_agent_dir(memrepo: Path) -> None:
    mem(memrepo, 'notes.md').write_text('- keep me\n')
    ok('save', cwd=memrepo)
    mem(memrepo, 'tattoo.md').unlink()
    ok('init', cwd=memrepo)
    assert mem(memrepo, 'tattoo.md').read_text().startswith('# Tattoo')
    assert mem(memrepo, 'notes.md').read_text() == '- keep me\n'


def test_init_checks_out_existing_memory_ref(memrepo: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text('- from the ref\n')
    ok('save', cwd=memrepo)
    import shutil
    shutil.rmtree(memrepo / '.agent')
    ok('init', cwd=memrepo)
    assert mem(memrepo, 'tattoo.md').read_text() == '- from the ref\n'


def test_commands_without_agent_dir(repo: Path) -> None:
    line = bad('save', cwd=repo)
    assert 'agitmem init' in line
    assert not (repo / '.agent').exists()


def test_half_present_agent_dir(repo: Path) -> None:
    (repo / '.agent').mkdir()
    line = bad('status', cwd=repo)
    assert '.agent/memory/ is missing' in line


def test_not_a_git_repo(tmp_path: Path) -> None:
    line = bad('init', cwd=tmp_path)
    assert line.startswith('agitmem: not a git repository')
    assert not (tmp_path / '.agent').exists()


def test_bare_repo(tmp_path: Path) -> None:
    git('init', '-q', '--bare', 'b.git', cwd=tmp_path)
    line = bad('init', cwd=tmp_path / 'b.git')
    assert 'bare repository' in line


def test_unborn_head(tmp_path: Path) -> None:
    git('init', '-q', cwd=tmp_path)
    ok('init', cwd=tmp_path)
    msg = message(tmp_path)
    assert 'Code-Head: (unborn)' in msg
    assert 'Code-Branch: main' in msg
    assert git('status', '--porcelain', cwd=tmp_path) == ''


def test_detached_head_uses_per_worktree_ref(repo: Path) -> None:
    git('checkout', '-q', '--detach', cwd=repo)
    ok('init', cwd=repo)
    assert tip(repo, 'refs/agitmem/detached/main-worktree') is not None
    assert tip(repo) is None
    assert 'Code-Branch: (detached)' in message(repo, 'refs/agitmem/detached/main-worktree')


def test_no_identity_falls_back(repo: Path) -> None:
    # useConfigOnly: git itself refuses to guess an identity
    git('config', 'user.useConfigOnly', 'true', cwd=repo)
    env = {'GIT_CONFIG_GLOBAL': '/dev/null'}
    for var in ('AUTHOR', 'COMMITTER'):
        env[f'GIT_{var}_NAME'] = ''
        env[f'GIT_{var}_EMAIL'] = ''
    ok('init', cwd=repo, env=env)
    author = git('log', '-1', '--format=%an <%ae>', 'refs/agitmem/heads/main', cwd=repo).strip()
    assert author == 'agitmem <agitmem@localhost>'


def test_identity_from_git(memrepo: Path) -> None:
    ok('note', 'x', cwd=memrepo, env={'GIT_AUTHOR_NAME': 'Ada', 'GIT_AUTHOR_EMAIL': 'ada@example.com'})
    author = git('log', '-1', '--format=%an <%ae>', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    assert author == 'Ada <ada@example.com>'


@pytest.mark.parametrize('env, expected', [
    # both whole in the environment: taken as they are, no git process
    ({'GIT_AUTHOR_NAME': 'Ada Lovelace', 'GIT_AUTHOR_EMAIL': 'ada@example.com',
      'GIT_COMMITTER_NAME': 'Bot', 'GIT_COMMITTER_EMAIL': 'bot@example.com'},
     'Ada Lovelace <ada@example.com>|Bot <bot@example.com>'),
    # what git trims ("crud" at the ends) is git's to trim
    ({'GIT_AUTHOR_NAME': ' Ada, ', 'GIT_AUTHOR_EMAIL': '<ada@example.com>'},
     'Ada <ada@example.com>|Conf Igured <conf@example.com>'),
    # a date given, or a part from config: git decides
    ({'GIT_AUTHOR_NAME': 'Ada', 'GIT_AUTHOR_EMAIL': 'ada@example.com',
      'GIT_AUTHOR_DATE': '2020-01-02T03:04:05Z'},
     'Ada <ada@example.com>|Conf Igured <conf@example.com>'),
    # none in the environment: config
    ({}, 'Conf Igured <conf@example.com>|Conf Igured <conf@example.com>'),
])
def test_identity_is_gits(memrepo: Path, env: dict[str, str], expected: str) -> None:
    git('config', 'user.name', 'Conf Igured', cwd=memrepo)
    git('config', 'user.email', 'conf@example.com', cwd=memrepo)
    full = {k: v for k, v in os.environ.items() if not k.startswith(('GIT_AUTHOR_', 'GIT_COMMITTER_'))}
    proc = subprocess.run([*agitmem_argv(), 'note', 'x'], cwd=memrepo, env={**full, **env}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    who = git('log', '-1', '--format=%an <%ae>|%cn <%ce>', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    assert who == expected
    if 'GIT_AUTHOR_DATE' in env:
        assert git('log', '-1', '--format=%aI', 'refs/agitmem/heads/main', cwd=memrepo).strip() == '2020-01-02T03:04:05+00:00'


def test_ref_override(repo: Path) -> None:
    ok('init', '--ref', 'experiment', cwd=repo)
    assert tip(repo, 'refs/agitmem/heads/experiment') is not None
    ok('note', 'x', cwd=repo, env={'AGITMEM_REF': 'refs/agitmem/heads/other'})
    assert tip(repo, 'refs/agitmem/heads/other') is not None


def test_init_takes_config_from_existing_ref(memrepo: Path) -> None:
    import shutil
    (memrepo / '.agent' / 'config.yaml').write_text('budget_tokens: 600\n')
    ok('save', cwd=memrepo)
    shutil.rmtree(memrepo / '.agent')
    ok('init', cwd=memrepo)
    assert (memrepo / '.agent' / 'config.yaml').read_text() == 'budget_tokens: 600\n'
    assert 'nothing to save' in ok('save', cwd=memrepo)


def test_the_reflog_is_gits(memrepo: Path) -> None:
    # a memory commit moves its ref in process (libgit2's compare-and-swap):
    # the reflog entry names the committer and the subject as git's would
    ok('note', 'one', cwd=memrepo)
    ok('note', 'two', cwd=memrepo, env={'GIT_COMMITTER_NAME': 'Bot', 'GIT_COMMITTER_EMAIL': 'bot@example.com'})
    log = git('reflog', '-3', '--format=%gn <%ge>|%gs|%H', 'refs/agitmem/heads/main', cwd=memrepo).splitlines()
    tip_ = git('rev-parse', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    assert log[0] == f'Bot <bot@example.com>|agitmem note: two|{tip_}'
    assert log[1].startswith('Test User <test@example.com>|agitmem note: one|')
    # a committer date given: git moves it, and dates the entry so
    ok('note', 'three', cwd=memrepo, env={'GIT_COMMITTER_DATE': '2020-01-02T03:04:05Z'})
    when = git('reflog', '-1', '--date=iso-strict', '--format=%gd', 'refs/agitmem/heads/main', cwd=memrepo).strip()
    assert '2020-01-02' in when



@pytest.fixture
def sha256_repo(tmp_path: Path) -> Path:
    """A repository made with --object-format=sha256, which libgit2 built
    without SHA-256 (pygit2's wheels) cannot open."""
    git('init', '-q', '--object-format=sha256', str(tmp_path), cwd=tmp_path)
    git('commit', '-q', '--allow-empty', '-m', 'first', cwd=tmp_path)
    import pygit2
    try:
        pygit2.Repository(str(tmp_path))
    except pygit2.GitError:
        return tmp_path
    pytest.skip('this libgit2 opens SHA-256 repositories')


def test_a_sha256_repository_is_one_line_not_a_traceback(sha256_repo: Path) -> None:
    """Each command that opens the memory's store says so in one line
    (each ended in a traceback)."""
    assert 'SHA-256' in bad('init', cwd=sha256_repo)
    (sha256_repo / '.agent' / 'memory').mkdir(parents=True)
    for args in (('status',), ('state', 'set', 'current_goal=x'), ('note', 'hi'), ('log',), ('doctor',)):
        assert 'SHA-256' in bad(*args, cwd=sha256_repo), args


def test_verify_in_a_sha256_repository_refuses_before_running(sha256_repo: Path) -> None:
    """verify cannot record in a SHA-256 repository: it says so before its
    command runs (it ran the whole command first, a test suite's minutes,
    then refused to record it)."""
    (sha256_repo / '.agent' / 'memory').mkdir(parents=True)
    ran = sha256_repo / 'ran'
    assert 'SHA-256' in bad('verify', '--', 'sh', '-c', f'touch {ran}', cwd=sha256_repo)
    assert not ran.exists(), 'the command ran though nothing could be recorded'


@pytest.mark.parametrize('spelled', [
    '[extensions] objectformat = sha256\n',  # the key on its section's line
    '[extensions]\n\tobjectFormat = sha\\\n256\n',  # a value continued on the next line
    '[extensions]\n\tobjectformat = "sha"256\n',  # a value quoted in part
])
def test_verify_refuses_before_running_however_the_config_spells_sha256(sha256_repo: Path, spelled: str) -> None:
    """The object format as git reads it from the repository's config,
    however it is written there: each of these ran the whole command
    (only `objectformat = sha256` on a line of its own was seen), then
    could not record it."""
    config = sha256_repo / '.git' / 'config'
    text = config.read_text()
    assert '\tobjectformat = sha256\n' in text
    config.write_text(text.replace('[extensions]\n\tobjectformat = sha256\n', '') + spelled)
    assert git('rev-parse', '--show-object-format', cwd=sha256_repo).strip() == 'sha256'
    (sha256_repo / '.agent' / 'memory').mkdir(parents=True)
    ran = sha256_repo / 'ran'
    assert 'SHA-256' in bad('verify', '--', 'sh', '-c', f'touch {ran}', cwd=sha256_repo)
    assert not ran.exists(), 'the command ran though nothing could be recorded'
