from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings

# The machine is shared and noisy: how long one example takes to draw or
# run says nothing about the code under test (speed is measured in bench/).
settings.register_profile(
    'agitmem', deadline=None, suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile('agitmem')

ROOT = Path(__file__).resolve().parents[1]

from testing.util import git
from testing.util import ok


@pytest.fixture(autouse=True)
def git_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pinned identity and a private HOME / global config for every test,
    so nothing depends on (or touches) the machine's own git setup."""
    home = tmp_path_factory.mktemp('home')
    gitconfig = home / '.gitconfig'
    gitconfig.write_text(
        '[init]\n\tdefaultBranch = main\n'
        '[user]\n\tname = Test User\n\temail = test@example.com\n'
        '[protocol "file"]\n\tallow = always\n',
    )
    monkeypatch.setenv('HOME', str(home))
    monkeypatch.setenv('GIT_CONFIG_GLOBAL', str(gitconfig))
    monkeypatch.setenv('GIT_CONFIG_NOSYSTEM', '1')
    monkeypatch.setenv('AGITMEM_HOME', str(home / '.agent'))
    for var in ('AUTHOR', 'COMMITTER'):
        monkeypatch.setenv(f'GIT_{var}_NAME', 'Test User')
        monkeypatch.setenv(f'GIT_{var}_EMAIL', 'test@example.com')
    for var in ('AGITMEM_REF', 'AGITMEM_AGENT', 'AGITMEM_SKIP', 'GIT_DIR',
                'GIT_INDEX_FILE', 'GIT_WORK_TREE', 'AGENT_CONTEXT_LEN'):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one code commit on main."""
    path = tmp_path / 'repo'
    path.mkdir()
    git('init', '-q', cwd=path)
    (path / 'src').mkdir()
    (path / 'src' / 'app.py').write_text('def main():\n    return 1\n')
    (path / 'README').write_text('hello\n')
    git('add', '.', cwd=path)
    git('commit', '-q', '-m', 'initial', cwd=path)
    return path


@pytest.fixture
def memrepo(repo: Path) -> Path:
    """repo after `agitmem init`."""
    ok('init', cwd=repo)
    return repo


# -- this checkout as a pre-commit hook repository (precommit_test, workflows_test)

@pytest.fixture(scope='session')
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout as it is on disk (uncommitted and untracked files
    included), committed in a scratch repository: what pre-commit clones
    and pip-installs, as it would from GitHub."""
    proc = subprocess.run(
        ('git', 'ls-files', '-co', '--exclude-standard', '-z'),
        cwd=ROOT, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f'{ROOT} is not a git checkout')
    dest = tmp_path_factory.mktemp('hook-repo')
    for name in filter(None, proc.stdout.split('\0')):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    ident = ('-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false')
    for args in (('init', '-q'), ('add', '-A'), (*ident, 'commit', '-q', '-m', 'snapshot')):
        subprocess.run(('git', *args), cwd=dest, check=True, capture_output=True)
    sha = subprocess.run(
        ('git', 'rev-parse', 'HEAD'), cwd=dest, check=True, capture_output=True, text=True,
    ).stdout.strip()
    return dest, sha


@pytest.fixture(scope='session')
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the session: the hook environment is built
    (pip install of this checkout) once."""
    return tmp_path_factory.mktemp('pre-commit-home')
