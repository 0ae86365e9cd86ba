"""Check `enforce`: tattoo rules that git can check on the staged change.

Each rule in config.yaml's `enforce:` names, by its text, the tattoo line it
enforces, and says how: `forbid` (a regex no added line may match, in files
matching `files`), `commit_msg` (a regex the commit message must match) or
`dependencies` (the allow-list for dependencies the change adds to
pyproject.toml, requirements*.txt or package.json).
"""
from __future__ import annotations

import fnmatch
import posixpath
import re
import time

from agitmem import redos
from agitmem.checks import Finding

TYPE_CHECKING = False  # (mypy takes any name TYPE_CHECKING as true)
if TYPE_CHECKING:
    from collections.abc import Callable
    from collections.abc import Iterator

    from agitmem.diffs import Added

ID = 'enforce'
# a staged file full of tabs is one problem: show this many lines of it
MAX_PER_RULE = 20
# seconds of regex matching a rule may take on one change; a rule over it is
# an error, so `git commit` ends in seconds whatever config.yaml holds
RULE_SECONDS = 2.0
# and all rules together (then each rule left gets a sliver: many slow rules
# cannot add up to minutes)
TOTAL_SECONDS = 6.0
MIN_SECONDS = 0.05

_SCISSORS = '# ------------------------ >8 ------------------------'


def _words(s: str) -> str:
    return ' '.join(s.split()).casefold()


def tattoo_line(
        rule: str,
        tattoo_lines: list[tuple[int, str]],
) -> tuple[int, str] | None:
    """The first tattoo line whose text holds the rule's text (ignoring case
    and runs of whitespace)."""
    want = _words(rule)
    for n, text in tattoo_lines:
        if want in _words(text):
            return n, text
    return None


def _show(pattern: str) -> str:
    """A regex as one printable line: a tab reads `\\t`."""
    escapes = {'\t': r'\t', '\n': r'\n', '\r': r'\r'}
    return ''.join(
        escapes.get(c) or (f'\\x{ord(c):02x}' if c < ' ' or c == '\x7f' else c)
        for c in pattern
    )


def _quote(tattoo: tuple[int, str]) -> str:
    n, text = tattoo
    return f'tattoo rule "{text}" (tattoo.md:{n})'


def _files_match(path: str, globs: list[str]) -> bool:
    name = posixpath.basename(path)
    return any(
        fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(name, g)
        for g in globs
    )


def _forbid(
        rule: dict[str, object],
        tattoo: tuple[int, str],
        added: list[Added],
        seconds: float = RULE_SECONDS,
) -> Iterator[Finding]:
    pattern = str(rule['forbid'])
    regex = re.compile(pattern)
    globs = rule.get('files')
    hits = []
    at = None
    try:
        with redos.time_limit(seconds):
            for a in added:
                if not isinstance(globs, list) or _files_match(a.path, globs):
                    at = a
                    if regex.search(a.text):
                        hits.append(a)
            at = None
    except redos.OutOfTime:
        where = f' on {at.path}:{at.line}' if at is not None else ''
        yield _out_of_time(rule, pattern, seconds, where)
        return
    for a in hits[:MAX_PER_RULE]:
        yield Finding(
            ID, 'error',
            f'{a.path}:{a.line}: added line breaks {_quote(tattoo)}; '
            f'remove the match of /{_show(pattern)}/',
            path=a.path, line=a.line,
        )
    if len(hits) > MAX_PER_RULE:
        yield Finding(
            ID, 'error',
            f'{len(hits) - MAX_PER_RULE} more added lines break '
            f'{_quote(tattoo)}; remove the matches of /{_show(pattern)}/',
        )


def _out_of_time(
        rule: dict[str, object],
        pattern: str,
        seconds: float,
        where: str,
) -> Finding:
    return Finding(
        ID, 'error',
        f'enforce rule "{rule["rule"]}": regex /{_show(pattern)}/ ran out of '
        f'time ({seconds:.2g} s){where}: it backtracks without bound; '
        f'rewrite it in config.yaml (no nested quantifiers like `(a+)+`)',
    )


def clean_message(msg: str) -> str:
    """A commit message as git will record it (default `--cleanup`): no
    `#` comment lines, nothing from the scissors line of `commit -v` on, no
    leading or trailing blank lines."""
    lines = msg.split('\n')
    if _SCISSORS in lines:
        lines = lines[:lines.index(_SCISSORS)]
    kept = '\n'.join(s for s in lines if not s.startswith('#'))
    return kept.strip('\n')


def _commit_msg(
        rule: dict[str, object],
        tattoo: tuple[int, str],
        commit_msg: str,
        seconds: float = RULE_SECONDS,
) -> Iterator[Finding]:
    pattern = str(rule['commit_msg'])
    text = clean_message(commit_msg)
    try:
        with redos.time_limit(seconds):
            found = re.search(pattern, text)
    except redos.OutOfTime:
        yield _out_of_time(rule, pattern, seconds, ' on the commit message')
        return
    if found is None:
        yield Finding(
            ID, 'error',
            f'commit message breaks {_quote(tattoo)}; '
            f'reword it to match /{_show(pattern)}/',
        )


# dependencies


def normalize(name: str) -> str:
    """A package name as PEP 503 compares them: `Py_YAML` is `py-yaml`."""
    return re.sub(r'[-_.]+', '-', name).lower()


_PEP508_NAME_RE = re.compile(
    r'\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)',
)
# what may follow the name in a requirements line: extras, version, marker, url
_AFTER_NAME_RE = re.compile(r'\s*(?:$|[\[(<>=!~;@,])')


def _requirement_name(req: str) -> str | None:
    m = _PEP508_NAME_RE.match(req)
    if m is None or _AFTER_NAME_RE.match(req, m.end()) is None:
        return None
    return m[1]


def _table(value: object, key: str) -> dict[str, object]:
    if isinstance(value, dict):
        ret = value.get(key)
        if isinstance(ret, dict):
            return ret
    return {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _pyproject_deps(text: str) -> list[str]:
    import tomllib  # a pyproject.toml staged: only then
    data = tomllib.loads(text)
    project = _table(data, 'project')
    reqs = list(_list(project.get('dependencies')))
    for extra in _table(project, 'optional-dependencies').values():
        reqs.extend(_list(extra))
    for group in _table(data, 'dependency-groups').values():  # PEP 735
        reqs.extend(_list(group))
    names = [
        name for req in reqs if isinstance(req, str)
        for name in (_requirement_name(req),) if name is not None
    ]

    poetry = _table(_table(data, 'tool'), 'poetry')
    tables = [
        _table(poetry, 'dependencies'),
        _table(poetry, 'dev-dependencies'),
        *(_table(g, 'dependencies') for g in _table(poetry, 'group').values()),
    ]
    names.extend(k for t in tables for k in t if k.lower() != 'python')
    return names


def _requirements_deps(text: str) -> list[str]:
    names = []
    for line in text.replace('\\\n', ' ').splitlines():
        line = re.sub(r'(?:^|\s)#.*', '', line).strip()
        # options (`-r`, `-e`, `--hash`), paths and urls name no package
        if line and not line.startswith('-'):
            name = _requirement_name(line)
            if name is not None:
                names.append(name)
    return names


def _package_json_deps(text: str) -> list[str]:
    import json  # package.json's only: the pre-commit hook runs this module
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError('not a JSON object')
    return [
        name
        for key in (
            'dependencies', 'devDependencies', 'peerDependencies',
            'optionalDependencies',
        )
        for name in _table(data, key)
    ]


def manifest_parser(path: str) -> Callable[[str], list[str]] | None:
    """How to read the dependencies of `path`, if it is a manifest."""
    name = posixpath.basename(path)
    if name == 'pyproject.toml':
        return _pyproject_deps
    elif name == 'package.json':
        return _package_json_deps
    elif fnmatch.fnmatchcase(name, 'requirements*.txt'):
        return _requirements_deps
    else:
        return None


def _line_of(
        name: str,
        path: str,
        text: str,
        added: list[Added],
) -> int | None:
    """Where the dependency appears: in a line the change adds, if it can."""
    regex = re.compile(
        rf'(?<![A-Za-z0-9._-]){re.escape(name)}(?![A-Za-z0-9._-])',
        re.IGNORECASE,
    )
    for a in added:
        if a.path == path and regex.search(a.text):
            return a.line
    for n, line in enumerate(text.splitlines(), 1):
        if regex.search(line):
            return n
    return None


def _new_deps(
        path: str,
        *,
        added: list[Added],
        old_files: Callable[[str], str | None],
        new_files: Callable[[str], str | None],
) -> tuple[list[tuple[str, int | None]], Finding | None]:
    """The dependencies the change adds to the manifest `path`, with their
    lines, or a warning when the staged manifest does not parse."""
    parse = manifest_parser(path)
    if parse is None:  # not a manifest: do not read it
        return [], None
    new_text = new_files(path)
    if new_text is None:
        return [], None
    try:
        new = parse(new_text)
    except (ValueError, RecursionError) as e:  # TOMLDecodeError, JSONDecodeError, nested too deeply
        import json  # (imported already where the manifest is package.json)
        line = e.lineno if isinstance(e, json.JSONDecodeError) else None
        why = 'nested too deeply' if isinstance(e, RecursionError) else e
        return [], Finding(
            ID, 'warning',
            f'{path}: cannot read its dependencies ({why}); fix its syntax so '
            f'that new dependencies can be checked',
            path=path, line=line,
        )

    old_text = old_files(path)
    old: set[str] = set()
    if old_text is not None:
        try:
            old = {normalize(name) for name in parse(old_text)}
        except (ValueError, RecursionError):  # broken at HEAD: every dependency is new to it
            pass

    ret: dict[str, tuple[str, int | None]] = {}
    for name in new:
        key = normalize(name)
        if key not in old and key not in ret:
            ret[key] = (name, _line_of(name, path, new_text, added))
    return list(ret.values()), None


def _dependencies(
        rule: dict[str, object],
        tattoo: tuple[int, str],
        new_deps: dict[str, list[tuple[str, int | None]]],
) -> Iterator[Finding]:
    allowed = {normalize(str(name)) for name in _list(rule['dependencies'])}
    for path, deps in new_deps.items():
        for name, line in deps:
            if normalize(name) not in allowed:
                where = path if line is None else f'{path}:{line}'
                yield Finding(
                    ID, 'error',
                    f'{where}: new dependency "{name}" breaks '
                    f'{_quote(tattoo)}; remove it, or add it to the rule\'s '
                    f'`dependencies:` in config.yaml once it is approved',
                    path=path, line=line,
                )


def check(
        rules: list[dict[str, object]],
        *,
        tattoo_lines: list[tuple[int, str]],
        added: list[Added],
        commit_msg: str | None,
        old_files: Callable[[str], str | None],
        new_files: Callable[[str], str | None],
) -> list[Finding]:
    """Findings for rules (from `validate`) against the staged change.

    `tattoo_lines`: (line number, text without the "- ") of tattoo.md;
    `added`: the lines the staged diff adds; `commit_msg`: the message, or
    None before there is one (pre-commit); `old_files(path)` and
    `new_files(path)`: a file at HEAD and in the index, None where absent.
    """
    findings: list[Finding] = []
    new_deps: dict[str, list[tuple[str, int | None]]] | None = None
    deadline = time.monotonic() + TOTAL_SECONDS
    for rule in rules:
        seconds = max(MIN_SECONDS, min(RULE_SECONDS, deadline - time.monotonic()))
        text = str(rule['rule'])
        tattoo = tattoo_line(text, tattoo_lines)
        if tattoo is None:
            findings.append(
                Finding(
                    ID, 'error',
                    f'enforce rule "{text}" matches no tattoo line; add '
                    f'"- {text}" to tattoo.md or remove the rule from '
                    f'config.yaml',
                ),
            )
        elif 'forbid' in rule:
            findings.extend(_forbid(rule, tattoo, added, seconds))
        elif 'commit_msg' in rule:
            if commit_msg is not None:
                findings.extend(_commit_msg(rule, tattoo, commit_msg, seconds))
        elif 'dependencies' in rule:
            if new_deps is None:  # read the manifests once, for all rules
                new_deps = {}
                for path in dict.fromkeys(a.path for a in added):
                    deps, warning = _new_deps(
                        path, added=added,
                        old_files=old_files, new_files=new_files,
                    )
                    if warning is not None:
                        findings.append(warning)
                    if deps:
                        new_deps[path] = deps
            findings.extend(_dependencies(rule, tattoo, new_deps))
    return findings
