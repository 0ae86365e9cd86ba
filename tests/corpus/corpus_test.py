"""The hostile-input corpus: every case in cases.yaml, run through the real
CLI on a fresh copy of a real repository.

Each case states its setup, the command, stdin/env and the expected outcome.
For every case the runner asserts: no traceback; the exit code; for an
error, exactly one line on stderr holding the expected message; and that
the memory (`.agent/memory/` and `.agent/config.yaml`, byte for byte), the
refs (`git for-each-ref`, the worktree's memory base) and what the user sees
of their repository (HEAD, index, status, code refs) are unchanged unless
the case says which of them may change.

A case with `xfail: <what is wrong>` documents a known bug: its expectation
is the right behaviour, and it fails strictly once the bug is fixed, so the
marker is removed then.  See cases.yaml for the format."""
from __future__ import annotations

import base64
import hashlib
import json
import marshal
import os
import re
import shutil
import stat
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import NamedTuple

import pytest
import yaml

from testing import crafted
from testing import util
from testing import zygote
from testing.util import git
from testing.util import ok
from testing.util import run

HERE = Path(__file__).resolve().parent


def _load_cases() -> list[dict[str, Any]]:
    """cases.yaml, parsed once per content: PyYAML's pure-Python loader
    takes a second and a half for it in every worker (libyaml's refuses the
    lone surrogates some cases hold); the result is kept beside the
    bytecode, keyed by the file's hash."""
    text = (HERE / 'cases.yaml').read_bytes()
    cache = HERE / '__pycache__' / f'cases-{hashlib.sha256(text).hexdigest()[:16]}.marshal'
    try:
        return marshal.loads(cache.read_bytes())  # type: ignore[no-any-return]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    cases: list[dict[str, Any]] = yaml.safe_load(text.decode())
    try:
        cache.parent.mkdir(exist_ok=True)
        tmp = cache.with_suffix(f'.{os.getpid()}')
        tmp.write_bytes(marshal.dumps(cases))
        os.replace(tmp, cache)
        for old in cache.parent.glob('cases-*.marshal'):
            if old != cache:
                old.unlink(missing_ok=True)  # an earlier cases.yaml's
    except (OSError, ValueError):
        pass  # a read-only checkout parses it every time
    return cases


CASES = _load_cases()
KEYS = {
    'id', 'about', 'scenario', 'setup', 'run', 'stdin', 'stdin_json', 'env',
    'cwd', 'expect', 'xfail',
}
EXPECT_KEYS = {
    'code', 'stderr', 'stderr_lines', 'stdout', 'stdout_exact', 'stdout_max', 'stdout_not',
    'changes', 'files', 'absent',
}
TIMEOUT = 120  # seconds: a command that blocks (a FIFO read) fails, not hangs
CHANGES = {'memory', 'refs', 'worktree'}
SCENARIOS = {
    'memrepo', 'no_init', 'not_a_repo', 'bare', 'merge_in_progress',
    'rebase_in_progress', 'shallow_clone', 'readonly_git', 'readonly_refs',
    'detached', 'half_init', 'odd_path', 'partial_clone',
}
# odd_path: a memrepo whose path holds what git's line-based output cannot
# show plainly: a newline, a tab, a quote, a backslash, non-ASCII
ODD_DIR = 'a\nb\tc"d\\e ü'

LONG = 'x' * 10_000  # {long}: an overlong value (a session id)

_bases: dict[str, Path] = {}


# -- the repositories cases start from ----------------------------------------

def _code_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git('init', '-q', '-b', 'main', cwd=path)
    (path / 'src').mkdir()
    (path / 'src' / 'app.py').write_text('def main():\n    return 1\n')
    (path / 'README').write_text('hello\n')
    git('add', '.', cwd=path)
    git('commit', '-q', '-m', 'initial', cwd=path)
    (path / 'README').write_text('hello\nagain\n')
    git('commit', '-q', '-am', 'second', cwd=path)
    return path


def _base(kind: str, factory: pytest.TempPathFactory) -> Path:
    """Built once per session, copied for each case."""
    if kind not in _bases:
        root = factory.mktemp(f'corpus-base-{kind}') / 'repo'
        _code_repo(root)
        if kind == 'memrepo':
            ok('init', cwd=root)
            ok('note', 'first note', cwd=root)
            ok('state', 'set', 'current_goal=ship the loader', 'next_intent=write tests', cwd=root)
            ok('archive', cwd=root)
            ok('note', 'second note', cwd=root)
            ok('state', 'set', 'current_goal=port the config', cwd=root)
        # one pack for thirty loose objects: each case copies the base
        git('repack', '-adq', cwd=root)
        _bases[kind] = root
    return _bases[kind]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _conflict(root: Path) -> None:
    git('checkout', '-q', '-b', 'other', cwd=root)
    (root / 'README').write_text('theirs\n')
    git('commit', '-q', '-am', 'theirs', cwd=root)
    git('checkout', '-q', 'main', cwd=root)
    (root / 'README').write_text('ours\n')
    git('commit', '-q', '-am', 'ours', cwd=root)


def _chattr(path: Path, flag: str) -> bool:
    return run('chattr', '-R', flag, str(path), cwd=path.parent).returncode == 0


@pytest.fixture
def case_repo(request: pytest.FixtureRequest, tmp_path: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the repository, a directory outside it) for the case's scenario."""
    case: dict[str, Any] = request.param
    scenario = case.get('scenario', 'memrepo')
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'secret.txt').write_text('outside the repository\n')
    root = tmp_path / ODD_DIR / 'repo' if scenario == 'odd_path' else tmp_path / 'repo'
    root.parent.mkdir(exist_ok=True)
    frozen: list[Path] = []
    if scenario in ('memrepo', 'odd_path', 'merge_in_progress', 'rebase_in_progress',
                    'readonly_git', 'readonly_refs', 'detached', 'half_init'):
        _copy(_base('memrepo', tmp_path_factory), root)
    elif scenario == 'no_init':
        _copy(_base('code', tmp_path_factory), root)
    elif scenario == 'not_a_repo':
        root.mkdir()
    elif scenario == 'bare':
        git('init', '-q', '--bare', str(root), cwd=tmp_path)
    elif scenario == 'shallow_clone':
        src = _base('code', tmp_path_factory)
        git('clone', '-q', '--depth', '1', f'file://{src}', str(root), cwd=tmp_path)
        ok('init', cwd=root)
    elif scenario == 'partial_clone':
        # the memrepo's code and memory on a remote that serves filters
        bare = tmp_path / 'origin.git'
        git('clone', '-q', '--mirror', str(_base('memrepo', tmp_path_factory)), str(bare), cwd=tmp_path)
        git('config', 'uploadpack.allowFilter', 'true', cwd=bare)
        git('clone', '-q', '--filter=blob:none', f'file://{bare}', str(root), cwd=tmp_path)
        ok('init', cwd=root)
    if scenario == 'merge_in_progress':
        _conflict(root)
        assert run('git', 'merge', 'other', cwd=root).returncode != 0
        assert (root / '.git' / 'MERGE_HEAD').exists()
    elif scenario == 'rebase_in_progress':
        _conflict(root)
        assert run('git', 'rebase', 'other', cwd=root).returncode != 0
        assert (root / '.git' / 'rebase-merge').is_dir()
    elif scenario == 'detached':
        git('checkout', '-q', '--detach', cwd=root)
    elif scenario == 'half_init':
        shutil.rmtree(root / '.agent' / 'memory')
    _setup(case, root, outside)
    if scenario in ('readonly_git', 'readonly_refs'):
        targets = [root / '.git' / 'refs']
        if scenario == 'readonly_git':
            targets.insert(0, root / '.git' / 'objects')
        if os.geteuid() != 0:
            for t in targets:
                for p in [t, *t.rglob('*')]:
                    if p.is_dir():
                        p.chmod(p.stat().st_mode & ~0o222)
        elif shutil.which('chattr') is None:
            pytest.skip('running as root (chmod does not stop root) and no chattr here')
        else:
            for t in targets:
                if not _chattr(t, '+i'):
                    pytest.skip(f'chattr +i failed on {t} (filesystem without attributes)')
                frozen.append(t)
            # root with the immutable flag really cannot write
            probe = targets[0] / 'probe'
            try:
                probe.write_text('x')
            except OSError:
                pass
            else:
                pytest.skip(f'chattr +i did not make {targets[0]} read-only')
    try:
        yield root, outside
    finally:
        for t in frozen:
            _chattr(t, '-i')
        if scenario in ('readonly_git', 'readonly_refs') and os.geteuid() != 0:
            for p in [root / '.git', *(root / '.git').rglob('*')]:
                if p.is_dir():
                    p.chmod(p.stat().st_mode | 0o200)


# -- setup steps ---------------------------------------------------------------

_REV = re.compile(r'\{rev:([^{}]+)\}')


def _fmt(value: str, root: Path, outside: Path) -> str:
    # {rev:REF}: the commit REF points at (a crafted memory commit's id)
    value = _REV.sub(lambda m: git('rev-parse', m[1], cwd=root).strip(), value)
    if '{code_head}' in value:
        value = value.replace('{code_head}', git('rev-parse', 'HEAD', cwd=root).strip())
    return (
        value.replace('{root}', str(root)).replace('{outside}', str(outside))
        .replace('{agitmem_home}', os.environ['AGITMEM_HOME']).replace('{long}', LONG)
    )


def _content(spec: dict[str, Any]) -> bytes:
    """text (UTF-8), latin1 (each char one raw byte), b64, or parts of
    those; `repeat: N` repeats it."""
    if 'parts' in spec:
        data = b''.join(_content(p) for p in spec['parts'])
    elif 'text' in spec:
        data = str(spec['text']).encode('utf-8')
    elif 'latin1' in spec:
        data = str(spec['latin1']).encode('latin-1')
    elif 'b64' in spec:
        data = base64.b64decode(spec['b64'])
    else:
        raise AssertionError(f'no content in {spec}')
    return data * int(spec.get('repeat', 1))


def _path(p: str, root: Path, outside: Path) -> Path:
    path = Path(_fmt(p, root, outside))
    return path if path.is_absolute() else root / path


def _setup(case: dict[str, Any], root: Path, outside: Path) -> None:
    for step in case.get('setup', []):
        (kind, arg), = step.items()
        if kind in ('write', 'append'):
            path = _path(arg['path'], root, outside)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = _content(arg)
            if 'text' in arg and '{' in arg['text']:
                data = _fmt(arg['text'], root, outside).encode() * int(arg.get('repeat', 1))
            with open(path, 'ab' if kind == 'append' else 'wb') as f:
                f.write(data)
        elif kind == 'symlink':
            path = _path(arg['path'], root, outside)
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(_fmt(arg['to'], root, outside))
        elif kind == 'hardlink':
            path = _path(arg['path'], root, outside)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.link(_fmt(arg['to'], root, outside), path)
        elif kind == 'mkdir':
            _path(arg, root, outside).mkdir(parents=True, exist_ok=True)
        elif kind == 'remove':
            path = _path(arg, root, outside)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        elif kind == 'fifo':
            os.mkfifo(_path(arg, root, outside))
        elif kind == 'executable':
            path = _path(arg, root, outside)
            path.chmod(path.stat().st_mode | 0o755)
        elif kind == 'git':
            git(*[_fmt(a, root, outside) for a in arg], cwd=root)
        elif kind == 'crafted':
            # a hostile memory commit (testing/crafted.py's variant) on top
            # of `from` (default main's memory), put on `ref`
            under, entries, _ = crafted.variants(outside)[arg['variant']]
            start = arg.get('from', 'refs/agitmem/heads/main')
            git('update-ref', arg['ref'], start, cwd=root)
            crafted.hostile_commit(root, arg['ref'], entries, under=under)
        elif kind == 'shaped':
            # a memory commit whose tree is too large to list (s6-red):
            # testing/crafted.py's shaped_commit, on top of `from`
            git('update-ref', arg['ref'], arg.get('from', 'refs/agitmem/heads/main'), cwd=root)
            crafted.shaped_commit(
                root, arg['ref'], arg['shape'], size_mb=int(arg.get('size_mb', 40)),
                subject=_fmt(arg.get('subject', 'save: notes.md'), root, outside),
            )
        elif kind == 'commit':
            # a memory commit as a remote could send it: any subject, any
            # file content (text, latin1 or b64), on top of `ref`'s tip
            ref = arg.get('ref', 'refs/agitmem/heads/main')
            known = subprocess.run(
                ('git', 'rev-parse', '-q', '--verify', ref), cwd=root, check=False, capture_output=True,
            )
            if known.returncode:
                git('update-ref', ref, 'refs/agitmem/heads/main', cwd=root)
            files: crafted.Entries = {}
            for name, spec in arg['files'].items():
                # a/b: b in a subtree a (which replaces the tip's a)
                *dirs, leaf = name.encode().split(b'/')
                at = files
                for d in dirs:
                    sub = at.setdefault(d, ('40000', {}))[1]
                    assert isinstance(sub, dict)
                    at = sub
                at[leaf] = ('100644', _content(spec))
            crafted.hostile_commit(root, ref, files, subject=arg.get('subject', 'save: notes.md'))
        elif kind == 'agitmem':
            ok(*[_fmt(a, root, outside) for a in arg], cwd=root)
        elif kind == 'hook':
            # an agent hook with its payload (the events before the one a
            # case runs): it must answer, as hooks always do
            stdin = _fmt(json.dumps(arg['stdin_json']), root, outside).encode()
            proc = _invoke(['hook', *arg['run']], root, stdin, {})
            assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
        else:
            raise AssertionError(f'unknown setup step {kind}')


# -- what must not change ------------------------------------------------------

def _memory(root: Path) -> dict[str, object]:
    """.agent/memory/ and .agent/config.yaml: bytes, links, kinds."""
    ret: dict[str, object] = {}
    agent = root / '.agent'
    if agent.is_symlink():
        return {'.agent': ('link', os.readlink(agent))}
    for top in (agent / 'memory', agent / 'config.yaml'):
        if top.is_symlink():
            ret[str(top.relative_to(root))] = ('link', os.readlink(top))
            continue
        if not top.exists():
            continue
        paths = [top] if top.is_file() else sorted(top.rglob('*'))
        for p in paths:
            rel = str(p.relative_to(root))
            mode = p.lstat().st_mode
            if stat.S_ISLNK(mode):
                ret[rel] = ('link', os.readlink(p))
            elif stat.S_ISREG(mode):
                ret[rel] = ('file', p.read_bytes())
            else:
                ret[rel] = ('dir' if stat.S_ISDIR(mode) else 'other', None)
    return ret


def _git_dir(root: Path) -> Path | None:
    proc = run('git', 'rev-parse', '--absolute-git-dir', cwd=root)
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


class _Repo(NamedTuple):
    """What a case may change of a repository, in three git calls: every
    ref (refs/worktree/ included: the detached memory), the worktree's
    memory base, and what the user sees (status, index, HEAD)."""
    refs: str
    base: str
    status: str
    index_file: bytes
    head: str

    def user(self) -> tuple[str, bytes, str, list[str]]:
        """What the user sees of their repository: status, index, HEAD
        and their own refs (branches and tags)."""
        mine = [
            line for line in self.refs.splitlines()
            if line.startswith(('refs/heads/', 'refs/tags/'))
        ]
        return self.status, self.index_file, self.head, mine

    def memory_refs(self) -> tuple[str, str]:
        return self.refs, self.base


def _repo_state(root: Path) -> _Repo:
    gd = _git_dir(root)
    if gd is None:
        return _Repo('', '', '', b'', '')
    refs = run('git', 'for-each-ref', '--format=%(refname) %(objectname)', cwd=root).stdout
    base = gd / 'agitmem' / 'base'
    status = run(
        'git', '--no-optional-locks', 'status', '--porcelain=v2', '--branch',
        '--untracked-files=all', cwd=root,
    ).stdout
    index = gd / 'index'
    return _Repo(
        refs,
        # (a case may have made it a directory)
        base.read_text(errors='surrogateescape') if base.is_file() else '',
        status,
        index.read_bytes() if index.exists() else b'',
        (gd / 'HEAD').read_text(errors='surrogateescape') if (gd / 'HEAD').exists() else '',
    )


def _invoke(args: list[str], cwd: Path, stdin: bytes,
            env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The installed CLI, as a user runs it (through the warm agitmem where
    it would start alike: testing/zygote.py); stdin as raw bytes."""
    exe = [util._AGITMEM] if util._AGITMEM else [sys.executable, '-m', 'agitmem']
    z = zygote.warm(util._AGITMEM, mcp=args[:1] == ['mcp']) if util._AGITMEM else None
    try:
        proc = z.try_run_bytes(args, cwd=cwd, stdin=stdin, env=env, timeout=TIMEOUT) if z else None
        proc = proc or subprocess.run(
            [*exe, *args], cwd=cwd, input=stdin, capture_output=True,
            env={**os.environ, **env}, timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f'agitmem {" ".join(args)[:200]} hung for {TIMEOUT}s')
    return subprocess.CompletedProcess(
        proc.args, proc.returncode,
        proc.stdout.decode('utf-8', 'replace'),
        proc.stderr.decode('utf-8', 'replace'),
    )


def _raw_controls(text: str) -> list[str]:
    """Characters shown raw that should have been escaped: controls but tab
    and newline, bidi and zero-width (format) characters, line separators."""
    return [
        c for c in text
        if c not in '\t\n' and unicodedata.category(c) in ('Cc', 'Cf', 'Cs', 'Zl', 'Zp')
    ]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# -- the cases ----------------------------------------------------------------

def _check_format(case: dict[str, Any]) -> None:
    assert set(case) <= KEYS, (case['id'], set(case) - KEYS)
    assert case.get('scenario', 'memrepo') in SCENARIOS, case['id']
    expect = case['expect']
    assert set(expect) <= EXPECT_KEYS, (case['id'], set(expect) - EXPECT_KEYS)
    assert set(expect.get('changes', [])) <= CHANGES, case['id']
    assert case.get('about'), f'{case["id"]}: say what is hostile about it'
    if expect['code'] == 2:
        assert expect.get('stderr'), f'{case["id"]}: an error names its message'


def _params() -> list[Any]:
    ids = [c['id'] for c in CASES]
    assert len(ids) == len(set(ids)), 'duplicate case ids'
    ret = []
    for case in CASES:
        marks = []
        if case.get('xfail'):
            marks.append(pytest.mark.xfail(reason=case['xfail'], strict=True))
        ret.append(pytest.param(case, id=case['id'], marks=marks))
    return ret


def test_corpus_is_big_and_broad() -> None:
    assert len(CASES) >= 40
    for case in CASES:
        _check_format(case)
    commands = {c['run'][0] for c in CASES if c['run']}
    for command in (
        'init', 'save', 'status', 'log', 'show', 'diff', 'rollback', 'archive',
        'state', 'verify', 'note', 'fragment', 'load', 'check', 'hook',
        'install', 'uninstall', 'push', 'fetch', 'pull', 'merge', 'review',
        'demo', 'recovery',
    ):
        assert command in commands, f'no case runs `agitmem {command}`'
    events = {c['run'][1] for c in CASES if c['run'][:1] == ['hook']}
    for event in (
        'session-start', 'pre-compact', 'post-edit', 'prompt', 'stop',
        'pre-commit', 'commit-msg', 'post-commit', 'pre-push',
        'post-checkout', 'post-merge', 'post-rewrite',
    ):
        assert event in events, f'no case runs `agitmem hook {event}`'


@pytest.mark.parametrize('case_repo', _params(), indirect=True)
def test_case(case_repo: tuple[Path, Path], request: pytest.FixtureRequest) -> None:
    case: dict[str, Any] = request.node.callspec.params['case_repo']
    _check_format(case)
    root, outside = case_repo
    expect = case['expect']
    changes = set(expect.get('changes', []))
    cwd = {'root': root, 'outside': outside}.get(case.get('cwd', 'root'))
    if cwd is None:
        cwd = root / case['cwd']

    stdin = b''
    if 'stdin_json' in case:
        stdin = _fmt(json.dumps(case['stdin_json']), root, outside).encode()
    elif isinstance(case.get('stdin'), dict):
        stdin = _content(case['stdin'])
    elif case.get('stdin') is not None:
        stdin = _fmt(case['stdin'], root, outside).encode()
    env = {k: _fmt(str(v), root, outside) for k, v in case.get('env', {}).items()}
    args = [
        _content(a).decode() if isinstance(a, dict) else _fmt(a, root, outside)
        for a in case['run']
    ]

    memory_before = _memory(root)
    repo_before = _repo_state(root)
    proc = _invoke(args, cwd, stdin, env)
    where = f'{case["id"]}: agitmem {" ".join(args)[:300]}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}'

    if os.environ.get('AGITMEM_CORPUS_SHOW'):  # pytest -s: what each case answered
        first = (proc.stdout.strip().splitlines() or [''])[0][:100]
        print(f'\n[{case["id"]}] exit {proc.returncode} | {proc.stderr.strip()[:160]!r} | {first!r}')
    assert 'Traceback' not in proc.stderr and 'Traceback' not in proc.stdout, where
    # whatever the input, nothing a terminal or the agent would act on
    # rather than show reaches them raw (DESIGN.md section 12)
    injected = root / '.agent' / 'injected_context.txt'
    shown = {'stdout': proc.stdout, 'stderr': proc.stderr}
    if injected.is_file() and not injected.is_symlink():
        shown['injected_context.txt'] = injected.read_text(errors='replace')
    if args[:1] == ['hook']:  # the envelope: what the agent decodes from it
        # (--json output keeps the data as it is: JSON escapes are its own)
        try:
            shown['stdout (decoded)'] = '\n'.join(_strings(json.loads(proc.stdout)))
        except (ValueError, RecursionError):
            pass
    for name, text in shown.items():
        assert _raw_controls(text) == [], f'{where}\nraw in {name}'
    assert proc.returncode == expect['code'], where
    err_lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    if expect.get('stderr'):
        assert len(err_lines) == 1, where
        assert expect['stderr'] in err_lines[0], where
        assert err_lines[0].startswith('agitmem'), where
    if 'stderr_lines' in expect:
        assert len(err_lines) == expect['stderr_lines'], where
    if 'stdout' in expect:
        assert expect['stdout'] in proc.stdout, where
    if 'stdout_not' in expect:
        assert expect['stdout_not'] not in proc.stdout, where
    if 'stdout_max' in expect:
        assert len(proc.stdout) <= expect['stdout_max'], where
    if 'stdout_exact' in expect:
        assert proc.stdout == expect['stdout_exact'], where
    for name, text in expect.get('files', {}).items():
        path = _path(name, root, outside)
        assert path.read_text() == text, (where, name)
    for name in expect.get('absent', []):
        assert not os.path.lexists(_path(name, root, outside)), (where, name)

    if 'memory' not in changes:
        assert _memory(root) == memory_before, f'{where}\nmemory changed'
    repo_after = _repo_state(root)
    if 'refs' not in changes:
        assert repo_after.memory_refs() == repo_before.memory_refs(), f'{where}\nrefs changed'
    if 'worktree' not in changes:
        assert repo_after.user() == repo_before.user(), f'{where}\nthe user\'s repository changed'
