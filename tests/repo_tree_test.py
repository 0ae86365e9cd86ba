"""repo.worktree_tree from `git status` (fast_tree) against the index-copy
chain (chain_tree) on real repositories: the same tree id in every working
tree, or no answer (the chain's is used then)."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agitmem import repo as repo_mod
from agitmem import trees
from testing.util import git
from testing.util import run

FILES = ('a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'run.sh', 'crlf.txt', 'deep/x/y/z.txt')
NEW = ('new.txt', 'n1/n2/n3.txt', 'n1/n2/x.log', 'dir/sub/new.txt', 'dir/new dir/ü.txt', 'deep/x/w.txt')
PATHS = FILES + NEW + (
    '.agent/memory/m.md', '.agent/new.md', '.claude/settings.json', '.codex/hooks.json', 'x.log',
    'odd\nname.txt', 'dir/sub/tab\tq"uote.txt',
)


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.write_bytes(data)


def _base(root: Path, config: tuple[str, ...], *, commit: bool) -> None:
    git('init', '-q', str(root), cwd=root.parent)
    for item in config:
        key, _, value = item.partition('=')
        git('config', key, value, cwd=root)
    for rel in FILES:
        _write(root, rel, f'{rel}\nline two\n'.encode())
    _write(root, 'crlf.txt', b'one\r\ntwo\r\n')
    os.chmod(root / 'run.sh', 0o755)
    os.symlink('a.txt', root / 'link')
    _write(root, '.gitignore', b'*.log\n')
    _write(root, '.agent/memory/m.md', b'memory\n')
    _write(root, '.claude/settings.json', b'{}\n')
    git('add', '-A', cwd=root)
    if commit:
        git('commit', '-q', '-m', 'base', cwd=root)


def _modify(root: Path, rel: str) -> None:
    _write(root, rel, f'changed {rel}\n'.encode())


def _crlf(root: Path, rel: str) -> None:
    _write(root, rel, b'a\r\nb\r\n')


def _stage(root: Path, rel: str) -> None:
    run('git', 'add', '-A', '--', rel, cwd=root)  # a path not there, or ignored: refused


def _unstage(root: Path, rel: str) -> None:
    # -f: an entry staged unlike both HEAD and the file (a chmod on an
    # unborn HEAD) is refused without it
    git('rm', '-q', '-r', '-f', '--cached', '--ignore-unmatch', '--', rel, cwd=root)


def _delete(root: Path, rel: str) -> None:
    path = root / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _chmod(root: Path, rel: str) -> None:
    path = root / rel
    if path.is_file() and not path.is_symlink():
        os.chmod(path, path.stat().st_mode ^ 0o111)


def _link(root: Path, rel: str) -> None:
    _delete(root, rel)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    os.symlink('../a.txt', root / rel)


def _skip(root: Path, rel: str) -> None:
    run('git', 'update-index', '--skip-worktree', '--', rel, cwd=root)  # refused when not in the index


def _assume(root: Path, rel: str) -> None:
    run('git', 'update-index', '--assume-unchanged', '--', rel, cwd=root)


def _intent(root: Path, rel: str) -> None:
    run('git', 'add', '-N', '--', rel, cwd=root)


def _into_dir(root: Path, rel: str) -> None:
    # a file becomes a directory (or a directory's file a file of its own)
    _delete(root, rel)
    _write(root, f'{rel}/inner.txt', b'inner\n')


ACTIONS: dict[str, Callable[[Path, str], None]] = {
    'modify': _modify, 'crlf': _crlf, 'stage': _stage, 'unstage': _unstage,
    'delete': _delete, 'chmod': _chmod, 'link': _link, 'into_dir': _into_dir,
    'skip': _skip, 'assume': _assume, 'intent': _intent,
}
CONFIGS = (
    (),
    ('core.untrackedCache=true',),
    ('core.autocrlf=true',),
    ('core.autocrlf=input',),
    ('core.fileMode=false',),
    ('filter.up.clean=tr a-z A-Z',),
)


@pytest.fixture
def tmp() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix='agitmem-tree-'))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _both(root: Path) -> tuple[str | None, str]:
    repo = repo_mod.find(root)
    return trees.fast_tree(repo), trees.chain_tree(repo)


def _undefined(ops: list[tuple[str, str]]) -> bool:
    """A path marked assume-unchanged whose file is gone at the end, or
    one marked skip-worktree that is a directory at the end: git answers
    both ways (`git status` trusts the mark and names neither the path
    nor the directory's files, `git add -A` puts the directory's files in
    the path's place), so neither tree is wrong."""
    assumed: set[str] = set()
    skipped: set[str] = set()
    gone: set[str] = set()
    dirs: set[str] = set()
    for action, rel in ops:
        if action == 'assume':
            assumed.add(rel)
        elif action == 'skip':
            skipped.add(rel)
        elif action in ('delete', 'into_dir'):
            gone.add(rel)
            if action == 'into_dir':
                dirs.add(rel)
            else:
                dirs.discard(rel)
        elif action in ('modify', 'crlf', 'link'):
            gone.discard(rel)
            dirs.discard(rel)
        elif action == 'unstage' or action == 'stage' and rel in gone:
            # the index entry, and its mark, gone (`git rm --cached` and
            # `git add` pass over a skip-worktree entry: it stays)
            assumed.discard(rel)
    return bool(assumed & gone or skipped & dirs)


def _check(root: Path, ops: list[tuple[str, str]], config: tuple[str, ...], attrs: bytes, *,
           commit: bool = True) -> None:
    _base(root, config, commit=commit)
    if attrs:
        _write(root, '.gitattributes', attrs)
    for action, rel in ops:
        ACTIONS[action](root, rel)
    fast, chain = _both(root)
    # None: what it cannot do exactly (a path with a newline, an
    # intent-to-add entry...) is left to the chain, never guessed
    assert fast in (None, chain), (ops, config, attrs, git('status', '--porcelain=v2', cwd=root))
    assert repo_mod.worktree_tree(repo_mod.find(root)) == chain


# git keeps a file's CRLFs under text=auto when its index blob has a CR
# (found by the test below in CI: a file only chmod-ed, no commit yet)
@pytest.mark.parametrize(('ops', 'config', 'attrs', 'commit'), (
    ([('chmod', 'crlf.txt')], (), b'* text=auto\n', False),
    ([('chmod', 'crlf.txt')], (), b'* text=auto\n', True),
    ([('crlf', 'crlf.txt')], (), b'* text=auto\n', True),
    ([('crlf', 'a.txt')], (), b'* text=auto\n', True),
    ([('crlf', 'crlf.txt'), ('crlf', 'a.txt')], ('core.autocrlf=true',), b'', True),
    ([('crlf', 'crlf.txt')], ('core.autocrlf=input',), b'*.txt text\n', True),
    ([('crlf', 'crlf.txt')], (), b'*.txt crlf=auto\n', True),  # the old attribute's name for it
    ([('chmod', 'crlf.txt')], (), b'*.txt text=auto eol=lf\n', True),
))
def test_crlf_kept_by_the_index(
        tmp: Path, ops: list[tuple[str, str]], config: tuple[str, ...], attrs: bytes, commit: bool,
) -> None:
    _check(Path(tempfile.mkdtemp(dir=tmp)), ops, config, attrs, commit=commit)


def test_crlf_kept_by_the_index_core_autocrlf_with_no_value(tmp: Path) -> None:
    root = tmp / 'r'
    _base(root, (), commit=True)
    with open(root / '.git' / 'config', 'a') as f:
        f.write('[core]\n\tautocrlf\n')  # a key with no `=`: true
    os.chmod(root / 'crlf.txt', 0o755)
    fast, chain = _both(root)
    assert fast in (None, chain)


_OPS = st.lists(st.tuples(st.sampled_from(sorted(ACTIONS)), st.sampled_from(PATHS)), max_size=6)
_ATTRS = st.sampled_from((b'', b'*.txt text eol=crlf\n', b'* text=auto\n', b'*.txt filter=up\n'))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS, config=st.sampled_from(CONFIGS), attrs=_ATTRS, commit=st.booleans())
def test_the_tree_from_status_is_the_chains(
        tmp: Path, ops: list[tuple[str, str]], config: tuple[str, ...], attrs: bytes, commit: bool,
) -> None:
    hypothesis.assume(not _undefined(ops))
    root = Path(tempfile.mkdtemp(dir=tmp))
    _check(root, ops, config, attrs, commit=commit)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get('AGITMEM_FULL') != '1', reason='long variant: run with AGITMEM_FULL=1')
@settings(max_examples=600, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(sorted(ACTIONS)), st.sampled_from(PATHS)), max_size=12),
       config=st.sampled_from(CONFIGS), attrs=_ATTRS, commit=st.booleans())
def test_the_tree_from_status_is_the_chains_long(
        tmp: Path, ops: list[tuple[str, str]], config: tuple[str, ...], attrs: bytes, commit: bool,
) -> None:
    hypothesis.assume(not _undefined(ops))
    root = Path(tempfile.mkdtemp(dir=tmp))
    _check(root, ops, config, attrs, commit=commit)


@pytest.mark.parametrize(('ops', 'config', 'attrs'), [
    ([], (), b''),
    ([('modify', 'a.txt')], (), b''),
    ([('modify', 'a.txt'), ('stage', 'a.txt'), ('modify', 'a.txt')], (), b''),
    ([('modify', 'dir/sub/c.txt'), ('stage', 'dir/sub/c.txt')], (), b''),
    ([('delete', 'dir/sub/c.txt'), ('delete', 'deep/x/y/z.txt')], (), b''),
    ([('modify', 'n1/n2/n3.txt'), ('modify', 'dir/new dir/ü.txt')], ('core.untrackedCache=true',), b''),
    ([('chmod', 'run.sh'), ('chmod', 'a.txt')], (), b''),
    ([('chmod', 'run.sh')], ('core.fileMode=false',), b''),
    ([('link', 'a.txt'), ('link', 'new.txt')], (), b''),
    ([('crlf', 'a.txt'), ('crlf', 'new.txt'), ('crlf', 'crlf.txt')], ('core.autocrlf=true',), b''),
    ([('crlf', 'a.txt'), ('modify', 'crlf.txt')], (), b'*.txt text eol=crlf\n'),
    ([('modify', 'a.txt'), ('modify', 'new.txt')], ('filter.up.clean=tr a-z A-Z',), b'*.txt filter=up\n'),
    ([('modify', 'x.log')], (), b''),
    ([('modify', '.agent/memory/m.md'), ('modify', '.agent/new.md'), ('stage', '.agent/memory/m.md')], (), b''),
    ([('modify', '.claude/settings.json'), ('delete', 'a.txt')], (), b''),
    ([('into_dir', 'a.txt'), ('into_dir', 'dir/sub'), ('unstage', 'run.sh')], (), b''),
    # an install file staged, then edited: the chain's `git rm --cached`
    # refused it (and took none out) until it was given -f
    ([('modify', '.claude/settings.json'), ('stage', '.claude/settings.json'),
      ('modify', '.claude/settings.json')], (), b''),
    # new directories, whole (`? n1/`), ignored files in them left out
    ([('modify', 'n1/n2/n3.txt'), ('modify', 'n1/n2/x.log'), ('link', 'n1/l')], ('core.untrackedCache=true',), b''),
    # skip-worktree: `git rm` refused it without --sparse (see _TREE_SH)
    ([('skip', '.claude/settings.json'), ('skip', 'a.txt'), ('modify', 'a.txt')], (), b''),
    ([('assume', 'a.txt'), ('modify', 'a.txt'), ('modify', 'dir/b.txt')], (), b''),
    ([('modify', 'dir/sub/tab\tq"uote.txt'), ('modify', '.codex/hooks.json')], (), b''),
    # CRLFs git converts whatever the index holds (eol set, not "auto"), or never
    ([('crlf', 'crlf.txt'), ('chmod', 'a.txt')], (), b'*.txt eol=crlf\n'),
    ([('crlf', 'crlf.txt'), ('crlf', 'a.txt')], (), b'*.txt text\n'),
    ([('crlf', 'crlf.txt'), ('crlf', 'new.txt')], (), b''),
])
def test_working_trees(tmp: Path, ops: list[tuple[str, str]], config: tuple[str, ...], attrs: bytes) -> None:
    _check(tmp / 'r', ops, config, attrs)
    # none of these needs the chain
    assert trees.fast_tree(repo_mod.find(tmp / 'r')) is not None


@pytest.mark.parametrize('ops', [
    [('modify', 'a.txt'), ('modify', 'new.txt')],
    # hypothesis found it: every file is staged on an unborn HEAD, so the
    # chain's `git rm --cached` of an edited install file refused (see _TREE_SH)
    [('chmod', '.claude/settings.json')],
    [('modify', '.claude/settings.json'), ('link', '.codex/hooks.json')],
    # status -unormal names neither a.txt/ nor its file (see _changes)
    [('into_dir', 'a.txt'), ('into_dir', 'deep/x')],
])
def test_an_unborn_head(tmp: Path, ops: list[tuple[str, str]]) -> None:
    _check(tmp / 'r', ops, (), b'', commit=False)
    assert trees.fast_tree(repo_mod.find(tmp / 'r')) is not None


def test_an_empty_working_tree(tmp: Path) -> None:
    root = tmp / 'r'
    _base(root, (), commit=True)
    git('rm', '-q', '-r', '--cached', '.', cwd=root)
    for p in root.iterdir():
        if p.name != '.git':
            _delete(root, p.name)
    assert _both(root) == (trees.EMPTY_TREE, trees.EMPTY_TREE)


def test_a_detached_head_and_a_subdirectory(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp / 'r'
    _base(root, (), commit=True)
    _modify(root, 'a.txt')
    git('commit', '-q', '-am', 'second', cwd=root)
    git('checkout', '-q', '--detach', 'HEAD~1', cwd=root)
    _modify(root, 'dir/sub/new.txt')
    monkeypatch.chdir(root / 'dir' / 'sub')
    repo_mod.start_tree(None)  # begun ahead, in the subdirectory
    repo = repo_mod.find()
    assert repo_mod.worktree_tree(repo) == trees.chain_tree(repo)
    assert not repo_mod._STATUS_AHEAD


@pytest.mark.parametrize('make', [
    pytest.param(lambda root: git('add', '-N', 'new.txt', cwd=root), id='intent-to-add'),
    pytest.param(lambda root: git('init', '-q', 'embedded', cwd=root), id='embedded repository'),
])
def test_what_it_cannot_do_exactly_is_the_chains(tmp: Path, make: Callable[[Path], object]) -> None:
    root = tmp / 'r'
    _base(root, (), commit=True)
    _modify(root, 'new.txt')
    _write(root, 'embedded/f.txt', b'f\n')
    make(root)
    repo = repo_mod.find(root)
    assert trees.fast_tree(repo) is None
    assert repo_mod.worktree_tree(repo) == trees.chain_tree(repo)


@pytest.mark.parametrize('tracked', [True, False])
def test_a_name_that_begins_with_a_quote_is_hashed_as_itself(tmp: Path, tracked: bool) -> None:
    """`hash-object --stdin-paths` reads a line that begins with `"` as a
    C-quoted name: the edited file `"a.txt"` was hashed as a.txt, and
    the working tree's tree held a.txt's blob for it (a verification
    went on looking fresh after that file changed)."""
    root = tmp / 'r'
    _base(root, (), commit=True)
    _write(root, '"a.txt"', b'first\n')
    if tracked:
        git('add', '"a.txt"', cwd=root)
        git('commit', '-q', '-m', 'quoted', cwd=root)
    _modify(root, '"a.txt"')
    repo = repo_mod.find(root)
    tree = repo_mod.worktree_tree(repo)
    assert tree == trees.chain_tree(repo)
    listed = git('ls-tree', tree, '--', '"a.txt"', 'a.txt', cwd=root).splitlines()
    assert len({line.split()[2] for line in listed}) == 2, listed


def test_an_unmerged_index_is_the_chains(tmp: Path) -> None:
    root = tmp / 'r'
    _base(root, (), commit=True)
    git('checkout', '-q', '-b', 'other', cwd=root)
    _modify(root, 'a.txt')
    git('commit', '-q', '-am', 'other', cwd=root)
    git('checkout', '-q', 'main', cwd=root)
    _write(root, 'a.txt', b'main\n')
    git('commit', '-q', '-am', 'main', cwd=root)
    assert run('git', 'merge', '-q', 'other', cwd=root).returncode != 0  # a conflict
    repo = repo_mod.find(root)
    assert trees.fast_tree(repo) is None
    assert repo_mod.worktree_tree(repo) == trees.chain_tree(repo)


# -- the tree remembered (trees._TREE_CACHE) -----------------------------------

def _traced(monkeypatch: pytest.MonkeyPatch, trace: Path, repo: repo_mod.Repo) -> tuple[str | None, str]:
    """fast_tree, and the git commands it ran (GIT_TRACE)."""
    trace.unlink(missing_ok=True)
    monkeypatch.setenv('GIT_TRACE', str(trace))
    tree = trees.fast_tree(repo)
    monkeypatch.delenv('GIT_TRACE')
    return tree, trace.read_text() if trace.exists() else ''


def test_the_same_working_tree_is_not_read_again(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no file is racy here (the test's edits change sizes or modes)
    monkeypatch.setattr(trees, 'RACY_NS', 0)
    root = tmp / 'r'
    _base(root, (), commit=True)
    _modify(root, 'a.txt')
    _modify(root, 'new.txt')
    repo = repo_mod.find(root)
    first = trees.fast_tree(repo)
    assert first == trees.chain_tree(repo)
    tree, ran = _traced(monkeypatch, tmp / 'trace', repo)
    assert tree == first
    assert 'status' in ran
    assert 'hash-object' not in ran and 'cat-file' not in ran
    # anything the tree depends on changed: computed again, the chain's
    for change in (
            lambda: _write(root, 'a.txt', b'a longer line than before\n'),
            lambda: _chmod(root, 'a.txt'),
            lambda: _modify(root, 'dir/sub/new.txt'),
            lambda: _delete(root, 'dir/b.txt'),
            lambda: git('commit', '-q', '-a', '-m', 'more', cwd=root),
            lambda: (root / '.gitattributes').write_text('*.txt text eol=crlf\n'),
            lambda: git('config', 'core.autocrlf', 'true', cwd=root),
    ):
        change()
        tree, ran = _traced(monkeypatch, tmp / 'trace', repo)
        assert 'cat-file' in ran
        assert tree == trees.chain_tree(repo)
        again, ran = _traced(monkeypatch, tmp / 'trace', repo)
        assert again == tree and 'cat-file' not in ran


def test_a_file_edited_just_now_is_read_every_time(tmp: Path) -> None:
    # within the same timestamp an edit may leave the stat data as it was
    root = tmp / 'r'
    _base(root, (), commit=True)
    _write(root, 'a.txt', b'one\n')
    repo = repo_mod.find(root)
    assert trees.fast_tree(repo) == trees.chain_tree(repo)
    assert not (root / '.git' / 'agitmem' / 'tree-cache').exists()
    _write(root, 'a.txt', b'two\n')  # the same size
    st = os.stat(root / 'a.txt')
    assert trees.fast_tree(repo) == trees.chain_tree(repo)
    assert os.stat(root / 'a.txt').st_size == st.st_size


def test_a_tree_git_no_longer_has_is_not_remembered(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trees, 'RACY_NS', 0)
    root = tmp / 'r'
    _base(root, (), commit=True)
    _modify(root, 'a.txt')
    repo = repo_mod.find(root)
    tree = trees.fast_tree(repo)
    assert tree is not None and (root / '.git' / 'agitmem' / 'tree-cache').exists()
    (root / '.git' / 'objects' / tree[:2] / tree[2:]).unlink()  # pruned
    again, ran = _traced(monkeypatch, tmp / 'trace', repo)
    assert again == tree and 'cat-file' in ran
    assert (root / '.git' / 'objects' / tree[:2] / tree[2:]).exists()


# -- the paths between two trees, kept (repo.known_diffs) --------------------

def _commit_tree(root: Path, files: dict[str, str]) -> str:
    """The tree of exactly `files`."""
    for old in root.iterdir():
        if old.name != '.git':
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git('add', '-A', cwd=root)
    return git('write-tree', cwd=root).strip()


def test_two_trees_paths_are_diffed_once_and_kept(tmp: Path) -> None:
    """The paths between two trees never change (their ids name their
    contents): diffed once, then read from <git dir>/agitmem/tree-diffs,
    by pairs as git gives them, memory paths left out as ever."""
    git('init', '-q', cwd=tmp)
    a = _commit_tree(tmp, {'a.py': '1\n', 'sub/b.py': '1\n', 'ü n.py': '1\n'})
    b = _commit_tree(tmp, {'a.py': '2\n', 'sub/c.py': '1\n', 'ü n.py': '2\n', '.agent/x': 'm\n'})
    c = _commit_tree(tmp, {'a.py': '3\n'})
    repo = repo_mod.find(tmp)
    first = repo_mod.changed_paths_from(repo, [a, c, 'not an id'], b)
    assert first == {
        a: ['a.py', 'sub/b.py', 'sub/c.py', 'ü n.py'],
        c: ['a.py', 'sub/c.py', 'ü n.py'],
    }
    assert repo_mod.known_diffs(repo)[(a, b)] == ['.agent/x', 'a.py', 'sub/b.py', 'sub/c.py', 'ü n.py']
    # kept: a forged entry is what is read back (no diff-tree ran)
    cache = tmp / '.git' / 'agitmem' / 'tree-diffs'
    repo_mod._remember_diffs(repo, {(a, b): ['forged.py']}, [(a, b)])
    assert repo_mod.changed_paths_from(repo, [a], b) == {a: ['forged.py']}
    # a file cut short, or not one agitmem wrote, is none: diffed again
    whole = cache.read_bytes()
    for junk in (whole[:-1], whole[:len(f'{a} {b}\0forg')], whole.replace(b'forged', b'forget'),
                 b'\0\0\0', f'{a} {b}\0\0'.encode(), b'\xff' * 100):
        cache.write_bytes(junk)
        assert repo_mod.changed_paths_from(repo, [a], b) == {a: ['a.py', 'sub/b.py', 'sub/c.py', 'ü n.py']}


def test_only_the_pairs_used_last_are_kept(tmp: Path) -> None:
    git('init', '-q', cwd=tmp)
    new = _commit_tree(tmp, {'z.py': 'z\n'})
    olds = [_commit_tree(tmp, {'z.py': 'z\n', f'f{i}.py': f'{i}\n'}) for i in range(12)]
    repo = repo_mod.find(tmp)
    for i, old in enumerate(olds):
        assert repo_mod.changed_paths_from(repo, [old], new) == {old: [f'f{i}.py']}
    kept = repo_mod.known_diffs(repo)
    assert list(kept) == [(old, new) for old in olds[-repo_mod._DIFFS_KEPT:]]
    # one diff of more paths than the file keeps is not kept
    big = _commit_tree(tmp, {f'many/{i:05d}-{"x" * 60}.py': '' for i in range(16_000)})
    assert len(repo_mod.changed_paths_from(repo, [big], new)[big]) == 16_001
    assert (big, new) not in repo_mod.known_diffs(repo)


def test_the_diffs_file_as_a_link_or_a_fifo_is_none(tmp: Path, tmp_path: Path) -> None:
    git('init', '-q', cwd=tmp)
    a = _commit_tree(tmp, {'a.py': '1\n'})
    b = _commit_tree(tmp, {'a.py': '2\n'})
    repo = repo_mod.find(tmp)
    cache = tmp / '.git' / 'agitmem' / 'tree-diffs'
    cache.parent.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / 'outside'
    repo_mod._remember_diffs(repo, {(a, b): ['forged.py']}, [(a, b)])
    cache.rename(outside)
    cache.symlink_to(outside)
    forged = outside.read_bytes()
    assert repo_mod.changed_paths_from(repo, [a], b) == {a: ['a.py']}
    assert outside.read_bytes() == forged  # replaced, not written through
    assert not cache.is_symlink()
    cache.unlink()
    os.mkfifo(cache)
    assert repo_mod.changed_paths_from(repo, [a], b) == {a: ['a.py']}


def test_the_paths_kept_are_the_trees_own_whatever_git_replace_says(tmp: Path) -> None:
    """A `git replace` of a tree changes what git diffs for its id; the
    paths kept for a pair of ids are the trees' own, so that none goes
    stale when refs/replace/ changes."""
    git('init', '-q', cwd=tmp)
    a = _commit_tree(tmp, {'a.py': '1\n'})
    b = _commit_tree(tmp, {'a.py': '2\n'})
    other = _commit_tree(tmp, {'a.py': '2\n', 'x.py': 'x\n'})
    git('replace', b, other, cwd=tmp)
    repo = repo_mod.find(tmp)
    assert repo_mod.changed_paths_from(repo, [a], b) == {a: ['a.py']}
