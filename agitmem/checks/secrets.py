"""`secrets`: likely credentials in memory files.  Memory is pushed and
shared: a key in it is never saved, committed or pushed.  The scanner
itself is agitmem/secrets.py; this adapts it to memory files."""
from __future__ import annotations

from collections.abc import Mapping

from agitmem import config
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import secrets
from agitmem.checks import Finding
from agitmem.errors import AgitmemError
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ID = 'secrets'


def allowlist(cfg: Mapping[str, Any]) -> secrets.Allow:
    """What dismisses a finding, the one allowlist every scan of memory
    honours (check, save, pre-commit, pre-push): the fingerprints of the
    memory config (`cfg`, .agent/config.yaml as loaded: it may have come
    with a clone, so it allows exact values only), the user's own
    config's fingerprints and patterns, and the inline markers."""
    own = cfg.get('secrets') or {}
    user = config.user_secrets()
    fingerprints = frozenset([*own.get('allow', ()), *user['allow']])
    if not fingerprints and not user['patterns']:
        return secrets.NOTHING
    import re
    return secrets.Allow(fingerprints, tuple(re.compile(p) for p in user['patterns']))


def scanned(texts: Mapping[str, str], allow: secrets.Allow) -> tuple[list[Finding], set[str]]:
    """The findings that block in texts (shown path -> content of each
    memory file), and the paths holding any finding, allowed or not (not
    clean: checks/scanned.py does not remember them, so an allowance
    taken back blocks again)."""
    found: list[secrets.Secret] = []
    for path, text in texts.items():
        found.extend(secrets.scan(text, path, allow))
    return secrets.findings(secrets.blocking(found)), {s.path for s in found}


def check(texts: Mapping[str, str], allow: secrets.Allow = secrets.NOTHING) -> list[Finding]:
    """texts: shown path -> content of each memory file."""
    return scanned(texts, allow)[0]


def shown(path: str) -> str:
    """Where a memory commit's file lives in the working tree."""
    if path == memory.CONFIG:
        return f'.agent/{path}'
    return f'.agent/memory/{path}'


def blocking(files: Mapping[str, bytes], allow: secrets.Allow) -> tuple[list[Finding], set[str]]:
    """For `save`: the secrets in files (memory commit path -> content),
    which must not be committed to the memory ref; and the memory commit
    paths of the files holding any finding, allowed or not."""
    by_shown = {shown(path): path for path in files}
    found, hit = scanned({
        shown(path): data.decode('utf-8', 'replace')
        for path, data in files.items()
    }, allow)
    return found, {by_shown[p] for p in hit}


MESSAGE = 'commit message'


def blocking_message(msg: str, allow: secrets.Allow = secrets.NOTHING) -> list[Finding]:
    """For every memory commit agitmem writes: the secrets in its message.
    Messages are built from user text (`save -m`, note and state values in
    subjects, fragment goals) and are pushed like the files; a key in one
    must not reach the ref."""
    return [
        Finding(
            ID, 'error',
            f'{MESSAGE}:{s.line}: possible {s.kind}; take it out of the text '
            f'given for the message (and revoke it if it is real){secrets.dismiss(s)}',
            line=s.line,
        )
        for s in secrets.blocking(secrets.scan(msg, MESSAGE, allow))
    ]


def in_blob(path: str, data: bytes, allow: secrets.Allow = secrets.NOTHING) -> list[secrets.Secret]:
    """For the pre-push scan of every memory commit a push sends: the
    secrets in one blob (a memory commit path) that block.  Scanning is
    linear in the size and compiles only the rules whose keywords the blob
    holds, so the caller needs only to skip blobs it has scanned already."""
    return secrets.blocking(secrets.scan(data.decode('utf-8', 'replace'), path, allow))


def in_refs(
        repo: Repo, prefix: str = repo_mod.MEMORY_NS,
        allow: secrets.Allow = secrets.NOTHING,
) -> list[Finding]:
    """Secrets in the saved memory a push would send: the files at the tip
    of each memory ref (each distinct tree read once, as one diff against
    the empty tree, so a file's lines keep their numbers)."""
    from agitmem import diffs  # pre-push only
    refs = repo_mod.git(
        'for-each-ref', '--format=%(tree) %(refname)', prefix, cwd=repo.top,
    ).stdout.split('\n')
    refs = [r for r in refs if r]
    if not refs:
        return []
    empty = repo_mod.git(
        'hash-object', '-t', 'tree', '--stdin', cwd=repo.top, stdin='',
    ).stdout.strip()
    ret = []
    seen: set[str] = set()
    for line in refs:
        tree, _, ref = line.partition(' ')
        if not tree or tree in seen:  # not a commit; a tree seen already
            continue
        seen.add(tree)
        diff = repo_mod.git(
            'diff', *diffs.DIFF_ARGS[2:], empty, tree, cwd=repo.top,
        ).stdout
        lines: dict[str, list[str]] = {}
        for a in diffs.added_lines(diff):
            lines.setdefault(a.path, []).append(a.text)
        for path, texts in lines.items():
            for s in secrets.blocking(secrets.scan('\n'.join(texts), path, allow)):
                ret.append(
                    Finding(
                        ID, 'error',
                        f'possible {s.kind} in saved memory; remove it from '
                        f'{shown(path)}, `agitmem save`, and revoke it if it '
                        f'is real (older memory commits still hold it){secrets.dismiss(s)}',
                        path=f'{ref}:{path}', line=s.line,
                    ),
                )
    return ret


def in_push(repo: Repo, remote: str | None, allow: secrets.Allow = secrets.NOTHING) -> list[Finding]:
    """Secrets in every memory commit a push would send, not only at the
    tips: each commit's message and each blob new to the remote (as far as
    refs/agitmem/remotes/<remote>/ knows), every blob scanned once.  All
    of them reach the remote, and history keeps them there."""
    not_there = ['--not', f'--glob={repo_mod.REMOTES_NS}{remote}/*'] if remote else []
    # rev-list --objects has no -z (before git 2.47) and ends a path at a
    # newline, so the name is for the message only; split('\n'), not
    # splitlines(), which would also cut one at \r, \x85 or U+2028
    listed = repo_mod.git(
        'rev-list', '--objects', f'--glob={repo_mod.MEMORY_NS}*', *not_there,
        cwd=repo.top, check=False,
    ).stdout.split('\n')
    commits = [ln for ln in listed if ln and ' ' not in ln]
    named = {ln.split(' ', 1)[0]: ln.split(' ', 1)[1] for ln in listed if ' ' in ln}
    if not commits and not named:
        return []
    import subprocess  # bytes: sizes in `cat-file --batch` count bytes
    bound = repo_mod.local_timeout()
    try:
        batch = subprocess.run(
            ('git', '--no-optional-locks', 'cat-file', '--batch'), cwd=repo.top,
            input=''.join(f'{oid}\n' for oid in [*commits, *named]).encode(),
            capture_output=True, env=repo_mod.clean_env(None), timeout=bound,
        ).stdout
    except subprocess.TimeoutExpired:
        # a partial clone fetching a missing object that never comes
        raise AgitmemError(f'git cat-file gave no answer in {bound:g}s and was stopped')
    ret: list[Finding] = []
    for oid, kind, body in _batch(batch):
        if kind == 'commit':
            msg = body.split('\n\n', 1)[1] if '\n\n' in body else ''
            ret.extend(
                Finding(
                    ID, 'error',
                    f'possible {s.kind} in the message of memory commit '
                    f'{oid[:12]}; it would be pushed: rewrite that memory '
                    f'history or drop the ref, and revoke the key{secrets.dismiss(s)}',
                    path=f'commit {oid[:12]}', line=s.line,
                )
                for s in secrets.blocking(secrets.scan(msg, MESSAGE, allow))
            )
        elif kind == 'blob':
            path = named.get(oid, oid)
            ret.extend(
                Finding(
                    ID, 'error',
                    f'possible {s.kind} in a memory commit this push sends '
                    f'({shown(path)}); remove it, `agitmem save`, and revoke '
                    f'it (the older commit still holds it){secrets.dismiss(s)}',
                    path=f'blob {oid[:12]}:{path}', line=s.line,
                )
                for s in secrets.blocking(secrets.scan(body, path, allow))
            )
    return ret


def _batch(data: bytes) -> list[tuple[str, str, str]]:
    """`git cat-file --batch` output: (oid, type, content) each."""
    ret = []
    i = 0
    while i < len(data):
        nl = data.index(b'\n', i)
        header = data[i:nl].decode().split()
        i = nl + 1
        if len(header) < 3 or header[1] == 'missing':
            continue
        size = int(header[2])
        ret.append((header[0], header[1], data[i:i + size].decode('utf-8', 'replace')))
        i += size + 1
    return ret
