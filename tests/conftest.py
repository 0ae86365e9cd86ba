from __future__ import annotations

import compileall
import fcntl
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

# PYTHONDONTWRITEBYTECODE (set on this machine and in its CI) also kept
# pytest from saving the modules it rewrites for its assertions: every
# worker rewrote all the test modules at every run, 4-8 s of CPU each
# before the first test, and hypothesis's 120 (a pytest plugin's package
# is rewritten whole), 1-2 s more.  So before hypothesis is imported.
# pytest writes them atomically (__pycache__, beside each source).
sys.dont_write_bytecode = False

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


# time per test module at the end of every run (testing/timing.py)
pytest_plugins = ['testing.timing']


def _ram_root() -> str | None:
    """Linux's /dev/shm when it is a tmpfs this user can write with 8 GB
    free, else None.  The tests make some 100,000 files and fsync many
    (agitmem's writes are durable): on this machine's disk the kernel's
    share of that was a fifth of the fast tier's CPU (107-125 s of 324-360 s;
    81 of 290 in RAM) and 20 s of its 3 minutes.  What the tests check
    is agitmem's, not the disk's."""
    if not sys.platform.startswith('linux'):
        return None
    try:
        with open('/proc/self/mounts', encoding='utf-8', errors='replace') as f:
            tmpfs = any(line.split()[1:3] == ['/dev/shm', 'tmpfs'] for line in f)
        st = os.statvfs('/dev/shm')
    except (OSError, IndexError):
        return None
    free = st.f_bavail * st.f_frsize
    return '/dev/shm' if tmpfs and free >= 8 << 30 and os.access('/dev/shm', os.W_OK | os.X_OK) else None


# The tests' temporary directories (tmp_path, and testing's own through
# tempfile) go to RAM where there is room for them; pytest still keeps the
# last three runs', as on disk.  PYTEST_DEBUG_TEMPROOT (pytest's variable,
# read by the workers too) decides where it is set: `=/tmp` keeps them on
# the disk.
if 'PYTEST_DEBUG_TEMPROOT' not in os.environ and (_ram := _ram_root()) is not None:
    os.environ['PYTEST_DEBUG_TEMPROOT'] = _ram
if os.environ.get('PYTEST_DEBUG_TEMPROOT'):
    tempfile.tempdir = os.environ['PYTEST_DEBUG_TEMPROOT']


# optionalhook: the hook is xdist's; `-p no:xdist` runs without it
@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker more than the cores this process may use.
    A worker spends much of its time waiting (on the processes a test
    starts, on fsync), not computing: on two cores a third worker ran the
    fast tier in less time than two.  PYTEST_XDIST_AUTO_NUM_WORKERS still
    decides where it is set."""
    if os.environ.get('PYTEST_XDIST_AUTO_NUM_WORKERS'):
        return None
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, 'sched_getaffinity') else None


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile agitmem once, before any worker starts.  The tests
    start the CLI thousands of times; where PYTHONDONTWRITEBYTECODE is set
    (this machine and its CI set it) no run writes the .pyc it reads, and
    every one compiled the whole package again: 100-200 ms a process, a
    third of the suite.  A user's `pip install` compiles it once too."""
    if not hasattr(config, 'workerinput'):
        import agitmem
        compileall.compile_dir(Path(agitmem.__file__).parent, quiet=1)

from testing.util import git
from testing.util import ok

# Whole-system runs, in the full suite and out of the fast tier (`-m "not
# e2e and not slow and not system"`, README): each drives a workflow
# across real tools or plays a labelled set, minutes where a unit of
# agitmem takes seconds.  Paths under tests/.
SYSTEM = (
    'memory/episodes_test.py',  # nine labelled sets through the real hooks
    'porcelain/log_episodes_test.py',  # the real-session set through `recovery audit`
    'commands/doctor_labelled_test.py',  # doctor's labelled set
    'precommit_test.py',  # pre-commit's own environments, built per test
    'workflows_test.py',  # team workflows: forges, LFS, CI checkouts
    # memory across clones and every route git has to a branch, with the
    # git hooks firing (a cold agitmem each): a bare remote, a developer's
    # clone and a forge's (forge), rebase/cherry-pick/bisect/switch
    # (branches), deleted and recreated branches (lineage), the CI jobs
    # per merge method (land)
    'porcelain/forge_test.py',
    'porcelain/branches_test.py',
    'porcelain/lineage_test.py',
    'commands/land_test.py',
    'daily/',  # a day of git commands on every kind of clone
    'reliability/',  # SIGKILLs, races, busy and stalled remotes
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        rel = item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else ''
        if rel.startswith(SYSTEM):
            item.add_marker(pytest.mark.system)


@pytest.fixture(autouse=True)
def git_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pinned identity and a private HOME / global config for every test,
    so nothing depends on (or touches) the machine's own git setup."""
    home = _fresh_home(tmp_path_factory)
    gitconfig = home / '.gitconfig'
    gitconfig.write_text(
        f'[init]\n\tdefaultBranch = main\n\ttemplateDir = {_template(tmp_path_factory)}\n'
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
    _simulate(monkeypatch)
    _PRISTINE['test'] = _standard()


_HOMES = itertools.count()


def _fresh_home(factory: pytest.TempPathFactory) -> Path:
    """A new empty directory for this test's HOME.  (pytest's numbered
    `mktemp` lists the whole base directory for each name it makes: with a
    HOME and a tmp_path a test, thousands of entries a worker, the sum of
    those scans grows with their square: 10 s at 4,000.)"""
    homes = factory.getbasetemp() / 'homes'
    homes.mkdir(exist_ok=True)
    home = homes / str(next(_HOMES))
    home.mkdir()
    return home


_TEMPLATE: list[Path] = []


def _template(factory: pytest.TempPathFactory) -> Path:
    """`git init`'s template: what git's default gives (`hooks/`,
    `info/exclude`) without its thirteen sample hooks and `description`,
    which no test reads and every init and every copy of a repository
    paid for (half of `git init`'s time)."""
    if not _TEMPLATE:
        path = factory.mktemp('git-template')
        (path / 'hooks').mkdir()
        (path / 'info').mkdir()
        (path / 'info' / 'exclude').write_text(
            "# git ls-files --others --exclude-from=.git/info/exclude\n"
            "# Lines that start with '#' are comments.\n",
        )
        _TEMPLATE.append(path)
    return _TEMPLATE[0]


def _simulate(monkeypatch: pytest.MonkeyPatch) -> None:
    """AGITMEM_TEST_PLATFORM=windows|macos: every agitmem (and git hook)
    process a test starts runs as that platform would (docs/platforms.md),
    pytest itself as it is."""
    kind = os.environ.get('AGITMEM_TEST_PLATFORM', '')
    if kind not in ('windows', 'macos'):
        return
    sim = str(ROOT / 'testing' / 'platform_sim')
    path = os.environ.get('PYTHONPATH')
    monkeypatch.setenv('AGITMEM_SIMULATE', kind)
    monkeypatch.setenv('PYTHONPATH', sim if not path else f'{sim}{os.pathsep}{path}')


# -- repo and memrepo: built once per worker, copied per test ---------------------
#
# Building them is three git commands and an `agitmem init` (a Python process,
# measured by coverage) per test; copying a built one is a few file copies.
# A copy is only taken when the test's environment is the one git_env made
# (same variables, same HOME files): a test that changed it before asking
# for the fixture gets one built under its own environment, as before.

_TEMPLATES: dict[tuple[str, object], Path] = {}
_PRISTINE: dict[str, object] = {}


def _content(path: str) -> str | bytes:
    if os.path.islink(path):
        return os.readlink(path)
    if os.path.isfile(path):
        with open(path, 'rb') as f:
            return f.read()
    return ''


def _standard() -> object:
    """The environment (variables, HOME's files) with this test's HOME as a
    placeholder and the current test's name left out: the same for every
    test git_env made that changed nothing since."""
    home = os.environ['HOME']
    env = tuple(sorted(
        (k, v.replace(home, '~')) for k, v in os.environ.items()
        if k != 'PYTEST_CURRENT_TEST'
    ))
    files = tuple(sorted(
        (os.path.relpath(full, home), _content(full))
        for top, dirs, names in os.walk(home) for full in (os.path.join(top, n) for n in (*dirs, *names))
    ))
    return env, files


def _made(dest: Path, kind: str, build: Callable[[Path], None],
          factory: pytest.TempPathFactory) -> object:
    """Build a repository at dest, or copy the one built before under the
    same environment; that environment (`_standard`)."""
    key = _standard()
    if _PRISTINE.get('test') != key:
        build(dest)
        return key
    if (kind, key) not in _TEMPLATES:
        template = factory.mktemp(f'template-{kind}') / 'repo'
        template.mkdir()
        build(template)
        _TEMPLATES[kind, key] = template
    _copy(_TEMPLATES[kind, key], dest)
    # the copy's stat data are not the index's: refreshed, the index is as
    # git left it after the build (what a test comparing its bytes expects)
    git('update-index', '-q', '--refresh', cwd=dest)
    return key


def _copy(src: Path | str, dest: Path | str) -> None:
    """A built repository's copy into dest (which exists): each file's bytes
    and mode, links as links.  Half shutil.copytree's CPU, which also copies
    every file's and directory's times and extended attributes; the index
    refresh after a copy takes the new stat data as it took copytree's."""
    for entry in os.scandir(src):
        to = os.path.join(dest, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), to)
        elif entry.is_dir():
            os.mkdir(to, entry.stat().st_mode & 0o7777)
            _copy(entry.path, to)
        else:
            with open(entry.path, 'rb') as f:
                data = f.read()
            fd = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL, entry.stat().st_mode & 0o7777)
            with open(fd, 'wb') as f:
                f.write(data)


def _build_repo(path: Path) -> None:
    git('init', '-q', cwd=path)
    (path / 'src').mkdir()
    (path / 'src' / 'app.py').write_text('def main():\n    return 1\n')
    (path / 'README').write_text('hello\n')
    git('add', '.', cwd=path)
    git('commit', '-q', '-m', 'initial', cwd=path)


def _build_memrepo(path: Path) -> None:
    _build_repo(path)
    ok('init', cwd=path)


def _fingerprint(path: Path) -> object:
    """Every file under path with its size and mtime: whether anything
    changed the repository since.  (os.walk: pathlib's rglob took twice
    the CPU, twice per memrepo test.)"""
    seen = []
    for top, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            st = os.lstat(full := os.path.join(top, name))
            seen.append((full, st.st_size, st.st_mtime_ns))
    return sorted(seen)


_UNTOUCHED: dict[Path, tuple[object, object]] = {}  # memrepo's copy: (fingerprint, environment)


@pytest.fixture
def repo(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
         request: pytest.FixtureRequest) -> Path:
    """A git repository with one code commit on main."""
    path = tmp_path / 'repo'
    path.mkdir()
    # a test that asks for memrepo too gets the initialised copy here,
    # rather than a copy of repo that memrepo throws away
    kind = 'memrepo' if 'memrepo' in request.fixturenames else 'repo'
    key = _made(path, kind, _build_memrepo if kind == 'memrepo' else _build_repo, tmp_path_factory)
    _UNTOUCHED.clear()
    if kind == 'memrepo':
        # (a test that takes memrepo later, by getfixturevalue, finds no
        # record and has the repository initialised as it is)
        _UNTOUCHED[path] = (_fingerprint(path), key)
    return path


@pytest.fixture
def memrepo(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """repo after `agitmem init`."""
    made = _UNTOUCHED.get(repo)
    if made is None or made[0] != _fingerprint(repo):
        ok('init', cwd=repo)  # changed since it was made: initialised as it is
    elif made[1] != _standard():
        # made under another environment than this one: the copy of one
        # initialised under this one replaces it
        shutil.rmtree(repo)
        repo.mkdir()
        _made(repo, 'memrepo', _build_memrepo, tmp_path_factory)
    return repo


@pytest.fixture
def made(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, str, Callable[[Path], None]], None]:
    """made(dest, kind, build): a repository that `build` makes from a
    memrepo at dest, built once per worker and copied per test as repo
    and memrepo are (a module's fixture that runs several agitmem
    commands before each test).  `kind` names what build makes."""
    def make(dest: Path, kind: str, build: Callable[[Path], None]) -> None:
        def whole(path: Path) -> None:
            _build_memrepo(path)
            build(path)
        dest.mkdir(exist_ok=True)
        _made(dest, f'memrepo-{kind}', whole, tmp_path_factory)
    return make


# -- this checkout as a pre-commit hook repository (precommit_test, workflows_test)

def _shared(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A directory built once per run: under pytest-xdist the workers share
    it (the first builds it, under a lock, the others wait and take it)."""
    base = factory.getbasetemp()
    if os.environ.get('PYTEST_XDIST_WORKER'):
        base = base.parent  # the run's directory, above each worker's own
    path = base / name
    with open(base / f'{name}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / f'{name}.built').exists():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            build(path)
            (base / f'{name}.built').touch()
    return path


def _snapshot(dest: Path) -> None:
    proc = subprocess.run(
        ('git', 'ls-files', '-co', '--exclude-standard', '-z'),
        cwd=ROOT, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        return
    for name in filter(None, proc.stdout.split('\0')):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    ident = ('-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false')
    for args in (('init', '-q'), ('add', '-A'), (*ident, 'commit', '-q', '-m', 'snapshot')):
        subprocess.run(('git', *args), cwd=dest, check=True, capture_output=True)


@pytest.fixture(scope='session')
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout as it is on disk (uncommitted and untracked files
    included), committed in a scratch repository: what pre-commit clones
    and pip-installs, as it would from GitHub.  One for the run: with
    pre_commit_home shared too, pre-commit builds its environment once."""
    dest = _shared(tmp_path_factory, 'hook-repo', _snapshot)
    proc = subprocess.run(
        ('git', 'rev-parse', 'HEAD'), cwd=dest, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f'{ROOT} is not a git checkout')
    return dest, proc.stdout.strip()


@pytest.fixture(scope='session')
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the run, shared by the workers (pre-commit
    locks its own store): the hook environment is built (pip install of
    this checkout) once."""
    return _shared(tmp_path_factory, 'pre-commit-home', lambda path: None)


@pytest.fixture
def untraced() -> Iterator[None]:
    """The test runs without coverage's tracer: a test that times in-process
    work would time the tracer (five to ten times the work), and what it
    runs is measured by the suite's other tests."""
    try:
        import coverage
    except ImportError:  # pragma: no cover (the test extra installs it)
        yield
        return
    cov = coverage.Coverage.current()
    if cov is None:
        yield
        return
    cov.stop()
    try:
        yield
    finally:
        with warnings.catch_warnings():
            # a restart notes the modules imported while it was stopped
            warnings.simplefilter('ignore', coverage.exceptions.CoverageWarning)
            cov.start()
