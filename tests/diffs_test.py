from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from agitmem.diffs import Added
from agitmem.diffs import added_lines
from agitmem.diffs import changed_paths
from agitmem.diffs import DIFF_ARGS
from agitmem.diffs import FileDiff
from agitmem.diffs import files
from agitmem.diffs import unquote


def _git(repo: pathlib.Path, *args: str) -> str:
    env = {
        **os.environ,
        'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1',
        'GIT_AUTHOR_NAME': 't', 'GIT_AUTHOR_EMAIL': 't@example.invalid',
        'GIT_COMMITTER_NAME': 't', 'GIT_COMMITTER_EMAIL': 't@example.invalid',
    }
    out = subprocess.run(
        ('git', *args), cwd=repo, env=env, check=True, capture_output=True,
    ).stdout
    return out.decode('utf-8', 'surrogateescape')


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    _git(tmp_path, 'init', '-q')
    _git(tmp_path, 'commit', '-q', '--allow-empty', '-m', 'root')
    return tmp_path


def _write(repo: pathlib.Path, name: str, data: str | bytes) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)


def _commit(repo: pathlib.Path, **contents: str | bytes) -> None:
    for name, data in contents.items():
        _write(repo, name, data)
    _git(repo, 'add', '-A')
    _git(repo, 'commit', '-q', '-m', 'base')


def _staged(repo: pathlib.Path, *config: str) -> str:
    """The staged diff, as the checks read it (config: `-c` settings)."""
    cfg = [arg for c in config for arg in ('-c', c)]
    _git(repo, 'add', '-A')
    return _git(repo, *cfg, 'diff', '--cached', '-U0', '--no-color',
                '--no-ext-diff')


def test_modified_lines_numbered_in_new_file(repo: pathlib.Path) -> None:
    _commit(repo, **{'app.py': 'a\nb\nc\nd\ne\n'})
    _write(repo, 'app.py', 'a\nB\nc\nnew 1\nnew 2\nd\n')
    diff = _staged(repo)
    assert added_lines(diff) == [
        Added('app.py', 2, 'B'),
        Added('app.py', 4, 'new 1'),
        Added('app.py', 5, 'new 2'),
    ]
    assert changed_paths(diff) == ['app.py']


def test_new_file(repo: pathlib.Path) -> None:
    _write(repo, 'src/new.py', 'x = 1\n\ty = 2\n')
    diff = _staged(repo)
    assert added_lines(diff) == [
        Added('src/new.py', 1, 'x = 1'), Added('src/new.py', 2, '\ty = 2'),
    ]
    assert list(files(diff)) == [
        FileDiff(None, 'src/new.py', False, tuple(added_lines(diff))),
    ]


def test_new_empty_file(repo: pathlib.Path) -> None:
    _write(repo, 'empty.txt', '')
    diff = _staged(repo)
    assert added_lines(diff) == []
    assert changed_paths(diff) == ['empty.txt']
    assert list(files(diff)) == [FileDiff(None, 'empty.txt', False, ())]


def test_deleted_file(repo: pathlib.Path) -> None:
    _commit(repo, **{'gone.py': 'x\ny\n', 'kept.py': 'k\n'})
    (repo / 'gone.py').unlink()
    diff = _staged(repo)
    assert added_lines(diff) == []
    assert changed_paths(diff) == ['gone.py']
    assert list(files(diff)) == [FileDiff('gone.py', None, False, ())]


def test_rename_with_change(repo: pathlib.Path) -> None:
    body = ''.join(f'line {i}\n' for i in range(20))
    _commit(repo, **{'old.py': body})
    (repo / 'old.py').unlink()
    _write(repo, 'pkg/new name.py', body + 'added\n')
    diff = _staged(repo)
    assert 'rename from old.py' in diff
    assert added_lines(diff) == [Added('pkg/new name.py', 21, 'added')]
    assert changed_paths(diff) == ['old.py', 'pkg/new name.py']


def test_pure_rename(repo: pathlib.Path) -> None:
    _commit(repo, **{'a.txt': 'same\n'})
    _git(repo, 'mv', 'a.txt', 'b c.txt')
    diff = _staged(repo)
    assert added_lines(diff) == []
    assert list(files(diff)) == [FileDiff('a.txt', 'b c.txt', False, ())]


def test_path_with_spaces(repo: pathlib.Path) -> None:
    _commit(repo, **{'my dir/a b.py': '1\n'})
    _write(repo, 'my dir/a b.py', '1\n2\n')
    diff = _staged(repo)
    assert '+++ b/my dir/a b.py\t' in diff  # git's tab after such a name
    assert added_lines(diff) == [Added('my dir/a b.py', 2, '2')]


@pytest.mark.parametrize(
    'name',
    ['ä.py', 'dir/日本 語.py', 'q"uote.py', 'ta\tb.py', 'back\\slash.py'],
)
def test_quoted_paths(repo: pathlib.Path, name: str) -> None:
    _write(repo, name, 'ö\n')
    diff = _staged(repo)
    assert '"b/' in diff  # git quoted it
    assert added_lines(diff) == [Added(name, 1, 'ö')]
    assert changed_paths(diff) == [name]


def test_quoted_paths_unquoted_by_config(repo: pathlib.Path) -> None:
    _write(repo, 'ä b.py', 'x\n')
    diff = _staged(repo, 'core.quotePath=false')
    assert 'ä b.py' in diff
    assert added_lines(diff) == [Added('ä b.py', 1, 'x')]


def test_rename_of_quoted_path(repo: pathlib.Path) -> None:
    body = ''.join(f'line {i}\n' for i in range(20))
    _commit(repo, **{'plain.py': body})
    (repo / 'plain.py').unlink()
    _write(repo, 'ünï.py', body + 'more\n')
    diff = _staged(repo)
    assert added_lines(diff) == [Added('ünï.py', 21, 'more')]
    assert changed_paths(diff) == ['plain.py', 'ünï.py']


def test_binary_file(repo: pathlib.Path) -> None:
    _commit(repo, **{'img.bin': b'\x00\x01'})
    _write(repo, 'img.bin', b'\x00\x02\nline\n')
    _write(repo, 'new.bin', b'\x00\xff')
    diff = _staged(repo)
    assert 'Binary files' in diff
    assert added_lines(diff) == []
    assert list(files(diff)) == [
        FileDiff('img.bin', 'img.bin', True, ()),
        FileDiff(None, 'new.bin', True, ()),
    ]


def test_no_newline_at_end_of_file(repo: pathlib.Path) -> None:
    _commit(repo, **{'a.txt': 'one\ntwo'})
    _write(repo, 'a.txt', 'one\nTWO\nthree')
    diff = _staged(repo)
    assert '\\ No newline at end of file' in diff
    assert added_lines(diff) == [
        Added('a.txt', 2, 'TWO'), Added('a.txt', 3, 'three'),
    ]


def test_lines_that_look_like_headers(repo: pathlib.Path) -> None:
    _commit(repo, **{'a.txt': '-- a/x\nkeep\n'})
    _write(repo, 'a.txt', 'keep\n++ b/y\ndiff --git a/z b/z\n@@ -1 +1 @@\n')
    diff = _staged(repo)
    assert '+++ b/y' in diff
    assert added_lines(diff) == [
        Added('a.txt', 2, '++ b/y'),
        Added('a.txt', 3, 'diff --git a/z b/z'),
        Added('a.txt', 4, '@@ -1 +1 @@'),
    ]
    assert changed_paths(diff) == ['a.txt']


def test_carriage_returns_and_form_feeds_stay_in_the_line(
        repo: pathlib.Path,
) -> None:
    _write(repo, 'w.txt', b'crlf\r\nff\x0cin line\n')
    assert added_lines(_staged(repo)) == [
        Added('w.txt', 1, 'crlf\r'), Added('w.txt', 2, 'ff\x0cin line'),
    ]


def test_mode_change_only(repo: pathlib.Path) -> None:
    _commit(repo, **{'run.sh': 'echo\n'})
    (repo / 'run.sh').chmod(0o755)
    diff = _staged(repo)
    assert 'new mode 100755' in diff
    assert list(files(diff)) == [FileDiff('run.sh', 'run.sh', False, ())]


def test_several_files_in_order(repo: pathlib.Path) -> None:
    _commit(repo, **{'b.py': 'b\n', 'd.py': 'd\n'})
    _write(repo, 'a.py', 'a\n')
    _write(repo, 'b.py', 'b\nb2\n')
    (repo / 'd.py').unlink()
    _write(repo, 'c.py', 'c\n')
    diff = _staged(repo)
    assert changed_paths(diff) == ['a.py', 'b.py', 'c.py', 'd.py']
    assert [(a.path, a.line) for a in added_lines(diff)] == [
        ('a.py', 1), ('b.py', 2), ('c.py', 1),
    ]


@pytest.mark.parametrize(
    'config', ['diff.mnemonicPrefix=true', 'diff.noprefix=true'],
)
def test_prefix_config_does_not_matter(
        repo: pathlib.Path,
        config: str,
) -> None:
    body = ''.join(f'line {i}\n' for i in range(20))
    _commit(repo, **{'a b.py': '1\n', 'old.py': body, 'x.py': 'x\n'})
    _write(repo, 'a b.py', '1\n2\n')
    (repo / 'old.py').unlink()
    _write(repo, 'new.py', body + 'more\n')
    _write(repo, 'ä.py', 'u\n')
    (repo / 'x.py').unlink()
    plain = _staged(repo)
    other = _staged(repo, config)
    assert plain != other
    assert list(files(other)) == list(files(plain))
    assert changed_paths(plain) == [
        'a b.py', 'old.py', 'new.py', 'x.py', 'ä.py',
    ]


def test_diff_args(repo: pathlib.Path) -> None:
    _write(repo, 'a.py', 'x\n')
    _git(repo, 'add', '-A')
    config = ('-c', 'diff.noprefix=true', '-c', 'color.ui=always')
    diff = _git(repo, *config, *DIFF_ARGS)
    assert diff.startswith('diff --git a/a.py b/a.py\n')
    assert added_lines(diff) == [Added('a.py', 1, 'x')]


def test_submodule_lines_are_not_content(repo: pathlib.Path) -> None:
    sub = repo / 'sub'
    sub.mkdir()
    _git(sub, 'init', '-q')
    _git(sub, 'commit', '-q', '--allow-empty', '-m', 'sub root')
    _write(repo, 'file.txt', 'f\n')
    diff = _staged(repo)
    assert 'Subproject commit' in diff
    assert added_lines(diff) == [Added('file.txt', 1, 'f')]
    assert changed_paths(diff) == ['file.txt', 'sub']


def test_context_lines_are_counted(repo: pathlib.Path) -> None:
    _commit(repo, **{'a.txt': 'a\nb\nc\nd\n'})
    _write(repo, 'a.txt', 'a\nb\nX\nc\nd\nY\n')
    _git(repo, 'add', '-A')
    diff = _git(repo, 'diff', '--cached', '-U3')
    assert added_lines(diff) == [
        Added('a.txt', 3, 'X'), Added('a.txt', 6, 'Y'),
    ]


def test_empty_and_garbage() -> None:
    assert added_lines('') == []
    assert changed_paths('') == []
    assert added_lines('not a diff\n+++ b/x\n@@ -0,0 +1 @@\n+y\n') == []


def test_truncated_hunk() -> None:
    diff = (
        'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +2,3 @@\n+one\n'
        'diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -0,0 +1 @@\n+two\n'
    )
    assert added_lines(diff) == [Added('x', 2, 'one'), Added('y', 1, 'two')]


@pytest.mark.parametrize(
    ('quoted', 'expected'),
    [
        ('plain', 'plain'),
        ('"a/\\303\\244.py"', 'a/ä.py'),
        ('"q\\"t\\\\b\\t.py"', 'q"t\\b\t.py'),
        ('"\\377"', '\udcff'),  # not UTF-8: kept as os.fsdecode would
    ],
)
def test_unquote(quoted: str, expected: str) -> None:
    assert unquote(quoted) == expected
