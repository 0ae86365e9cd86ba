"""Parse git's unified diff output: the files it changes, the lines it adds.

Made for `git diff --cached -U0` (see `DIFF_ARGS`), but any context size works.
Paths are taken from the `diff --git` header and from `rename`/`copy` lines, so
that any `diff.noprefix`, `diff.mnemonicPrefix` or `--src-prefix` is handled;
hunks are read by their line counts, so an added line that reads `++ b/x` (and
so shows as `+++ b/x`) is content, not a header.
"""
from __future__ import annotations

import re

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook reads the patch with this module where enforce has rules
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

# what the staged change is, in the form this module parses, whatever the
# user's git config says about colors, external diff drivers and textconv
DIFF_ARGS = (
    'diff', '--cached', '-U0', '--no-color', '--no-ext-diff', '--no-textconv',
    '--src-prefix=a/', '--dst-prefix=b/',
)


class Added(NamedTuple):
    path: str
    line: int  # line number in the new file
    text: str  # without the leading '+' and the newline


class FileDiff(NamedTuple):
    old_path: str | None  # None for a file the change adds
    new_path: str | None  # None for a file the change deletes
    binary: bool
    added: tuple[Added, ...]


_HUNK_RE = re.compile(r'@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')
_ESCAPES = {
    'a': 7, 'b': 8, 't': 9, 'n': 10, 'v': 11, 'f': 12, 'r': 13,
    '"': 34, '\\': 92,
}
# a gitlink: its `+Subproject commit <sha>` lines are not content
_SUBMODULE_RE = re.compile(r'index [0-9a-f]+\.\.[0-9a-f]+ 160000$')


def _quoted(s: str) -> tuple[str, str]:
    """Split a C-quoted name (as git writes unusual paths) off the front of
    `s`; returns the name and what follows the closing quote."""
    out = bytearray()
    i = 1
    while i < len(s) and s[i] != '"':
        c = s[i]
        if c == '\\' and i + 1 < len(s):
            c = s[i + 1]
            if c in '01234567':
                out.append(int(s[i + 1:i + 4], 8) & 0xff)
                i += 4
            elif c in _ESCAPES:
                out.append(_ESCAPES[c])
                i += 2
            else:  # not something git writes: keep the backslash
                out.extend(b'\\')
                i += 1
        else:
            out.extend(c.encode('utf-8', 'surrogateescape'))
            i += 1
    return out.decode('utf-8', 'surrogateescape'), s[i + 1:]


def unquote(s: str) -> str:
    """A path as git prints it in `rename to`, `---` and `+++` lines."""
    if s.startswith('"'):
        return _quoted(s)[0]
    return s


def _header_names(rest: str) -> tuple[str, str] | None:
    """The two names of `diff --git <a> <b>` when that can be told."""
    if rest.startswith('"'):
        a, tail = _quoted(rest)
        tail = tail.removeprefix(' ')
        return a, unquote(tail)
    elif rest.endswith('"') and ' "' in rest:  # an unquoted name has no '"'
        a, _, b = rest.partition(' "')
        return a, _quoted('"' + b)[0]
    else:
        return None


def _same_path(a: str, b: str) -> str | None:
    """The path both names stand for: `a/x b/x`, `c/x i/x`, or `x x`."""
    if a == b:
        return a
    elif a[1:2] == b[1:2] == '/' and a[2:] == b[2:]:
        return a[2:]
    else:
        return None


def _header_path(rest: str) -> str | None:
    """The path of a `diff --git` header whose two names are the same file
    (so not a rename or copy, where the names come from their own lines)."""
    names = _header_names(rest)
    if names is not None:
        return _same_path(*names)
    # unquoted, and names may hold spaces: try the split that gives equal
    # halves, first with two prefixes (`a/` and `b/`), then with none
    for prefix_len in (2, 0):
        n = (len(rest) - 1 - 2 * prefix_len) // 2
        if n > 0:
            a = rest[:prefix_len + n]
            b = rest[prefix_len + n + 1:]
            path = _same_path(a, b)
            if path is not None and rest[prefix_len + n] == ' ':
                return path
    return None


def _marker_path(s: str, prefix: str) -> str | None:
    """The name of a `--- a/x` or `+++ b/x` line (None for /dev/null)."""
    # git ends the name with a tab when it has a space in it
    name = unquote(s.removesuffix('\t'))
    if name == '/dev/null':
        return None
    return name.removeprefix(prefix)


def _hunk(
        lines: list[str],
        i: int,
        m: re.Match[str],
        path: str | None,
        added: list[Added],
) -> int:
    """Read the hunk whose header `m` is at lines[i - 1], adding its `+`
    lines to `added`; returns the index after the hunk."""
    old_left = 1 if m[1] is None else int(m[1])
    new_left = 1 if m[3] is None else int(m[3])
    line = int(m[2])
    while (old_left or new_left) and i < len(lines):
        s = lines[i]
        if s.startswith('+') and new_left:
            if path is not None:
                added.append(Added(path, line, s[1:]))
            line += 1
            new_left -= 1
        elif s.startswith('-') and old_left:
            old_left -= 1
        elif s.startswith(' ') and old_left and new_left:
            line += 1
            old_left -= 1
            new_left -= 1
        elif not s.startswith('\\'):  # `\ No newline at end of file`
            break  # a truncated hunk: leave the line to the caller
        i += 1
    return i


def _file(lines: list[str], i: int) -> tuple[FileDiff, int]:
    """Read one file's part, from its `diff --git` line at lines[i]."""
    # None until known, or for the side of an added or deleted file
    old = new = _header_path(lines[i][len('diff --git '):])
    binary = submodule = False
    added: list[Added] = []
    i += 1
    while i < len(lines) and not lines[i].startswith('diff --git '):
        s = lines[i]
        i += 1
        m = _HUNK_RE.match(s)
        if m is not None:
            i = _hunk(lines, i, m, None if submodule else new, added)
        elif s.startswith(('rename from ', 'copy from ')):
            old = unquote(s.split(' ', 2)[2])
        elif s.startswith(('rename to ', 'copy to ')):
            new = unquote(s.split(' ', 2)[2])
        elif s.startswith('new file mode '):
            old = None
            submodule = s.endswith(' 160000')
        elif s.startswith('deleted file mode '):
            new = None
            submodule = s.endswith(' 160000')
        # the names of `---` and `+++` lines carry the `a/` and `b/` of the
        # diff's options: use them only when the header could not be read
        elif s.startswith('--- '):
            name = _marker_path(s[4:], 'a/')
            old = None if name is None else old or name
        elif s.startswith('+++ '):
            name = _marker_path(s[4:], 'b/')
            new = None if name is None else new or name
        elif s.startswith('Binary files ') or s == 'GIT binary patch':
            binary = True
        elif _SUBMODULE_RE.match(s):
            submodule = True
    return FileDiff(old, new, binary, tuple(added)), i


def files(diff: str) -> Iterator[FileDiff]:
    """Each file of a diff, in order."""
    lines = diff.split('\n')  # not splitlines(): content may hold \r, \f, ...
    i = 0
    while i < len(lines):
        if lines[i].startswith('diff --git '):
            f, i = _file(lines, i)
            yield f
        else:
            i += 1


def added_lines(diff: str) -> list[Added]:
    """Lines the diff adds, by path and line number in the new file."""
    return [a for f in files(diff) for a in f.added]


def changed_paths(diff: str) -> list[str]:
    """Paths the diff adds, deletes or changes (both names of a rename)."""
    ret: dict[str, None] = {}
    for f in files(diff):
        for path in (f.old_path, f.new_path):
            if path is not None:
                ret[path] = None
    return list(ret)


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode('utf-8', 'replace').splitlines(keepends=True)


def changes(old: dict[str, bytes], new: dict[str, bytes]) -> list[tuple[str, str]]:
    """(path, status) for each memory file that differs between two sets
    of files (a commit's, the working tree's)."""
    ret = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a != b:
            ret.append((path, 'added' if a is None else 'deleted' if b is None else 'modified'))
    return ret


def unified(old: dict[str, bytes], new: dict[str, bytes]) -> list[tuple[str, str, str]]:
    """(path, status, unified diff text) for each memory file that differs
    between two sets of files."""
    import difflib
    ret = []
    for path, status in changes(old, new):
        a, b = old.get(path), new.get(path)
        text = ''.join(difflib.unified_diff(
            _lines(a), _lines(b),
            '/dev/null' if a is None else f'a/{path}',
            '/dev/null' if b is None else f'b/{path}',
        ))
        if text and not text.endswith('\n'):
            text += '\n\\ No newline at end of file\n'
        ret.append((path, status, text))
    return ret
